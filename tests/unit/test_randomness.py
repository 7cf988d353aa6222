"""The counter-based generator equals a straightforward reference, bit for bit.

:mod:`dashboard.algorithms.randomness` mixes in place, block by block, and fuses the uniform
conversion into the same loop (``BLOCK`` elements at a time); :func:`uniform_run` reads the
counter products from a cached table.  The reference below is SplitMix64 written with Python
integers (one element at a time, no numpy arithmetic), so the fast paths are checked against
an independent computation for arbitrary ``uint64`` inputs, shapes, broadcasting and block
sizes (small blocks put many block boundaries inside small arrays).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dashboard.algorithms import randomness as rnd

MASK = 2**64 - 1
GOLDEN = 0x9E3779B97F4A7C15


def ref_mix_int(x: int) -> int:
    """SplitMix64's finaliser on one Python integer."""
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & MASK
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def ref_uniform_int(key: int, counter: int) -> float:
    """``((mix(key + (counter + 1) golden) >> 11) + 0.5) 2^-53`` in Python arithmetic."""
    bits = ref_mix_int((key + (counter + 1) * GOLDEN) & MASK)
    return (float(bits >> 11) + 0.5) * 2.0**-53


def ref_mix(x: np.ndarray) -> np.ndarray:
    flat = [ref_mix_int(int(v)) for v in np.asarray(x, dtype=np.uint64).reshape(-1)]
    return np.array(flat, dtype=np.uint64).reshape(np.shape(x))


def ref_uniform(key: np.ndarray, counter: np.ndarray) -> np.ndarray:
    k, c = np.broadcast_arrays(np.asarray(key, dtype=np.uint64), np.asarray(counter))
    flat = [ref_uniform_int(int(a), int(b)) for a, b in zip(k.reshape(-1), c.reshape(-1))]
    return np.array(flat, dtype=np.float64).reshape(k.shape)


class _Block:
    """Set ``rnd.BLOCK`` for the duration of a ``with`` (hypothesis and fixtures do not mix)."""

    def __init__(self, size: int) -> None:
        self.size, self.saved = size, rnd.BLOCK

    def __enter__(self) -> None:
        rnd.BLOCK = self.size

    def __exit__(self, *exc: object) -> None:
        rnd.BLOCK = self.saved


u64 = hnp.arrays(
    np.uint64,
    hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=9),
    elements=st.integers(0, MASK),
)
blocks = st.sampled_from([1, 3, 7, 64, 16384])


def test_mix_is_splitmix64():
    # the first outputs of the SplitMix64 sequence started at 0 (state += golden, then mix)
    assert rnd.mix(np.uint64(GOLDEN)) == np.uint64(0xE220A8397B1DCDAF)
    assert rnd.mix(np.uint64(2 * GOLDEN & MASK)) == np.uint64(0x6E789E6AA1B965F4)


@settings(max_examples=150, deadline=None)
@given(x=u64, block=blocks)
def test_mix_equals_reference(x, block):
    before = x.copy()
    with _Block(block):
        out = rnd.mix(x)
    assert np.array_equal(x, before)  # the input is not modified
    expected = ref_mix(x)
    if x.ndim == 0:
        assert isinstance(out, np.uint64) and out == expected[()]
    else:
        assert out.dtype == np.uint64 and out.shape == x.shape
        assert np.array_equal(out, expected)


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=6),
    block=blocks,
)
def test_uniform_equals_reference(data, shapes, block):
    key_shape, counter_shape = shapes.input_shapes
    key = data.draw(hnp.arrays(np.uint64, key_shape, elements=st.integers(0, MASK)))
    counter = data.draw(hnp.arrays(np.int64, counter_shape, elements=st.integers(0, 2**62)))
    with _Block(block):
        u = rnd.uniform(key, counter)
        z = rnd.normal(key, counter)
    expected = ref_uniform(key, counter)
    assert np.shape(u) == shapes.result_shape
    assert np.array_equal(u, expected)
    assert np.all((0.0 < expected) & (expected <= 1.0))
    assert np.array_equal(np.isinf(z), expected == 1.0)


@settings(max_examples=100, deadline=None)
@given(
    key=hnp.arrays(
        np.uint64,
        hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
        elements=st.integers(0, MASK),
    ),
    first=st.integers(0, 2**63),
    count=st.integers(0, 300),
    block=blocks,
)
def test_uniform_run_equals_uniform_at_consecutive_counters(key, first, count, block):
    with _Block(block):
        run = rnd.uniform_run(key, first, count)
    assert run.shape == (*key.shape, count)
    counters = np.array([first + j for j in range(count)], dtype=np.uint64)
    expected = ref_uniform(np.asarray(key)[..., None], counters)
    assert np.array_equal(run, expected)


def test_scalar_uniform_is_a_float64_scalar():
    key = rnd.stream_key(4, 2, "scalar")
    u = rnd.uniform(key, 17)
    assert isinstance(u, np.float64) and u == ref_uniform_int(int(key), 17)


def test_uniform_run_beyond_the_cached_table(monkeypatch):
    monkeypatch.setattr(rnd, "RUN_CACHE", 16)
    monkeypatch.setattr(rnd, "_RUN_TABLE", np.zeros(0, dtype=np.uint64))
    keys = rnd.stream_key(9, np.arange(3), "run")
    for count in (5, 16, 40, 11):
        expected = rnd.uniform(keys[:, None], 1000 + np.arange(count))
        assert np.array_equal(rnd.uniform_run(keys, 1000, count), expected)
    assert rnd._RUN_TABLE.size <= 16 and not rnd._RUN_TABLE.flags.writeable


def test_uniform_run_rejects_negative_arguments():
    with pytest.raises(ValueError, match="non-negative"):
        rnd.uniform_run(np.uint64(1), -1, 3)
    with pytest.raises(ValueError, match="non-negative"):
        rnd.uniform_run(np.uint64(1), 0, -3)
