"""The engine on a Ray cluster (``mkb eval --ray [ADDRESS]``, ``EngineConfig(ray_address=...)``).

Ray is an optional dependency (the ``ray`` extra): nothing here imports it at module import time, and
:func:`require_ray` turns its absence into one line naming the extra. :func:`make_runner` is the one place
that picks the local :class:`~multikernelbench.engine.runner.Runner` or the cluster's
:class:`~multikernelbench.cluster.ray_runner.RayRunner` from the config.
"""

from __future__ import annotations

from typing import Callable

from multikernelbench.engine.config import EngineConfig

INSTALL_HINT = 'pip install "multikernelbench[ray]"'


class RayNotInstalled(RuntimeError):
    """``--ray`` was asked for on a machine without Ray."""


def require_ray():
    """The ``ray`` module, or :class:`RayNotInstalled` with the install line."""
    try:
        import ray
    except ImportError:
        raise RayNotInstalled(f"--ray needs Ray, which is not installed here: {INSTALL_HINT}") from None
    return ray


def make_runner(config: EngineConfig, store=None, on_result: Callable | None = None, progress: bool = True):
    """A Runner for this config: the Ray one when ``config.ray_address`` is set, else the local one."""
    if config.ray_address:
        require_ray()
        from multikernelbench.cluster.ray_runner import RayRunner

        return RayRunner(config, store, on_result=on_result, progress=progress)
    from multikernelbench.engine.runner import Runner

    return Runner(config, store, on_result=on_result, progress=progress)
