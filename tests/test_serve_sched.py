"""The service's queue is fair across clients: a client with one job waits one round, not behind another's
backlog (the old queue was first come, first served); a client whose jobs take long goes after one whose jobs
are short; the caps hold per client and in all."""

from __future__ import annotations

import pytest

from multikernelbench.serve.sched import Caps, FairQueue, OverLimit


def test_one_job_waits_one_round_not_behind_a_backlog():
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=1000))
    for i in range(100):
        q.push("flood", f"f{i}", 1.0)
    q.push("honest", "h0", 1.0)
    assert q.take(2) == ["f0", "h0"]
    assert q.take(3) == ["f1", "f2", "f3"]
    assert len(q) == 96


def test_caps_per_client_and_in_all_count_running_jobs_until_released():
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=2, per_client_compute_s=100, total_jobs=3,
                                       total_compute_s=1000))
    q.check("a", 2, 20)
    q.push("a", "a0", 10)
    q.push("a", "a1", 10)
    assert q.take(5) == ["a0", "a1"]
    with pytest.raises(OverLimit, match="limit of 2"):
        q.check("a", 1, 10)  # running jobs still count
    with pytest.raises(OverLimit, match="compute"):
        q.check("b", 1, 101)
    q.push("b", "b0", 10)
    with pytest.raises(OverLimit, match="service is full"):
        q.check("c", 1, 1)
    q.release("a", 10)
    q.check("c", 1, 1)
    q.check("a", 1, 10)


def test_engine_time_not_job_count_decides_who_goes_next():
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100))
    for i in range(3):
        q.push("slow", f"s{i}", 10.0)
        q.push("quick", f"q{i}", 10.0)
    assert q.take(2) == ["s0", "q0"]
    q.settle("slow", 10.0, 20.0)  # its candidate held the device for 20 s
    q.settle("quick", 10.0, 1.0)
    assert q.take(2) == ["q1", "q2"]
    assert q.take(1) == ["s1"]
    q.push("late", "l0", 10.0)  # a newcomer starts level with the least-used waiting client: no idle credit
    assert q.used["late"] == q.used["slow"]
