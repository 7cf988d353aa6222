"""The addresses a class types: this machine's LAN addresses, links built from them, a QR code.

Everything here is local: the interface addresses come from the kernel (Linux ``ioctl``) or,
elsewhere, from which source address a UDP socket *would* use toward a private range (a UDP
``connect`` sends nothing); no name is resolved, no packet leaves the machine.  Links are
built only from IP addresses, checked host names and port numbers; the QR code is an SVG data
URI made by ``segno`` (pure Python), shown as an ``<img>``, so no markup of it reaches the page.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import struct
import sys
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "dask_link_for",
    "host_of",
    "lan_addresses",
    "qr_data_uri",
    "student_urls",
]

#: A ``Host`` header or ``--allow-websocket-origin`` value: a host name, IPv4 or [IPv6], and
#: an optional port.
_HOST = re.compile(
    r"(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])"
    r"(?::(?P<port>[0-9]{1,5}))?\Z"
)
_ANY = ("", "0.0.0.0", "::", "*")
_LOCAL = ("127.0.0.1", "localhost", "::1")


def host_of(value: str | None) -> tuple[str, int | None] | None:
    """``(host, port)`` of a ``Host`` header / origin value, or ``None`` if it is not one."""
    m = _HOST.match(str(value or "").strip())
    if not m:
        return None
    port = int(m.group("port")) if m.group("port") else None
    if port is not None and not 0 < port < 65536:
        return None
    return m.group("host").lower(), port


def _usable(ip: str) -> bool:
    try:
        a = ipaddress.ip_address(ip)
    except ValueError:
        return False
    return not (a.is_loopback or a.is_link_local or a.is_unspecified or a.is_multicast)


def _linux_addresses() -> list[str]:
    import fcntl

    out = []
    siocgifaddr = 0x8915
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _index, name in socket.if_nameindex():
            try:
                packed = fcntl.ioctl(
                    s.fileno(), siocgifaddr, struct.pack("256s", name.encode()[:15])
                )
            except OSError:  # an interface without an IPv4 address
                continue
            out.append(socket.inet_ntoa(packed[20:24]))
    return out


def _route_addresses() -> list[str]:
    out = []
    for target in ("10.255.255.255", "172.31.255.255", "192.168.255.255"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.connect((target, 9))  # UDP: chooses a route, sends nothing
                out.append(s.getsockname()[0])
        except OSError:
            continue
    return out


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback and link-local, private ones first."""
    found: list[str] = []
    sources = [_route_addresses]
    if sys.platform.startswith("linux"):
        sources.insert(0, _linux_addresses)
    for source in sources:
        try:
            found += source()
        except Exception:  # no interfaces API here: the next source
            continue
    unique = list(dict.fromkeys(ip for ip in found if _usable(ip)))
    return sorted(unique, key=lambda ip: (not ipaddress.ip_address(ip).is_private, ip))


def student_urls(
    listen: str, port: int, origins: list[str] | None = None, path: str = "/dashboard"
) -> list[str]:
    """The links students type: the ``--allow-websocket-origin`` values given, else this
    machine's LAN addresses when the server listens on all of them (or the one it listens on).
    Empty when the server only listens on this machine."""
    urls: list[str] = []
    for origin in origins or []:
        parsed = host_of(origin)
        if parsed is not None and parsed[0] not in _LOCAL:
            host, p = parsed
            urls.append(
                f"http://{host}:{p or port}{path}" if (p or port) else f"http://{host}{path}"
            )
    if not urls:
        if listen in _ANY:
            hosts = lan_addresses()
        elif _usable(listen) or (host_of(listen) and listen not in _LOCAL):
            hosts = [listen]
        else:
            hosts = []
        for h in hosts:
            parsed = host_of(h if ":" not in h else f"[{h}]")
            if parsed is not None:
                urls.append(f"http://{parsed[0]}:{port}{path}")
    return list(dict.fromkeys(urls))


def qr_data_uri(text: str) -> str:
    """A QR code of ``text`` as a ``data:image/svg+xml,...`` URI ("" if ``segno`` is
    missing or the text does not fit)."""
    try:
        import segno

        svg = segno.make(text, error="m", micro=False).svg_data_uri(scale=6, border=2)
    except Exception:  # segno not installed, or a text too long for a QR code
        return ""
    head, _, body = svg.partition(",")
    return head + "," + body if head.startswith("data:image/svg+xml") else ""


def dask_link_for(link: str, host_header: str | None) -> str:
    """Dask's dashboard link as the instructor's browser can open it: a loopback or wildcard
    host is replaced by the host the instructor reached this page on ("" if unusable)."""
    try:
        parts = urlsplit(str(link or ""))
    except ValueError:
        return ""
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ""
    if parts.hostname not in (*_LOCAL, "0.0.0.0", "::"):
        return link
    reached = host_of(host_header)
    if reached is None or reached[0] in _LOCAL:
        return link
    netloc = reached[0] + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
