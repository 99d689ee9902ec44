"""The run's scheduling policy that the scheduler and both executors ask (engine/schedule.py): the lanes open
once, after the last build unless builds may overlap the clocks; a lost build that runs again is not counted
twice; a task's last job is known; a job whose lane was lost runs again once; a job past the run's time limit is
not started, with the message a rerun relies on."""

from __future__ import annotations

import time

from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.schedule import Schedule


def test_lanes_open_after_the_last_build_and_only_once():
    s = Schedule(EngineConfig(), ["a", "a", "b"], overlap=False)
    assert not s.open_at_start()
    assert [s.build_ended(), s.build_ended(), s.build_ended()] == [False, False, True]
    s.build_ended(rebuilt=True)  # a build lost with its node runs again ...
    assert s.build_ended() is False  # ... and its second end opens nothing: the lanes are open


def test_overlapping_builds_open_the_lanes_at_start():
    s = Schedule(EngineConfig(), ["a", "b"], overlap=True)
    assert s.open_at_start()
    assert [s.build_ended(), s.build_ended()] == [False, False]


def test_a_tasks_last_job_is_known():
    s = Schedule(EngineConfig(), ["a", "b", "a"], overlap=False)
    assert not s.last_of_task("a") and s.last_of_task("b")  # before any count: b has one job, a two
    assert s.job_done("a") is False and s.done_tasks() == set()
    assert s.last_of_task("a")  # a lane that ended a's other job may free a's references before it is counted
    assert s.job_done("b") is True and s.done_tasks() == {"b"}
    assert s.job_done("a") is True and s.done_tasks() == {"a", "b"}


def test_a_lost_job_runs_again_once():
    s = Schedule(EngineConfig(), ["a", "a"], overlap=False)
    assert [s.run_again(0), s.run_again(1), s.run_again(0), s.run_again(1)] == [True, True, False, False]


def test_past_the_time_limit_a_job_is_not_started():
    assert Schedule(EngineConfig(), ["a"], overlap=False).too_late() is None  # no limit
    s = Schedule(EngineConfig(stop_after_s=0.05), ["a"], overlap=False)
    assert s.too_late() is None
    time.sleep(0.06)
    skipped = s.too_late()
    assert skipped is not None and skipped.message.startswith("not started: the run's time limit (0 s)")
    assert "a rerun picks it up" in skipped.message
