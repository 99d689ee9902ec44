"""Connection limits uvicorn does not have: a cap on open connections and a deadline for request headers.

uvicorn's own limits cover part of it: ``h11_max_incomplete_event_size`` caps the header bytes,
``timeout_keep_alive`` closes an idle connection *between* requests, ``limit_concurrency`` answers 503 once a
request has been parsed. None of them touches a connection that sends its headers one byte a second: it is
held for ever, and a few hundred of them exhaust the file descriptors (the accept loop then fails and logs
on every try). So this protocol (uvicorn's h11 one, subclassed) closes a connection that has not sent a
complete request head within ``header_timeout_s`` of connecting or of its previous response, and drops a new
connection at once while ``max_connections`` are open -- a cap set below the process's descriptor limit.
The request body has its own deadline in the app (``ServiceConfig.body_timeout_s``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int = 512
    header_timeout_s: float = 10.0
    keep_alive_s: float = 5.0
    max_header_bytes: int = 16 * 1024


def descriptor_budget(requested: int, reserve: int = 128) -> int:
    """``requested`` connections, at most half of what the descriptor limit leaves after ``reserve`` (the
    engine's workers, pipes and SQLite files need descriptors too)."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return requested
    return max(8, min(requested, (soft - reserve) // 2))


def protocol_class(limits: ConnectionLimits) -> type[H11Protocol]:
    """The h11 protocol with ``limits`` bound (uvicorn builds one protocol object per connection)."""

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                transport.abort()  # frees the descriptor now; no reply (that would need a write to a peer)
                return
            self._arm()

        def _arm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._deadline = self.loop.call_later(limits.header_timeout_s, self._expire)

        def _expire(self) -> None:
            self._deadline = None
            waiting = self.cycle is None or self.cycle.response_complete
            if waiting and self.conn.their_state in (h11.IDLE, h11.DONE) and not self.transport.is_closing():
                self.transport.close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            super().connection_lost(exc)

    return GuardedH11Protocol


def uvicorn_config(app, host: str, port: int, limits: ConnectionLimits, log_level: str = "warning"):
    """A uvicorn Config with every limit set (the CLI and the tests start the server the same way)."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, log_level=log_level, http=protocol_class(limits),
                          timeout_keep_alive=int(limits.keep_alive_s) or 1,
                          h11_max_incomplete_event_size=limits.max_header_bytes, access_log=False)
