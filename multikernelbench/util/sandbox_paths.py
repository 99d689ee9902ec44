"""How a backend names the folders its workers may read and write: environment keys, shared by the backends
(which fill them in ``worker_env``) and the kernel sandbox (engine/kernel_sandbox.py, which enforces them).

Its own module, below both, so the backends do not import the engine.
"""

from __future__ import annotations

import os

#: Environment keys through which a backend names extra folders: os.pathsep-separated absolute paths.
READ_ENV, WRITE_ENV = "MKB_SANDBOX_READ", "MKB_SANDBOX_WRITE"
#: Cache folders a worker is pointed at through its environment; each is writable by that worker, so each
#: must be that worker's or candidate's own (engine/sandbox.py and the backends' ``worker_env``).
CACHE_ENV = ("TMPDIR", "TORCH_EXTENSIONS_DIR", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TRITON_HOME",
             "CUDA_CACHE_PATH", "MKB_EXT_CACHE", "JAX_COMPILATION_CACHE_DIR")


def paths_env(read: list[str] | tuple[str, ...] = (), write: list[str] | tuple[str, ...] = ()) -> dict[str, str]:
    """How a backend's ``worker_env`` names its extra readable and writable folders."""
    env = {}
    if read:
        env[READ_ENV] = os.pathsep.join(str(p) for p in read)
    if write:
        env[WRITE_ENV] = os.pathsep.join(str(p) for p in write)
    return env


def writable_from_env(env: dict[str, str]) -> list[str]:
    """The folders a worker with this environment may write besides its working directory."""
    out = [p for p in env.get(WRITE_ENV, "").split(os.pathsep) if p]
    out += [env[k] for k in CACHE_ENV if env.get(k)]
    return list(dict.fromkeys(out))
