"""Semiparametric bandits (experimental-design paper): instances, shifts, design, policies.

Public API (pure numpy/scipy):

* instances: :class:`SemiparametricInstance`, :func:`random_instance`, :func:`gap_instance`,
  :func:`multi_armed_instance`, :func:`load_features_csv`, :func:`make_instance`;
* shifts: :class:`Shift`, :class:`ShiftContext`, :func:`make_shift`, :data:`SHIFT_KEYS`;
* environment: :class:`SemiparametricEnvironment`;
* design: :func:`g_optimal_design`, :func:`deo_design`, :func:`design_report`;
* estimators: :class:`OrthogonalizedRidge` (Eq. 2), :class:`LeastSquares`;
* policies: :class:`SBE` (Algorithm 2), :class:`BOSE`, :class:`SemiparametricTS`,
  :class:`LinUCB`, :class:`GElimination`.
"""

from .design import deo_design, design_report, g_optimal_design
from .environment import SemiparametricEnvironment
from .estimators import LeastSquares, OrthogonalizedRidge, ridge_beta
from .instances import (
    INSTANCE_KINDS,
    SemiparametricInstance,
    gap_instance,
    load_features_csv,
    make_instance,
    multi_armed_instance,
    random_instance,
)
from .policies.bose import BOSE
from .policies.linear_foils import GElimination, LinUCB
from .policies.sbe import SBE, phase_length
from .policies.spts import SemiparametricTS
from .shifts import SHIFT_KEYS, Shift, ShiftContext, make_shift

__all__ = [
    "BOSE",
    "INSTANCE_KINDS",
    "SBE",
    "SHIFT_KEYS",
    "GElimination",
    "LeastSquares",
    "LinUCB",
    "OrthogonalizedRidge",
    "SemiparametricEnvironment",
    "SemiparametricInstance",
    "SemiparametricTS",
    "Shift",
    "ShiftContext",
    "deo_design",
    "design_report",
    "g_optimal_design",
    "gap_instance",
    "load_features_csv",
    "make_instance",
    "make_shift",
    "multi_armed_instance",
    "phase_length",
    "random_instance",
    "ridge_beta",
]
