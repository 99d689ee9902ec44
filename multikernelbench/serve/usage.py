"""Recent usage of the lanes per client: what the fair queue (serve/sched.py) orders and judges clients by.

Why apart from the lanes' rules: usage is lane seconds decayed with a half-life, counted per unit of the
client's weight from the floor it became active at, among the clients engaged now; those are the numbers every
rule of serve/sched.py compares (who is taken next, who is over its share, whose run is stopped), and they
are kept the same way whatever the rules do with them. The reasons for each part (the floor, engaged clients,
weights, probation) are in serve/sched.py's module docstring.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Recent usage below this (seconds) is forgotten: the table of past clients does not grow for ever.
FORGET_S = 0.01
#: How far above the mean recent usage a client must be to be refused the last free lane (a fraction of the
#: mean): clients of near-equal usage are not told apart by the last job's fraction of a second (serve/sched.py).
FAIR_SLACK = 0.05
#: The least weight a client may have (:class:`UsageBook`'s ``weight``): a weight of 0 would make its level
#: infinite.
MIN_WEIGHT = 0.01


@dataclass(frozen=True)
class Share:
    """How lanes are shared (see serve/sched.py's module docstring)."""

    lanes: int = 1
    #: Lanes one client may hold at once; 0 = all but one (at least one).
    lanes_per_client: int = 0
    #: Half-life of recent usage, seconds.
    half_life_s: float = 120.0
    #: Keep the last free lane for clients under their share (only meaningful with two lanes or more).
    reserve_last_lane: bool = True
    #: Seconds a job runs before it may be preempted for a cheaper waiting client (0: never).
    preempt_after_s: float = 0.0
    #: Seconds a client stays *engaged* after its last job ended (counted in the mean share, the last lane
    #: kept for it): about a client's think time between the jobs it blocks on (serve/sched.py).
    idle_grace_s: float = 5.0

    @property
    def client_lanes(self) -> int:
        return self.lanes_per_client if self.lanes_per_client > 0 else max(1, self.lanes - 1)


class UsageBook:
    """Per-client recent usage, floors and probation; the lanes' state it reads (``queues``, ``lane_items``,
    ``lane_mark``) is the fair queue's, which subclasses this."""

    queues: dict[str, collections.deque[Any]]
    lane_items: Mapping[int, Sequence[tuple[str, object]]]
    lane_mark: dict[int, float]

    def __init__(self, share: Share, weight: Callable[[str], float] | None) -> None:
        self.share = share
        self.weight = weight or (lambda client: 1.0)  # a client's share of the lanes, relative (serve/sched.py)
        self.idle_at: dict[str, float] = {}  # when an engaged client's last job ended (nothing queued or running)
        self.settled: dict[str, tuple[float, float]] = {}  # client -> (recent lane seconds, as of this time)
        self.credit: dict[str, float] = {}  # an active client's floor above what it used (start-time fair queueing)
        self.overran_at: dict[str, float] = {}  # when a job of the client last outlasted preempt_after_s

    def _decayed(self, client: str, now: float) -> float:
        value, at = self.settled.get(client, (0.0, now))
        return value * math.pow(0.5, max(0.0, now - at) / self.share.half_life_s)

    def _add(self, client: str, seconds: float, now: float) -> None:
        self.settled[client] = (self._decayed(client, now) + seconds, now)

    def _floor(self, client: str, now: float) -> None:
        """A client becoming active is ordered at least level with the least-used engaged client
        (:meth:`engaged`): idle time buys no priority over clients that are busy now (a new or returning
        client at zero would otherwise take every free lane until its usage caught up with theirs), and its
        share is judged from that floor up (:meth:`level`, while it stays engaged). The floor is the least
        *level* among engaged clients within their share (a newcomer floored at another newcomer's raw usage
        came in at 0 again); when all are over it, their least usage."""
        busy = self.engaged(now) - {client}
        within = [c for c in busy if not self.over_share(c, now)]
        if busy:
            floor = min(self.level(c, now) for c in within) if within else min(self._used(c, now) for c in busy)
            self.credit[client] = max(0.0, floor - self._used(client, now))

    def level(self, client: str, now: float) -> float:
        """``client``'s weighted usage counted from the floor it became active at (:meth:`_floor`)."""
        return self._used(client, now) + self.credit.get(client, 0.0)

    def _used(self, client: str, now: float) -> float:
        """Recent lane seconds per unit of weight: what clients are ordered and judged by."""
        return self.usage(client, now) / max(MIN_WEIGHT, self.weight(client))

    def usage(self, client: str, now: float) -> float:
        """Recent lane seconds of ``client``: settled (decayed) plus its part of the busy lanes' time so far."""
        total = self._decayed(client, now)
        for lane, items in self.lane_items.items():
            mine = sum(1 for c, _ in items if c == client)
            if mine:
                total += max(0.0, now - self.lane_mark[lane]) * mine / len(items)
        return total

    def over_share(self, client: str, now: float, slack: float = 0.0) -> bool:
        """Whether ``client``'s level (recent usage per unit of weight, counted from the floor it became active
        at: :meth:`level`) is above the mean level of the engaged clients (:meth:`engaged`) by more than
        ``slack`` times that mean."""
        usages = {c: self.level(c, now) for c in self.engaged(now) | {client}}
        return usages[client] > sum(usages.values()) / len(usages) * (1.0 + slack) + 1e-9

    def engaged(self, now: float) -> set[str]:
        """Clients with work queued or running, or whose last job ended within ``idle_grace_s`` (between two
        jobs it blocks on): the clients the lanes are shared among (serve/sched.py's module docstring, "Engaged clients")."""
        for c in [c for c in self.settled if c not in self.queues and self._decayed(c, now) < FORGET_S]:
            del self.settled[c]
        return set(self.queues) | self._expire(now) | {c for items in self.lane_items.values() for c, _ in items}

    def _expire(self, now: float) -> set[str]:
        """The idle clients still within ``idle_grace_s``; the others leave, and their floor with them (judged
        on what they used until they are active again)."""
        for c in [c for c, at in self.idle_at.items() if now - at >= self.share.idle_grace_s]:
            del self.idle_at[c]
            self.credit.pop(c, None)
        return set(self.idle_at)

    def on_probation(self, client: str, now: float) -> bool:
        """Whether a job of ``client`` outlasted ``preempt_after_s`` (and was stopped) within the last
        ``half_life_s``: its runs are then on sufferance (serve/sched.py)."""
        at = self.overran_at.get(client)
        if at is not None and now - at >= self.share.half_life_s:
            del self.overran_at[client]
            at = None
        return at is not None
