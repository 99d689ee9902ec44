"""Fill the caches with this installed copy: what the start-up hook (:mod:`.hook`) runs after ``datasets`` is
imported, and what ``mkb dataset cache`` runs on demand.

Each part is written only when its marker is missing and the library that reads it is installed (``datasets``
for the dataset, ``evaluate`` for the metric); the markers are written last, so an interrupted fill is
retried. From the hook, every error is swallowed (``MKB_HF_CACHE_DEBUG=1`` prints it) and remembered in a
failure marker, so a broken setup (a read-only cache) does not pay the work at every start; ``mkb dataset
cache`` shows the error and clears that marker.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from multikernelbench.hfcache import paths


@dataclass
class CacheReport:
    dataset: list[Path] = field(default_factory=list)  # config folders written or found
    metric: Path | None = None  # the cached script
    skipped: list[str] = field(default_factory=list)  # why a part was not written


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def seed(env: Mapping[str, str] | None = None, force: bool = False) -> CacheReport:
    """Write whatever is missing (everything when ``force``); errors propagate (the CLI shows them)."""
    from multikernelbench.hfcache.datasets_cache import seed_datasets_cache
    from multikernelbench.hfcache.evaluate_cache import seed_evaluate_cache

    env = os.environ if env is None else env
    report = CacheReport()
    if force and os.path.exists(paths.failure_marker(env)):
        os.unlink(paths.failure_marker(env))
    if not _installed("datasets"):
        report.skipped.append("dataset: `datasets` is not installed (pip install 'multikernelbench[data]')")
    elif force or not os.path.exists(paths.dataset_marker(env)):
        report.dataset = seed_datasets_cache(Path(paths.package_dir()), Path(paths.datasets_cache(env)))
        Path(paths.dataset_marker(env)).write_text("\n".join(str(p) for p in report.dataset) + "\n")
    if not _installed("evaluate"):
        report.skipped.append("metric: `evaluate` is not installed (pip install 'multikernelbench[metrics]')")
    elif force or not os.path.exists(paths.metric_marker(env)):
        report.metric = seed_evaluate_cache(Path(paths.metric_dir()), Path(paths.metric_cache_dir(env)))
        Path(paths.metric_marker(env)).write_text(f"{report.metric}\n")
    return report


def run() -> None:
    """Fill what is missing; never raises, never prints unless asked to (the hook's callback)."""
    env = os.environ
    try:
        seed(env)
    except Exception as exc:  # noqa: BLE001 - a start-up hook must not break the interpreter
        if env.get("MKB_HF_CACHE_DEBUG"):
            print(f"multikernelbench: could not fill the Hugging Face cache: {exc!r}", file=sys.stderr)
        try:
            marker = paths.failure_marker(env)
            os.makedirs(os.path.dirname(marker), exist_ok=True)
            with open(marker, "w") as f:
                f.write(f"{exc!r}\n")
        except Exception:  # noqa: BLE001 - read-only cache: nothing to remember it in
            pass
