"""Backend registry: a name -> lazy "module:attr" map plus a decorator for in-tree or third-party backends."""

from __future__ import annotations

import importlib
from typing import Callable, TypeVar

from multikernelbench.backends.base import Backend

_LAZY: dict[str, str] = {
    "cpu": "multikernelbench.backends.cpu:CpuBackend",
    "cuda": "multikernelbench.backends.cuda:CudaBackend",
    "triton": "multikernelbench.backends.triton:TritonBackend",
    "pallas": "multikernelbench.backends.pallas:PallasBackend",
}
_LOADED: dict[str, type[Backend]] = {}

B = TypeVar("B", bound=type)


def register_backend(name: str) -> Callable[[B], B]:
    """Class decorator: ``@register_backend("mychip")`` makes ``--backend mychip`` work."""

    def deco(cls: B) -> B:
        cls.name = name  # type: ignore[attr-defined]
        _LOADED[name] = cls  # type: ignore[assignment]
        return cls

    return deco


def register_lazy(name: str, target: str) -> None:
    _LAZY[name] = target


def backend_names() -> list[str]:
    return sorted(set(_LAZY) | set(_LOADED))


def get_backend(name: str, **options) -> Backend:
    if name not in _LOADED:
        if name not in _LAZY:
            raise KeyError(f"unknown backend {name!r}; known: {', '.join(backend_names())}")
        module_name, attr = _LAZY[name].split(":")
        cls = getattr(importlib.import_module(module_name), attr)
        _LOADED.setdefault(name, cls)
    return _LOADED[name](**options)


def available_backends() -> dict[str, str]:
    """name -> "" when usable here, else the reason it is not (missing toolchain, no device...)."""
    out = {}
    for name in backend_names():
        try:
            avail = get_backend(name).availability()
            out[name] = "" if avail.ok else avail.reason
        except Exception as exc:  # an import failure is itself the reason
            out[name] = f"cannot load backend: {exc!r}"
    return out
