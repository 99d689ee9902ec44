"""Offline first: the bare names go straight to the cached copy, without asking the Hub.

``datasets`` and ``evaluate`` resolve ``"multikernelbench"`` / ``"mkb_speedup"`` by asking the Hub first and use
their caches only when that fails. Without a network that costs retries with backoff (23 s and five
"Retrying" lines for one ``load_dataset`` on a machine with no route to the Hub). The Hub can hold nothing
under these bare names (a pushed copy lives under ``org/name``), so when this installed package's copy is in
the cache (its marker is there) the library's own cache step is called directly: the same code path the
library takes after a failed request, minus the request.

Applied right after each library is imported (:mod:`.hook`), by wrapping the one factory function each
``load`` calls. Anything unusual — a local folder of the same name, ``data_files``/``data_dir``, a revision,
an explicit ``cache_dir``, a module type other than metric, a missing marker, a failing cache step — goes to
the library's own function unchanged. ``MKB_HF_OFFLINE_FIRST=0`` turns it off (the Hub is asked first again).
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from multikernelbench.hfcache import paths

_MARK = "_mkb_offline_first"


def enabled(env=None) -> bool:
    return (os.environ if env is None else env).get("MKB_HF_OFFLINE_FIRST", "1") != "0"


@contextmanager
def _quiet(logger_name: str) -> Iterator[None]:
    """The cache step warns that the name "couldn't be found on the Hub": untrue here, since it was not asked."""
    logger = logging.getLogger(logger_name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _wrap(module: Any, attr: str, shortcut: Callable[[dict[str, Any]], Any]) -> None:
    """Replace ``module.attr`` by a function that tries ``shortcut(bound arguments)`` first; the shortcut returns
    None to defer to the original."""
    orig = getattr(module, attr, None)
    if orig is None or getattr(orig, _MARK, False):
        return
    try:
        sig = inspect.signature(orig)
    except (TypeError, ValueError):
        return

    def factory(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = sig.bind(*args, **kwargs).arguments
            found = shortcut(bound) if enabled() else None
        except Exception:  # noqa: BLE001 - any doubt: the library's own path
            found = None
        return found if found is not None else orig(*args, **kwargs)

    factory.__wrapped__ = orig  # type: ignore[attr-defined]
    factory.__doc__ = orig.__doc__
    setattr(factory, _MARK, True)
    setattr(module, attr, factory)


def _dataset_shortcut(load_mod: Any) -> Callable[[dict[str, Any]], Any]:
    def shortcut(a: dict[str, Any]) -> Any:
        extra = a.get("download_kwargs") or {}
        if (a.get("path") != paths.DATASET_NAME or os.path.isdir(paths.DATASET_NAME) or a.get("data_dir")
                or a.get("data_files") or a.get("revision") not in (None, "main") or a.get("cache_dir")
                or extra.get("cache_dir") or not os.path.exists(paths.dataset_marker())):
            return None
        with _quiet(load_mod.__name__):
            return load_mod.CachedDatasetModuleFactory(paths.DATASET_NAME).get_module()
    return shortcut


def _metric_shortcut(loading_mod: Any) -> Callable[[dict[str, Any]], Any]:
    def shortcut(a: dict[str, Any]) -> Any:
        name = paths.METRIC_NAME
        if (a.get("path") != name or a.get("module_type") not in (None, "metric") or a.get("revision")
                or a.get("force_local_path") or os.path.isfile(name) or os.path.isfile(os.path.join(name, name + ".py"))
                or not os.path.exists(paths.metric_marker())):
            return None
        with _quiet(loading_mod.__name__):
            return loading_mod.CachedEvaluationModuleFactory(
                paths.METRIC_CACHE_NAME, dynamic_modules_path=a.get("dynamic_modules_path")).get_module()
    return shortcut


def patch_datasets() -> None:
    """Called once ``datasets`` is imported."""
    import datasets.load as load_mod

    _wrap(load_mod, "dataset_module_factory", _dataset_shortcut(load_mod))


def patch_evaluate() -> None:
    """Called once ``evaluate`` is imported."""
    import evaluate.loading as loading_mod

    _wrap(loading_mod, "evaluation_module_factory", _metric_shortcut(loading_mod))
