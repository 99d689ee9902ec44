"""Prompt text: the model's view of a task, and the assembly of contract, exemplar and task into messages.

The model sees the reference ``Model``, its constructor arguments and input generator, the dtype, the
tolerance and the shape the kernel is timed at — never the correctness shapes (they are deliberately odd
sizes the kernel must handle without being told) nor any seed. :func:`task_view` removes them from the task
source by parsing it, so a new task file cannot leak them through a forgotten template change.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from typing import Any

from multikernelbench.prompts.contracts import COMMON_NOT_ALLOWED, COMMON_RULES, Contract
from multikernelbench.tasks import Task
from multikernelbench.util import pyast

SYSTEM = ("You are an expert performance engineer who writes correct, fast deep-learning kernels. "
          "You follow the platform contract exactly.")

# Task-file names the model must not see: correctness shapes, harness settings and cost formulas.
HIDDEN_NAMES = frozenset({"TEST_SHAPES", "BENCH_SHAPE", "CPU_BENCH_SHAPE", "SEEDS_PER_SHAPE", "TOLERANCE",
                          "DTYPES", "DESCRIPTION", "flops", "bytes_moved", "NO_HEADROOM"})


@dataclass
class Prompt:
    """One prompt: chat messages plus what produced them (kept with every generation)."""

    task_id: str
    backend: str
    strategy: str
    messages: list[dict[str, str]]
    exemplar: str | None = None  # "<category>/<backend>" of the exemplar shown, if any
    meta: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        """Human-readable rendering (what ``mkb prompt`` prints)."""
        return "\n\n".join(f"=== {m['role']} ===\n{m['content']}" for m in self.messages)


def _bound_names(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def task_view(source: str) -> str:
    """The task source minus hidden names, private helpers only they used, and comments glued to them."""
    tree = pyast.parse(source)
    lines = source.splitlines()
    body = [n for n in tree.body if not (_bound_names(n) & HIDDEN_NAMES)]
    while True:  # drop private helpers nothing visible refers to any more (e.g. _out_len used by flops)
        used = {n.id for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        used |= {n.attr for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Attribute)}
        unused = [s for s in body if (names := _bound_names(s)) and all(x.startswith("_") for x in names)
                  and not (names & used) and not isinstance(s, ast.ClassDef)]
        if not unused:
            break
        body = [s for s in body if s not in unused]
    keep = {id(n) for n in body}
    drop: set[int] = set()
    for node in tree.body:
        if id(node) in keep:
            continue
        start = node.lineno - 1 - len(getattr(node, "decorator_list", []) or [])
        while start > 0 and lines[start - 1].lstrip().startswith("#"):  # the comment explaining it
            start -= 1
        drop.update(range(start, node.end_lineno or node.lineno))  # parsed nodes always have an end
    kept = [line for i, line in enumerate(lines) if i not in drop]
    text = "\n".join(kept)
    while "\n\n\n\n" in text:
        text = text.replace("\n\n\n\n", "\n\n\n")
    return text.strip() + "\n"


def timed_shape(task: Task, contract: Contract) -> dict[str, Any]:
    """The shape the kernel is timed at on this platform, unless that is also a correctness shape."""
    shape = task.cpu_bench_shape if contract.times_on_cpu_shape else task.bench_shape
    return task.bench_shape if shape in task.test_shapes else shape


def describe_harness(task: Task, contract: Contract) -> str:
    shape = json.dumps(timed_shape(task, contract), sort_keys=True)
    dtype_note = ""
    if task.dtype != "float32":
        dtype_note = (f" The harness casts floating inputs and parameters to {task.dtype}; return {task.dtype} "
                      "(accumulate in float32 where it matters).")
    return (f"The harness calls `Model(*get_init_inputs(shape))` and `forward(*get_inputs(shape, gen))` with "
            f"the task dtype **{task.dtype}**.{dtype_note} Outputs must match the reference within "
            f"atol={task.atol:g}, rtol={task.rtol:g}. Performance is timed at `shape = {shape}` on "
            f"{contract.platform}; correctness is checked on other, smaller shapes as well.")


def contract_section(contract: Contract) -> str:
    rules = "\n".join(f"- {r}" for r in (*COMMON_RULES, contract.build, *contract.rules))
    banned = "\n".join(f"- {r}" for r in (*COMMON_NOT_ALLOWED, *contract.not_allowed))
    return (f"## Platform contract: `{contract.backend}` — {contract.language} on {contract.platform}\n"
            f"Inputs arrive as {contract.device}.\n{rules}\n\n"
            f"Not allowed (treated as cheating or failure):\n{banned}")


def exemplar_section(reference: str, solution: str, backend: str) -> str:
    return ("## Example\nA reference task:\n```python\n" + task_view(reference) + "```\n"
            f"A correct `{backend}` solution for it:\n```python\n" + solution.strip() + "\n```")


def task_section(task: Task, contract: Contract) -> str:
    return (f"## Your task: `{task.id}`\n{task.description}\n\n"
            "Reference:\n```python\n" + task_view(task.source) + "```\n" + describe_harness(task, contract))


def build_messages(task: Task, contract: Contract, exemplar_text: str | None) -> list[dict[str, str]]:
    parts = [f"Write a faster {contract.language} implementation of a PyTorch reference, for "
             f"{contract.platform}.", contract_section(contract)]
    if exemplar_text:
        parts.append(exemplar_text)
    parts.append(task_section(task, contract))
    parts.append("Now write `ModelNew` for this task. Reply with the complete Python file in one ```python block.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]
