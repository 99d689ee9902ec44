"""The engine on a Ray cluster (``mkb eval --ray [ADDRESS]``, ``EngineConfig(ray_address=...)``).

Ray is an optional dependency (the ``ray`` extra): nothing here imports it at module import time, and
:func:`require_ray` turns its absence into one line naming the extra. :func:`make_runner` is the one place
that picks the local :class:`~multikernelbench.engine.runner.Runner` or the cluster's
:class:`~multikernelbench.cluster.ray_runner.RayRunner` from the config.
"""

from __future__ import annotations

from collections.abc import Callable

from multikernelbench.cluster.ray_import import INSTALL_HINT, RayNotInstalled, require_ray  # noqa: F401
from multikernelbench.engine.config import EngineConfig


def make_runner(config: EngineConfig, store=None, on_result: Callable | None = None, progress: bool = True):
    """A Runner for this config: the Ray one when ``config.ray_address`` is set, else the local one."""
    if config.ray_address:
        require_ray()
        from multikernelbench.cluster.ray_runner import RayRunner

        return RayRunner(config, store, on_result=on_result, progress=progress)
    from multikernelbench.engine.runner import Runner

    return Runner(config, store, on_result=on_result, progress=progress)


def evaluate_candidates(tasks, candidates, config: EngineConfig, store=None, progress: bool = False,
                        on_result: Callable | None = None):
    """:func:`multikernelbench.engine.runner.evaluate_candidates`, on Ray when ``config.ray_address`` is set."""
    return make_runner(config, store, on_result=on_result, progress=progress).evaluate(tasks, candidates)
