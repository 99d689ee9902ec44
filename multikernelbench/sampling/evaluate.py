"""Bridge from model output to the evaluation engine: generations or bare sources -> Candidates -> results.

A generation becomes a candidate only when its request succeeded and code could be extracted; the rest
are reported (by the caller) from the record's ``error`` / empty ``code`` and never reach the engine.

:func:`records_from_sources` is the executing mode of the ``mkb_speedup`` metric: kernel sources in, the
scorer's sample records out. Running model-written code is dangerous, so it refuses unless the caller opted
in exactly as the engine requires (``allow_code_execution=True`` or ``MKB_ALLOW_CODE_EXECUTION=1``); the
engine's own guard is reused, not re-implemented, so the two cannot drift apart, and it runs before any
candidate is built. (It lives here, above the engine, so that :mod:`multikernelbench.scoring` stays pure.)
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from multikernelbench.records import Status
from multikernelbench.sampling.store import GenerationRecord, iter_generations
from multikernelbench.scoring.from_results import sample_record


def to_candidate(rec: GenerationRecord):
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.store import Label

    category = rec.task_id.split(".", 1)[0]
    # The results store labels (model, strategy, task, backend, sample); refinement turns of one sample
    # would collide there, so a later turn is labelled as its own strategy "<strategy>/turn<k>".
    strategy = rec.strategy if rec.turn == 0 else f"{rec.strategy}/turn{rec.turn}"
    return Candidate(task_id=rec.task_id, source=rec.code, label=rec.generation_id,
                     meta=Label(model=rec.model, strategy=strategy, sample_index=rec.sample_index,
                                category=category))


def candidates_from_records(records: Iterable[GenerationRecord], known_ids: set[str] | None = None,
                            backend: str | None = None) -> list:
    out = []
    for rec in records:
        if rec.error or not rec.code.strip():
            continue
        if known_ids is not None and rec.task_id not in known_ids:
            continue
        if backend is not None and rec.backend != backend:
            continue
        out.append(to_candidate(rec))
    return out


def candidates_from_generations(path: str | Path, known_ids: set[str] | None = None,
                                backend: str | None = None) -> list:
    """Candidates for every evaluable generation in a store (what ``mkb eval --generations`` consumes)."""
    return candidates_from_records(iter_generations(path), known_ids, backend)


def summarize_result(result) -> dict:
    """The part of an EvalResult kept on a refinement turn's record (the full result is in the results store)."""
    corr = result.correctness
    timing = result.candidate_timing
    return {"status": result.status.value, "message": result.message[:2000],
            "failure": result.failure.value if result.failure else None,
            "failed_shape": corr.failed_shape, "max_abs_err": corr.max_abs_err, "max_rel_err": corr.max_rel_err,
            "speedup": result.speedup, "roofline_fraction": result.roofline_fraction,
            "median_ms": timing.median_ms if timing else None, "code_hash": result.code_hash}


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
    """Evaluate ``sources[i][j]`` (sample j of task ``task_ids[i]``) and return the scorer's records."""
    results = results_from_sources(sources, task_ids, backend=backend, allow_code_execution=allow_code_execution,
                                   config=config, store=store)
    return [[sample_record(r) for r in task] for task in results]


def sample_details(results: Sequence[Sequence[Any]], task_ids: Sequence[str]) -> list[list[dict[str, Any]]]:
    """Per task, per sample: what the engine found (:func:`summarize_result` plus the task id and sample
    index), so a user of the metric can see why a sample failed."""
    return [[{"task_id": tid, "sample": j, **summarize_result(r)} for j, r in enumerate(task)]
            for tid, task in zip(task_ids, results, strict=True)]


def results_from_sources(sources: Sequence[Sequence[str]], task_ids: Sequence[str], backend: str | None = None,
                         allow_code_execution: bool = False, config: Any = None,
                         store: Any = None) -> list[list[Any]]:
    """Evaluate ``sources[i][j]`` (sample j of task ``task_ids[i]``); the EvalResults, arranged like ``sources``.

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

    from multikernelbench.cluster import evaluate_candidates
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.store import Label
    from multikernelbench.tasks import load_suite

    tasks = load_suite(ids=set(task_ids))
    category = {t.id: t.category for t in tasks}
    candidates = [Candidate(task_id=tid, source=src, label=f"mkb_speedup:{tid}:{j}",
                            meta=Label(model="mkb_speedup", sample_index=j, category=category[tid]))
                  for tid, task_sources in zip(task_ids, sources, strict=True) for j, src in enumerate(task_sources)]
    with _without_inherited_caches():
        results = evaluate_candidates(tasks, candidates, config, store=store)
    unavailable = [r for r in results if r.status is Status.UNAVAILABLE]
    if unavailable:
        raise RuntimeError(f"backend {config.backend!r} is unavailable here: {unavailable[0].message}")
    ordered = iter(results)
    return [[next(ordered) for _ in task_sources] for task_sources in sources]
