"""The interpreter-start hook of an installed wheel (``multikernelbench-hfcache.pth``) and ``mkb dataset cache``.

The ``.pth`` line runs :func:`install` in every Python process of the environment, so its common path is a
cheap check: the dataset is cached when a marker named after the hash of the shipped card exists, the metric
when its script's SHA-256 folder exists; then nothing else happens. When something is missing, the work is
deferred to the moment the process imports ``datasets`` (which ``evaluate`` imports too): a ``.pth`` file
runs before every site folder is on ``sys.path`` (in a venv with system site packages, ``datasets`` may not be
importable yet), and a process that never touches the Hugging Face libraries should pay nothing. A one-shot
finder on ``sys.meta_path`` lets that import finish, then fills the caches, before the user's
``load_dataset``/``evaluate.load`` call can run.

A hook must never break an interpreter: every error is swallowed (``MKB_HF_CACHE_DEBUG=1`` prints it), and a
failure is remembered in a marker so that a broken setup does not pay the work at every start.
``MKB_HF_CACHE=0`` disables the hook.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from multikernelbench.hfcache import paths


@dataclass
class CacheReport:
    dataset: list[Path] = field(default_factory=list)  # config folders written or found
    metric: Path | None = None  # the cached script
    skipped: list[str] = field(default_factory=list)  # why a part was not written


def _card_key(folder: Path) -> str:
    return hashlib.sha256((folder / "README.md").read_bytes()).hexdigest()[:16]


def dataset_marker(env: Mapping[str, str], folder: Path) -> Path:
    """A dot-file in the dataset's cache root (the cache's own globs skip it), named after the shipped card."""
    return paths.datasets_cache(env) / paths.DATASET_NAME / f".mkb-seeded-{_card_key(folder)}"


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def seed(env: Mapping[str, str] | None = None, force: bool = False) -> CacheReport:
    """Write whatever is missing (everything when ``force``); errors propagate (the CLI shows them)."""
    from multikernelbench.hfcache.datasets_cache import seed_datasets_cache
    from multikernelbench.hfcache.evaluate_cache import cached_script, seed_evaluate_cache

    env = os.environ if env is None else env
    report = CacheReport()
    folder, metric = paths.package_dir(), paths.metric_dir()
    marker = dataset_marker(env, folder)
    if force:
        marker.with_name(marker.name.replace("seeded", "failed")).unlink(missing_ok=True)
    if not _installed("datasets"):
        report.skipped.append("dataset: `datasets` is not installed (pip install 'multikernelbench[data]')")
    elif force or not marker.exists():
        report.dataset = seed_datasets_cache(folder, paths.datasets_cache(env))
        marker.write_text("\n".join(str(p) for p in report.dataset) + "\n")
    if not _installed("evaluate"):
        report.skipped.append("metric: `evaluate` is not installed (pip install 'multikernelbench[metrics]')")
    elif force or not cached_script(metric, paths.metric_cache_dir(env)).is_file():
        report.metric = seed_evaluate_cache(metric, paths.metric_cache_dir(env))
    return report


def _needed(env: Mapping[str, str]) -> bool:
    """Cheap: is some part missing (or never tried)? No import beyond the standard library."""
    from multikernelbench.hfcache.evaluate_cache import cached_script

    folder = paths.package_dir()
    marker = dataset_marker(env, folder)
    failed = marker.with_name(marker.name.replace("seeded", "failed"))
    if failed.exists():
        return False
    return not marker.exists() or not cached_script(paths.metric_dir(), paths.metric_cache_dir(env)).is_file()


class _AfterImport:
    """A meta-path finder that, once, lets ``name`` import normally and then calls ``callback``."""

    def __init__(self, name: str, callback) -> None:
        self.name, self.callback = name, callback

    def find_spec(self, name, path=None, target=None):
        if name != self.name or self not in sys.meta_path:
            return None
        sys.meta_path.remove(self)  # one shot; also keeps the lookup below from finding us again
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


def install() -> None:
    """The ``.pth`` entry point: if the caches lack this copy, fill them right after ``datasets`` is imported."""
    env = os.environ
    if env.get("MKB_HF_CACHE", "1") == "0":
        return
    try:
        if _needed(env) and "datasets" not in sys.modules:
            sys.meta_path.insert(0, _AfterImport("datasets", run))
    except Exception as exc:  # noqa: BLE001 - a start-up hook must not break the interpreter
        if env.get("MKB_HF_CACHE_DEBUG"):
            print(f"multikernelbench: start-up check failed: {exc!r}", file=sys.stderr)


def run() -> None:
    """Fill what is missing; never raises, never prints unless asked to."""
    env = os.environ
    if env.get("MKB_HF_CACHE", "1") == "0":
        return
    try:
        if _needed(env):
            seed(env)
    except Exception as exc:  # noqa: BLE001 - a start-up hook must not break the interpreter
        if env.get("MKB_HF_CACHE_DEBUG"):
            print(f"multikernelbench: could not fill the Hugging Face cache: {exc!r}", file=sys.stderr)
        try:
            marker = dataset_marker(env, paths.package_dir())
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.with_name(marker.name.replace("seeded", "failed")).write_text(f"{exc!r}\n")
        except Exception:  # noqa: BLE001 - read-only cache: nothing to remember it in
            pass
