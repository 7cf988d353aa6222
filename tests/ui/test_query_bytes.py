"""Any byte sequence in a page's query string gives the page with a notice, never a traceback:
Tornado's parsed query -> :func:`dashboard.ui.server.query_of` -> the URL checks of
:mod:`dashboard.ui.urlstate` (``/dashboard?d=%FF`` was a ``UnicodeDecodeError``)."""

from __future__ import annotations

from urllib.parse import quote_from_bytes

from hypothesis import given, settings
from hypothesis import strategies as st
from tornado.httputil import parse_qs_bytes

from dashboard.ui.server import query_of
from dashboard.ui.urlstate import parse_query


def _tornado_args(raw: bytes) -> dict[str, list[bytes]]:
    """What ``pn.state.session_args`` holds for a request whose query is ``raw``."""
    return parse_qs_bytes(raw.decode("latin1"), keep_blank_values=True)


def test_the_reported_link():
    query = query_of(_tornado_args(b"d=%FF"))
    assert query == {"d": "\ufffd"}
    values, notices = parse_query(query)
    assert "d" not in values
    assert len(notices) == 1 and notices[0].startswith("Ignored d=")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_raw_query_bytes(raw):
    query = query_of(_tornado_args(raw))
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in query.items())
    _, notices = parse_query(query)
    assert all(isinstance(n, str) for n in notices)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["d", "K", "m", "horizon", "runs", "seed", "problem", "algorithms"]),
    st.binary(min_size=1, max_size=40).filter(lambda b: not _utf8(b)),
)
def test_undecodable_bytes_in_a_setting_are_refused_with_a_notice(key, value):
    raw = f"{key}=".encode() + quote_from_bytes(value).encode()
    values, notices = parse_query(query_of(_tornado_args(raw)))
    assert key not in values and "algorithms" not in values
    assert any(n.startswith(f"Ignored {key}=") for n in notices), notices


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.binary(max_size=20), st.lists(st.binary(max_size=20), max_size=3)))
def test_arbitrary_parsed_arguments(args):
    query = query_of(args)
    parse_query(query)
    assert set(query) <= {k.decode("utf-8", "replace") for k, v in args.items() if v}


def _utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
