"""Simulation layer: problem specs, the runner (batch and streaming) and result containers."""

from .results import AlgorithmResult, SimulationResult
from .runner import Simulation, simulate, stream, time_grid
from .specs import CMABSpec, SemiparametricSpec, make_spec

__all__ = [
    "AlgorithmResult",
    "CMABSpec",
    "SemiparametricSpec",
    "Simulation",
    "SimulationResult",
    "make_spec",
    "simulate",
    "stream",
    "time_grid",
]
