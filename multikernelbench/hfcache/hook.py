"""The interpreter-start hook of an installed wheel: the one line of ``multikernelbench-hfcache.pth`` calls
:func:`install`.

It runs in every Python process of the environment, so it imports nothing beyond ``os``/``sys`` (already loaded)
and :mod:`.paths`, and its common path is two ``stat`` calls: are the markers of this installed copy in the
caches? Then it returns. When one is missing, the work is deferred to the moment the process imports
``datasets`` (which ``evaluate`` imports too): a ``.pth`` file runs before every site folder is on ``sys.path``
(in a venv with system site packages, ``datasets`` may not be importable yet), and a process that never
touches the Hugging Face libraries should pay nothing. A one-shot finder on ``sys.meta_path`` lets that import
finish, then fills the caches (:func:`multikernelbench.hfcache.startup.run`) before the user's
``load_dataset``/``evaluate.load`` call can run. ``MKB_HF_CACHE=0`` disables it.
"""

from __future__ import annotations

import os
import sys

from multikernelbench.hfcache import paths


def needed(env=None) -> bool:
    """Is a part of this installed copy missing from the caches (and not already failed)?"""
    if os.path.exists(paths.failure_marker(env)):
        return False
    return not (os.path.exists(paths.dataset_marker(env)) and os.path.exists(paths.metric_marker(env)))


class AfterImport:
    """A meta-path finder that, once, lets ``name`` import normally and then calls ``callback``."""

    def __init__(self, name: str, callback) -> None:
        self.name, self.callback = name, callback

    def find_spec(self, name, path=None, target=None):
        if name != self.name or self not in sys.meta_path:
            return None
        sys.meta_path.remove(self)  # one shot; also keeps the lookup below from finding us again
        import importlib.util

        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        real = loader.exec_module

        def exec_then_fill(module):
            try:
                real(module)
            finally:
                vars(loader).pop("exec_module", None)  # back to the class's method
            self.callback()

        loader.exec_module = exec_then_fill
        return spec


def _fill() -> None:
    from multikernelbench.hfcache.startup import run

    run()


def install() -> None:
    """If the caches lack this installed copy, fill them right after ``datasets`` is imported; never raises."""
    if os.environ.get("MKB_HF_CACHE", "1") == "0":
        return
    try:
        if needed() and "datasets" not in sys.modules:
            sys.meta_path.insert(0, AfterImport("datasets", _fill))
    except Exception as exc:  # noqa: BLE001 - a start-up hook must not break the interpreter
        if os.environ.get("MKB_HF_CACHE_DEBUG"):
            print(f"multikernelbench: start-up check failed: {exc!r}", file=sys.stderr)
