"""Suite-wide invariants: size and breadth of the suite, and no two tasks with the same content."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from _suite_ids import suite_tasks

from multikernelbench.cli.main import main

MIN_TASKS = 320
CATEGORIES = 15


@pytest.mark.slow
def test_mkb_tasks_json_lists_the_whole_suite(capsys):
    assert main(["tasks", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    cats = Counter(r["category"] for r in rows)
    assert len(rows) >= MIN_TASKS, f"only {len(rows)} tasks"
    assert len(cats) == CATEGORIES, f"{len(cats)} categories: {sorted(cats)}"
    assert len({r["id"] for r in rows}) == len(rows)
    assert sorted(r["id"] for r in rows) == [t.id for t in suite_tasks()]


def test_no_two_tasks_share_a_content_hash():
    seen: dict[str, list[str]] = {}
    for t in suite_tasks():
        seen.setdefault(t.content_hash, []).append(t.id)
    dups = {h: ids for h, ids in seen.items() if len(ids) > 1}
    assert not dups, f"tasks with identical content: {dups}"


def test_no_two_task_files_share_a_reference():
    """A copied task file (same reference code under another name) would differ only by its id."""
    by_source: dict[str, set[str]] = {}
    for t in suite_tasks():
        by_source.setdefault(t.source, set()).add(f"{t.category}.{t.name}")
    dups = [sorted(names) for names in by_source.values() if len(names) > 1]
    assert not dups, f"task files with identical source: {dups}"
