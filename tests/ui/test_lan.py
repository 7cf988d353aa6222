"""The links a class types and the instructor's QR code (``dashboard.ui.lan``): built only from
addresses, checked host names and ports; the QR code is an SVG data URI with no markup in it."""

from __future__ import annotations

import ipaddress
import xml.etree.ElementTree as ET
from urllib.parse import unquote

from hypothesis import given
from hypothesis import strategies as st

from dashboard.ui.lan import dask_link_for, host_of, lan_addresses, qr_data_uri, student_urls


def test_lan_addresses_are_usable_ipv4_addresses():
    for ip in lan_addresses():
        a = ipaddress.ip_address(ip)
        assert a.version == 4 and not a.is_loopback and not a.is_link_local


def test_student_urls(monkeypatch):
    import dashboard.ui.lan as lan

    monkeypatch.setattr(lan, "lan_addresses", lambda: ["192.168.1.20", "10.0.0.5"])
    assert student_urls("0.0.0.0", 5006) == [
        "http://192.168.1.20:5006/dashboard",
        "http://10.0.0.5:5006/dashboard",
    ]
    assert student_urls("192.168.1.20", 80) == ["http://192.168.1.20:80/dashboard"]
    assert student_urls("127.0.0.1", 5006) == []  # nobody else can reach it
    assert student_urls("0.0.0.0", 5006, ["class.example:8080", "localhost:5006"]) == [
        "http://class.example:8080/dashboard"
    ]
    assert student_urls("0.0.0.0", 5006, ['"><script>']) == [  # not a host: the LAN ones
        "http://192.168.1.20:5006/dashboard",
        "http://10.0.0.5:5006/dashboard",
    ]


def test_the_dask_link_uses_the_host_the_instructor_reached():
    assert dask_link_for("http://127.0.0.1:8787/status", "192.168.1.20:5006") == (
        "http://192.168.1.20:8787/status"
    )
    assert dask_link_for("http://10.1.1.1:8787/status", "192.168.1.20:5006") == (
        "http://10.1.1.1:8787/status"
    )
    assert dask_link_for("http://127.0.0.1:8787/status", "localhost:5006") == (
        "http://127.0.0.1:8787/status"
    )
    assert dask_link_for("http://127.0.0.1:8787/status", 'evil"><x') == (
        "http://127.0.0.1:8787/status"
    )
    assert dask_link_for("javascript:alert(1)", "a:1") == ""


def test_the_qr_code_is_an_svg_of_the_link():
    uri = qr_data_uri("http://192.168.1.20:5006/dashboard")
    head, _, body = uri.partition(",")
    assert head.startswith("data:image/svg+xml")
    root = ET.fromstring(unquote(body))
    assert root.tag.endswith("svg")


@given(st.text(max_size=200))
def test_any_text_gives_a_data_uri_without_markup(text):
    uri = qr_data_uri(text)
    assert uri == "" or uri.startswith("data:image/svg+xml")
    assert not any(c in uri for c in '<>"')


@given(st.text(max_size=80))
def test_host_of_accepts_only_host_names_and_ports(text):
    parsed = host_of(text)
    if parsed is not None:
        host, port = parsed
        assert all(c.isalnum() or c in ".-[]:" for c in host) and host.isascii()
        assert port is None or 0 < port < 65536
