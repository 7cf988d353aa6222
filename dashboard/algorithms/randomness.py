"""Counter-based random numbers: every draw is a pure function of its coordinates.

Why not ``numpy.random.Generator``?  The simulations advance policies in blocks of varying
length (until the next oracle call, epoch or phase) and the dashboard streams them in chunks
whose size depends on the playback speed.  With a sequential generator, the numbers a run sees
would depend on how it was chunked, and two algorithms compared on "the same" instance would
see different noise.  Here a value is ``hash(key, counter)`` where ``key`` names the stream
(seed, repetition, purpose, arm) and ``counter`` is its position (the pull number of an arm,
or the round ``t``).  Hence

* **reproducible**: same seed, same numbers, whatever the chunking (API, CLI, notebooks and
  dashboard agree);
* **common random numbers**: the ``n``-th pull of base arm ``i`` in repetition ``r`` returns the
  same outcome for every algorithm (the "reward table" model, distributionally identical to
  i.i.d. draws per round), and round ``t`` has the same noise for every semiparametric policy;
* **vectorised**: a whole block of draws for many arms or repetitions is one numpy expression.

The mixer is SplitMix64's finaliser (Steele, Lea & Flood 2014) applied to ``key + counter *
golden``, which is exactly the SplitMix64 sequence started at ``key``; its output passes
BigCrush, which is ample for simulation.
"""

from __future__ import annotations

import zlib

import numpy as np
from scipy.special import ndtri

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_TWO_M53 = 2.0**-53
#: Elements per block of the in-place mixing loop: a block and its temporary stay in cache.
BLOCK = 16384
#: Largest cached table of counter products ``j golden`` (:func:`uniform_run`), 2 MB.
RUN_CACHE = 1 << 18
_RUN_TABLE = np.zeros(0, dtype=np.uint64)

__all__ = [
    "integers",
    "mix",
    "normal",
    "stream_key",
    "uniform",
    "uniform_run",
]


def _mix_block(x: np.ndarray, tmp: np.ndarray) -> None:
    """SplitMix64 finaliser of the 1-D ``uint64`` array ``x`` in place (``tmp``: same size)."""
    np.right_shift(x, _S30, out=tmp)
    x ^= tmp
    x *= _M1
    np.right_shift(x, _S27, out=tmp)
    x ^= tmp
    x *= _M2
    np.right_shift(x, _S31, out=tmp)
    x ^= tmp


def _mix_inplace(x: np.ndarray, out: np.ndarray | None = None) -> None:
    """Mix the C-contiguous ``uint64`` array ``x`` in place, :data:`BLOCK` elements at a time
    (each block's passes stay in cache); with ``out`` (float64, same shape) also write the
    uniforms ``((x >> 11) + 0.5) 2^-53`` there (``x`` then holds ``x >> 11``)."""
    flat = x.reshape(-1)
    fout = None if out is None else out.reshape(-1)
    n = flat.size
    tmp = np.empty(min(n, BLOCK), dtype=np.uint64)
    for s in range(0, n, BLOCK):
        xb = flat[s : s + BLOCK]
        _mix_block(xb, tmp[: xb.size])
        if fout is not None:
            xb >>= _S11
            ob = fout[s : s + BLOCK]
            # exact: below 2^53; read as int64 (the same values), which converts to float64
            # faster than uint64 (AVX2 has no unsigned conversion): 2.0 -> 1.6 ns per value
            np.copyto(ob, xb.view(np.int64), casting="unsafe")
            ob += 0.5
            ob *= _TWO_M53


def mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser applied elementwise to a ``uint64`` array (wrapping arithmetic).

    Returns a new array (a ``numpy.uint64`` for a scalar input); ``x`` is not modified."""
    out = np.array(x, dtype=np.uint64, order="C")  # a copy, mixed in place
    _mix_inplace(out)
    return out[()] if out.ndim == 0 else out


def stream_key(seed: int, *parts: int | str | np.ndarray) -> np.ndarray | np.uint64:
    """Derive the key of a named stream, e.g. ``stream_key(seed, rep, "noise", arm)``.

    Parameters
    ----------
    seed : int
        The user's seed (any non-negative integer).
    *parts : int, str or array of int
        Coordinates naming the stream.  Strings are hashed with CRC32; an array part yields an
        array of keys (broadcasting), e.g. one key per base arm.

    Returns
    -------
    numpy.uint64 or numpy.ndarray of uint64
    """
    if int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    with np.errstate(over="ignore"):
        key = mix(np.asarray(int(seed) % 2**64, dtype=np.uint64) + _GOLDEN)
        for part in parts:
            if isinstance(part, str):
                part = zlib.crc32(part.encode())
            arr = np.asarray(part)
            if arr.dtype.kind not in "iu":
                raise ValueError("stream key parts must be integers or strings")
            key = mix(key ^ mix(arr.astype(np.uint64) + _GOLDEN))
    return key[()] if np.ndim(key) == 0 else key


def _bits(key: np.ndarray | np.uint64, counter: np.ndarray | int) -> np.ndarray:
    """``key + (counter + 1) golden`` (both broadcast), the SplitMix64 state *before* mixing,
    as a fresh C-contiguous ``uint64`` array.  Computed as ``counter golden + (key + golden)``
    on the counters' own shape first, so only the last addition has the broadcast shape."""
    c = np.array(counter, dtype=np.uint64)  # a copy, multiplied in place
    k = np.asarray(key, dtype=np.uint64)
    x = np.empty(np.broadcast_shapes(c.shape, k.shape), dtype=np.uint64)
    with np.errstate(over="ignore"):
        c *= _GOLDEN
        np.add(c, k + _GOLDEN, out=x)
    return x


def _golden_run(count: int) -> np.ndarray:
    """``j golden`` for ``j = 0 .. count-1`` (read-only, cached up to :data:`RUN_CACHE`)."""
    global _RUN_TABLE
    if count > RUN_CACHE:
        return np.arange(count, dtype=np.uint64) * _GOLDEN
    table = _RUN_TABLE
    if table.size < count:
        table = np.arange(max(count, 2 * table.size), dtype=np.uint64)[:RUN_CACHE] * _GOLDEN
        table.flags.writeable = False
        _RUN_TABLE = table
    return table[:count]


def uniform(key: np.ndarray | np.uint64, counter: np.ndarray | int) -> np.ndarray:
    """Uniform draws on the open interval (0, 1) at the given counters of the given streams."""
    x = _bits(key, counter)
    out = np.empty(x.shape)
    _mix_inplace(x, out)
    return out[()] if out.ndim == 0 else out


def uniform_run(key: np.ndarray | np.uint64, first: int, count: int) -> np.ndarray:
    """``uniform(key[..., None], first + arange(count))``: the uniforms at ``count`` consecutive
    counters of each stream, shape ``key.shape + (count,)``, with the counter products
    ``j golden`` read from a cached table (the same numbers, fewer passes)."""
    first, count = int(first), int(count)
    if first < 0 or count < 0:
        raise ValueError(f"first and count must be non-negative, got {first}, {count}")
    k = np.asarray(key, dtype=np.uint64)
    start = np.uint64((first + 1) * int(_GOLDEN) % 2**64)
    with np.errstate(over="ignore"):
        x = np.add((k + start)[..., None], _golden_run(count))
    out = np.empty(x.shape)
    _mix_inplace(x, out)
    return out


def normal(key: np.ndarray | np.uint64, counter: np.ndarray | int) -> np.ndarray:
    """Standard normal draws (inverse CDF of :func:`uniform`, so one counter gives one value)."""
    return ndtri(uniform(key, counter))


def integers(
    key: np.ndarray | np.uint64, counter: np.ndarray | int, high: int | np.ndarray
) -> np.ndarray:
    """Integers uniform on ``0 .. high-1`` (multiply-shift on 53 bits; bias below 2**-40)."""
    return np.floor(uniform(key, counter) * np.asarray(high)).astype(np.int64)


def categorical(
    key: np.ndarray | np.uint64, counter: np.ndarray | int, cdf: np.ndarray
) -> np.ndarray:
    """Indices drawn from a discrete distribution given by its cumulative sums ``cdf``."""
    u = uniform(key, counter)
    idx = np.searchsorted(cdf, u * cdf[-1], side="right")
    return np.minimum(idx, len(cdf) - 1)
