"""Ray as an optional import: one line naming the extra when it is missing (its own module, so the cluster's
modules can use it without importing the package that picks the runner)."""

from __future__ import annotations

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
