"""Executing mode of the metric: kernel sources in, sample records out, via the evaluation engine.

Running model-written code is dangerous, so this refuses unless the caller opted in exactly as the engine
requires (``allow_code_execution=True`` or ``MKB_ALLOW_CODE_EXECUTION=1``). The engine's own guard is
reused, not re-implemented, so the two cannot drift apart; it runs before any candidate is built.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from typing import Any, Iterator, Sequence

from multikernelbench.records import Status
from multikernelbench.scoring.from_results import sample_record


#: Set in os.environ by ``import torch._dynamo`` (which ``evaluate``/``datasets`` trigger) to a folder outside
#: any worker's sandbox; workers inherit the parent's environment, and a worker creating that folder is judged
#: a sandbox violation. Unset, torch derives it from the worker's own TMPDIR.
_INHERITED_CACHE_VARS = ("TORCHINDUCTOR_CACHE_DIR",)


@contextlib.contextmanager
def _without_inherited_caches() -> Iterator[None]:
    saved = {k: os.environ.pop(k) for k in _INHERITED_CACHE_VARS if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def records_from_sources(sources: Sequence[Sequence[str]], task_ids: Sequence[str], backend: str | None = None,
                         allow_code_execution: bool = False, config: Any = None,
                         store: Any = None) -> list[list[dict[str, Any]]]:
    """Evaluate ``sources[i][j]`` (sample j of task ``task_ids[i]``) and return the scorer's records.

    ``config`` is an optional :class:`~multikernelbench.engine.config.EngineConfig`; ``backend`` overrides its
    backend. A backend that is unavailable on this machine is an error: its results would say nothing about
    the kernels, and scoring them as failures would be wrong.
    """
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.runner import check_opt_in

    config = config if config is not None else EngineConfig()
    if backend:
        config = dataclasses.replace(config, backend=backend)
    if allow_code_execution:
        config = dataclasses.replace(config, allow_code_execution=True)
    check_opt_in(config)
    if len(sources) != len(task_ids):
        raise ValueError(f"{len(sources)} source lists but {len(task_ids)} task ids")

    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.engine.runner import evaluate_candidates
    from multikernelbench.store import Label
    from multikernelbench.tasks import load_suite

    tasks = load_suite(ids=set(task_ids))
    category = {t.id: t.category for t in tasks}
    candidates = [Candidate(task_id=tid, source=src, label=f"mkb_speedup:{tid}:{j}",
                            meta=Label(model="mkb_speedup", sample_index=j, category=category[tid]))
                  for tid, task_sources in zip(task_ids, sources) for j, src in enumerate(task_sources)]
    with _without_inherited_caches():
        results = evaluate_candidates(tasks, candidates, config, store=store)
    unavailable = [r for r in results if r.status is Status.UNAVAILABLE]
    if unavailable:
        raise RuntimeError(f"backend {config.backend!r} is unavailable here: {unavailable[0].message}")
    records = iter(sample_record(r) for r in results)
    return [[next(records) for _ in task_sources] for task_sources in sources]
