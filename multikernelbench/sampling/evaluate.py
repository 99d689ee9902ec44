"""Bridge from stored generations to the evaluation engine: records -> Candidates -> EvalResults.

A generation becomes a candidate only when its request succeeded and code could be extracted; the rest
are reported (by the caller) from the record's ``error`` / empty ``code`` and never reach the engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from multikernelbench.sampling.store import GenerationRecord, iter_generations


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
