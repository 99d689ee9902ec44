"""Prompting strategies, in a registry filled by a decorator.

``zero_shot``: contract and task only. ``one_shot``: plus one generic exemplar (elementwise add) for the
backend. ``category_shot``: plus the exemplar of the task's own category — the original MultiKernelBench's
main prompting finding, which lifted non-CUDA pass rates substantially. A strategy is a function
``(task, backend) -> Prompt``; new ones plug in with ``@register_strategy("name")``
or an entry point in the ``multikernelbench.strategies`` group.
"""

from __future__ import annotations

from typing import Callable

from multikernelbench.prompts.contracts import get_contract
from multikernelbench.prompts.exemplars import GENERIC, has_exemplar, load_exemplar
from multikernelbench.prompts.templates import Prompt, build_messages, exemplar_section
from multikernelbench.registry import Registry
from multikernelbench.tasks import Task

StrategyFn = Callable[[Task, str], Prompt]
#: name -> strategy function; others plug in by decorator or an entry point in ``multikernelbench.strategies``.
STRATEGIES: Registry[StrategyFn] = Registry("strategy", entry_point_group="multikernelbench.strategies")


def register_strategy(name: str) -> Callable[[StrategyFn], StrategyFn]:
    """Function decorator; a name already taken by another function raises RegistryCollision."""
    return STRATEGIES.register(name)


def strategy_names() -> list[str]:
    return STRATEGIES.names()


def build_prompt(task: Task, backend: str, strategy: str) -> Prompt:
    """The prompt for one (task, backend, strategy); KeyError naming the choices for an unknown one."""
    return STRATEGIES.get(strategy)(task, backend)


def _with_exemplar(task: Task, backend: str, strategy: str, category: str | None) -> Prompt:
    contract = get_contract(backend)
    text, shown = None, None
    if category is not None:
        ex = load_exemplar(category, backend)
        text, shown = exemplar_section(ex.reference, ex.solution, backend), f"{ex.category}/{backend}"
    return Prompt(task_id=task.id, backend=backend, strategy=strategy,
                  messages=build_messages(task, contract, text), exemplar=shown)


@register_strategy("zero_shot")
def zero_shot(task: Task, backend: str) -> Prompt:
    return _with_exemplar(task, backend, "zero_shot", None)


@register_strategy("one_shot")
def one_shot(task: Task, backend: str) -> Prompt:
    return _with_exemplar(task, backend, "one_shot", GENERIC)


@register_strategy("category_shot")
def category_shot(task: Task, backend: str) -> Prompt:
    # A category without an exemplar (a newly added one) falls back to the generic exemplar; the prompt
    # records which exemplar it showed, so analyses can tell.
    category = task.category if has_exemplar(task.category, backend) else GENERIC
    return _with_exemplar(task, backend, "category_shot", category)
