"""Where ``datasets`` and ``evaluate`` keep their caches, computed as they compute it, without importing them.

Both read the same variables at import: ``HF_HOME`` (default ``$XDG_CACHE_HOME/huggingface``, default
``~/.cache/huggingface``), then ``HF_DATASETS_CACHE`` (default ``$HF_HOME/datasets``) and
``HF_MODULES_CACHE`` (default ``$HF_HOME/modules``). Importing either library takes about a second, too much
for a check that runs at every interpreter start, so the rule is repeated here (a test compares the two).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

DATASET_NAME = "multikernelbench"
METRIC_NAME = "mkb_speedup"
#: How ``evaluate`` names a cached canonical metric (``evaluate.load("<name>")`` looks here when offline).
METRIC_CACHE_NAME = f"evaluate-metric--{METRIC_NAME}"


def hf_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    xdg = env.get("XDG_CACHE_HOME", "~/.cache")
    return Path(os.path.expanduser(env.get("HF_HOME", os.path.join(xdg, "huggingface"))))


def datasets_cache(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(os.path.expanduser(env["HF_DATASETS_CACHE"])) if env.get("HF_DATASETS_CACHE") \
        else hf_home(env) / "datasets"


def modules_cache(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(os.path.expanduser(env["HF_MODULES_CACHE"])) if env.get("HF_MODULES_CACHE") \
        else hf_home(env) / "modules"


def metric_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    return modules_cache(env) / "evaluate_modules" / "metrics" / METRIC_CACHE_NAME


def package_dir() -> Path:
    """The installed ``multikernelbench`` folder (its README.md + data/ are the built dataset)."""
    return Path(__file__).resolve().parent.parent


def metric_dir() -> Path:
    """The shipped metric folder: ``multikernelbench/metrics/mkb_speedup`` when installed, ``metrics/mkb_speedup``
    of the checkout in an editable install (mapped by setup.py)."""
    installed = package_dir() / "metrics" / METRIC_NAME
    if (installed / f"{METRIC_NAME}.py").is_file():
        return installed
    return package_dir().parent / "metrics" / METRIC_NAME
