"""Frame acknowledgement (dashboard/ui/frame_ack.py): a served page gets at most ``in_flight``
frames it has not acknowledged; a client that never acknowledges is streamed to as before;
whatever the page sends back never breaks the count."""

from __future__ import annotations

import pytest
from bokeh.document import Document
from hypothesis import given, settings
from hypothesis import strategies as st
from test_app import _ServedDoc, small_app

from dashboard.ui.frame_ack import ACK_JS, FrameAck


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_served_page_gets_at_most_in_flight_unacknowledged_frames():
    clock = Clock()
    ack = FrameAck(in_flight=2, clock=clock)
    assert ack.may_send()
    ack.sent()
    assert ack.sent_model.tags == [1] and ack.may_send()
    ack.sent()
    assert ack.sent_model.tags == [2] and not ack.may_send()  # two await their ack
    ack.acknowledge([1])
    assert ack.acked == 1 and ack.may_send()
    ack.sent()
    assert not ack.may_send()
    clock.now += 2.9  # a slow page: it has not drawn frame 2 yet
    assert not ack.may_send()
    ack.acknowledge([3])  # acknowledging the latest frame covers the older ones
    assert ack.acked == 3 and ack.may_send() and ack.stalls == 0


def test_a_lost_acknowledgement_never_freezes_the_page():
    clock = Clock()
    ack = FrameAck(in_flight=2, stall_after=3.0, clock=clock)
    ack.sent()
    ack.acknowledge([1])
    ack.sent()
    ack.sent()
    assert not ack.may_send()
    clock.now += 2.9
    assert not ack.may_send()
    clock.now += 0.2  # 3 s since the last frame went out, no acknowledgement
    assert ack.may_send() and ack.may_send() and ack.stalls == 0  # asking counts nothing
    ack.sent()  # one more frame (a stall); then the page waits again
    assert not ack.may_send() and ack.stalls == 1
    clock.now += 1.0
    ack.acknowledge([2])  # a late acknowledgement restarts the wait
    assert not ack.may_send()
    clock.now += 2.5
    assert not ack.may_send()
    clock.now += 0.6
    assert ack.may_send()
    ack.sent()
    assert ack.stalls == 2


def test_a_page_that_stops_acknowledging_is_streamed_to_ungated_until_it_answers_again():
    clock = Clock()
    ack = FrameAck(in_flight=1, stall_after=3.0, clock=clock)
    ack.sent()
    ack.acknowledge([1])
    ack.sent()
    for _ in range(3):  # three stalls in a row: its script broke, or it paints nothing
        assert not ack.may_send()
        clock.now += 3.1
        assert ack.may_send()
        ack.sent()
    assert ack.stalls == 3 and not ack.acknowledging
    for _ in range(5):
        assert ack.may_send()  # not one frame per 3 s for the rest of the lesson
        ack.sent()
    ack.acknowledge([ack.sent_count])  # it answers again: gated again
    assert ack.acknowledging and ack.may_send()
    ack.sent()
    assert not ack.may_send()


def test_a_client_that_never_acknowledges_is_streamed_to_after_the_grace_period():
    clock = Clock()
    ack = FrameAck(in_flight=1, no_ack_after=5.0, stall_after=60.0, clock=clock)
    ack.sent()
    assert not ack.may_send() and ack.acknowledging
    clock.now += 4.9
    assert not ack.may_send()
    clock.now += 0.2  # 5.1 s without any acknowledgement: a bokeh.client script, no JS
    assert ack.may_send() and not ack.acknowledging
    for _ in range(5):
        ack.sent()
    assert ack.may_send()
    ack.acknowledge([6])  # it starts acknowledging after all: gated again
    assert ack.acknowledging and ack.may_send()
    ack.sent()
    assert not ack.may_send()


def test_nothing_is_gated_headless():
    ack = FrameAck(in_flight=1, served=lambda: False)
    for _ in range(5):
        ack.sent()
        assert ack.may_send()
    assert ack.sent_count == 5 and ack.sent_model.tags == [5]


def test_in_flight_must_be_positive():
    with pytest.raises(ValueError, match="in_flight must be at least 1"):
        FrameAck(in_flight=0)


def test_the_pages_acknowledgement_arrives_through_the_ack_models_tags():
    ack = FrameAck(in_flight=1)
    doc = Document()
    doc.add_root(ack.sent_model)
    doc.add_root(ack.ack_model)
    ack.sent()
    assert not ack.may_send()
    ack.ack_model.tags = [1]  # what the JavaScript callback sets (Bokeh syncs it back)
    assert ack.acked == 1 and ack.may_send()
    callbacks = ack.sent_model.js_property_callbacks["change:tags"]
    assert [cb.code for cb in callbacks] == [ACK_JS]
    assert callbacks[0].args["ack"] is ack.ack_model


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(min_value=-(2**70), max_value=2**70),
            st.lists(st.integers(min_value=-(2**70), max_value=2**70), max_size=3),
            st.lists(st.text(max_size=5), max_size=2),
            st.text(max_size=10),
            st.none(),
            st.floats(allow_nan=True, allow_infinity=True),
            st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=2),
            st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        ),
        max_size=8,
    ),
    st.integers(min_value=0, max_value=6),
)
def test_whatever_the_page_sends_back_the_count_stays_sane(values, sent):
    ack = FrameAck(in_flight=2)
    for _ in range(sent):
        ack.sent()
    previous = 0
    for value in values:
        ack.acknowledge(value)  # never raises: the page's value is not trusted
        assert previous <= ack.acked <= ack.sent_count == sent
        previous = ack.acked


def test_the_app_sends_a_served_page_no_frame_while_two_await_their_ack():
    app = small_app()
    app.run()
    app.frame_ack.no_ack_after = 600.0  # however slow the test machine: the page counts
    app.frame_ack.stall_after = 600.0
    doc = _ServedDoc()
    app._doc = doc
    pushed = app.plots["regret"].sent
    shown = []
    for _ in range(4):  # the page acknowledges nothing (yet)
        if app.tick():
            doc.run_queued()  # the loop shows the frame under the document lock
            shown.append(app.frame_ack.sent_count)
    in_flight = app.frame_ack.sent_count - app.frame_ack.acked
    assert in_flight == app.frame_ack.in_flight  # run()'s first frame plus one more
    assert app.plots["regret"].sent == pushed + len(shown) and len(shown) == 1
    assert app.tick() is False
    app.frame_ack.acknowledge([app.frame_ack.sent_count])  # the page drew them
    assert app.tick() is True
    app.dispose()


def test_a_worker_threads_frame_waiting_for_the_loop_holds_back_the_next_one():
    # panel serve --num-threads: the frame is simulated on a thread and shown by a next-tick
    # callback; until that runs, frame_ack has not counted it, so no second frame may start
    app = small_app()
    app.run()
    app.frame_ack.no_ack_after = app.frame_ack.stall_after = 600.0
    doc = _ServedDoc()
    app._doc = doc
    assert app.tick() is True and len(doc.queued) == 1
    t = app.run_model.t
    assert app.tick() is False and app.run_model.t == t and len(doc.queued) == 1
    doc.run_queued()  # the loop shows it: now it counts (Run's frame and this one)
    assert app.frame_ack.sent_count == 2 and app.tick() is False  # two await their ack
    app.frame_ack.acknowledge([2])
    assert app.tick() is True
    app.dispose()
