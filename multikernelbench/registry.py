"""One registry type for every plugin seam: backends, samplers, prompt strategies, prompt contracts, static rules.

A :class:`Registry` maps a name to an object, filled three ways:

- **lazy entries** ``"module:attr"`` (:meth:`Registry.add_lazy`), imported only when the name is asked for, so
  listing the names never imports a heavy toolchain (triton, jax, vllm);
- **a decorator** ``@registry.register("name")`` (or ``registry.register("name", obj)``) for objects defined
  in an imported module;
- **Python entry points** of the registry's group (e.g. ``multikernelbench.backends``), read with
  :mod:`importlib.metadata` the first time the registry is listed or queried, so an installed third-party
  package adds a backend or a sampler without editing this package. In its ``pyproject.toml``::

      [project.entry-points."multikernelbench.backends"]
      mychip = "mkb_mychip.backend:MyChipBackend"

A name means one thing: registering a *different* object under a taken name raises
:class:`RegistryCollision` at once (re-registering the identical object is fine). A lazy entry and a
registered object agree when the entry names the object's own ``module:qualname``, or a re-export of it
(checked by identity once that module is loaded, and again when the entry is looked up).
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
Obj = TypeVar("Obj")


class RegistryCollision(ValueError):
    """Two different objects claim one name."""


@dataclass(frozen=True)
class _Lazy:
    target: str  # "module:attr", or "module" whose import registers the name itself
    origin: str  # where the entry came from, for error messages


def qualified_name(obj: Any) -> str:
    """``"module:qualname"`` of a class or function (the form a lazy entry names it by); "" when unknown."""
    module, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return f"{module}:{qual}" if module and qual else ""


def load_target(target: str) -> Any:
    """Import ``"module:attr"`` (attr may be dotted) and return the attribute; ``"module"`` returns the module."""
    module_name, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """Names -> objects of one kind (``kind`` names it in messages: "backend", "sampler", ...)."""

    def __init__(self, kind: str, entry_point_group: str | None = None,
                 lazy: dict[str, str] | None = None) -> None:
        self.kind = kind
        self.entry_point_group = entry_point_group
        self._objects: dict[str, T] = {}
        self._origins: dict[str, str] = {}
        self._lazy: dict[str, _Lazy] = {}
        self._entry_points_read = entry_point_group is None
        # Held for bookkeeping only, never across an import (a module being imported by another thread may
        # be registering into this registry); compile-pool threads read the static rules concurrently.
        self._lock = threading.RLock()
        for name, target in (lazy or {}).items():
            self.add_lazy(name, target)

    # ---- filling --------------------------------------------------------------------------------------
    def add_lazy(self, name: str, target: str, origin: str = "") -> None:
        """Register ``name`` as ``"module:attr"``, imported at the first :meth:`get`."""
        if not target or target.startswith(":"):
            raise ValueError(f"{self.kind} {name!r}: lazy target must be 'module:attr', got {target!r}")
        entry = _Lazy(target, origin or f"lazy entry {target!r}")
        with self._lock:
            self._add_lazy(name, entry)

    def _add_lazy(self, name: str, entry: _Lazy) -> None:
        target = entry.target
        old = self._lazy.get(name)
        if old is not None:
            if old.target != target:
                raise RegistryCollision(
                    f"{self.kind} name {name!r} registered twice: {old.target!r} ({old.origin}) and {target!r} "
                    f"({entry.origin})")
            return
        if name in self._objects and qualified_name(self._objects[name]) == target:
            return  # already imported and registered by its decorator
        # An object registered under a different spelling is checked against this entry at lookup.
        self._lazy[name] = entry

    @overload
    def register(self, name: str) -> Callable[[Obj], Obj]: ...

    @overload
    def register(self, name: str, obj: Obj) -> Obj: ...

    def register(self, name: str, obj: Any = None) -> Any:
        """``@registry.register("name")`` as a decorator, or ``registry.register("name", obj)``."""
        if obj is None:
            def deco(o: Obj) -> Obj:
                return self.register(name, o)

            return deco
        self._put(name, obj, f"registered {qualified_name(obj) or type(obj).__name__}")
        return obj

    def _put(self, name: str, obj: Any, origin: str) -> None:
        with self._lock:
            self._put_locked(name, obj, origin)

    def _put_locked(self, name: str, obj: Any, origin: str) -> None:
        if name in self._objects:
            old = self._objects[name]
            if old is obj or _same_value(old, obj):
                return
            raise RegistryCollision(
                f"{self.kind} name {name!r} registered twice: {self._origins[name]} and {origin}")
        lazy = self._lazy.get(name)
        if lazy is not None and origin != lazy.origin:
            if _names_other_object(lazy.target, obj):
                raise RegistryCollision(
                    f"{self.kind} name {name!r} registered twice: {lazy.target!r} ({lazy.origin}) and {origin}")
            if lazy.target == qualified_name(obj):
                del self._lazy[name]  # the lazy entry named exactly this object
        self._objects[name] = obj
        self._origins[name] = origin

    # ---- reading --------------------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Every registered name, sorted; imports nothing (entry points are read, not loaded)."""
        self._read_entry_points()
        with self._lock:
            return sorted(set(self._objects) | set(self._lazy))

    def __contains__(self, name: object) -> bool:
        self._read_entry_points()
        with self._lock:
            return name in self._objects or name in self._lazy

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def get(self, name: str) -> T:
        """The object registered as ``name`` (importing its module now if it was lazy); KeyError naming the
        known names when there is none."""
        self._read_entry_points()
        with self._lock:
            lazy = self._lazy.get(name)
        if lazy is not None:
            obj = load_target(lazy.target)  # may run a decorator that registers the same object
            with self._lock:
                if ":" not in lazy.target:  # a plugin module that registers the name itself when imported
                    if name not in self._objects:
                        raise KeyError(f"{self.kind} {name!r}: importing {lazy.target!r} ({lazy.origin}) did "
                                       f"not register it")
                else:
                    self._put_locked(name, obj, lazy.origin)
                if self._lazy.get(name) == lazy:
                    del self._lazy[name]
        with self._lock:
            if name in self._objects:
                return self._objects[name]
        raise KeyError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names()) or '(none)'}")

    def items(self) -> list[tuple[str, T]]:
        """Every (name, object), importing each lazy entry."""
        return [(name, self.get(name)) for name in self.names()]

    # ---- entry points ---------------------------------------------------------------------------------
    def _read_entry_points(self) -> None:
        if self._entry_points_read:
            return
        from importlib.metadata import entry_points

        with self._lock:  # reading metadata imports nothing of the plugins
            group = self.entry_point_group
            if self._entry_points_read or group is None:  # None: marked read from the start
                return
            for ep in entry_points(group=group):
                target = f"{ep.module}:{ep.attr}" if ep.attr else ep.module
                dist = getattr(getattr(ep, "dist", None), "name", None) or "an installed package"
                # the same distribution visible twice on sys.path gives an identical entry: accepted
                self._add_lazy(ep.name, _Lazy(target, f"entry point {target!r} of {dist}"))
            self._entry_points_read = True


def _names_other_object(target: str, obj: Any) -> bool:
    """Whether lazy ``target`` certainly names something other than ``obj``. The same ``module:qualname`` is
    the same object; another spelling (a re-export) is compared by identity once its module is loaded, and
    accepted for now while that module is still being imported (the lookup that is importing it compares
    what it finds)."""
    if target == qualified_name(obj) or ":" not in target:
        return False
    module_name, _, attr = target.partition(":")
    module = sys.modules.get(module_name)
    if module is None:
        return True
    found: Any = module
    for part in attr.split("."):
        if not hasattr(found, part):
            return False  # mid-import: not bound yet
        found = getattr(found, part)
    return found is not obj


def _same_value(a: Any, b: Any) -> bool:
    """Equal data records (e.g. a frozen dataclass registered again) count as the same entry; classes and
    functions compare by identity."""
    if callable(a) or callable(b):
        return False
    try:
        return bool(a == b)
    except Exception:
        return False
