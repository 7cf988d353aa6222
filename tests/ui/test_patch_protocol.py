"""The fast PATCH-DOC builder gives Bokeh's own messages (canary for the Bokeh internals it
relies on, patch_protocol.py), and a served page's connections use it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bokeh.core.serialization import Serializer
from bokeh.document import Document
from bokeh.models import ColumnDataSource, Div, Range1d
from bokeh.plotting import figure
from bokeh.protocol import Protocol
from bokeh.protocol.messages.patch_doc import patch_doc
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.ui.patch_protocol import (
    FastPatchProtocol,
    SyncedSerializer,
    fast_patch_doc,
    use_fast_patches,
)


def _page() -> tuple[Document, dict]:
    doc = Document()
    source = ColumnDataSource(data={"t": np.arange(5.0), "y": np.ones(5)})
    fig = figure(x_range=Range1d(0, 1))
    fig.line("t", "y", source=source)
    div = Div(text="t = 0")
    doc.add_root(fig)
    doc.add_root(div)
    doc.models.flush_synced()
    return doc, {"fig": fig, "source": source, "div": div}


def _events(doc: Document, change) -> list:
    events: list = []
    doc.callbacks.on_change(events.append)
    change()
    doc.callbacks._change_callbacks.clear()
    return events


def _frame_and_new_models(parts: dict) -> None:
    parts["source"].data = {"t": np.arange(300.0), "y": np.linspace(0, 1, 300)}
    parts["div"].text = "t = 300"
    parts["fig"].x_range.end = 300.0
    # a model new to the page (sent in full) that refers to synced ones (sent as references)
    parts["fig"].line("t", "y", source=parts["source"], color="red")
    parts["fig"].title.text = "new"


def _normal(msg) -> tuple[str, list[bytes]]:
    """A message's content with its buffers' ids (fresh for every message) as indexes."""
    content = msg.content_json
    for i, buffer in enumerate(msg.buffers):
        content = content.replace(json.dumps(buffer.id), json.dumps(f"buffer-{i}"))
    return content, [b.to_bytes() for b in msg.buffers]


def test_same_message_as_bokehs_and_the_same_models_synced_afterwards():
    doc, parts = _page()
    events = _events(doc, lambda: _frame_and_new_models(parts))
    new_before = set(doc.models._new_models)
    assert new_before  # the added line's models: sent in full
    bokehs = patch_doc.create(events)
    synced_by_bokeh = new_before - set(doc.models._new_models)
    doc.models._new_models = set(new_before)  # as before Bokeh's create
    ours = fast_patch_doc(events)
    assert _normal(ours) == _normal(bokehs)
    assert new_before - set(doc.models._new_models) == synced_by_bokeh
    content = json.loads(ours.content_json)["events"]
    kinds = {e["kind"] for e in content}
    assert {"ModelChanged", "ColumnDataChanged"} <= kinds
    assert len(ours.buffers) == 2  # the 300-value columns
    # a synced model goes as a bare reference
    msg = fast_patch_doc(_events(doc, lambda: setattr(parts["div"], "text", "t = 301")))
    assert json.loads(msg.content_json)["events"][0]["model"] == {"id": parts["div"].id}


def test_synced_serializer_knows_the_same_models_as_bokehs():
    doc, parts = _page()
    parts["fig"].line("t", "y", source=parts["source"])  # new, not synced yet
    ours, bokehs = SyncedSerializer(doc), Serializer(references=doc.models.synced_references)
    for model in doc.models:
        assert ours.has_ref(model) == bokehs.has_ref(model), model
        assert ours.get_ref(model) == bokehs.get_ref(model), model
    assert not ours.has_ref(Div()) and ours.get_ref(3.5) is None  # not in the document


def test_protocol_builds_patches_fast_and_everything_else_as_bokeh():
    doc, parts = _page()
    proto = FastPatchProtocol()
    events = _events(doc, lambda: setattr(parts["div"], "text", "x"))
    assert isinstance(proto.create("PATCH-DOC", events), patch_doc)
    assert type(proto.create("ACK")) is type(Protocol().create("ACK"))
    with pytest.raises(ValueError, match="at least one event"):
        proto.create("PATCH-DOC", [])


def test_use_fast_patches_changes_each_connection_once_and_nothing_headless():
    class Conn:
        def __init__(self) -> None:
            self._protocol = Protocol()

    class Session:
        _subscribed_connections = {Conn(), Conn()}

    class Ctx:
        session = Session()

    doc = Document()
    assert use_fast_patches(doc) == 0  # headless: no session
    served = type("Served", (), {"session_context": Ctx(), "models": doc.models})()
    assert use_fast_patches(served) == 2
    assert use_fast_patches(served) == 0
    assert all(isinstance(c._protocol, FastPatchProtocol) for c in Session._subscribed_connections)


def _page_pair():
    """Two documents with the same models and ids (one rebuilt from the other's JSON)."""
    from bokeh.models import Button, Column, Div

    col = Column(Div(text="a", tags=[0]), Div(text="b"), Button(label="Run"))
    a = Document()
    a.add_root(col)
    b = Document.from_json(a.to_json())
    for doc in (a, b):
        doc.models.flush_synced()  # as a served page after it loaded
    return a, b


def _record(doc):
    seen = []
    doc.callbacks.on_change(
        lambda event: seen.append(
            (
                type(event).__name__,
                getattr(getattr(event, "model", None), "id", None),
                getattr(event, "attr", None),
                repr(getattr(event, "new", None)),
                getattr(event, "setter", None),
            )
        )
    )
    return seen


plain_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**31), 2**31) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),
            st.sampled_from(["tags", "visible", "text", "label", "css_classes"]),
            plain_values | st.just({"type": "number", "value": "nan"}),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_a_pages_plain_patch_applies_as_bokeh_applies_it(changes):
    """fast_apply_json_patch (a frame acknowledgement's patch without listing every model)
    leaves the document, its change events and its not-yet-synced models exactly as Bokeh's
    apply_json_patch does; patches it does not handle go to Bokeh's own method."""
    from bokeh.core.serialization import Serialized
    from bokeh.models import Div

    from dashboard.ui.patch_protocol import fast_apply_json_patch

    a, b = _page_pair()
    for doc in (a, b):
        doc.add_root(Div(text="new, not synced yet"))
    ids = [m.id for m in a.roots[0].children]
    events = [
        {"kind": "ModelChanged", "model": {"id": ids[i]}, "attr": attr, "new": new}
        for i, attr, new in changes
    ]
    patch = Serialized({"events": events}, [])
    outcomes = []
    for doc, apply in ((a, fast_apply_json_patch), (b, Document.apply_json_patch)):
        seen = _record(doc)
        try:
            apply(doc, patch, setter="page")
            error = None
        except Exception as exc:  # an invalid value: the same error either way
            error = type(exc).__name__
        outcomes.append((error, seen, sorted(type(m).__name__ for m in doc.models._new_models)))
    assert outcomes[0] == outcomes[1]
    if outcomes[0][0] is None:
        state = [
            [m.properties_with_values(include_defaults=False) for m in d.roots[0].children]
            for d in (a, b)
        ]
        assert repr(state[0]) == repr(state[1])


def test_models_added_by_a_patchs_handlers_stay_new_as_with_bokeh():
    from bokeh.core.serialization import Serialized
    from bokeh.models import Div

    from dashboard.ui.patch_protocol import fast_apply_json_patch

    a, b = _page_pair()
    new_after = []
    for doc, apply in ((a, fast_apply_json_patch), (b, Document.apply_json_patch)):
        col = doc.roots[0]
        col.children[0].on_change(
            "tags", lambda attr, old, new, col=col: col.children.append(Div())
        )
        target = col.children[0].id
        patch = Serialized(
            {
                "events": [
                    {"kind": "ModelChanged", "model": {"id": target}, "attr": "tags", "new": [7]}
                ]
            },
            [],
        )
        apply(doc, patch, setter="page")
        new_after.append(([type(m).__name__ for m in doc.models._new_models], len(col.children)))
    assert new_after[0] == new_after[1] == (["Div"], 4)


def test_served_documents_get_the_fast_patch_apply_once():
    from dashboard.ui.patch_protocol import use_fast_patches

    doc = Document()
    use_fast_patches(doc)  # headless: Bokeh's own method
    assert "apply_json_patch" not in vars(doc)
