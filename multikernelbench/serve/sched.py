"""Fair scheduling of queued jobs over the engine's device lanes, with caps on pending work per client and in all.

First come, first served lets one client that queues a thousand candidates hold everyone else behind them
for the length of its backlog, and a batch that runs to its end lets one slow candidate hold every job that
arrives after it. So:

* **Per-client queues, least recent usage first.** Each client has its own FIFO; a lane that frees takes
  next from the client with the least *recent* engine time: lane seconds, decayed with a half-life
  (``Share.half_life_s``, as a fair-share batch scheduler does), so a client is judged on the last few
  minutes, not on its whole history. A client that becomes active is ordered level with the least-used
  client busy now (start-time fair queueing): idle time, or a new token, buys no run of the lanes ahead of
  the clients already there; its share is judged from that level too (:meth:`FairQueue.level`), as long as
  it stays active. Ties go to the client that waited longest.
* **Charged as it runs.** A lane's elapsed time is counted against the clients of the jobs it holds while
  they run, not only when they end: a candidate that sleeps at import is already the most expensive job in
  the queue while it sleeps, not a 10 s estimate until it returns.
* **Lanes taken as they free.** The service takes work per lane (serve/lanes.py), so a slow job holds one
  lane, not the service.
* **A per-client lane cap.** One client holds at most ``lanes_per_client`` lanes at once (default: all but
  one), so a single client with slow jobs cannot occupy every lane while others wait.
* **The last free lane is for clients under their share.** A client whose level is above the mean of the
  engaged clients (next) does not get the last free lane while an engaged client under its share, holding
  fewer lanes than its cap, could take it. Without this a work-conserving scheduler hands an idle lane to the
  heavy user whenever the others (who block on their results before submitting again) momentarily have
  nothing queued, and a slow job taken in that instant holds the lane against them. Several heavy clients
  together hold at most ``lanes - 1`` lanes; with one lane nothing can be reserved (preemption bounds the wait
  there). A client is refused it only when over the mean by more than ``FAIR_SLACK`` of it (honest clients of
  near-equal usage with think time between jobs kept the lane for one another 4-7 % of a simulated minute).
* **Engaged clients.** Shares are judged, and the last lane kept, among the clients with work queued or
  running or whose last job ended within ``Share.idle_grace_s`` (5 s: between two jobs they block on). The
  soak (issue #42, benchmarks/serve/README.md) saw one of two lanes free 92-94 %, then 55 %, of the hostile
  minute while ~11 jobs waited. Driven on a simulated clock (tests/test_serve_share.py: 4 honest clients
  blocking on 1 s jobs, a flooder keeping 8 jobs of 0.3 s queued, a 20 s sleeper, and the soak's cache
  flooder, which has one job evaluated and then only cached answers), a lane stood free 68 % and the honest
  clients got 38 jobs of their 120 alone: the cache flooder, idle with 1 s of usage, was a light client the
  last lane was kept for as long as its usage lasted, and it pulled the mean below every honest client, so
  none of them got that lane nor counted as a cheaper waiter that the sleeper's run could be stopped for. Now
  0 % free, 92 jobs (their equal share of 5 busy clients is 96); a newcomer is floored at clients between
  jobs too (four honest clients between jobs let the sleeper in at 0). The cost: a client back after the
  grace is floored like a newcomer, so a heavy client that had the lanes to itself keeps a run it took
  within its share up to ``preempt_after_s`` (one protected slice per ``half_life_s``: its later runs are on
  sufferance). Why 5 s: simulated honest clients with 3 s of think time got 48 jobs of their 60 beside the
  flooder at 2 s (each return floored level with it), 58 at 5 s; under load 9 a real client's next job came
  over 2 s after its last (tests/test_serve_sufferance.py).
* **Weights.** A client's usage is divided by its weight (``weight(client)``: the token file's third column,
  serve/auth.py; default 1) before it is compared, so a client of weight 0.25 gets a quarter of what a client
  of weight 1 gets when they contend. Equal shares leave N honest clients N/(N+k) of the lanes beside k
  admitted clients that queue work back to back, whatever that work is (simulated: 92 of 120, -23 %); no rule
  that is fair to honest clients sending the same kind of work can give those k less, so the operator's
  weights are the lever (at 0.25: 106 of 120, -12 %). Nothing a client sends changes its weight.
* **Preemption (``Share.preempt_after_s``).** Without it a job taken while its client was cheap holds its
  lane to the end, however long: a candidate that sleeps at build and at load held one of two lanes ~45 s
  in the soak. :meth:`FairQueue.victim` names a lane to stop when every lane is busy, a client not over its
  share waits, and the lane's job has run at least ``preempt_after_s`` for one client that *is* over its
  share (the most used such client first). The service stops that run and puts its jobs back at the front
  of their client's queue, charged for the lane time they used (:meth:`FairQueue.requeue`); serve/preempt.py
  bounds how often one job is stopped. A job is only stopped for a client that is cheaper than its own.
* **Runs on sufferance are stopped at once.** A run holds its lane only until a client not over its share
  waits for one, then it is stopped without waiting ``preempt_after_s`` (the most used such client's youngest
  run first), when it was taken while its client was already over its share (a lane was idle, nobody cheaper
  wanted it), or its job was already stopped once for outlasting ``preempt_after_s``, or its client is *on
  probation*: a job of it outlasted ``preempt_after_s`` and was stopped within the last ``half_life_s``.
  Without this a waiting honest kernel waited up to ``preempt_after_s`` of a sleeper's run each time, and a
  client whose jobs never finish within the bound still got protected slices of ``preempt_after_s`` as often
  as its share allowed (the soak: -52 % honest results per minute with one sleeping client; -12 % with this
  rule, benchmarks/serve/README.md). A run taken
  while its client was within its share and not on probation is *protected*: only the rule above stops it,
  so an honest job shorter than ``preempt_after_s`` is not restarted for ever by others' arrivals (its client
  falls within its share while it waits, and its next run is protected). Until it is stopped, a run taken on
  sufferance by more than ``FAIR_SLACK`` evaluates at a lower CPU priority (:meth:`FairQueue.on_sufferance`,
  serve/worker_nice.py): a lane nobody cheaper wanted does not buy the core from the front or protected runs.

Caps are checked before anything is queued: a client's pending jobs, a client's pending compute (the sum of
its jobs' timing budgets plus a fixed cost per job: what it asks the device for), and the service's pending
jobs and compute in all.

Not thread-safe on its own: the service calls it under its lock. Times are passed in (``now``), so the rules
are tested without clocks.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from multikernelbench.serve.caps import Caps, OverLimit, PendingCaps
from multikernelbench.serve.usage import FAIR_SLACK, FORGET_S, MIN_WEIGHT, Share, UsageBook

__all__ = ["FAIR_SLACK", "FORGET_S", "MIN_WEIGHT", "Caps", "FairQueue", "OverLimit", "Share"]

T = TypeVar("T", bound=Hashable)


class FairQueue(PendingCaps, UsageBook, Generic[T]):
    """Per-client FIFO queues taken per lane; pending counts cover queued and running jobs (serve/caps.py), usage
    is kept by serve/usage.py."""

    def __init__(self, caps: Caps, share: Share | None = None,
                 weight: Callable[[str], float] | None = None) -> None:
        PendingCaps.__init__(self, caps)
        UsageBook.__init__(self, share or Share(), weight)
        self.queues: dict[str, collections.deque[tuple[T, float]]] = {}
        self.since: dict[str, int] = {}  # tick a client last became active or was served (ties: oldest first)
        self._tick = 0
        self.lane_items: dict[int, list[tuple[str, T]]] = {}  # a busy lane's unfinished items
        self.lane_mark: dict[int, float] = {}  # when a busy lane's elapsed time was last charged
        self.lane_start: dict[int, float] = {}  # when a busy lane took its first unfinished item
        self.lane_protected: dict[int, bool] = {}  # every item on the lane was taken within its client's share
        self.lane_sufferance: dict[int, bool] = {}  # every item on the lane was taken on sufferance (by FAIR_SLACK)
        self.overran: set[T] = set()  # queued items stopped once for outlasting preempt_after_s (on sufferance)

    # ---- queues -----------------------------------------------------------------------------------
    def push(self, client: str, item: T, compute_s: float, now: float) -> None:
        self.charge(client, compute_s)
        self._queue(client, now).append((item, compute_s))

    def _queue(self, client: str, now: float, floor: bool = True) -> collections.deque[tuple[T, float]]:
        """``client``'s queue, opened when it becomes active (ordered level with the least-used busy client);
        ``floor=False``: it never stopped being active (a stopped job put back)."""
        queue = self.queues.get(client)
        if queue is None:
            if floor and not self.lanes_of(client) and client not in self._expire(now):
                self._floor(client, now)  # back within idle_grace_s: still active, its level and credit kept
            self.idle_at.pop(client, None)
            self._tick += 1
            self.since[client] = self._tick
            queue = self.queues[client] = collections.deque()
        return queue

    def _order(self, client: str, now: float) -> tuple[float, int]:
        return self.level(client, now), self.since[client]

    # ---- lanes ------------------------------------------------------------------------------------
    def lanes_of(self, client: str) -> set[int]:
        return {lane for lane, items in self.lane_items.items() if any(c == client for c, _ in items)}

    def _eligible(self, client: str, lane: int, now: float) -> bool:
        share = self.share
        held = self.lanes_of(client) | {lane}
        if len(held) > share.client_lanes:
            return False
        if share.reserve_last_lane and share.lanes > 1:
            free_after = share.lanes - len(set(self.lane_items) | {lane})
            if free_after <= 0 and self.over_share(client, now, FAIR_SLACK) and self._kept_for(client, lane, now):
                return False
        return True

    def _kept_for(self, client: str, lane: int, now: float) -> bool:
        """Whether a client other than ``client``, not over its share, could take ``lane`` if it stayed free: one
        that holds fewer lanes than its cap (an idle light client, which the last lane is kept for). A cheap
        client that already holds all the lanes it may is no reason to keep a lane free (module docstring)."""
        cap = self.share.client_lanes
        return any(c != client and len(self.lanes_of(c) | {lane}) <= cap and not self.over_share(c, now)
                   for c in self.engaged(now))

    def take(self, lane: int, n: int, now: float) -> list[T]:
        """Up to ``n`` queued items for ``lane`` (free until now), one per eligible client in turn, least recent
        usage first; they stay charged until released and their lane's time is charged until :meth:`done`."""
        out: list[T] = []
        while self.queues and len(out) < n:
            ready = [c for c in self.queues if self._eligible(c, lane, now)]
            if not ready:
                break
            client = min(ready, key=lambda c: self._order(c, now))
            queue = self.queues[client]
            item, _ = queue.popleft()
            out.append(item)
            suffered = item in self.overran or self.on_probation(client, now)
            protected = not suffered and not self.over_share(client, now)
            low = suffered or self.over_share(client, now, FAIR_SLACK)  # see on_sufferance
            self.overran.discard(item)
            if lane not in self.lane_items:
                self.lane_items[lane] = []
                self.lane_mark[lane] = self.lane_start[lane] = now
                self.lane_protected[lane] = protected
                self.lane_sufferance[lane] = low
            else:
                self._settle_lane(lane, now)  # the time so far was the items already there
                self.lane_protected[lane] = self.lane_protected[lane] and protected
                self.lane_sufferance[lane] = self.lane_sufferance[lane] and low
            self.lane_items[lane].append((client, item))
            self._tick += 1
            self.since[client] = self._tick
            if not queue:
                del self.queues[client]
        return out

    def on_sufferance(self, lane: int) -> bool:
        """Whether every item on the busy ``lane`` was taken on sufferance: its client on probation, the item
        stopped once for outlasting ``preempt_after_s``, or its client over its share by more than ``FAIR_SLACK``
        (as for stopping a run: a newcomer floored level with the others is above them by their decay since, and
        clients of near-equal usage are not told apart). Its run's workers may run at a lower CPU priority
        (serve/worker_nice.py)."""
        return self.lane_sufferance.get(lane, False)

    def _settle_lane(self, lane: int, now: float) -> None:
        items = self.lane_items[lane]
        elapsed = max(0.0, now - self.lane_mark[lane])
        for client, _ in items:
            self._add(client, elapsed / len(items), now)
        self.lane_mark[lane] = now

    def done(self, lane: int, item: T, now: float, stopped: bool = False) -> None:
        """A taken item finished: its lane's time so far is charged to the clients it held, and it leaves.
        ``stopped``: it was preempted and is about to be :meth:`requeue`-d (its client stays active: its level
        is not set anew, so the stopped run's time stays charged)."""
        items = self.lane_items.get(lane)
        if not items:
            return
        self._settle_lane(lane, now)
        self.lane_items[lane] = [(c, i) for c, i in items if i is not item]
        if not self.lane_items[lane]:
            del self.lane_items[lane], self.lane_mark[lane], self.lane_start[lane], self.lane_protected[lane]
            del self.lane_sufferance[lane]
        for client in {c for c, i in items if i is item}:
            if not stopped and client not in self.queues and not self.lanes_of(client):
                self.idle_at[client] = now  # engaged for idle_grace_s more, then judged on what it used

    def requeue(self, client: str, item: T, compute_s: float, now: float, overran: bool = False) -> None:
        """A stopped item (already :meth:`done` on its lane) back at the front of its client's queue; it stays
        charged against the caps (it was never released). ``overran``: it was stopped after running
        ``preempt_after_s`` at least once; its later runs are on sufferance."""
        self._queue(client, now, floor=False).appendleft((item, compute_s))
        if overran:
            self.overran.add(item)
            self.overran_at[client] = now

    def ended_overran(self, client: str, now: float) -> None:
        """A job of ``client`` that outlasted ``preempt_after_s`` was ended for it (not queued again): its
        client stays on probation (:meth:`on_probation`) from now."""
        self.overran_at[client] = now

    def overran_after(self, lane: int, now: float) -> bool:
        """Whether the busy ``lane``'s run has lasted ``preempt_after_s``: a stop then counts against its jobs."""
        share = self.share
        return share.preempt_after_s > 0 and now - self.lane_start.get(lane, now) >= share.preempt_after_s

    def victim(self, now: float, exclude: set[int] | frozenset[int] = frozenset()) -> int | None:
        """The busy lane to stop now, if any (see "Preemption" and "Runs on sufferance" in the module
        docstring): every lane busy, a waiting client not over its share that could take the lane, and a lane
        whose items all belong to one client over its share (by ``FAIR_SLACK``) and either run on sufferance or have run
        ``preempt_after_s``. The most used such client's lane; ties: a run on sufferance before a protected one,
        then the youngest (the least work lost). ``exclude``: lanes not to name (being stopped already, or that
        cannot be stopped)."""
        share = self.share
        if share.preempt_after_s <= 0 or not self.queues or len(self.lane_items) < share.lanes:
            return None
        best: tuple[float, bool, float, int] | None = None
        for lane, items in self.lane_items.items():
            owners = {c for c, _ in items}
            protected = self.lane_protected[lane]
            if lane in exclude or len(owners) != 1 or (protected and not self.overran_after(lane, now)):
                continue
            (owner,) = owners
            if not self.over_share(owner, now, FAIR_SLACK):  # near-equal clients do not stop each other's runs
                continue
            if not any(c != owner and len(self.lanes_of(c) - {lane}) < share.client_lanes
                       and not self.over_share(c, now) for c in self.queues):
                continue
            rank = (-self._used(owner, now), protected, -self.lane_start[lane], lane)
            if best is None or rank < best:
                best = rank
        return None if best is None else best[3]

    def waiting(self) -> bool:
        return bool(self.queues)

    def __len__(self) -> int:
        return sum(len(q) for q in self.queues.values())
