"""Greedy alpha-approximation oracle (Appendix A.3, Algorithm 5 of the combinatorial paper).

Algorithm 5 (alpha-AROQ-CMAB) replaces the exact oracle by an oracle ``O^alpha_t`` returning an
action ``a^alpha_t`` with ``r^UCB_t(a^alpha_t) >= alpha max_a r^UCB_t(a)`` and is analysed with
the alpha-regret ``R^alpha(T) = E[sum_t alpha r(a*) - r(a_t)]``.  Here the approximate oracle is
the classic greedy rule: start from the arms that must be included and repeatedly add the
highest-score arm that keeps the partial action contained in some feasible action, until
the partial set is an action and no further arm helps.

Known guarantees (non-negative scores, unrestricted query, as in Algorithm 5 line 10):

* ``m-sets``: greedy is exact (alpha = 1): it is the top-``m`` rule.
* ``matchings``: alpha = 1/2.  Feasible partial sets of our construction are exactly the
  matchings of size ``<= m`` (see :class:`~dashboard.algorithms.cmab.actions.Matchings`), an
  intersection of two matroids, on which greedy is a 1/2-approximation (Jenkyns 1976; Korte &
  Hausmann 1978).  For an arbitrary graph, "matchings of size exactly m" is not such a system
  and greedy can fall below 1/2 (a test shows a 10/27 instance).
* ``paths`` and ``explicit``: no constant guarantee (greedy can commit to a heavy first link
  that only continues through poor ones); :func:`alpha_guarantee` returns ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .actions import ActionFamily, _check_scores, restriction_masks

__all__ = ["alpha_guarantee", "greedy_linear", "greedy_oracle", "validate_alpha"]


def validate_alpha(value: Any) -> float:
    """The approximation factor alpha as a float in (0, 1] (Appendix A.3: ``O^alpha_t``
    returns ``a`` with ``r^UCB(a) >= alpha max r^UCB``; alpha = 0 would promise nothing and
    make the alpha-regret ``sum_t alpha r(a*) - r(a_t)`` meaningless).

    The same range and sentence as the problem spec's ``alpha`` field (``low_open``), which the
    CLI and the dashboard read; :class:`AlphaAROQ` uses this function directly.

    Raises
    ------
    ValueError
        One sentence naming the allowed range and the value given.
    """
    message = f"alpha must be a number > 0 and <= 1, got {value!r}"  # as the spec's field
    if isinstance(value, bool):
        raise ValueError(message)
    try:
        a = float(value)
    except (TypeError, ValueError):
        raise ValueError(message) from None
    if not (0.0 < a <= 1.0):  # also rejects nan; 0 would promise nothing
        raise ValueError(message)
    return a


def alpha_guarantee(family: ActionFamily) -> float | None:
    """Known approximation factor alpha of :func:`greedy_oracle` on ``family``.

    Returns
    -------
    float or None
        1.0 for m-sets, 0.5 for matchings, ``None`` when no constant guarantee is known
        (paths, explicit lists, unknown families).  Valid for non-negative scores and
        unrestricted queries (no ``include`` / ``exclude``).
    """
    return getattr(family, "greedy_alpha", None)


def greedy_linear(
    family: ActionFamily,
    scores: np.ndarray,
    include: Sequence[int] | np.ndarray = (),
    exclude: np.ndarray | None = None,
) -> np.ndarray | None:
    """Greedy maximisation of ``<a, scores>`` over the actions of ``family``.

    Starting from ``include``, add the feasible arm with the highest score (ties: lowest
    index) while the partial set is not yet an action, or while it is one but the best
    feasible arm has a positive score.  Feasibility (``partial + {i}`` is contained in an
    action avoiding ``exclude``) is asked from ``family.extendable_arms``.

    Returns
    -------
    numpy.ndarray of bool or None
        An action of ``family``, or ``None`` if no action contains ``include`` and avoids
        ``exclude``.
    """
    s = _check_scores(scores, family.d)
    must, banned = restriction_masks(family.d, include, exclude)
    partial = must.copy()
    if not family.is_extendable(partial, (), banned):
        return None
    while True:
        cand = family.extendable_arms(partial, (), banned)
        if not cand.any():
            break  # partial is contained in an action and cannot grow: it is that action
        idx = np.flatnonzero(cand)
        best = int(idx[np.argmax(s[idx])])
        if s[best] <= 0 and family.is_action(partial):
            break
        partial[best] = True
    return partial


def greedy_oracle(family: ActionFamily, request: Any) -> np.ndarray | None:
    """Greedy approximate oracle with the signature ``Oracle(approximate=...)`` expects.

    Parameters
    ----------
    family : ActionFamily
    request : OracleRequest
        A linear query (``request.scores``); its ``include`` / ``exclude`` are honoured.

    Raises
    ------
    ValueError
        If the request carries a set function instead of scores (greedy needs linear scores).
    """
    if getattr(request, "scores", None) is None:
        raise ValueError("greedy_oracle needs a linear query (request.scores), got scores=None")
    return greedy_linear(family, request.scores, request.include, request.exclude)
