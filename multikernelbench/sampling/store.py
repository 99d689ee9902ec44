"""The generations store: one JSON object per line, appended and flushed as each generation arrives.

Why JSONL: appends are atomic enough for one writer, a crash leaves at most one torn last line (skipped on
read), and the file is readable with ``jq``/pandas/``datasets.load_dataset("json")`` alike.

Each line is a :class:`GenerationRecord`. Its key is (model, backend, strategy, task_id, sample_index,
params_key, turn); a later line with the same key supersedes an earlier one, so retrying a failed request
simply appends. :func:`iter_generations` yields the latest record per key, sorted by task, model, backend, strategy,
parameters, sample and turn.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1


@dataclass
class GenerationRecord:
    model: str
    backend: str
    strategy: str
    task_id: str
    sample_index: int
    params: dict[str, Any]  # SamplingParams.to_dict()
    params_key: str  # SamplingParams.key(): part of the record key
    turn: int = 0  # refinement turn (0 = the first answer)
    sampler: str = ""  # openai | vllm | hf
    messages: list[dict[str, str]] = field(default_factory=list)  # the conversation sent for this turn
    raw_text: str = ""  # the answer as received (reasoning removed)
    code: str = ""  # extracted candidate source ("" when none could be extracted)
    reasoning: str = ""
    usage: dict[str, int | None] = field(default_factory=dict)
    finish_reason: str | None = None
    error: str | None = None  # non-empty: the request failed after retries; nothing to evaluate
    omitted_params: list[str] = field(default_factory=list)  # refused by the model, so not sent (its default used)
    attempts: int = 1
    latency_s: float | None = None
    exemplar: str | None = None
    feedback: str | None = None  # for turn > 0: the feedback message that prompted this answer
    eval: dict[str, Any] | None = None  # for refinement: summary of this turn's evaluation
    created: float = field(default_factory=time.time)
    schema: int = SCHEMA_VERSION

    @property
    def key(self) -> tuple:
        return generation_key(self.model, self.backend, self.strategy, self.task_id, self.sample_index,
                              self.params_key, self.turn)

    @property
    def generation_id(self) -> str:
        """A readable unique label, used as the candidate label in the results store."""
        return (f"{self.model}/{self.backend}/{self.strategy}/{self.task_id}/s{self.sample_index}"
                f"/p{self.params_key}/t{self.turn}")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GenerationRecord:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


def generation_key(model: str, backend: str, strategy: str, task_id: str, sample_index: int, params_key: str,
                   turn: int = 0) -> tuple:
    return (model, backend, strategy, task_id, int(sample_index), params_key, int(turn))


def _read_lines(path: Path, skipped: list[str] | None = None) -> Iterator[GenerationRecord]:
    """Records of a store; a line that is not a record (a torn last line from an interrupted write, a hand
    edit, another tool's JSON) is passed over and, when ``skipped`` is given, described there."""
    if not path.exists():
        return
    with path.open("r", encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                why = "not JSON"
            else:
                if not isinstance(data, dict):
                    why = f"a JSON {type(data).__name__}, not an object"
                else:
                    try:
                        rec = GenerationRecord.from_dict(data)
                    except TypeError:
                        missing = sorted({f.name for f in fields(GenerationRecord)
                                          if f.default is MISSING and f.default_factory is MISSING} - set(data))
                        why = f"missing {', '.join(missing)}" if missing else "not a generation record"
                    else:
                        yield rec
                        continue
            if skipped is not None:
                skipped.append(f"line {number}: {why}")


def iter_generations(path: str | Path, skipped: list[str] | None = None) -> Iterator[GenerationRecord]:
    """The latest record per key (a later line supersedes an earlier one), in a deterministic order.

    Each record has: model, backend, strategy, task_id, sample_index, turn, params (dict), params_key,
    raw_text, code, reasoning, usage (dict of prompt/completion/total tokens), error (None or a message),
    plus messages, finish_reason, attempts, latency_s, exemplar, feedback, eval, created, sampler.
    Evaluate a record when ``not record.error and record.code``. Lines that are not records are passed over;
    ``skipped`` (a list) receives one ``"line N: why"`` per such line.
    """
    latest: dict[tuple, GenerationRecord] = {}
    for rec in _read_lines(Path(path), skipped):
        latest[rec.key] = rec
    yield from sorted(latest.values(), key=lambda r: (r.task_id, r.model, r.backend, r.strategy, r.params_key,
                                                      r.sample_index, r.turn))


class GenerationStore:
    """Append-only writer plus the set of keys already done (for resuming)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def records(self) -> list[GenerationRecord]:
        return list(iter_generations(self.path))

    def done_keys(self, include_errors: bool = False) -> set[tuple]:
        """Keys with a stored answer; failed requests are retried on the next run unless include_errors."""
        return {r.key for r in iter_generations(self.path) if include_errors or not r.error}

    def get(self, key: tuple) -> GenerationRecord | None:
        for r in iter_generations(self.path):
            if r.key == key:
                return r
        return None

    def append(self, record: GenerationRecord) -> None:
        line = record.to_json() + "\n"
        with self.path.open("a+b") as fh:
            # After a crash mid-write the file may end in a torn line: start a fresh one so this record
            # is not glued onto it.
            if fh.tell() > 0:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    line = "\n" + line
            fh.write(line.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
