"""Put the shipped ``mkb_speedup`` script into ``evaluate``'s module cache, as a downloaded canonical metric.

``evaluate.load("mkb_speedup")`` asks the Hub for ``evaluate-metric/mkb_speedup`` (and the comparison and
measurement namespaces); when that fails it imports the most recent
``$HF_MODULES_CACHE/evaluate_modules/metrics/evaluate-metric--mkb_speedup/<sha256>/mkb_speedup.py``. The
folder name is the SHA-256 of the script, as ``evaluate`` names it, so a changed script is a new folder and an
unchanged one is written once. The script imports the installed package (``multikernelbench.scoring``), so
the cached copy and ``mkb report`` share one implementation.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from multikernelbench.hfcache.paths import METRIC_NAME

#: Copied beside the script (the card travels with it, as in a downloaded Space).
EXTRA_FILES = ("README.md",)


def script_hash(metric_dir: Path) -> str:
    return hashlib.sha256((metric_dir / f"{METRIC_NAME}.py").read_bytes()).hexdigest()


def cached_script(metric_dir: Path, cache_dir: Path) -> Path:
    """Where the script of ``metric_dir`` lives once cached (``cache_dir``: the ``evaluate-metric--...`` folder)."""
    return cache_dir / script_hash(metric_dir) / f"{METRIC_NAME}.py"


def _touch_init(folder: Path) -> None:
    init = folder / "__init__.py"
    if not init.exists():
        init.touch()


def seed_evaluate_cache(metric_dir: Path, cache_dir: Path) -> Path:
    """Copy the script into ``cache_dir/<sha256>/`` (``cache_dir``: :func:`paths.metric_cache_dir`); return it."""
    target = cached_script(metric_dir, cache_dir)
    if target.is_file():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    # The import path evaluate uses is evaluate_modules.metrics.<name>.<hash>.<script>: packages all the way.
    for folder in (cache_dir.parent.parent.parent, cache_dir.parent.parent, cache_dir.parent, cache_dir):
        _touch_init(folder)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=cache_dir))
    try:
        shutil.copyfile(metric_dir / f"{METRIC_NAME}.py", tmp / f"{METRIC_NAME}.py")
        for name in EXTRA_FILES:
            if (metric_dir / name).is_file():
                shutil.copyfile(metric_dir / name, tmp / name)
        _touch_init(tmp)
        try:
            os.rename(tmp, target.parent)
        except OSError:  # another process got there first: same bytes, same name
            if not target.is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target
