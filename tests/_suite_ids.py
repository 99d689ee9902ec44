"""The suite loaded once per test session at collection time, for tests parametrized per task or category.

``load_suite()`` executes every task file (a few seconds), and pytest imports each test module separately,
so the suite-wide tests share this cached copy instead of loading it once per module.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def suite_tasks():
    from multikernelbench.tasks import load_suite

    return tuple(load_suite())


def task_ids() -> list[str]:
    return [t.id for t in suite_tasks()]


def categories() -> list[str]:
    return sorted({t.category for t in suite_tasks()})


def by_id():
    return {t.id: t for t in suite_tasks()}


@lru_cache(maxsize=1)
def first_of_each_category() -> frozenset[str]:
    """One task per category (the first in suite order): the fast tier's sample of a per-task check, so a
    change to the check itself is tried on every category in seconds; the full suite runs every task."""
    first: dict[str, str] = {}
    for t in suite_tasks():
        first.setdefault(t.category, t.id)
    return frozenset(first.values())
