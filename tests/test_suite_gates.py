"""Every task passes the degeneracy gates (multikernelbench.tasks.gates.check_task).

One test per task so a failure names the task and its problems. The gates run the reference on the small
test shapes only; the whole suite takes a few minutes on two cores, so the fast tier (``-m "not slow"``) runs
one task per category and the full suite every task. Fix a failing task, never exempt it.
"""

from __future__ import annotations

import pytest
from _suite_ids import by_id, first_of_each_category, task_ids

from multikernelbench.tasks.gates import check_task


@pytest.mark.parametrize("task_id", [pytest.param(i, marks=() if i in first_of_each_category() else pytest.mark.slow)
                                     for i in task_ids()])
def test_task_passes_gates(task_id):
    problems = check_task(by_id()[task_id])
    assert not problems, f"{task_id}: " + "; ".join(problems)
