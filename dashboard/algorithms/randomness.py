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

__all__ = [
    "integers",
    "mix",
    "normal",
    "stream_key",
    "uniform",
]


def mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser applied elementwise to a ``uint64`` array (wrapping arithmetic)."""
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = x ^ (x >> _S30)
        x = x * _M1
        x ^= x >> _S27
        x *= _M2
        x ^= x >> _S31
    return x


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
    """64 random bits at ``counter`` of stream ``key`` (both broadcast)."""
    c = np.asarray(counter, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return mix(np.asarray(key, dtype=np.uint64) + (c + np.uint64(1)) * _GOLDEN)


def uniform(key: np.ndarray | np.uint64, counter: np.ndarray | int) -> np.ndarray:
    """Uniform draws on the open interval (0, 1) at the given counters of the given streams."""
    return ((_bits(key, counter) >> _S11).astype(np.float64) + 0.5) * _TWO_M53


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
