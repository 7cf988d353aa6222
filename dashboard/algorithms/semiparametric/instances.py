"""Semiparametric bandit instances: features X (K x d) and the parameter theta* (Section 2.1).

The reward of arm ``a_t`` at round ``t`` is ``r_t = x_{a_t}^T theta* + nu_t + eta_t`` (Section 2.1);
an *instance* holds the parametric part ``(X, theta*)`` only.  Shifts ``nu_t`` live in
:mod:`.shifts` and the noise ``eta_t`` in :mod:`.environment`.

Assumption 1 asks ``||theta*||_2 <= 1`` and ``||x_i||_2 <= 1``; instances check it and either
reject violations or, with ``rescale=True``, divide by the largest norm.

Generators
----------
``random_instance``       random unit features and a random unit theta*.
``gap_instance``          features with a prescribed suboptimality gap Delta* (Appendix I).
``multi_armed_instance``  standard basis features, d = K (Section 5.4).
``load_features_csv``     features from a CSV file (K rows, d columns).
``make_instance``         one entry point for the CLI / dashboard (``kind`` = one of
                          :data:`INSTANCE_KINDS`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .. import randomness as rnd
from ..base import validate_int

__all__ = [
    "INSTANCE_KINDS",
    "MAX_ARMS",
    "MAX_CSV_BYTES",
    "MAX_DIM",
    "SemiparametricInstance",
    "check_feature_rows",
    "gap_instance",
    "load_features_csv",
    "make_instance",
    "multi_armed_instance",
    "random_instance",
]

#: Keys accepted by :func:`make_instance`.
INSTANCE_KINDS = ("random", "gap", "multi-armed", "csv")

#: Limits of user-given features (a CSV file or an array): the same as the problem schema's
#: K and d bounds (:data:`dashboard.simulation.specs.FIELDS`), and a byte cap on the file.
MAX_ARMS = 2000
MAX_DIM = 200
MAX_CSV_BYTES = 16 * 1024 * 1024

_NORM_TOL = 1e-9


class SemiparametricInstance:
    """Features ``X`` (K x d) and parameter ``theta*`` (d,) of a semiparametric bandit.

    Parameters
    ----------
    X : array_like, shape (K, d)
        Arm features ``x_1, ..., x_K`` (rows).  Requires ``K >= 2``, ``d >= 1``, finite values.
    theta : array_like, shape (d,)
        The unknown parameter ``theta*``.
    name : str
        Human-readable description.
    rescale : bool
        If a feature or theta* has Euclidean norm above 1 (Assumption 1), divide all features
        by the largest feature norm and theta* by its norm instead of raising ValueError.

    Attributes
    ----------
    X, theta : numpy arrays (read-only copies).
    K, d : int
    mean_rewards : (K,) array, ``x_i^T theta*``.
    best_arm : int, ``a* = argmax_i x_i^T theta*`` (first index on ties).
    gaps : (K,) array, ``x_{a*}^T theta* - x_i^T theta*`` (per-round pseudo-regret).
    min_gap : float, ``Delta* = x_{a*}^T theta* - max_{j != a*} x_j^T theta*``.
    rescaled : bool, whether ``rescale`` changed anything.
    """

    def __init__(
        self, X: np.ndarray, theta: np.ndarray, name: str = "custom", rescale: bool = False
    ) -> None:
        try:
            X = np.array(X, dtype=float)
            theta = np.array(theta, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"features and theta must be numeric arrays: {exc}") from None
        if X.ndim != 2:
            raise ValueError(f"features X must be a 2-D array (K rows, d columns), got {X.ndim}-D")
        K, d = X.shape
        if K < 2:
            raise ValueError(f"need at least K >= 2 arms, got K = {K}")
        if d < 1:
            raise ValueError(f"need feature dimension d >= 1, got d = {d}")
        if theta.shape != (d,):
            raise ValueError(f"theta must have shape ({d},) to match X, got {theta.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("features X contain NaN or infinite values; all must be finite")
        if not np.all(np.isfinite(theta)):
            raise ValueError("theta contains NaN or infinite values; all must be finite")
        x_norm = float(_safe_norms(X).max())
        t_norm = float(_safe_norms(theta[None, :])[0])
        self.rescaled = False
        if x_norm > 1 + _NORM_TOL or t_norm > 1 + _NORM_TOL:
            if not rescale:
                raise ValueError(
                    "Assumption 1 needs ||x_i|| <= 1 and ||theta*|| <= 1, got max ||x_i|| = "
                    f"{x_norm:.4g} and ||theta*|| = {t_norm:.4g}; pass rescale=True to divide "
                    "by the largest norm"
                )
            if x_norm > 1:
                X = _safe_divide(X, x_norm)
            if t_norm > 1:
                theta = _safe_divide(theta, t_norm)
            if not np.any(X):
                raise ValueError(
                    "rescaling the features made them all zero (values too far apart in size); "
                    "rescale them yourself"
                )
            self.rescaled = True
        X.setflags(write=False)
        theta.setflags(write=False)
        self.X = X
        self.theta = theta
        self.K, self.d = K, d
        self.name = str(name)
        mean = X @ theta
        mean.setflags(write=False)
        self.mean_rewards = mean
        self.best_arm = int(np.argmax(mean))
        gaps = mean[self.best_arm] - mean
        gaps.setflags(write=False)
        self.gaps = gaps
        others = np.delete(mean, self.best_arm)
        self.min_gap = float(mean[self.best_arm] - others.max())

    def describe(self) -> str:
        """One-line human description."""
        return f"{self.name} (K={self.K}, d={self.d}, Delta*={self.min_gap:.3g})"

    def to_dict(self) -> dict:
        """Plain-python summary (for reports and JSON export)."""
        return {
            "name": self.name,
            "K": self.K,
            "d": self.d,
            "best_arm": self.best_arm,
            "min_gap": self.min_gap,
            "X": self.X.tolist(),
            "theta": self.theta.tolist(),
        }


def _safe_norms(X: np.ndarray) -> np.ndarray:
    """Row norms without overflow (values near 1e308 would square to inf)."""
    scale = np.max(np.abs(X), axis=1, keepdims=True)
    scale = np.where(scale > 0, scale, 1.0)
    return scale[:, 0] * np.linalg.norm(X / scale, axis=1)


def _safe_divide(a: np.ndarray, norm: float) -> np.ndarray:
    """``a / norm`` even when the norm overflowed (dividing by inf would give zeros)."""
    if np.isfinite(norm):
        return a / norm
    half = a / 2.0  # every value halved: the largest norm is then finite
    return half / float(_safe_norms(np.atleast_2d(half)).max())


def check_feature_rows(X: np.ndarray, where: str = "features") -> None:
    """Refuse user features that cannot define a bandit: more than :data:`MAX_ARMS` rows or
    :data:`MAX_DIM` columns, every row zero, or two identical rows (one arm listed twice)."""
    K, d = X.shape
    if K > MAX_ARMS or d > MAX_DIM:
        raise ValueError(
            f"{where}: {K} rows x {d} columns; at most K = {MAX_ARMS} arms and d = {MAX_DIM} "
            "features are allowed"
        )
    if not np.any(X):
        raise ValueError(f"{where}: every feature row is zero; the arms cannot be told apart")
    _, first, counts = np.unique(X, axis=0, return_index=True, return_counts=True)
    if np.any(counts > 1):
        row = int(first[np.argmax(counts > 1)])
        dup = next(i for i in range(K) if i != row and np.array_equal(X[i], X[row]))
        raise ValueError(
            f"{where}: rows {row + 1} and {dup + 1} are identical (one arm listed twice); "
            "every arm needs its own feature row"
        )


def _unit_vectors(key: np.uint64, n: int, d: int, offset: int = 0) -> np.ndarray:
    """``n`` i.i.d. uniform unit vectors in R^d from counter-based normals."""
    z = rnd.normal(key, offset + np.arange(n * d)).reshape(n, d)
    norms = np.linalg.norm(z, axis=1, keepdims=True)
    return z / np.where(norms > 0, norms, 1.0)


def random_instance(d: int, K: int, seed: int = 0) -> SemiparametricInstance:
    """Random unit-norm features and a random unit theta*, all uniform on the sphere.

    Parameters
    ----------
    d, K : int
        Dimension (>= 1) and number of arms (>= 2).
    seed : int
        Instance seed (counter-based: same seed, same instance).
    """
    d = validate_int("d", d, 1)
    K = validate_int("K", K, 2)
    seed = validate_int("seed", seed, 0)
    key = rnd.stream_key(seed, "sp-random-instance", d, K)
    X = _unit_vectors(key, K, d)
    theta = _unit_vectors(key, 1, d, offset=K * d)[0]
    return SemiparametricInstance(X, theta, name=f"random(d={d}, K={K}, seed={seed})")


def gap_instance(d: int, K: int, gap: float = 0.5, seed: int = 0) -> SemiparametricInstance:
    """Unit features whose minimum suboptimality gap Delta* is exactly ``gap``.

    Appendix I says only that the features were "constructed with suboptimality gap
    Delta* = 1/2"; the construction is not given.  Ours: draw a random unit theta*, give the best
    arm the mean reward ``m* = max(1 - gap/2, gap - 1)``, one runner-up exactly ``m* - gap`` and
    the other ``K - 2`` arms means uniform on ``[-1, m* - gap]``; then
    ``x_i = m_i theta* + sqrt(1 - m_i^2) w_i`` with random unit ``w_i`` orthogonal to theta*, so
    ``||x_i|| = ||theta*|| = 1`` and ``x_i^T theta* = m_i`` exactly.  The arm order is shuffled so
    the best arm is not always arm 0.

    Parameters
    ----------
    d : int
        Dimension, >= 1.  For d = 1 the features are the scalars ``x_i = m_i`` and theta* = 1
        (unit features in R^1 would be +-1 and allow only gap 2).
    K : int
        Number of arms, >= 2.
    gap : float
        Delta*, in (0, 2] (rewards of unit vectors lie in [-1, 1]).
    seed : int
        Instance seed.
    """
    d = validate_int("d", d, 1)
    K = validate_int("K", K, 2)
    seed = validate_int("seed", seed, 0)
    try:
        gap = float(gap)
    except (TypeError, ValueError):
        raise ValueError(f"gap must be a number in (0, 2], got {gap!r}") from None
    if not (0.0 < gap <= 2.0) or not math.isfinite(gap):
        raise ValueError(
            f"gap must be in (0, 2] (rewards of unit features lie in [-1, 1]), got {gap}"
        )
    key = rnd.stream_key(seed, "sp-gap-instance", d, K)
    theta = _unit_vectors(key, 1, d)[0]
    m_star = max(1.0 - gap / 2.0, gap - 1.0)
    second = m_star - gap
    u = rnd.uniform(key, 10_000_000 + np.arange(K))
    means = np.empty(K)
    means[0], means[1] = m_star, second
    means[2:] = -1.0 + (second + 1.0) * u[2:]
    if d == 1:
        perm = np.argsort(rnd.uniform(key, 20_000_000 + np.arange(K)))
        return SemiparametricInstance(
            means[perm][:, None], np.ones(1), name=f"gap(d=1, K={K}, gap={gap:g}, seed={seed})"
        )
    # random directions orthogonal to theta*
    W = _unit_vectors(key, K, d, offset=d)
    W = W - np.outer(W @ theta, theta)
    norms = np.linalg.norm(W, axis=1, keepdims=True)
    W = W / np.where(norms > 1e-12, norms, 1.0)
    X = means[:, None] * theta[None, :] + np.sqrt(np.clip(1.0 - means**2, 0.0, None))[:, None] * W
    perm = np.argsort(rnd.uniform(key, 20_000_000 + np.arange(K)))
    X = X[perm]
    # guard against rounding: renormalise rows that drift above 1
    rn = np.linalg.norm(X, axis=1, keepdims=True)
    X = X / np.maximum(rn, 1.0)
    return SemiparametricInstance(X, theta, name=f"gap(d={d}, K={K}, gap={gap:g}, seed={seed})")


def multi_armed_instance(K: int, seed: int = 0) -> SemiparametricInstance:
    """Semiparametric multi-armed bandit (Section 5.4): features are the standard basis, d = K.

    The means ``mu_i = theta*_i`` are drawn uniformly on [0, 1] and then scaled by
    ``1 / max(1, ||mu||)`` so that ``||theta*|| <= 1`` (Assumption 1).  With many arms this
    makes the means (and gaps) small, as Assumption 1 forces.
    """
    K = validate_int("K", K, 2)
    seed = validate_int("seed", seed, 0)
    key = rnd.stream_key(seed, "sp-mab-instance", K)
    mu = rnd.uniform(key, np.arange(K))
    mu = mu / max(1.0, float(np.linalg.norm(mu)))
    return SemiparametricInstance(np.eye(K), mu, name=f"multi-armed(K={K}, seed={seed})")


def _parse_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _csv_rows(text: str, name: str) -> Iterator[list[str]]:
    """``csv.reader`` over ``text`` with its errors (a field above the reader's 128 KiB
    ``field_size_limit``) as one ValueError naming the file and the line."""
    reader = csv.reader(text.splitlines())
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            limit = csv.field_size_limit()
            why = (
                f"a field longer than {limit:,} characters ({limit // 1024} KiB, the limit); "
                "every field must be a number"
                if "field larger" in str(exc)
                else f"not a valid CSV line ({exc})"
            )
            raise ValueError(f"{name}, line {reader.line_num}: {why}") from None


def load_features_csv(
    path: str | Path, rescale: bool = False, theta: np.ndarray | None = None, seed: int = 0
) -> SemiparametricInstance:
    """Read arm features from a CSV file: one arm per row (K rows), one column per dimension.

    Blank lines and lines starting with ``#`` are skipped; a first row in which no field is a
    number is taken as a header.  Errors (empty file, ragged rows, non-numeric or NaN/inf
    values) raise ValueError naming the line.

    Parameters
    ----------
    path : str or Path
        The CSV file.
    rescale : bool
        Divide features by the largest row norm if it exceeds 1 (Assumption 1).
    theta : array, optional
        theta*; by default a random unit vector drawn from ``seed``.
    seed : int
        Seed of the random theta*.
    """
    path = Path(path)
    if path.exists() and not path.is_file():  # a FIFO would block, a device never end
        raise ValueError(f"features CSV {str(path)!r} is not a regular file")
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_CSV_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read features CSV {str(path)!r}: {exc.strerror}") from None
    if len(data) > MAX_CSV_BYTES:
        raise ValueError(
            f"{path.name}: larger than {MAX_CSV_BYTES // 1024**2} MB; a features CSV has at most "
            f"K = {MAX_ARMS} rows of d = {MAX_DIM} numbers"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"{path.name}: not a text (UTF-8) CSV file") from None
    if "\x00" in text:
        raise ValueError(f"{path.name}: not a text CSV file (it contains NUL bytes)")
    rows: list[list[float]] = []
    width = None
    header_seen = False
    for lineno, fields in enumerate(_csv_rows(text, path.name), start=1):
        fields = [f.strip() for f in fields]
        if not fields or all(f == "" for f in fields) or fields[0].startswith("#"):
            continue
        values = [_parse_float(f) for f in fields]
        if not rows and not header_seen and all(v is None for v in values):
            header_seen = True
            width = len(fields)
            continue
        bad = [f for f, v in zip(fields, values) if v is None]
        if bad:
            raise ValueError(
                f"{path.name}, line {lineno}: non-numeric value {bad[0]!r}; every field must "
                "be a number"
            )
        if not all(math.isfinite(v) for v in values):  # type: ignore[arg-type]
            raise ValueError(
                f"{path.name}, line {lineno}: NaN or infinite value; all must be finite"
            )
        if len(rows) >= MAX_ARMS or len(values) > MAX_DIM:
            raise ValueError(
                f"{path.name}, line {lineno}: at most K = {MAX_ARMS} rows of d = {MAX_DIM} "
                "numbers are allowed"
            )
        if width is None:
            width = len(values)
        elif len(values) != width:
            raise ValueError(
                f"{path.name}, line {lineno}: {len(values)} columns but expected {width} "
                "(every row must have the same number of features)"
            )
        rows.append(values)  # type: ignore[arg-type]
    if not rows:
        raise ValueError(f"{path.name}: no feature rows found (need K >= 2 rows of d >= 1 numbers)")
    X = np.array(rows, dtype=float)
    if X.shape[0] < 2:
        raise ValueError(f"{path.name}: need at least K >= 2 rows (arms), got {X.shape[0]}")
    check_feature_rows(X, path.name)
    if theta is None:
        seed = validate_int("seed", seed, 0)
        key = rnd.stream_key(seed, "sp-csv-theta", X.shape[1])
        theta = _unit_vectors(key, 1, X.shape[1])[0]
    return SemiparametricInstance(X, theta, name=f"csv({path.name})", rescale=rescale)


def make_instance(
    kind: str,
    d: int = 5,
    K: int = 10,
    gap: float = 0.5,
    seed: int = 0,
    features: str | Path | np.ndarray | None = None,
    rescale: bool = False,
) -> SemiparametricInstance:
    """Build an instance by name (CLI / dashboard entry point).

    Parameters
    ----------
    kind : str
        One of :data:`INSTANCE_KINDS`: ``"random"``, ``"gap"`` (Appendix I style),
        ``"multi-armed"`` (``d`` is ignored: d = K) or ``"csv"`` (``features`` is a path or an
        array of shape (K, d); ``d`` and ``K`` are ignored).
    d, K, gap, seed : see the generators.
    features : path or array, optional
        Required for ``kind="csv"``.
    rescale : bool
        For ``"csv"``: rescale norms above 1 instead of raising.
    """
    key = str(kind).strip().lower().replace("_", "-")
    if key == "random":
        return random_instance(d, K, seed)
    if key == "gap":
        return gap_instance(d, K, gap, seed)
    if key in ("multi-armed", "mab"):
        return multi_armed_instance(K, seed)
    if key == "csv":
        if features is None:
            raise ValueError('kind="csv" needs features= (a CSV path or a (K, d) array)')
        if isinstance(features, (str, Path)):
            return load_features_csv(features, rescale=rescale, seed=seed)
        try:
            X = np.asarray(features, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise ValueError("features must be a (K, d) array of numbers") from None
        if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 1:
            raise ValueError(f"features must be a (K, d) array with K >= 2, got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("features contain NaN or infinite values; all must be finite")
        check_feature_rows(X)
        key_t = rnd.stream_key(validate_int("seed", seed, 0), "sp-csv-theta", X.shape[1])
        theta = _unit_vectors(key_t, 1, X.shape[1])[0]
        return SemiparametricInstance(X, theta, name="features", rescale=rescale)
    raise ValueError(f"unknown instance kind {kind!r}; choose from: {', '.join(INSTANCE_KINDS)}")
