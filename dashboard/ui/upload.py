"""File uploads in a served class: refused in the browser above the cap, sent in small chunks,
read in another process, the answer handed back to the page's event loop.

* :class:`UploadDropper` is Panel's ``FileDropper`` (FilePond, bundled with Panel: no network)
  set up for one saved experiment: the browser itself refuses a file above
  :data:`~dashboard.simulation.uploads.MAX_UPLOAD_BYTES` with its own message ("File is too
  large / Maximum file size is 10 MB") and sends nothing; an accepted file travels in
  :data:`UPLOAD_CHUNK_BYTES` binary chunks, so no websocket message comes near the socket's
  limit (Panel's plain ``FileInput`` sends the whole file base64-encoded in one message: 15 MiB
  closed the page's socket, "1009 message too big", before any refusal could be shown).  The
  server counts the chunks too and drops an upload that goes beyond the cap (a client that
  skips the browser's check), with the same refusal.
* :func:`read_off_loop` runs the reading (JSON parsing, building arrays: user-sized work) in a
  one-worker process pool shared by the server's sessions, never on the event loop, and not in
  a thread either: parsing one 10 MB JSON line holds the interpreter lock for most of a
  second, which would stall every session's frames.  The result comes back with
  :func:`~dashboard.ui.document.in_document`.  One upload per session is read at a time; a
  second one while the first is read is refused with a message.  Headless (tests, notebooks)
  it runs at once.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import panel as pn
import param

from ..simulation.uploads import MAX_UPLOAD_BYTES, describe_size
from .document import in_document, served

__all__ = ["UPLOAD_CHUNK_BYTES", "UploadDropper", "read_off_loop", "uploaded_file"]

#: Bytes per websocket message of an upload (binary, far below the 20 MiB message limit).
UPLOAD_CHUNK_BYTES = 1_000_000

_POOL: ProcessPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


class UploadDropper(pn.widgets.FileDropper):
    """A one-file ``FileDropper`` whose browser refuses files above ``max_bytes`` and whose
    server side keeps at most ``max_bytes`` of one upload; an upload dropped on the server
    sets :attr:`oversized` to its refusal sentence."""

    oversized = param.String(default="", doc="Refusal of the last upload the server dropped.")

    _rename = {**pn.widgets.FileDropper._rename, "oversized": None}  # (server side only)

    def __init__(self, max_bytes: int = MAX_UPLOAD_BYTES, **params: Any) -> None:
        params.setdefault("multiple", False)
        params.setdefault("chunk_size", UPLOAD_CHUNK_BYTES)
        params.setdefault("layout", "compact")
        super().__init__(max_file_size=str(int(max_bytes)), **params)
        self.max_bytes = int(max_bytes)
        self._received = 0
        self._receiving: str | None = None

    def _process_event(self, event: Any) -> None:
        data = getattr(event, "data", None)
        if getattr(event, "event_name", "") != "upload_event" or not isinstance(data, dict):
            super()._process_event(event)
            return
        name = str(data.get("name", ""))
        chunk = data.get("data")
        if data.get("chunk") == 1 or name != self._receiving:
            self._file_buffer.clear()  # one upload at a time: a new one replaces any other
            self._receiving, self._received = name, 0
            if data.get("chunk") != 1:
                return  # the middle of an upload that never started here
        self._received += len(chunk) if isinstance(chunk, (bytes, bytearray)) else 0
        if self._received > self.max_bytes:
            self._file_buffer.clear()
            self._receiving = None
            self.oversized = (
                f"{name[:80]!r} is over {describe_size(self.max_bytes)}; files up to that size "
                "can be opened here; use `python -m dashboard load FILE` for bigger ones"
            )
            return
        super()._process_event(event)


def uploaded_file(value: Any) -> tuple[str, bytes] | None:
    """``(name, bytes)`` of the file a ``FileDropper`` value holds (the latest one), or None
    when it holds none (the file was removed).  Text the widget decoded is encoded back."""
    if not isinstance(value, dict) or not value:
        return None
    name, data = list(value.items())[-1]
    if isinstance(data, str):
        data = data.encode("utf-8")
    return str(name), bytes(data)


def _pool() -> ProcessPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            # spawn, as the Dask workers do: a fork of a server with threads can deadlock
            ctx = multiprocessing.get_context("spawn")
            _POOL = ProcessPoolExecutor(max_workers=1, mp_context=ctx)
        return _POOL


def _forget_pool(pool: ProcessPoolExecutor) -> None:
    global _POOL
    with _POOL_LOCK:
        if _POOL is pool:
            _POOL = None


def _outcome(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, ValueError | None]:
    try:
        return fn(*args), None
    except ValueError as exc:
        return None, exc


def read_off_loop(
    doc: Any,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    on_done: Callable[[Any, ValueError | None], None],
) -> None:
    """``fn(*args)`` (a picklable module-level function: the reading of an upload) away from
    the event loop of ``doc``'s served session, then ``on_done(result, error)`` back on it
    (``error``: the ValueError ``fn`` raised, else None; any other failure of the reading
    process becomes a ValueError too).  Without a served ``doc``, both at once."""
    if doc is None or not served(doc):
        on_done(*_outcome(fn, args))
        return
    pool = _pool()
    try:
        future = pool.submit(fn, *args)
    except (BrokenProcessPool, RuntimeError):
        _forget_pool(pool)
        pool = _pool()
        future = pool.submit(fn, *args)

    def finished(f: Future) -> None:
        try:
            result, error = f.result(), None
        except ValueError as exc:
            result, error = None, exc
        except BaseException as exc:  # the reading process died or could not start
            if isinstance(exc, BrokenProcessPool):
                _forget_pool(pool)
            result, error = None, ValueError(f"the file could not be read ({type(exc).__name__})")
        in_document(doc, lambda: on_done(result, error))

    future.add_done_callback(finished)
