"""Every task passes the degeneracy gates (multikernelbench.tasks.gates.check_task).

One test per task so a failure names the task and its problems. The gates run the reference on the small
test shapes only; the whole suite takes a few minutes on two cores. Fix a failing task, never exempt it.
"""

from __future__ import annotations

import pytest

from _suite_ids import by_id, task_ids
from multikernelbench.tasks.gates import check_task


@pytest.mark.parametrize("task_id", task_ids())
def test_task_passes_gates(task_id):
    problems = check_task(by_id()[task_id])
    assert not problems, f"{task_id}: " + "; ".join(problems)
