"""A frame's document patch without listing every model of the page first.

Bokeh builds each ``PATCH-DOC`` message with a ``Serializer`` that is handed *all* the
document's synced models up front: one dictionary entry per model (~640 on this page), built
for every message, although a frame's events name a dozen models.  With a class of 30
streaming, that was ~16% of the server's event loop (py-spy, ``BENCH_PROFILE_DIR`` in
``benchmarks/bench_classroom.py``).

:class:`SyncedSerializer` asks the document whether a model is synced when the encoder meets
it, which gives the same message: a synced model is sent as a reference, a new one in full.
:func:`use_fast_patches` gives a served page's connections a :class:`FastPatchProtocol`,
whose ``PATCH-DOC`` messages are built that way; every other message is Bokeh's own.

:class:`JsonNumbers` marks a plot column whose numbers JSON carries as they are (finite
floats, safe integers, booleans): the encoder passes it through whole instead of encoding it
value by value (Bokeh's ``_encode_list``: 10% of the loop at 30 students), with the same
message.  It is registered as a Bokeh encoder, so every serializer (a page's first load too)
treats it alike.

It relies on three Bokeh internals, each pinned by a canary test
(``tests/ui/test_patch_protocol.py``): ``ServerConnection._protocol`` (the protocol Panel's
and Bokeh's writers ask for messages), ``DocumentModelManager._new_models`` (models not yet
synced) and ``Serializer.get_ref``/``has_ref`` being the only ways the encoder looks up a
reference.  The canary compares whole messages with Bokeh's for the same events.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from bokeh.core.serialization import Deserializer, Serializer
from bokeh.document import Document
from bokeh.document.events import DocumentPatchedEvent
from bokeh.model import Model
from bokeh.protocol import Protocol
from bokeh.protocol.messages.patch_doc import PatchJson, patch_doc

__all__ = [
    "FastPatchProtocol",
    "JsonNumbers",
    "SyncedSerializer",
    "fast_apply_json_patch",
    "fast_patch_doc",
    "json_numbers",
    "use_fast_patches",
]

#: Bokeh sends integers within +-(2**53 - 1) as JSON numbers (others as floats; the bound
#: itself is excluded here, on the safe side).
_MAX_SAFE_INT = 2**53 - 1


class JsonNumbers(list):  # type: ignore[type-arg]
    """A list of numbers that JSON carries exactly as Bokeh would encode them one by one:
    finite floats, integers within ``+-(2**53 - 1)`` and booleans (no NaN or infinity, which
    Bokeh sends as ``{"type": "number", ...}``).  Build it with :func:`json_numbers`."""


def _encode_json_numbers(obj: JsonNumbers, _serializer: Any) -> Any:
    return obj


Serializer.register(JsonNumbers, _encode_json_numbers)


def json_numbers(values: Any) -> list[Any]:
    """A 1-d numeric array as a Python list: a :class:`JsonNumbers` when every value passes
    through JSON as it is, else a plain list (Bokeh encodes it value by value)."""
    kind = values.dtype.kind
    if kind == "f":
        plain = bool(np.isfinite(values).all())
    elif kind in "iu":
        plain = values.size == 0 or bool(np.abs(values.astype(np.float64)).max() < _MAX_SAFE_INT)
    else:
        plain = kind == "b"
    return JsonNumbers(values.tolist()) if plain else values.tolist()


class SyncedSerializer(Serializer):
    """A ``Serializer`` whose references are the document's synced models, looked up when
    met (Bokeh's lists them all first)."""

    def __init__(self, doc: Any) -> None:
        super().__init__(references=set())
        self._manager = doc.models

    def _synced(self, obj: Any) -> bool:
        if not isinstance(obj, Model):
            return False
        manager = self._manager
        return manager.get_by_id(obj.id) is obj and obj not in manager._new_models

    def has_ref(self, obj: Any) -> bool:
        return id(obj) in self._references or self._synced(obj)

    def get_ref(self, obj: Any) -> Any:
        ref = self._references.get(id(obj))
        if ref is None and self._synced(obj):
            ref = self._references[id(obj)] = obj.ref
        return ref


def fast_patch_doc(events: list[Any], **metadata: Any) -> patch_doc:
    """Bokeh's ``patch_doc.create`` with a :class:`SyncedSerializer`: the same message."""
    if not events:
        raise ValueError("PATCH-DOC message requires at least one event")
    docs = {event.document for event in events}
    if len(docs) != 1:
        raise ValueError("PATCH-DOC message configured with events for more than one document")
    [doc] = docs
    serializer = SyncedSerializer(doc)
    patch_json = PatchJson(events=serializer.encode(events))
    doc.models.flush_synced(lambda model: not serializer.has_ref(model))
    msg = patch_doc(patch_doc.create_header(), metadata, patch_json)
    msg.add_buffers(*serializer.buffers)
    return msg


class FastPatchProtocol(Protocol):
    """Bokeh's protocol, with ``PATCH-DOC`` built by :func:`fast_patch_doc`."""

    def create(self, msgtype: Any, *args: Any, **kwargs: Any) -> Any:
        if msgtype == "PATCH-DOC":
            return fast_patch_doc(*args, **kwargs)
        return super().create(msgtype, *args, **kwargs)


def _plain_json(value: Any) -> bool:
    """Whether a decoded JSON value holds no object (so no reference, number rep or buffer)."""
    if isinstance(value, list):
        return all(_plain_json(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def fast_apply_json_patch(doc: Any, patch_json: Any, *, setter: Any = None) -> None:
    """Bokeh's ``Document.apply_json_patch``, without listing every model of the page first
    when the patch only sets plain values on models of the page (a frame acknowledgement, a
    button's ``clicks``): the same decoded events, handlers and synced models.

    Bokeh builds a ``Deserializer`` from *all* the document's models (a dictionary of ~640
    entries) for every patch a page sends; a class's pages acknowledge every frame, which made
    that dictionary ~7% of the server's loop at 30 students.  A patch of plain ``ModelChanged``
    events needs only its own models as references.  Bokeh then marks every model that was in
    the document before the patch as synced (``flush_synced``): those are exactly the models
    that were new before (a model the handlers add is new afterwards only if it was not in the
    document).  Anything else goes to Bokeh's own method.
    """
    content = getattr(patch_json, "content", patch_json)
    buffers = getattr(patch_json, "buffers", None)
    events = content.get("events") if isinstance(content, dict) else None
    models = []
    plain = isinstance(events, list) and not buffers
    for event in events if plain else ():
        model = event.get("model") if isinstance(event, dict) else None
        found = None
        if (
            isinstance(model, dict)
            and event.get("kind") == "ModelChanged"
            and set(model) == {"id"}
            and isinstance(event.get("attr"), str)
            and _plain_json(event.get("new"))
        ):
            found = doc.models.get_by_id(model["id"])
        if found is None:
            plain = False
            break
        models.append(found)
    if not plain:
        Document.apply_json_patch(doc, patch_json, setter=setter)
        return
    before = set(doc.models._new_models)
    patch = Deserializer(models, setter=setter).deserialize(patch_json)
    for event in patch["events"]:
        DocumentPatchedEvent.handle_event(doc, event, setter)
    doc.models.flush_synced(lambda model: model not in before)


def use_fast_patches(doc: Any) -> int:
    """Give the connections of ``doc``'s served session a :class:`FastPatchProtocol`, and the
    document :func:`fast_apply_json_patch` for the patches its page sends (idempotent;
    headless: nothing).  Returns how many connections it changed."""
    ctx = getattr(doc, "session_context", None)
    session = None if ctx is None else getattr(ctx, "session", None)
    if session is not None and "apply_json_patch" not in vars(doc):
        doc.apply_json_patch = partial(fast_apply_json_patch, doc)
    changed = 0
    for conn in list(getattr(session, "_subscribed_connections", None) or ()):
        if hasattr(conn, "_protocol") and not isinstance(conn._protocol, FastPatchProtocol):
            conn._protocol = FastPatchProtocol()
            changed += 1
    return changed
