"""Backend registry: name -> Backend class, on the package's generic :class:`~multikernelbench.registry.Registry`.

In-tree backends are lazy ``"module:Class"`` entries, so listing platforms never imports triton or jax. A
backend elsewhere registers with ``@register_backend("name")`` (its module must be imported first) or, from an
installed package, with an entry point in the ``multikernelbench.backends`` group (found without any import
here; see the README's "Adding a backend").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from multikernelbench.backends.base import Backend
from multikernelbench.backends.options import parse_options
from multikernelbench.registry import Registry

BACKENDS: Registry[type[Backend]] = Registry("backend", entry_point_group="multikernelbench.backends", lazy={
    "cpu": "multikernelbench.backends.cpu:CpuBackend",
    "cuda": "multikernelbench.backends.cuda:CudaBackend",
    "triton": "multikernelbench.backends.triton:TritonBackend",
    "pallas": "multikernelbench.backends.pallas:PallasBackend",
    "numba_cuda": "multikernelbench.backends.numba_cuda:NumbaCudaBackend",
    "helion": "multikernelbench.backends.helion:HelionBackend",
    "opencl": "multikernelbench.backends.opencl:OpenCLBackend",
})

B = TypeVar("B", bound=type)


def register_backend(name: str) -> Callable[[B], B]:
    """Class decorator: ``@register_backend("mychip")`` makes ``--backend mychip`` work; a name already taken
    by another class raises :class:`~multikernelbench.registry.RegistryCollision`."""

    def deco(cls: B) -> B:
        BACKENDS.register(name, cls)
        cls.name = name  # type: ignore[attr-defined]
        return cls

    return deco


def backend_names() -> list[str]:
    return BACKENDS.names()


def get_backend(name: str, **options) -> Backend:
    cls = BACKENDS.get(name)
    if not isinstance(cls, type) or not issubclass(cls, Backend):
        raise TypeError(f"backend {name!r} is {cls!r}, not a subclass of multikernelbench.backends.base.Backend")
    if not cls.name:
        cls.name = name  # an entry-point class that did not set its name
    return cls(**options)


def check_backend_options(name: str, options: dict[str, Any]) -> None:
    """Raise :class:`~multikernelbench.backends.options.BackendOptionError` for an option ``name`` does not
    take, before a run starts anything (the class alone: no toolchain import, no device probe)."""
    cls = BACKENDS.get(name)
    parse_options(cls.Options, options, name)


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
