"""Plug-in API: your own policy (or shift, action family, reward model) in one file.

Three ways in (the contract is in docs/PLUGINS.md):

* from a notebook or script: ``register_algorithm(MyPolicy)`` (and :func:`register_shift`,
  :func:`register_family`, :func:`register_reward`);
* from the command line: ``python -m dashboard simulate --plugin my_policy.py ...``
  (:func:`load_plugin`: a ``.py`` file or an importable module; every declared class defined
  in it is registered);
* from an installed package: an entry point in the group ``bandit_dashboard.algorithms``
  (:data:`ENTRY_POINT_GROUP`) naming a class or a module; read by the catalogue on first use.

Every class is checked against the contract when it is registered; a bad plug-in gives one
ValueError sentence.  Registration is per process: a served dashboard only knows what its
process registered, and never imports code named in a URL or a widget.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from .algorithms import registry
from .algorithms.base import Policy
from .algorithms.cmab.actions import FAMILY_REGISTRY, ActionFamily
from .algorithms.cmab.rewards import REWARD_MODELS, RewardModel
from .algorithms.declare import AlgorithmDeclaration, ComponentDeclaration, Constant
from .algorithms.semiparametric.shifts import SHIFTS, Shift

__all__ = [
    "ENTRY_POINT_GROUP",
    "AlgorithmDeclaration",
    "ComponentDeclaration",
    "Constant",
    "Policy",
    "load_entry_points",
    "load_plugin",
    "register",
    "register_algorithm",
    "register_family",
    "register_reward",
    "register_shift",
]

#: Entry-point group read by :func:`load_entry_points`.
ENTRY_POINT_GROUP = "bandit_dashboard.algorithms"

_loaded_entry_points = False
#: What :func:`load_plugin` loaded, in order (absolute file paths or module names), so other
#: processes (Dask workers) can load the same plug-ins.
LOADED_SPECS: list[str] = []


def register_algorithm(cls: type, *, replace: bool = False) -> type:
    """Register a policy class (see :func:`dashboard.algorithms.registry.register_algorithm`);
    returns the class, so it also works as a decorator."""
    registry.register_algorithm(cls, replace=replace)
    return cls


def register_shift(cls: type, *, replace: bool = False) -> type:
    """Register a :class:`~dashboard.algorithms.semiparametric.shifts.Shift` subclass."""
    return SHIFTS.register(cls, replace=replace)


def register_family(cls: type, *, replace: bool = False) -> type:
    """Register an :class:`~dashboard.algorithms.cmab.actions.ActionFamily` subclass."""
    return FAMILY_REGISTRY.register(cls, replace=replace)


def register_reward(cls: type, *, replace: bool = False) -> type:
    """Register a :class:`~dashboard.algorithms.cmab.rewards.RewardModel` subclass."""
    return REWARD_MODELS.register(cls, replace=replace)


_BASES: tuple[tuple[type, Any], ...] = (
    (Policy, register_algorithm),
    (Shift, register_shift),
    (ActionFamily, register_family),
    (RewardModel, register_reward),
)


def register(cls: Any, *, replace: bool = False) -> type:
    """Register a class of any supported kind (chosen by its base class)."""
    for base, reg in _BASES:
        if inspect.isclass(cls) and issubclass(cls, base):
            return reg(cls, replace=replace)
    raise ValueError(
        f"invalid plug-in: {cls!r} is not a Policy, Shift, ActionFamily or RewardModel subclass"
    )


def _declared_classes(module: ModuleType) -> list[type]:
    """Classes defined in ``module`` that subclass a supported base.  Concrete ones without a
    declaration of their own are returned too, so registering them reports the omission."""
    found = []
    for obj in vars(module).values():
        if not inspect.isclass(obj) or obj.__module__ != module.__name__:
            continue
        if not any(issubclass(obj, base) for base, _ in _BASES):
            continue
        if "declaration" in obj.__dict__ or not inspect.isabstract(obj):
            found.append(obj)
    return found


def _first_line(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _is_file_spec(spec: str) -> bool:
    """Whether ``spec`` names a file (a ``.py`` name, a path, or something on disk that is
    not a directory: a FIFO named on the command line is a file argument, refused as such)."""
    named = os.path.lexists(spec) and not os.path.isdir(spec)  # a package dir: a module name
    return spec.endswith(".py") or os.sep in spec or named


def _read_source(spec: str) -> bytes:
    from .simulation.user_files import MAX_PLUGIN_BYTES, read_capped

    try:
        return read_capped(spec, MAX_PLUGIN_BYTES)
    except ValueError as exc:
        msg = str(exc).replace(repr(spec), "", 1).lstrip(": ")
        raise ValueError(f"cannot load plug-in {spec!r}: {msg}") from None


def _import(spec: str) -> ModuleType:
    path = Path(spec)
    if _is_file_spec(spec):
        source = _read_source(spec)  # a regular file, read with a cap (never a FIFO)
        digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
        name = f"bandit_dashboard_plugin_{digest}"
        if name in sys.modules:
            return sys.modules[name]
        mod_spec = importlib.util.spec_from_file_location(name, path)
        if mod_spec is None or mod_spec.loader is None:
            raise ValueError(f"cannot load plug-in {spec!r}: not a Python file")
        module = importlib.util.module_from_spec(mod_spec)
        sys.modules[name] = module
        try:
            code = compile(source, str(path), "exec", dont_inherit=True)
            exec(code, module.__dict__)  # what the file loader does, on the bytes read above
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module
    return importlib.import_module(spec)


class _CtrlC(BaseException):
    """A real Ctrl-C (SIGINT) while a plug-in was imported, told apart from a
    ``KeyboardInterrupt`` the plug-in's own code raises."""


@contextlib.contextmanager
def _real_ctrl_c() -> Iterator[None]:
    """While importing user code in the main thread, a SIGINT raises :class:`_CtrlC`."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise _CtrlC

    try:
        old = signal.signal(signal.SIGINT, handler)
    except (ValueError, OSError):  # pragma: no cover - no signals here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def load_plugin(spec: str) -> list[str]:
    """Import a plug-in file (``path/to/file.py``) or module (``package.module``) and register
    every declared class it defines.  Returns the registered names.

    Raises
    ------
    ValueError
        One sentence: the file cannot be imported (missing, not a regular file, above
        :data:`~dashboard.simulation.user_files.MAX_PLUGIN_BYTES`, syntax error, import error,
        any exception while importing, ``KeyboardInterrupt`` and ``SystemExit`` included), a
        class breaks the contract, a name clashes, or the module defines nothing to register.
        A real Ctrl-C while importing stays a ``KeyboardInterrupt``.
    """
    spec = str(spec).strip()
    if not spec:
        raise ValueError("--plugin needs a file path or a module name")
    is_file = _is_file_spec(spec)
    try:
        with _real_ctrl_c():
            module = _import(spec)
    except _CtrlC:
        raise KeyboardInterrupt from None
    except ValueError:
        raise
    except BaseException as exc:  # any failure of user code (KeyboardInterrupt, SystemExit...)
        raise ValueError(f"cannot load plug-in {spec!r}: {_first_line(exc)}") from None
    names = []
    for cls in _declared_classes(module):
        try:
            register(cls)
        except ValueError as exc:
            raise ValueError(f"plug-in {spec!r}: {exc}") from None
        names.append(cls.declaration.name)
    if not names:
        raise ValueError(
            f"plug-in {spec!r} defines no declared algorithm, shift, action family or reward "
            "model (the contract: bandit-dashboard docs PLUGINS)"
        )
    key = str(Path(spec).resolve()) if is_file else spec
    if key not in LOADED_SPECS:
        LOADED_SPECS.append(key)
    return names


def registered_plugin_classes() -> list[type]:
    """Every class registered as a plug-in in this process (algorithms and components)."""
    classes = [i.cls for i in registry.ALGORITHMS.values() if i.plugin]
    for reg in (SHIFTS, FAMILY_REGISTRY, REWARD_MODELS):
        classes += [reg.get(n) for n in reg.names(plugins_only=True)]
    return classes


def load_entry_points(group: str = ENTRY_POINT_GROUP) -> None:
    """Register the classes (or import the modules) named by installed entry points, once.

    A broken installed plug-in must not take down every command and served dashboard: it is
    skipped with one warning naming the entry point and the reason.
    """
    global _loaded_entry_points
    if _loaded_entry_points:
        return
    _loaded_entry_points = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=group):
        try:
            obj = ep.load()
            if inspect.ismodule(obj):
                for cls in _declared_classes(obj):
                    register(cls)
            else:
                register(obj)
        except Exception as exc:
            warnings.warn(
                f"skipped plug-in entry point {ep.name!r} ({ep.value}): {_first_line(exc)}",
                stacklevel=2,
            )
