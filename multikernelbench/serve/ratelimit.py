"""Per-client token buckets on requests and request bytes, so a client's flood costs the service at a bounded rate.

Why: the caps on pending work (serve/sched.py) bound what a client can queue, not what it can *send*. A POST
of 8 copies of a cached 200 KB source is answered from the cache, but the service still reads, parses and
hashes 1.6 MB and writes 8 job rows for it, and a client that sends such POSTs back to back (or long-polls
that hang up and reconnect) spends the service's CPU as fast as its link allows; in the soak that CPU was
the honest clients' too. Two buckets per client (its token's name): one request costs one token of the
request bucket, a body costs its bytes from the byte bucket. An empty bucket is a 429 with ``Retry-After``
(the seconds until the bucket holds enough again) and a one-line body; nothing of the request is read.

Buckets refill continuously at ``requests_per_s`` / ``bytes_per_s`` and hold ``burst_s`` seconds of refill
(the byte bucket at least one largest body, so any allowed body can pass). A body's declared length is
checked before it is read; its real size is charged after (a chunked body without a length, or an
oversized one, cannot skip the charge). Requests without a client (a wrong token) are answered 401 before
any bucket: the token check is constant work, and unauthenticated floods are for the proxy in front.
Rejected requests cost nothing, so a client that waits ``Retry-After`` gets in.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class RateLimits:
    #: Requests per second per client, sustained (0: no limit).
    requests_per_s: float = 20.0
    #: Request body bytes per second per client, sustained (0: no limit).
    bytes_per_s: float = 1024 * 1024
    #: Seconds of refill a bucket holds (the burst a quiet client may send at once).
    burst_s: float = 5.0


class _Bucket:
    __slots__ = ("level", "at")

    def __init__(self, level: float, at: float) -> None:
        self.level, self.at = level, at


class RateLimiter:
    """Thread-safe; ``clock`` is passed in so the rules are tested without sleeping."""

    def __init__(self, limits: RateLimits, max_body_bytes: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.clock = clock
        self.request_cap = max(1.0, limits.requests_per_s * limits.burst_s)
        self.byte_cap = max(float(max_body_bytes), limits.bytes_per_s * limits.burst_s)
        self._lock = threading.Lock()
        self._requests: dict[str, _Bucket] = {}
        self._bytes: dict[str, _Bucket] = {}

    @staticmethod
    def _fill(buckets: dict[str, _Bucket], client: str, rate: float, cap: float, now: float) -> _Bucket:
        b = buckets.get(client)
        if b is None:
            b = buckets[client] = _Bucket(cap, now)
        else:
            b.level = min(cap, b.level + (now - b.at) * rate)
            b.at = now
        return b

    def admit(self, client: str, declared_bytes: int = 0) -> float:
        """0.0 and the request charged (one request, ``declared_bytes``), or the seconds to wait (nothing
        charged). A body of unknown length needs a byte bucket that is not in debt."""
        lim = self.limits
        with self._lock:
            now = self.clock()
            wait = 0.0
            req = byt = None
            if lim.requests_per_s > 0:
                req = self._fill(self._requests, client, lim.requests_per_s, self.request_cap, now)
                if req.level < 1.0:
                    wait = (1.0 - req.level) / lim.requests_per_s
            if lim.bytes_per_s > 0:
                byt = self._fill(self._bytes, client, lim.bytes_per_s, self.byte_cap, now)
                need = min(float(declared_bytes), self.byte_cap)
                if byt.level < need or byt.level < 0:
                    wait = max(wait, (max(need, 0.0) - byt.level) / lim.bytes_per_s)
            if wait > 0:
                return wait
            if req is not None:
                req.level -= 1.0
            if byt is not None:
                byt.level -= declared_bytes
            return 0.0

    def charge_bytes(self, client: str, nbytes: int) -> None:
        """Bytes read beyond what :meth:`admit` charged (may leave the bucket in debt: the next body waits)."""
        if self.limits.bytes_per_s <= 0 or nbytes <= 0:
            return
        with self._lock:
            b = self._fill(self._bytes, client, self.limits.bytes_per_s, self.byte_cap, self.clock())
            b.level -= nbytes


def retry_after(seconds: float) -> str:
    """The ``Retry-After`` value: whole seconds (RFC 9110), at least 1."""
    return str(max(1, math.ceil(seconds)))
