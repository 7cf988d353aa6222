"""Action families of the combinatorial semi-bandit (Section 2) and their exact oracles.

An action is a boolean vector of length ``d`` (the base arms it activates); ``m`` is the largest
action size, ``m = max_{a in A} ||a||_0`` (Section 2).  Every family answers the queries the
algorithms make:

* :meth:`ActionFamily.argmax_linear`: ``argmax_a sum_{i in a} w_i`` (UCB/LCB indices, Eq. (1)
  and (2)),
* :meth:`ActionFamily.argmax_set_function`: ``argmax_a f(a)`` for an arbitrary set function
  (general rewards, Algorithms 6-7),

both optionally restricted to actions that contain given arms (``include``: the representative
action of arm ``i`` in SROQ, Algorithm 2 line 6; pairs in SROQ-C) and avoid eliminated arms
(``exclude``: ``A_tau`` in Algorithm 2 line 8).  They return ``None`` when no action satisfies
the restriction.  :meth:`ActionFamily.enumerate` lists all actions (brute-force reference).

The paper allows any ``A subset {0,1}^d`` and motivates it with recommendation (sets of items),
ad slots and network routing (paths of links); its experiments only give ``d`` and ``m``.  We
provide four families:

========================  ===============================================  ==================
key                       actions                                          exact oracle
========================  ===============================================  ==================
``m-sets``                all subsets of exactly ``m`` arms                top-``m`` sort
``paths``                 source-sink paths of a layered DAG (arms=edges)  dynamic programming
``matchings``             matchings of size ``m`` (arms = bipartite edges) assignment problem
``explicit``              a user-supplied list of binary actions           enumeration
========================  ===============================================  ==================

Infinite scores (e.g. optimistic indices of unplayed arms) are allowed: ``+inf`` / ``-inf``
are compared lexicographically, i.e. an action is first ranked by (number of ``+inf`` arms)
minus (number of ``-inf`` arms), then by the sum of its finite scores.  ``NaN`` is rejected.

The greedy builder of :mod:`dashboard.algorithms.cmab.approx` (the alpha-approximation oracle
of Appendix A.3) uses the feasibility queries :meth:`ActionFamily.is_extendable`,
:meth:`ActionFamily.can_extend`, :meth:`ActionFamily.extendable_arms` and
:meth:`ActionFamily.is_action`.

One module per family (:mod:`.msets`, :mod:`.paths`, :mod:`.matchings`, :mod:`.explicit`)
on the shared contract of :mod:`.base`; this package registers them and builds one by key
(:func:`make_family`).  Every name stays importable from ``dashboard.algorithms.cmab.actions``.
"""

from __future__ import annotations

from typing import Any

from ...components import ComponentRegistry
from .base import (  # noqa: F401  (the private checks: used by approx.py)
    MAX_ENUMERATION,
    ActionFamily,
    _as_action,
    _check_score_matrix,
    _check_scores,
    _finite_scores,
    restriction_masks,
)
from .explicit import ExplicitActions
from .matchings import Matchings
from .msets import MSets
from .paths import Paths

__all__ = [
    "FAMILIES",
    "FAMILY_REGISTRY",
    "MAX_ENUMERATION",
    "ActionFamily",
    "ExplicitActions",
    "MSets",
    "Matchings",
    "Paths",
    "make_family",
    "restriction_masks",
]

#: Registered action families (built-ins first); plug-ins use ``FAMILY_REGISTRY.register``.
FAMILY_REGISTRY: ComponentRegistry[ActionFamily] = ComponentRegistry(
    "actions", ActionFamily, "action family"
)
for _cls in (MSets, Paths, Matchings, ExplicitActions):
    FAMILY_REGISTRY.register(_cls, plugin=False)
#: Built-in keys accepted by :func:`make_family` (case-insensitive).
FAMILIES: tuple[str, ...] = FAMILY_REGISTRY.names()


def make_family(
    key: str,
    d: int | None,
    m: int | None,
    seed: int = 0,
    actions: Any = None,
) -> ActionFamily:
    """Build an action family from its user-facing key.

    Parameters
    ----------
    key : str
        One of :data:`FAMILIES` (``"m-sets"``, ``"paths"``, ``"matchings"``, ``"explicit"``),
        case-insensitive.
    d, m : int
        Number of base arms and action size.  For ``"explicit"`` they are read from
        ``actions``; pass ``None`` or the matching values (a mismatch raises ValueError).
    seed : int
        Seed of the random graph constructions (ignored by ``m-sets`` and ``explicit``).
    actions : array-like, optional
        The rows of an ``"explicit"`` family.

    Raises
    ------
    ValueError
        Unknown key (the message lists :data:`FAMILIES`), invalid ``d``/``m``, or a missing /
        inconsistent ``actions`` list.
    """
    return FAMILY_REGISTRY.get(key).build(d, m, seed=seed, actions=actions)
