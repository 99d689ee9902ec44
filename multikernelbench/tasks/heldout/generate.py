"""The generation loop: draw, size, write, load, gate, deduplicate; redraw what fails and count why.

Determinism: slot ``i`` of seed ``S`` draws from ``random.Random("mkb-heldout/S/i/attempt")`` and every later
step is a pure function of the draw (gates run the reference on CPU at fixed seeds), so a seed gives the same
files on every run, for a given suite (the suite's graphs are what a draw must differ from) and generator.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from multikernelbench.tasks.gates import check_task
from multikernelbench.tasks.heldout.codegen import EMPTY_PLAN, render, task_name
from multikernelbench.tasks.heldout.compose import draw
from multikernelbench.tasks.heldout.draft import Draft
from multikernelbench.tasks.heldout.signature import graph_signature, signatures
from multikernelbench.tasks.heldout.sizing import SizingError, plan, runs
from multikernelbench.tasks.loader import TaskFormatError, tasks_from_source
from multikernelbench.tasks.module import exec_source
from multikernelbench.tasks.ranges import parse_ranges
from multikernelbench.tasks.record import Task

CATEGORY_PREFIX = "heldout_"
BF16_SHARE = 0.35
MAX_ATTEMPTS = 200  # per slot; a slot that needs more means the vocabulary is broken, not unlucky


@dataclass(frozen=True)
class GeneratedTask:
    category: str
    name: str
    source: str
    signature: str
    tasks: tuple[Task, ...]  # one per dtype

    @property
    def relpath(self) -> str:
        return f"{self.category}/{self.name}.py"


@dataclass
class GenerationReport:
    seed: int
    tasks: list[GeneratedTask] = field(default_factory=list)
    rejected: Counter = field(default_factory=Counter)  # reason -> redraws

    @property
    def drawn(self) -> int:
        return len(self.tasks) + sum(self.rejected.values())

    @property
    def rejection_rate(self) -> float:
        return sum(self.rejected.values()) / max(1, self.drawn)

    def categories(self) -> Counter:
        return Counter(t.category for t in self.tasks)

    def summary(self) -> dict:
        return {"seed": self.seed, "tasks": len(self.tasks), "drawn": self.drawn,
                "redrawn": sum(self.rejected.values()), "rejection_rate": round(self.rejection_rate, 4),
                "rejected_by": dict(sorted(self.rejected.items())),
                "categories": dict(sorted(self.categories().items())),
                "task_records": sum(len(t.tasks) for t in self.tasks)}


def gate_name(problem: str) -> str:
    """The gate a problem message of gates.check_task comes from (for the rejection counts)."""
    for needle, gate in (("non-finite", "finite"), ("nearly constant", "spread"), ("constant along", "constant axis"),
                         ("inputs change", "input sensitivity"), ("weights change", "weight sensitivity"),
                         ("guessing", "cheap guess"), ("too small to time", "bench size"),
                         ("too big", "bench size"), ("cpu bench", "cpu bench size")):
        if needle in problem:
            return f"gate: {gate}"
    return "gate: other"


def _attempt(seed: int, index: int, attempt: int) -> tuple[GeneratedTask | None, str]:
    rng = random.Random(f"mkb-heldout/{seed}/{index}/{attempt}")
    d: Draft = draw(rng)
    if len(d.steps) < 2:
        return None, "fewer than 2 ops"
    dtypes = ("float32", "bfloat16") if rng.random() < BF16_SHARE else ("float32",)
    try:
        mod = exec_source(render(d, EMPTY_PLAN, seed, index), "draft")
        shapes = plan(d, mod, rng, dtypes)
    except SizingError as exc:
        return None, f"sizing: {str(exc).split(':')[0]}"
    category, name = CATEGORY_PREFIX + d.family, task_name(d, seed, index)
    source = render(d, shapes, seed, index)
    try:
        tasks = tuple(tasks_from_source(source, category, name))
    except TaskFormatError as exc:  # the generator wrote a file the loader refuses: a generator bug
        raise RuntimeError(f"generated task {category}.{name} does not load: {exc}") from exc
    live = exec_source(source, name)
    ranges = parse_ranges(live.SHAPE_RANGES, shapes.test_shapes)
    if ranges is None:  # render always writes SHAPE_RANGES: a generator bug, as above
        raise RuntimeError(f"generated task {category}.{name} declares no SHAPE_RANGES")
    top = {k: r.high for k, r in ranges.items()}
    if not runs(live, top):
        return None, "ranges: reference fails at the top of its ranges"
    for t in tasks:
        try:
            problems = check_task(t)
        except (RuntimeError, NotImplementedError) as exc:  # e.g. an op with no bf16 kernel on the CPU
            return None, f"reference raises at {t.dtype}: {type(exc).__name__}"
        if problems:
            return None, gate_name(problems[0])
    return GeneratedTask(category, name, source, graph_signature(tasks[0]), tasks), ""


def generate(seed: int, count: int, suite: list[Task] | None = None,
             log: Callable[[str], None] | None = None) -> GenerationReport:
    """``count`` held-out tasks for ``seed``, none equal as an op graph to a suite task or to each other."""
    if suite is None:
        from multikernelbench.tasks import load_suite

        suite = load_suite()
    taken = dict((sig, tid) for tid, sig in signatures(suite).items())
    report = GenerationReport(seed)
    for index in range(count):
        for attempt in range(MAX_ATTEMPTS):
            task, why = _attempt(seed, index, attempt)
            if task is not None and task.signature in taken:
                task, why = None, "duplicate graph"
            if task is not None:
                taken[task.signature] = task.name
                report.tasks.append(task)
                if log:
                    log(f"[{index + 1}/{count}] {task.category}.{task.name} ({attempt} redrawn)")
                break
            report.rejected[why] += 1
        else:
            raise RuntimeError(f"slot {index}: no acceptable task in {MAX_ATTEMPTS} draws")
    return report


def write(report: GenerationReport, out: Path) -> list[Path]:
    """``out/<category>/<name>.py`` per task (a folder ``load_suite(root=out)`` reads) and ``out/heldout.json``."""
    out = Path(out)
    written = []
    for t in report.tasks:
        path = out / t.relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(t.source, encoding="utf-8")
        written.append(path)
    manifest = out / "heldout.json"
    manifest.write_text(json.dumps({**report.summary(), "files": [t.relpath for t in report.tasks]},
                                   indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return written + [manifest]
