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
    """A meta-path finder that, once, lets ``name`` import normally and then calls ``callback``.

    It leaves ``sys.meta_path`` when the module is executed, not when it is looked up: a lookup alone
    (``importlib.util.find_spec("evaluate")``, as the cache fill does to see what is installed) imports
    nothing, and a finder gone by then missed the real import that followed."""

    def __init__(self, name: str, callback) -> None:
        self.name, self.callback = name, callback
        self._looking = False

    def find_spec(self, name, path=None, target=None):
        if name != self.name or self._looking or self not in sys.meta_path:
            return None
        import importlib.util

        self._looking = True  # the lookup below must not find us again
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self._looking = False
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        real = loader.exec_module

        def exec_then_fill(module):
            if self in sys.meta_path:
                sys.meta_path.remove(self)  # one shot
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


def _after_datasets(fill: bool):
    def callback() -> None:
        if fill:
            _fill()
        _patch("patch_datasets")
    return callback


def _patch(name: str) -> None:
    """Offline first (:mod:`.offline_first`); never raises."""
    try:
        from multikernelbench.hfcache import offline_first

        getattr(offline_first, name)()
    except Exception as exc:  # noqa: BLE001 - the library then works as it always did
        if os.environ.get("MKB_HF_CACHE_DEBUG"):
            print(f"multikernelbench: offline-first patch failed: {exc!r}", file=sys.stderr)


def install() -> None:
    """Right after ``datasets`` is imported: fill the caches if they lack this installed copy, and make the bare
    names use them without asking the Hub; the same for ``evaluate``. Never raises."""
    if os.environ.get("MKB_HF_CACHE", "1") == "0":
        return
    try:
        if "datasets" not in sys.modules:
            sys.meta_path.insert(0, AfterImport("datasets", _after_datasets(needed())))
        if "evaluate" not in sys.modules:
            sys.meta_path.insert(0, AfterImport("evaluate", lambda: _patch("patch_evaluate")))
    except Exception as exc:  # noqa: BLE001 - a start-up hook must not break the interpreter
        if os.environ.get("MKB_HF_CACHE_DEBUG"):
            print(f"multikernelbench: start-up check failed: {exc!r}", file=sys.stderr)
