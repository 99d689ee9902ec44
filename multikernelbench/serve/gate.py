"""Who a request's client is and whether it may go on: the token check and the rate buckets, made once per request
by the HTTP protocol (serve/limits.py) before the request reaches the ASGI app, or by the app itself when it is
served some other way.

Why in the protocol: in issue #42's soak the flooders' refused requests were what cost the honest clients on
the service's one core (a cache flooder is refused 429 as fast as it can reconnect). A refusal made by the app
went through uvicorn's request cycle (an asyncio task, ASGI messages), FastAPI's middleware and routing and a
JSONResponse; made here, it is a header lookup, a token compare, a bucket and one prebuilt write, and the
connection is closed (the body, if any, is never read: the kernel drops it).

A request the protocol admitted carries its client in the ASGI scope's ``state`` (``ADMITTED``), which only
the server sets (a client cannot: it is not a header), so the app does not charge the buckets twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from http import HTTPStatus

from multikernelbench.serve.auth import TokenBook
from multikernelbench.serve.metrics import Metrics
from multikernelbench.serve.parse import one_line
from multikernelbench.serve.ratelimit import RateLimiter, retry_after

#: Key of the admitted client's name in the ASGI scope's ``state``.
ADMITTED = "mkb.client"


@dataclass(frozen=True)
class Refusal:
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...] = ()

    def http(self) -> bytes:
        """The whole HTTP/1.1 response, ``Connection: close``: what the protocol writes before it closes (the
        body as the app's JSONResponse renders it)."""
        body = json.dumps({"error": one_line(self.reason)}, ensure_ascii=False, separators=(",", ":")).encode()
        head = [f"HTTP/1.1 {self.status} {HTTPStatus(self.status).phrase}", "content-type: application/json",
                f"content-length: {len(body)}", *(f"{k}: {v}" for k, v in self.headers), "connection: close"]
        return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


def guarded(method: str, path: str) -> bool:
    """The routes that need a client (serve/app.py): ``POST /jobs``, ``POST /evaluate``, ``GET /jobs/{id}``,
    ``GET /metrics``. Others (``/health``, an unknown route's 404, a wrong method's 405) are the app's to
    answer, as before."""
    if method == "POST":
        return path in ("/jobs", "/evaluate")
    if method == "GET":
        if path == "/metrics":
            return True
        rest = path[len("/jobs/"):] if path.startswith("/jobs/") else ""
        return bool(rest) and "/" not in rest
    return False


def declared_length(value: str | None) -> int:
    """A ``Content-Length`` header's value as the buckets charge it (0: none, or not a plain number)."""
    return int(value) if value is not None and value.isdigit() and len(value) < 16 else 0


class Gate:
    """The token book, the rate buckets (None: no limits) and the refusals' counter of one service."""

    def __init__(self, tokens: TokenBook, limiter: RateLimiter | None, metrics: Metrics) -> None:
        self.tokens, self.limiter, self.metrics = tokens, limiter, metrics

    def admit(self, authorization: str, declared: int = 0) -> tuple[str | None, Refusal | None]:
        """``(client, None)`` with the request charged, or ``(client or None, the refusal)``, nothing charged."""
        client = self.tokens.client(authorization)
        if client is None:
            return None, Refusal(401, "missing or wrong bearer token")
        wait = self.limiter.admit(client, declared) if self.limiter is not None else 0.0
        if wait > 0:
            return client, Refusal(429, f"client {client} is over its request rate; retry in {wait:.1f} s",
                                   (("Retry-After", retry_after(wait)),))
        return client, None

    def counted(self, status: int) -> None:
        self.metrics.count("rejected", f'status="{status}"')

    def charge_bytes(self, client: str, n: int) -> None:
        if self.limiter is not None:
            self.limiter.charge_bytes(client, n)
