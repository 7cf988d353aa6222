"""The served class's garbage-collection policy (dashboard/ui/heap.py): built pages are frozen
out of the collector's full passes; closed pages' cycles are collected once the class left, or
after every ``collect_after`` closed pages."""

from __future__ import annotations

import gc
import weakref

import pytest

from dashboard.ui.heap import SessionHeap


class _Cycle:
    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def _unfrozen():
    yield
    gc.unfreeze()  # never leave the test process frozen


def test_built_pages_leave_the_collector_and_closed_ones_come_back():
    heap = SessionHeap(collect_after=3)
    page = _Cycle()
    alive = weakref.ref(page)
    heap.page_built()
    assert gc.get_freeze_count() > 0 and heap.open == 1
    del page
    gc.collect()
    assert alive() is not None  # frozen: the cycle detector skips it
    assert heap.page_closed() is True  # the last page closed: everything is collected
    assert alive() is None and gc.get_freeze_count() == 0 and heap.collections == 1


def test_collect_after_every_n_closed_pages_while_others_stay_open():
    heap = SessionHeap(collect_after=2)
    for _ in range(4):
        heap.page_built()
    garbage = _Cycle()
    alive = weakref.ref(garbage)
    gc.freeze()
    del garbage
    assert heap.page_closed() is False and alive() is not None  # 3 pages still open
    assert heap.page_closed() is True and alive() is None  # 2 closed: collected now
    assert gc.get_freeze_count() > 0  # the pages still open are frozen again
    assert heap.open == 2 and heap.closed_since_collect == 0


def test_unbalanced_close_never_goes_negative():
    heap = SessionHeap()
    assert heap.page_closed() is True
    assert heap.open == 0
