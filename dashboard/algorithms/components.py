"""Registries of shifts, action families and reward models, built from their declarations.

Each class carries a :class:`~dashboard.algorithms.declare.ComponentDeclaration` as its
``declaration`` class attribute; the module defining the built-ins creates one
:class:`ComponentRegistry` and registers them, and :meth:`ComponentRegistry.register` lets a
plug-in add its own (a new shift type is one file plus one ``register`` line).
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar, Generic, TypeVar

from .declare import ComponentDeclaration

__all__ = ["ComponentRegistry", "Declared"]

T = TypeVar("T")


class Declared:
    """Base of every declared component (shift, action family, reward model): a subclass that
    sets ``declaration`` gets ``key`` = the declaration's name (the CLI / dashboard key)."""

    #: What the component says about itself (name, doc, reference); ``key`` is its name.
    declaration: ClassVar[ComponentDeclaration | None] = None
    #: The CLI / dashboard key (``m-sets``, ``sine`` ...).
    key: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        decl = cls.__dict__.get("declaration")
        if isinstance(decl, ComponentDeclaration):
            cls.key = decl.name


class ComponentRegistry(Generic[T]):
    """Name (lower case) -> class, for one kind of component.

    Parameters
    ----------
    kind : str
        ``"shift"``, ``"actions"`` or ``"reward"`` (must match the declarations' ``kind``).
    base : type
        The abstract base class every registered class must subclass.
    label : str
        Words used in messages (``"shift"``, ``"action family"``, ``"reward model"``).
    """

    def __init__(self, kind: str, base: type, label: str) -> None:
        self.kind, self.base, self.label = kind, base, label
        self._classes: dict[str, type] = {}
        self._plugins: set[str] = set()

    def check(self, cls: Any) -> str | None:
        """Why ``cls`` cannot be registered (``None`` if it can)."""
        if not inspect.isclass(cls) or not issubclass(cls, self.base):
            return f"{cls!r} is not a subclass of {self.base.__module__}.{self.base.__name__}"
        decl = cls.__dict__.get("declaration")
        if not isinstance(decl, ComponentDeclaration) or decl.kind != self.kind:
            return f"{cls.__qualname__} has no {self.kind} declaration of its own"
        missing = sorted(getattr(cls, "__abstractmethods__", ()))
        if missing:
            return f"{cls.__qualname__} does not implement {', '.join(missing)}"
        return None

    def register(self, cls: type, *, replace: bool = False, plugin: bool = True) -> type:
        """Add ``cls`` under its declared name; ValueError if invalid or the name is taken
        (``replace=True`` replaces a plug-in, never a built-in)."""
        why = self.check(cls)
        if why is not None:
            raise ValueError(f"invalid {self.label}: {why}")
        name = cls.declaration.name
        old = self._classes.get(name)
        if old is not None and old is not cls and not (replace and name in self._plugins):
            raise ValueError(f"a {self.label} named {name!r} is already registered")
        self._classes[name] = cls
        if plugin:
            self._plugins.add(name)
        return cls

    def unregister(self, name: str) -> None:
        """Remove a plug-in (built-ins stay); unknown names are ignored."""
        if name in self._plugins:
            self._plugins.discard(name)
            self._classes.pop(name, None)

    def names(self, plugins_only: bool = False) -> tuple[str, ...]:
        """Registered names, built-ins first (only the plug-ins' with ``plugins_only``)."""
        return tuple(n for n in self._classes if not plugins_only or n in self._plugins)

    def get(self, name: Any) -> type:
        """The class registered as ``name`` (case-insensitive); ValueError lists the names."""
        cls = self._classes.get(str(name).strip().lower())
        if cls is None:
            raise ValueError(f"unknown {self.label} {name!r}; choose from: {', '.join(self)}")
        return cls

    def declarations(self) -> list[ComponentDeclaration]:
        """The declarations of every registered class."""
        return [c.declaration for c in self._classes.values()]

    def __iter__(self) -> Any:
        return iter(self._classes)

    def __contains__(self, name: object) -> bool:
        return name in self._classes
