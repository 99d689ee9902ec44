"""Ray as an optional import: one line naming the extra when it is missing (its own module, so the cluster's
modules can use it without importing the package that picks the runner)."""

from __future__ import annotations

import contextlib
import os

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


#: What ``ray.init()`` writes into this process's environment and leaves there after ``ray.shutdown()``.
RAY_PROCESS_ENV = ("RAY_AUTH_MODE",)


@contextlib.contextmanager
def ray_env_restored():
    """Undo, when the block ends (after its ``ray.shutdown()``), what Ray wrote into ``os.environ`` inside it.

    Why: ``ray.init()`` of a new local cluster (Ray 2.60) turns token authentication on for the whole process by
    writing ``RAY_AUTH_MODE=token`` into ``os.environ``, and it stays after the session ends. A later session in
    the same process (the service's next job, the test suite's next module) then ran with token mode in some of
    its processes and not in others: the GCS's calls to the driver came without the token ("Missing
    authorization header in request!" in the driver's log), the GCS took the driver for dead and cancelled every
    actor it asked for ("SchedulingCancelled: Actor creation cancelled"), so no lane of that cluster ever
    started (five test_ray_cluster tests, two CI-like runs of 2026-12-06). Ray's cached config is refreshed from
    the restored environment, as Ray does when it sets the variable. Ray also leaves ``RAY_USAGE_STATS_ENABLED``
    and ``PYTHONBREAKPOINT``, which change nothing a later session or a worker (an allow-listed environment)
    depends on: left as they are."""
    before = {k: os.environ.get(k) for k in RAY_PROCESS_ENV}
    try:
        yield
    finally:
        changed = [k for k, v in before.items() if os.environ.get(k) != v]
        for k in changed:
            if before[k] is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = before[k]  # type: ignore[assignment]
        if changed:
            from ray._raylet import Config  # type: ignore[attr-defined]

            Config.initialize("")
