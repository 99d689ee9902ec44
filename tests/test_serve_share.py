"""The last free lane is never held for nobody (serve/sched.py, issue #42's lanes_* soak runs).

The soak (2 lanes, 4 honest clients each blocking on its result, a queue flooder, a sleeping candidate) saw
one lane free in 92-94 % of samples while ~11 jobs waited. Here the same clients drive :class:`FairQueue`
directly on a simulated clock, in the order the service's lanes call it (serve/jobs.py ``take``/``finish``,
serve/preempt.py ``pick``/``returned``): the old rule left a lane free 31 % of the hostile minute and gave
the honest clients 58 jobs a minute of the 120 they get alone (below their equal share of 6 clients, 80);
newcomers were floored at a credited newcomer's raw usage (the sleeper came in at 0 behind the flooder),
and a cheap client already at its lane cap was a reason to keep the last lane free.
"""

from __future__ import annotations

from dataclasses import dataclass

from multikernelbench.serve.sched import Caps, FairQueue, Share

DT = 0.05


@dataclass(eq=False)
class SimJob:
    client: str
    work_s: float
    preemptions: int = 0
    overran: bool = False


@dataclass
class Tally:
    honest_done: int = 0
    flood_done: int = 0
    samples: int = 0
    free_while_waiting: int = 0


def _finish(q: FairQueue[SimJob], lanes: dict[int, tuple[SimJob, float]], t: float, tally: Tally,
            counted: bool) -> None:
    """Jobs whose work is done end (serve/jobs.py ``finish``); an honest client submits its next at once."""
    for lane, (job, started) in list(lanes.items()):
        if t - started >= job.work_s - 1e-9:
            del lanes[lane]
            q.done(lane, job, t)
            q.release(job.client, 1.0)
            if job.client.startswith("honest"):
                tally.honest_done += counted
                q.push(job.client, SimJob(job.client, 1.0), 1.0, t)
            elif job.client == "flood":
                tally.flood_done += counted


def _preempt(q: FairQueue[SimJob], lanes: dict[int, tuple[SimJob, float]], t: float) -> None:
    """serve/preempt.py: the named lane's job is stopped and queued again, or ended after 2 counted stops."""
    lane = q.victim(t)
    if lane is None:
        return
    job, _ = lanes.pop(lane)
    job.overran = job.overran or q.overran_after(lane, t)
    job.preemptions += job.overran
    if job.preemptions > 2:
        q.ended_overran(job.client, t)
        q.done(lane, job, t)
        q.release(job.client, 1.0)
    else:
        q.done(lane, job, t, stopped=True)
        q.requeue(job.client, job, 1.0, t, overran=job.overran)


def simulate(hostile: bool, warm_s: float = 60.0, seconds: float = 60.0) -> Tally:
    """4 honest clients (1 s jobs, one at a time) for ``warm_s``, then ``seconds`` measured; ``hostile``: a
    flooder keeping 8 jobs of 0.3 s pending and a sleeper's 20 s job (renewed when it ends) join then."""
    q: FairQueue[SimJob] = FairQueue(Caps(per_client_jobs=8), Share(lanes=2, half_life_s=120.0, preempt_after_s=10.0))
    lanes: dict[int, tuple[SimJob, float]] = {}
    tally = Tally()
    for i in range(4):
        q.push(f"honest{i}", SimJob(f"honest{i}", 1.0), 1.0, 0.0)
    for step in range(round((warm_s + seconds) / DT)):
        t = step * DT
        measured = t >= warm_s
        if hostile and measured:
            while q.jobs["flood"] < 8:
                q.push("flood", SimJob("flood", 0.3), 1.0, t)
            if q.jobs["sleeper"] == 0:
                q.push("sleeper", SimJob("sleeper", 20.0), 1.0, t)
        _finish(q, lanes, t, tally, measured)
        _preempt(q, lanes, t)
        for lane in range(2):
            if lane not in lanes and q.waiting():
                batch = q.take(lane, 1, t)
                if batch:
                    lanes[lane] = (batch[0], t)
        if measured:
            tally.samples += 1
            tally.free_while_waiting += len(lanes) < 2 and q.waiting()
    return tally


def test_no_lane_stands_free_while_the_soak_clients_wait():
    alone, hostile = simulate(hostile=False), simulate(hostile=True)
    assert alone.honest_done == 120 and alone.free_while_waiting == 0
    assert hostile.free_while_waiting / hostile.samples < 0.01  # was 31 %
    assert hostile.honest_done >= 120 * 4 / 6  # at least their equal share of 6 clients (was 58)
    assert hostile.flood_done * 0.3 <= 120 / 6  # the flooder's quick jobs: at most its share of lane time


def test_a_newcomer_is_not_floored_below_a_credited_newcomer():
    """The flooder and the sleeper come in together beside honest clients that used ~25 s: the flooder is
    floored at their level (credit, no usage yet); the sleeper must come in level with them too, not at the
    flooder's raw usage of 0, or its low level pulls the mean below every honest client."""
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=8), Share(lanes=2, half_life_s=1e9))
    q.settled.update({f"h{i}": (25.0, 0.0) for i in range(4)})
    for i in range(4):
        q.push(f"h{i}", f"h{i}-0", 1.0, 0.0)
    assert q.take(0, 1, 0.0) == ["h0-0"]
    q.push("flood", "f0", 1.0, 0.0)
    q.push("sleeper", "s0", 1.0, 0.0)
    assert q.level("sleeper", 0.0) >= 25.0
    assert not q.over_share("h1", 0.0)


def test_a_cheap_client_at_its_lane_cap_is_no_reason_to_keep_the_last_lane():
    """The sleeper holds its one lane (all but one of two) at a level below the waiting honest clients': the
    other lane cannot go to it, so it goes to the least-used waiting client instead of standing free."""
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=8), Share(lanes=2, half_life_s=1e9))
    q.settled.update({"sleeper": (10.0, 0.0), "a": (30.0, 0.0), "b": (31.0, 0.0)})
    q.push("sleeper", "s0", 1.0, 0.0)
    assert q.take(0, 1, 0.0) == ["s0"]
    q.push("a", "a0", 1.0, 0.0)
    q.push("b", "b0", 1.0, 0.0)
    assert q.over_share("a", 0.0)  # over the mean (23.7) that the sleeper pulls down
    assert q.take(1, 1, 0.0) == ["a0"]


def test_near_equal_clients_are_not_told_apart_by_a_fraction_of_a_job():
    """Honest clients of near-equal usage, one of them between jobs: the waiting one, 1 % over the mean, is not
    over a fair share and gets the free lane (the old rule kept it for the idle one: honest clients with think
    time between jobs saw a lane free 4-7 % of a simulated minute with nothing hostile)."""
    q: FairQueue[str] = FairQueue(Caps(per_client_jobs=8), Share(lanes=2, half_life_s=1e9))
    q.settled.update({"h0": (29.8, 0.0), "h1": (30.3, 0.0), "h2": (29.9, 0.0)})
    q.push("h0", "h0-0", 1.0, 0.0)
    assert q.take(0, 1, 0.0) == ["h0-0"]
    q.push("h1", "h1-0", 1.0, 0.0)
    assert q.over_share("h1", 0.0)
    assert q.take(1, 1, 0.0) == ["h1-0"]
