"""Platform backends: the only code that knows a toolchain or a device.

Backends register themselves lazily ("module:attr" strings) so that listing platforms never imports a
heavy toolchain such as triton or jax; :func:`get_backend` imports only the one that is asked for.
"""

from multikernelbench.backends.base import Availability, Backend, CompileOutcome
from multikernelbench.backends.registry import available_backends, backend_names, get_backend, register_backend

__all__ = [
    "Availability", "Backend", "CompileOutcome",
    "available_backends", "backend_names", "get_backend", "register_backend",
]
