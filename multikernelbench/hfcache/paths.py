"""Where ``datasets`` and ``evaluate`` keep their caches, computed as they compute it, without importing them.

Both read the same variables at import: ``HF_HOME`` (default ``$XDG_CACHE_HOME/huggingface``, default
``~/.cache/huggingface``), then ``HF_DATASETS_CACHE`` (default ``$HF_HOME/datasets``) and
``HF_MODULES_CACHE`` (default ``$HF_HOME/modules``). Importing either library takes about a second, too much
for a check that runs at every interpreter start, so the rule is repeated here (a test compares the two).
Plain ``os.path`` strings and nothing else imported: this module is on the start-up path of every process.
"""

from __future__ import annotations

import os

DATASET_NAME = "multikernelbench"
METRIC_NAME = "mkb_speedup"
#: How ``evaluate`` names a cached canonical metric (``evaluate.load("<name>")`` looks here when offline).
METRIC_CACHE_NAME = f"evaluate-metric--{METRIC_NAME}"


def _env(env):
    return os.environ if env is None else env


def hf_home(env=None) -> str:
    env = _env(env)
    xdg = env.get("XDG_CACHE_HOME", "~/.cache")
    return os.path.expanduser(env.get("HF_HOME", os.path.join(xdg, "huggingface")))


def datasets_cache(env=None) -> str:
    env = _env(env)
    return os.path.expanduser(env["HF_DATASETS_CACHE"]) if env.get("HF_DATASETS_CACHE") \
        else os.path.join(hf_home(env), "datasets")


def modules_cache(env=None) -> str:
    env = _env(env)
    return os.path.expanduser(env["HF_MODULES_CACHE"]) if env.get("HF_MODULES_CACHE") \
        else os.path.join(hf_home(env), "modules")


def dataset_cache_root(env=None) -> str:
    """``<datasets cache>/multikernelbench``: the folder ``datasets`` globs for configs of the bare name."""
    return os.path.join(datasets_cache(env), DATASET_NAME)


def metric_cache_dir(env=None) -> str:
    return os.path.join(modules_cache(env), "evaluate_modules", "metrics", METRIC_CACHE_NAME)


def package_dir() -> str:
    """The ``multikernelbench`` folder (its README.md + data/ are the built dataset)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def metric_dir() -> str:
    """The shipped metric folder: ``multikernelbench/metrics/mkb_speedup`` when installed, ``metrics/mkb_speedup``
    of the checkout in an editable install (setup.py maps that folder into the package)."""
    installed = os.path.join(package_dir(), "metrics", METRIC_NAME)
    if os.path.isfile(os.path.join(installed, f"{METRIC_NAME}.py")):
        return installed
    return os.path.join(os.path.dirname(package_dir()), "metrics", METRIC_NAME)


def stamp(path: str) -> str:
    """``<size>-<mtime_ns>`` of a file: names a marker that changes whenever the installed copy does."""
    st = os.stat(path)
    return f"{st.st_size}-{st.st_mtime_ns}"


def dataset_marker(env=None) -> str:
    """Exists once this installed card's dataset is in the cache (a dot-file: the cache's globs skip it)."""
    return os.path.join(dataset_cache_root(env), f".mkb-seeded-{stamp(os.path.join(package_dir(), 'README.md'))}")


def failure_marker(env=None) -> str:
    """Exists when filling the cache for this installed copy failed (so the start-up hook stops retrying)."""
    return dataset_marker(env).replace(".mkb-seeded-", ".mkb-failed-")


def metric_marker(env=None) -> str:
    """Exists once this installed script is in evaluate's cache."""
    return os.path.join(metric_cache_dir(env),
                        f".mkb-seeded-{stamp(os.path.join(metric_dir(), METRIC_NAME + '.py'))}")
