"""Drive generation: prompts -> sampler -> extracted code -> generations store, resumably, with refinement.

Every (task, sample) is one request keyed like its stored record; keys already answered are skipped, so a
rerun does nothing and an interrupted run resumes where it stopped (failed requests are retried). With
``turns > 1`` each turn's answers are evaluated (through an injectable ``evaluate`` function — the engine
in practice) and the next turn's conversation appends the answer and a feedback message; every turn's
generation and evaluation summary is kept as its own record.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from multikernelbench.prompts import build_prompt
from multikernelbench.prompts.feedback import feedback_message, summary_status
from multikernelbench.records import Status
from multikernelbench.sampling.base import Completion, Request, Sampler
from multikernelbench.sampling.params import SamplingParams
from multikernelbench.sampling.store import GenerationRecord, GenerationStore, generation_key
from multikernelbench.tasks import Task

# records of one turn -> {generation_id: evaluation summary (see sampling.evaluate.summarize_result)}
Evaluator = Callable[[list[GenerationRecord]], dict[str, dict]]
#: The summary stored for an answer without code: not an engine :class:`Status` (nothing reached the engine);
#: ``feedback.summary_status`` reads it as None.
NO_CODE_SUMMARY = {"status": "no_code"}


@dataclass
class GenerateConfig:
    model: str  # label stored with every record (the API model name, or a local path's name)
    backend: str
    strategy: str
    samples: int = 1
    params: SamplingParams = field(default_factory=SamplingParams)
    turns: int = 1  # 1 = single answer; N = up to N-1 rounds of feedback
    stop_on_correct: bool = False  # with refinement: stop a sample once it is correct (else ask for speed)


class ProgressSink(Protocol):
    """What the generator reports progress to (``multikernelbench.engine.progress.Progress`` fits): one stage
    per turn, advanced once per answered or failed request."""

    def add(self, name: str, total: int) -> None: ...

    def advance(self, name: str) -> None: ...


@dataclass
class GenerateSummary:
    requested: int = 0
    answered: int = 0
    failed: int = 0
    skipped: int = 0
    evaluated: int = 0


def _extract(text: str) -> str:
    from multikernelbench.extract import extract_code

    return extract_code(text) or ""


class Generator:
    def __init__(self, config: GenerateConfig, sampler: Sampler, store: GenerationStore,
                 evaluate: Evaluator | None = None, log: Callable[[str], None] = lambda s: None,
                 progress: ProgressSink | None = None) -> None:
        if config.turns > 1 and evaluate is None:
            raise ValueError("refinement (turns > 1) needs an evaluate function")
        self.cfg, self.sampler, self.store, self.evaluate, self.log = config, sampler, store, evaluate, log
        self.progress = progress
        self.summary = GenerateSummary()

    def key(self, task_id: str, sample: int, turn: int) -> tuple:
        c = self.cfg
        return generation_key(c.model, c.backend, c.strategy, task_id, sample, c.params.key(), turn)

    def _record(self, req: Request, comp: Completion, exemplar: str | None, feedback: str | None) -> GenerationRecord:
        c = self.cfg
        model, backend, strategy, task_id, sample, pkey, turn = req.key
        code = "" if comp.error else _extract(comp.text)
        return GenerationRecord(model=model, backend=backend, strategy=strategy, task_id=task_id,
                                sample_index=sample, params=c.params.to_dict(), params_key=pkey, turn=turn,
                                sampler=self.sampler.name, messages=list(req.messages), raw_text=comp.text,
                                code=code, reasoning=comp.reasoning, usage=dataclasses.asdict(comp.usage),
                                finish_reason=comp.finish_reason, error=comp.error, attempts=comp.attempts,
                                omitted_params=list(comp.omitted_params),
                                latency_s=comp.latency_s, exemplar=exemplar, feedback=feedback)

    def _ask(self, requests: list[tuple[Request, str | None, str | None]], stage: str) -> None:
        meta = {r.key: (ex, fb) for r, ex, fb in requests}
        self.summary.requested += len(requests)
        if self.progress is not None and requests:
            self.progress.add(stage, len(requests))

        def on_result(req: Request, comp: Completion) -> None:
            ex, fb = meta[req.key]
            self.store.append(self._record(req, comp, ex, fb))
            if comp.error:
                self.summary.failed += 1
                self.log(f"error {req.key[3]} s{req.key[4]} t{req.key[6]}: {comp.error[:200]}")
            else:
                self.summary.answered += 1
            if self.progress is not None:
                self.progress.advance(stage)

        if requests:
            self.sampler.run([r for r, _, _ in requests], self.cfg.params, on_result)

    def _evaluate_turn(self, tasks: Sequence[Task], turn: int) -> None:
        """Attach an evaluation summary to every answered record of ``turn`` that lacks one."""
        ids = {t.id for t in tasks}
        todo = [r for r in self.store.records() if r.turn == turn and r.task_id in ids and not r.error
                and r.eval is None and self._mine(r)]
        if not todo:
            return
        if self.evaluate is None:  # unreachable: __init__ refuses turns > 1 without one
            raise ValueError("refinement (turns > 1) needs an evaluate function")
        with_code = [r for r in todo if r.code.strip()]
        summaries = self.evaluate(with_code) if with_code else {}
        for rec in todo:
            rec.eval = summaries.get(rec.generation_id) if rec.code.strip() else dict(NO_CODE_SUMMARY)
            self.store.append(rec)  # supersedes the unevaluated line
        self.summary.evaluated += len(todo)

    def _mine(self, r: GenerationRecord) -> bool:
        c = self.cfg
        return (r.model, r.backend, r.strategy, r.params_key) == (c.model, c.backend, c.strategy, c.params.key())

    def run(self, tasks: Sequence[Task]) -> GenerateSummary:
        c = self.cfg
        for turn in range(c.turns):
            done = self.store.done_keys()
            latest = {r.key: r for r in self.store.records()} if turn else {}
            requests: list[tuple[Request, str | None, str | None]] = []  # (request, exemplar, feedback)
            for task in tasks:
                prompt = build_prompt(task, c.backend, c.strategy)
                for s in range(c.samples):
                    key = self.key(task.id, s, turn)
                    if key in done:
                        self.summary.skipped += 1
                        continue
                    if turn == 0:
                        requests.append((Request(key, tuple(prompt.messages), s), prompt.exemplar, None))
                        continue
                    prev = latest.get(self.key(task.id, s, turn - 1))
                    if prev is None or prev.error or prev.eval is None:
                        continue  # the previous turn has no answer to refine
                    if c.stop_on_correct and summary_status(prev.eval) is Status.CORRECT:
                        continue
                    fb = feedback_message(prev.eval, had_code=bool(prev.code.strip()))
                    msgs = (*prev.messages, {"role": "assistant", "content": prev.raw_text},
                            {"role": "user", "content": fb})
                    requests.append((Request(key, tuple(msgs), s), prev.exemplar, fb))
            self.log(f"turn {turn}: {len(requests)} requests ({self.summary.skipped} already stored)")
            self._ask(requests, "sampling" if c.turns == 1 else f"sampling turn {turn}")
            if c.turns > 1:
                self._evaluate_turn(tasks, turn)
        return self.summary


def generate(tasks: Sequence[Task], config: GenerateConfig, sampler: Sampler, store: GenerationStore,
             evaluate: Evaluator | None = None, log: Callable[[str], None] = lambda s: None,
             progress: ProgressSink | None = None) -> GenerateSummary:
    """Generate (and, with ``config.turns > 1``, refine) candidates for ``tasks`` into ``store``."""
    return Generator(config, sampler, store, evaluate, log, progress).run(tasks)


def engine_evaluator(tasks: Sequence[Task], engine_config, result_store=None) -> Evaluator:
    """An Evaluator backed by the real engine; results also land in ``result_store`` when given."""
    from multikernelbench.cluster import evaluate_candidates
    from multikernelbench.sampling.evaluate import candidates_from_records, summarize_result

    def evaluate(records: list[GenerationRecord]) -> dict[str, dict]:
        cands = candidates_from_records(records)
        results = evaluate_candidates(list(tasks), cands, engine_config, result_store)
        return {r.candidate: summarize_result(r) for r in results}

    return evaluate
