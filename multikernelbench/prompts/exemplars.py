"""Worked examples shown to the model: one tiny reference task and one correct solution per category and backend.

Layout: ``exemplars/<category>/reference.py`` is a task in the suite's task format (so the evaluation engine
can check it like any task) and ``exemplars/<category>/<backend>.py`` is a candidate for it in the
``solutions/`` format. One reference serves all four backends, so the solutions cannot drift apart in what
they compute. ``generic`` (elementwise add) is the one-shot exemplar; the other folders are the fifteen
categories used by category-shot prompting. Every solution is evaluated by the tests, so no prompt
teaches broken code. A backend outside the package keeps its solutions in its own folder, named by its
prompt contract's ``exemplar_dir``, in the same ``<category>/<backend>.py`` layout.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from multikernelbench.tasks import Task, load_task_file

GENERIC = "generic"
CATEGORIES = ("activation", "reduce", "broadcast", "math", "loss", "optimizer", "normalization", "pooling",
              "index", "resize", "matmul", "convolution", "attention", "fusion", "architecture")
BACKENDS = ("cpu", "cuda", "triton", "pallas", "opencl", "numba_cuda", "helion")


def exemplar_root() -> Path:
    return Path(__file__).resolve().parent / "exemplars"


@dataclass(frozen=True)
class Exemplar:
    category: str  # a suite category, or "generic"
    backend: str
    reference: str  # task source (task format)
    solution: str  # candidate source defining ModelNew

    @property
    def task_id(self) -> str:
        return f"exemplar.{self.category}"

    def task(self) -> Task:
        """The reference as a typed Task (id ``exemplar.<category>``), ready for the evaluation engine."""
        return exemplar_task(self.category)


@lru_cache(maxsize=None)
def exemplar_task(category: str) -> Task:
    path = exemplar_root() / category / "reference.py"
    (task,) = load_task_file(path, category=category)
    return dataclasses.replace(task, id=f"exemplar.{category}", name=category)


def solution_path(category: str, backend: str) -> Path:
    """Where the (category, backend) solution is: in the package's folder, else in the folder the backend's
    prompt contract names (a backend from another package)."""
    own = exemplar_root() / category / f"{backend}.py"
    if own.is_file():
        return own
    from multikernelbench.prompts.contracts import CONTRACTS

    extra = CONTRACTS.get(backend).exemplar_dir if backend in CONTRACTS else ""
    return Path(extra) / category / f"{backend}.py" if extra else own


def has_exemplar(category: str, backend: str) -> bool:
    return solution_path(category, backend).is_file()


def load_exemplar(category: str, backend: str) -> Exemplar:
    """The exemplar for (category, backend); KeyError naming what is missing when there is none."""
    sol = solution_path(category, backend)
    if not sol.is_file():
        raise KeyError(f"no {backend} exemplar for category {category!r} (expected {sol})")
    reference = exemplar_root() / category / "reference.py"
    return Exemplar(category, backend, reference.read_text(), sol.read_text())


def all_exemplars(backend: str | None = None) -> list[Exemplar]:
    """Every exemplar on disk (optionally for one backend), generic first, then categories in order."""
    out = []
    for category in (GENERIC, *CATEGORIES):
        for b in ([backend] if backend else BACKENDS):
            if has_exemplar(category, b):
                out.append(load_exemplar(category, b))
    return out
