"""Files a user names (CLI arguments, API paths): checked to be regular files, read with a cap.

A named pipe blocks whoever opens it until a writer appears, ``/dev/zero`` never ends, and a
directory or device is no saved run: every file the CLI reads or writes goes through
:func:`read_capped` / :func:`check_input` / :func:`open_output`, which refuse anything but a
regular file (checked on the open descriptor, opened without blocking) and stop reading at a
cap.  Errors are one ValueError sentence naming the file and the argument.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO

__all__ = [
    "MAX_EXPERIMENT_BYTES",
    "MAX_PLUGIN_BYTES",
    "check_input",
    "check_output",
    "describe_os_error",
    "open_output",
    "read_capped",
]

#: Largest saved experiment ``load`` and a resumed ``sweep --out`` read: a sweep holds at most
#: 2 GiB of curves (``sweep_grid.MAX_MEMORY``), about 2.25 bytes of JSON text per byte of
#: curve (17-digit floats and a comma for 8 bytes), so its file stays below this.
MAX_EXPERIMENT_BYTES = 5 * 2**30
#: Largest plug-in source file ``--plugin`` reads (a policy is a few kB of Python).
MAX_PLUGIN_BYTES = 4 * 2**20

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _label(path: str | os.PathLike[str], what: str) -> str:
    return f"{what} {str(os.fspath(path))!r}" if what else repr(str(os.fspath(path)))


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} bytes"


def describe_os_error(exc: OSError) -> str:
    """The reason of an OS error in words (``No space left on device``)."""
    return exc.strerror or os.strerror(exc.errno or 0) or type(exc).__name__


def check_input(path: str | os.PathLike[str], what: str = "") -> Path:
    """``path`` if it names an existing regular file (symbolic links followed), else
    ValueError naming ``what`` (the argument, e.g. ``"--features"``) and the file."""
    label = _label(path, what)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ValueError(f"{label}: no such file") from None
    except (OSError, ValueError) as exc:
        reason = describe_os_error(exc) if isinstance(exc, OSError) else "not a usable path"
        raise ValueError(f"{label}: cannot read it ({reason})") from None
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{label} is {_kind(st.st_mode)}, not a regular file")
    return Path(path)


def read_capped(path: str | os.PathLike[str], max_bytes: int, what: str = "") -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them.  ValueError if
    it is missing, not a regular file (FIFO, device, directory: refused without blocking), or
    larger than ``max_bytes``."""
    label = _label(path, what)
    check_input(path, what)
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC | _BINARY)
    except OSError as exc:
        raise ValueError(f"{label}: cannot read it ({describe_os_error(exc)})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced between the check and the open
            raise ValueError(f"{label} is {_kind(st.st_mode)}, not a regular file")
        if st.st_size > max_bytes:
            raise ValueError(f"{label} is larger than the {_size(max_bytes)} limit")
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, min(2**24, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise ValueError(f"{label} is larger than the {_size(max_bytes)} limit")
        return b"".join(chunks)
    except OSError as exc:
        raise ValueError(f"{label}: cannot read it ({describe_os_error(exc)})") from None
    finally:
        os.close(fd)


def check_output(path: str | os.PathLike[str], what: str = "") -> Path:
    """``path`` if a file may be written there: an existing regular file, or a new name in an
    existing directory.  ValueError otherwise (a FIFO, a device, a directory, a missing
    folder)."""
    label = _label(path, what)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        parent = Path(path).parent
        if not parent.is_dir():
            raise ValueError(f"cannot write {label}: no folder {str(parent)!r}") from None
        return Path(path)
    except (OSError, ValueError) as exc:
        reason = describe_os_error(exc) if isinstance(exc, OSError) else "not a usable path"
        raise ValueError(f"cannot write {label}: {reason}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{label} is {_kind(st.st_mode)}, not a regular file")
    return Path(path)


def open_output(
    path: str | os.PathLike[str], mode: str = "w", what: str = "", encoding: str = "utf-8"
) -> IO[str]:
    """A text file opened for writing (``"w"``: truncated or created; ``"r+"``: existing),
    refused without blocking if ``path`` is not a regular file."""
    label = _label(path, what)
    check_output(path, what)
    flags = {"w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "r+": os.O_RDWR}[mode]
    try:
        fd = os.open(path, flags | _NONBLOCK | _CLOEXEC | _BINARY, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO without a reader
            raise ValueError(f"{label} is a named pipe (FIFO), not a regular file") from None
        raise ValueError(f"cannot write {label}: {describe_os_error(exc)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{label} is {_kind(st.st_mode)}, not a regular file")
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return open(fd, mode, encoding=encoding, closefd=True)
    except BaseException:
        os.close(fd)
        raise
