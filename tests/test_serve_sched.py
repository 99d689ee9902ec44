"""The service's queue is fair across clients and lanes (serve/sched.py), with times passed in (no clocks):

* a client with one job waits one round, not behind another's backlog (the first queue was first come,
  first served); the caps hold per client and in all;
* the client with the least *recent* engine time goes next, and a running job's lane time is charged while
  it runs (the queue before this change charged a fixed 10 s estimate until the job ended, so a client whose
  candidate had held a lane for minutes still looked cheap);
* recent usage decays: a heavy user from long ago is not behind for ever; a newcomer is ordered level with
  the busy clients, not ahead of them all;
* one client holds at most all lanes but one;
* a client over its share does not get the last free lane; a client under its share does;
* a run on sufferance (taken over its share, a job that outlasted ``preempt_after_s``, a client on probation)
  is named for preemption as soon as a cheaper client waits; a run taken within its share is protected until
  ``preempt_after_s``; a newcomer's share is judged from the level it came in at.

Each rule's test fails on the queue before this change (its single engine thread took batches by
lifetime usage with provisional costs, and knew no lanes).
"""

from __future__ import annotations

import pytest

from multikernelbench.serve.sched import Caps, FairQueue, OverLimit, Share


def test_one_job_waits_one_round_not_behind_a_backlog():
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=1000), Share(lanes=1))
    for i in range(100):
        q.push("flood", f"f{i}", 1.0, 0.0)
    q.push("honest", "h0", 1.0, 0.0)
    assert q.take(0, 2, now=0.0) == ["f0", "h0"]
    q.done(0, "f0", 1.0)
    q.done(0, "h0", 2.0)
    assert q.take(0, 3, now=2.0) == ["f1", "f2", "f3"]
    assert len(q) == 96


def test_caps_per_client_and_in_all_count_running_jobs_until_released():
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=2, per_client_compute_s=100, total_jobs=3,
                                       total_compute_s=1000))
    q.check("a", 2, 20)
    q.push("a", "a0", 10, 0.0)
    q.push("a", "a1", 10, 0.0)
    assert q.take(0, 5, now=0.0) == ["a0", "a1"]
    with pytest.raises(OverLimit, match="limit of 2"):
        q.check("a", 1, 10)  # running jobs still count
    with pytest.raises(OverLimit, match="compute"):
        q.check("b", 1, 101)
    q.push("b", "b0", 10, 0.0)
    with pytest.raises(OverLimit, match="service is full"):
        q.check("c", 1, 1)
    q.release("a", 10)
    q.check("c", 1, 1)
    q.check("a", 1, 10)


def test_engine_time_not_job_count_decides_who_goes_next():
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=1))
    for i in range(3):
        q.push("slow", f"s{i}", 10.0, 0.0)
        q.push("quick", f"q{i}", 10.0, 0.0)
    assert q.take(0, 1, now=0.0) == ["s0"]
    q.done(0, "s0", 20.0)  # its candidate held the lane for 20 s
    assert q.take(0, 1, now=20.0) == ["q0"]
    q.done(0, "q0", 21.0)
    assert q.take(0, 1, now=21.0) == ["q1"]
    q.done(0, "q1", 22.0)
    assert q.take(0, 1, now=22.0) == ["q2"]
    q.done(0, "q2", 23.0)
    assert q.take(0, 1, now=23.0) == ["s1"]


def test_a_running_job_is_charged_while_it_runs():
    """``steady`` used 15 s; from t=15 lane 0 holds the sleeper's job. At t=45 lane 1 is free with both
    waiting: the sleeper's 30 s so far count, so ``steady`` goes first (charged only at the end, or by a 10 s
    estimate, the sleeper would look cheaper)."""
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=2, lanes_per_client=2,
                                                                    reserve_last_lane=False, half_life_s=1e9))
    q.push("steady", "t0", 10.0, 0.0)
    assert q.take(1, 1, now=0.0) == ["t0"]
    q.done(1, "t0", 15.0)
    q.push("sleeper", "z0", 10.0, 15.0)
    assert q.take(0, 1, now=15.0) == ["z0"]
    q.push("sleeper", "z1", 10.0, 16.0)
    q.push("steady", "t1", 10.0, 16.0)
    assert q.usage("sleeper", 45.0) == pytest.approx(30.0)
    assert q.take(1, 1, now=45.0) == ["t1"]


def test_recent_usage_decays_with_its_half_life():
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=1, half_life_s=60.0))
    q.push("past", "p0", 10.0, 0.0)
    assert q.take(0, 1, now=0.0) == ["p0"]
    q.done(0, "p0", 600.0)  # ten minutes on the lane
    assert q.usage("past", 660.0) == pytest.approx(300.0)
    q.settled["now"] = (5.0, 660.0)
    q.push("now", "n0", 10.0, 660.0)
    q.push("past", "p1", 10.0, 660.0)
    assert q.take(0, 1, now=660.0) == ["n0"]  # 5 s recent < 300 s
    q.done(0, "n0", 661.0)
    # an hour later the ten minutes are worth under a second: no longer behind a client with 5 s an hour ago
    assert q.usage("past", 4260.0) < 1.0


def test_a_newcomer_starts_level_with_the_busy_clients_not_at_zero():
    """Two clients used 100 s each recently and have work queued; a new token (or a client back from idle)
    is ordered level with them, not ahead of both until its usage catches up."""
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=1, half_life_s=1e9))
    q.settled.update({"a": (100.0, 0.0), "b": (100.0, 0.0)})
    q.push("a", "a0", 10.0, 0.0)
    q.push("b", "b0", 10.0, 0.0)
    q.push("new", "n0", 10.0, 0.0)
    q.push("new", "n1", 10.0, 0.0)
    assert q.take(0, 1, now=0.0) == ["a0"]
    q.done(0, "a0", 1.0)
    assert q.take(0, 1, now=1.0) == ["b0"]
    q.done(0, "b0", 2.0)
    assert q.take(0, 1, now=2.0) == ["n0"]
    assert not q.over_share("new", 2.0)  # judged from the level it came in at: not over the mean


def test_one_client_holds_at_most_all_lanes_but_one():
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=3, reserve_last_lane=False))
    for i in range(5):
        q.push("heavy", f"h{i}", 10.0, 0.0)
    assert q.take(0, 1, now=0.0) == ["h0"]
    assert q.take(1, 1, now=0.0) == ["h1"]
    assert q.take(2, 1, now=0.0) == []  # the third lane stays free for another client
    q.push("light", "l0", 10.0, 1.0)
    assert q.take(2, 1, now=1.0) == ["l0"]
    q.done(0, "h0", 5.0)
    assert q.take(0, 1, now=5.0) == ["h2"]  # a lane of its own again


def test_a_client_over_its_share_does_not_get_the_last_free_lane():
    """Two heavy clients (sleepers) and a light one between two of its jobs (its last ended 0.5 s ago, within
    ``idle_grace_s``): lane 0 holds ``sleeper_a``; when lane 1 frees, ``sleeper_b`` (over the mean of recent
    usage) may not take it, so it is free when the light client's next job comes."""
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=2, half_life_s=1e9))
    q.settled.update({"sleeper_a": (40.0, 0.0), "sleeper_b": (40.0, 0.0), "light": (4.0, 0.0)})
    q.push("light", "l-1", 10.0, 0.0)
    assert q.take(1, 1, now=0.0) == ["l-1"]
    q.push("sleeper_a", "a0", 10.0, 0.0)
    assert q.take(0, 1, now=0.0) == ["a0"]
    q.done(1, "l-1", 0.5)
    q.push("sleeper_b", "b0", 10.0, 1.0)
    assert q.take(1, 1, now=1.0) == []
    q.push("light", "l0", 10.0, 2.0)
    assert q.take(1, 1, now=2.0) == ["l0"]  # under its share: it gets the lane
    q.done(1, "l0", 4.0)
    q.done(0, "a0", 20.0)
    assert q.take(0, 1, now=20.0) == ["b0"]  # with both lanes free a heavy client may take one


def test_with_one_lane_nothing_is_held_back():
    """One lane cannot be reserved (a running job is never preempted): the heavy client's job is taken when it
    is the only work, so the lane is never idle while work waits."""
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=1, half_life_s=1e9))
    q.settled.update({"heavy": (100.0, 0.0), "light": (1.0, 0.0)})
    q.push("heavy", "h0", 10.0, 0.0)
    assert q.take(0, 1, now=0.0) == ["h0"]


def test_a_long_job_over_its_share_is_named_for_preemption_when_a_cheaper_client_waits():
    """The sleeper's job holds the one lane; once it has run ``preempt_after_s`` and its client is over its
    share while a cheaper client waits, its lane is named; stopped and put back, it goes after the cheaper
    client's job, charged for the time it held the lane. (The queue before preemption had no way to name it:
    a running job held its lane to its end.)"""
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=1, half_life_s=1e9, preempt_after_s=10.0))
    q.push("sleeper", "z0", 10.0, 0.0)
    assert q.take(0, 1, now=0.0) == ["z0"]
    assert q.victim(20.0) is None  # nobody waits
    q.push("honest", "h0", 10.0, 2.0)
    assert q.victim(9.0) is None  # not run long enough
    assert q.victim(12.0) == 0
    assert q.victim(12.0, exclude={0}) is None
    q.done(0, "z0", 12.0)
    q.requeue("sleeper", "z0", 10.0, 12.0)
    assert q.jobs["sleeper"] == 1 and q.usage("sleeper", 12.0) == pytest.approx(12.0)
    assert q.take(0, 1, now=12.0) == ["h0"]
    q.done(0, "h0", 13.0)
    assert q.take(0, 1, now=13.0) == ["z0"]


def test_preemption_spares_short_jobs_equal_clients_and_a_free_lane():
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=2, lanes_per_client=1, half_life_s=1e9,
                                                                    preempt_after_s=10.0))
    q.push("a", "a0", 10.0, 0.0)
    assert q.take(0, 1, now=0.0) == ["a0"]
    q.push("b", "b0", 10.0, 0.0)
    assert q.victim(30.0) is None  # lane 1 is free: no one needs lane 0
    assert q.take(1, 1, now=0.0) == ["b0"]
    q.push("a", "a1", 10.0, 1.0)
    q.push("b", "b1", 10.0, 1.0)
    assert q.victim(30.0) is None  # a and b used the same: neither is over its share
    q.push("c", "c0", 10.0, 1.0)
    q.settled["c"] = (100.0, 1.0)
    assert q.victim(30.0) is None  # the waiting client is the expensive one
    off: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=1, preempt_after_s=0.0))
    off.push("z", "z0", 10.0, 0.0)
    assert off.take(0, 1, now=0.0) == ["z0"]
    off.push("h", "h0", 10.0, 1.0)
    assert off.victim(1000.0) is None  # preemption off


def test_a_run_taken_over_its_share_is_stopped_as_soon_as_a_cheaper_client_waits():
    """Runs on sufferance: the sleeper was already over its share when the idle lane took its job (the honest
    client, between two of its jobs, is engaged), so a cheaper client's arrival names its lane at once, not
    after ``preempt_after_s`` (the queue before this change named it only at 10 s: an honest kernel waited
    that long behind a sleeper every time)."""
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=1, half_life_s=1e9, preempt_after_s=10.0))
    q.settled.update({"sleeper": (50.0, 0.0), "honest": (5.0, 0.0)})
    q.push("honest", "h-1", 10.0, 0.0)
    assert q.take(0, 1, now=0.0) == ["h-1"]
    q.done(0, "h-1", 0.5)
    q.push("sleeper", "z0", 10.0, 0.5)
    assert q.take(0, 1, now=0.5) == ["z0"]  # nobody else wants the lane: work-conserving
    assert q.victim(1.0) is None  # nobody waits
    q.push("honest", "h0", 10.0, 1.0)
    assert q.victim(1.5) == 0
    assert not q.overran_after(0, 1.5)  # a stop now does not count against the sleeper's job
    q.done(0, "z0", 1.5)
    q.requeue("sleeper", "z0", 10.0, 1.5)
    assert q.take(0, 1, now=1.5) == ["h0"]


def test_a_run_taken_within_its_share_is_protected_until_it_overruns_then_it_is_on_sufferance():
    """An honest long job taken while its client was within its share is not stopped by arrivals before
    ``preempt_after_s`` (else it could be restarted for ever); once stopped for outlasting that, its later
    runs are on sufferance, whatever its client's share."""
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=1, half_life_s=1e9, preempt_after_s=10.0))
    q.settled.update({"long": (1.0, 0.0), "light": (5.0, 0.0)})
    q.push("long", "l0", 10.0, 0.0)
    assert q.take(0, 1, now=0.0) == ["l0"]  # within its share: protected
    q.push("light", "h0", 10.0, 1.0)
    assert q.victim(5.0) is None  # over its share by now (6 > 5.5), but protected
    assert q.victim(11.0) == 0 and q.overran_after(0, 11.0)
    q.done(0, "l0", 11.0)
    q.requeue("long", "l0", 10.0, 11.0, overran=True)
    assert q.take(0, 1, now=11.0) == ["h0"]
    q.done(0, "h0", 12.0)
    q.settled["long"] = (0.0, 12.0)  # even within its share again
    assert q.take(0, 1, now=12.0) == ["l0"]
    q.push("light", "h1", 10.0, 12.5)
    q.settled["long"] = (100.0, 12.5)
    assert q.victim(13.0) == 0  # on sufferance: named at once


def test_a_client_whose_job_outlasted_the_bound_is_on_probation():
    """After a job of ``z`` was stopped for outlasting ``preempt_after_s``, every run of ``z`` is on sufferance
    for one half-life, even a new job and even while ``z`` is within its share: a sleeper that never
    finishes does not get a protected slice of the lane with each job it submits."""
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=1, half_life_s=100.0, preempt_after_s=10.0))
    q.push("z", "z0", 10.0, 0.0)
    assert q.take(0, 1, now=0.0) == ["z0"] and q.lane_protected[0]
    q.push("h", "h0", 10.0, 1.0)
    assert q.victim(10.5) == 0
    q.done(0, "z0", 10.5)
    q.requeue("z", "z0", 10.0, 10.5, overran=True)
    assert q.take(0, 1, now=10.5) == ["h0"]
    q.done(0, "h0", 11.0)
    q.settled["h"] = (1000.0, 11.0)  # z is well within its share now
    q.push("z", "z1", 10.0, 11.0)
    assert q.take(0, 1, now=11.0) == ["z0"] and not q.lane_protected[0]  # the job that overran
    q.done(0, "z0", 12.0)  # (ended)
    assert q.take(0, 1, now=12.0) == ["z1"] and not q.lane_protected[0]  # a new job: on probation
    q.done(0, "z1", 13.0)
    q.push("z", "z2", 10.0, 111.0)
    assert q.take(0, 1, now=111.0) == ["z2"] and q.lane_protected[0]  # a half-life later: protected again


def test_a_newcomers_share_is_judged_from_the_level_it_started_at():
    """A newcomer is ordered level with the busy clients (already so); its share is now also judged from
    that level: on what it used it is the lightest client for a long while (the soak's sleeper, judged so,
    held a lane 24 s before it was over its share, and pulled the mean below the honest clients'); from its
    starting level it is over its share as soon as it has run more than the others."""
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=100), Share(lanes=3, lanes_per_client=1, half_life_s=1e9,
                                                                    preempt_after_s=10.0))
    q.settled.update({"a": (30.0, 0.0), "b": (30.0, 0.0)})
    q.push("a", "a0", 10.0, 0.0)
    q.push("b", "b0", 10.0, 0.0)
    assert q.take(0, 1, now=0.0) == ["a0"] and q.take(1, 1, now=0.0) == ["b0"]
    q.push("z", "z0", 10.0, 0.0)
    assert q.take(2, 1, now=0.0) == ["z0"] and q.lane_protected[2]
    q.done(0, "a0", 1.0)
    q.done(1, "b0", 1.0)  # a and b between jobs (engaged for idle_grace_s)
    assert q.usage("z", 2.5) < q.usage("a", 2.5)  # on what it used (2.5 s) it is the lightest
    assert q.over_share("z", 2.5)  # from the level it started at it is the heaviest


def test_a_run_is_niced_only_when_its_client_is_clearly_over_its_share():
    """``on_sufferance`` (the runs serve/worker_nice.py nices) uses ``FAIR_SLACK``: a newcomer floored level with a
    client that then decays is above it by a hair and its run is not protected, but it is no flooder; a client
    of weight 0.25 that used as much as the other is."""
    q: FairQueue[str] = FairQueue(Caps(), Share(lanes=2, idle_grace_s=300.0),
                                  weight=lambda c: 0.25 if c == "low" else 1.0)
    q.push("a", "a0", 1.0, 0.0)
    assert q.take(0, 1, now=0.0) == ["a0"]
    q.done(0, "a0", 10.0)
    q.release("a", 1.0)
    q.push("b", "b0", 1.0, 10.0)  # floored at a's level as of t=10; a decays until b is taken at t=11
    assert q.take(0, 1, now=11.0) == ["b0"]
    assert not q.lane_protected[0] and not q.on_sufferance(0)
    q.done(0, "b0", 12.0)
    q.release("b", 1.0)
    q.push("low", "l0", 1.0, 12.0)
    assert q.take(0, 1, now=12.0) == ["l0"]
    q.done(0, "l0", 22.0)  # 10 lane seconds at weight 0.25: 40 against a's and b's ~10
    q.release("low", 1.0)
    q.push("low", "l1", 1.0, 22.0)
    assert q.take(1, 1, now=22.0) == ["l1"]
    assert q.on_sufferance(1)
    q.done(1, "l1", 23.0)
    assert 1 not in q.lane_sufferance
