"""State of the dashboard as ``param.Parameterized`` classes (no Panel / HoloViews imports).

Two ideas, one module each, both importable from here:

:class:`~dashboard.ui.config.Config` (:mod:`dashboard.ui.config`)
    Everything the sidebar chooses, generated from the problem schema; derived
    ``algorithm_options`` and ``errors``; lesson presets; the spec and run request.

:class:`~dashboard.ui.run_model.RunModel` (:mod:`dashboard.ui.run_model`)
    The run state machine around one run handle (in-process or on a Dask worker), paced
    frame by frame by the view's periodic callback.
"""

from __future__ import annotations

from .config import (
    CONSTANTS,
    DEFAULT_ALGORITHMS,
    MAX_ALGORITHMS,
    MAX_WORK_ENV,
    OPTIONAL_PRESET_KEYS,
    PRESET_KEYS,
    SPEEDS,
    Config,
    Knob,
    class_max_work,
)
from .run_model import ENGINE_ENV, RunModel, default_engine

__all__ = [
    "CONSTANTS",
    "DEFAULT_ALGORITHMS",
    "ENGINE_ENV",
    "MAX_ALGORITHMS",
    "MAX_WORK_ENV",
    "OPTIONAL_PRESET_KEYS",
    "PRESET_KEYS",
    "SPEEDS",
    "Config",
    "Knob",
    "RunModel",
    "class_max_work",
    "default_engine",
]
