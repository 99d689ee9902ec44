"""Connection limits uvicorn does not have: a cap on open connections and a deadline for request headers.

uvicorn's own limits cover part of it: ``h11_max_incomplete_event_size`` caps the header bytes,
``timeout_keep_alive`` closes an idle connection *between* requests, ``limit_concurrency`` answers 503 once a
request has been parsed. None of them touches a connection that sends its headers one byte a second: it is
held for ever, and a few hundred of them exhaust the file descriptors (the accept loop then fails and logs
on every try). So this protocol (uvicorn's h11 one, subclassed) closes a connection that has not sent a
complete request head within ``header_timeout_s`` of connecting or of its previous response, and drops a new
connection at once while ``max_connections`` are open -- a cap set below the process's descriptor limit.
The request body has its own deadline in the app (``ServiceConfig.body_timeout_s``).

With the app's :class:`~multikernelbench.serve.gate.Gate` (``uvicorn_config(..., gate=app.state.gate)``) the
protocol also makes the app's first check itself: a request to a route that needs a client and has no valid
token, or is over its client's rate, is answered 401/429 here, with ``Connection: close``, and never becomes an
ASGI request (serve/gate.py says why: the flooders' refusals were the soak's cost on the service's core).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from multikernelbench.serve.gate import ADMITTED, Gate, Refusal, declared_length, guarded


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int = 512
    header_timeout_s: float = 10.0
    keep_alive_s: float = 5.0
    max_header_bytes: int = 16 * 1024
    #: Refuse a request without a valid token or over its client's rate in the protocol, before the app
    #: (serve/gate.py); False: the app refuses it (the A/B of issue #42's soak, ``mkb serve --refuse-in-app``).
    early_refusals: bool = True


def descriptor_budget(requested: int, reserve: int = 128) -> int:
    """``requested`` connections, at most half of what the descriptor limit leaves after ``reserve`` (the
    engine's workers, pipes and SQLite files need descriptors too)."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return requested
    return max(8, min(requested, (soft - reserve) // 2))


def _check(gate: Gate, event: h11.Request) -> tuple[str | None, Refusal | None]:
    """``(client, None)``: admitted (None: a route the app answers without a client); else the refusal."""
    path = unquote(event.target.partition(b"?")[0].decode("ascii", "replace"))
    if not guarded(event.method.decode("ascii", "replace"), path):
        return None, None
    auth = length = None
    for name, value in event.headers:  # h11 lowercases names
        if name == b"authorization" and auth is None:
            auth = value.decode("latin-1")
        elif name == b"content-length" and length is None:
            length = value.decode("latin-1")
    return gate.admit(auth or "", declared_length(length))


def protocol_class(limits: ConnectionLimits, gate: Gate | None = None) -> type[H11Protocol]:
    """The h11 protocol with ``limits`` (and the app's ``gate``: refusals before the app) bound; uvicorn builds
    one protocol object per connection."""

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _base_state: dict[str, Any] = {}

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                transport.abort()  # frees the descriptor now; no reply (that would need a write to a peer)
                return
            if gate is not None:
                self._base_state = self.app_state
                parse = self.conn.next_event

                def next_event() -> Any:  # uvicorn's handle_events asks h11 for each event through this
                    event = parse()
                    return self._gate(event) if isinstance(event, h11.Request) else event

                self.conn.next_event = next_event  # type: ignore[method-assign]
            self._arm()

        def _gate(self, event: h11.Request) -> Any:
            """The request event (its client in the next scope's state), or, refused, the refusal written and the
            connection closed: PAUSED tells uvicorn to stop reading, and no ASGI cycle starts."""
            assert gate is not None
            client, refusal = _check(gate, event)
            if refusal is None:
                self.app_state = {**self._base_state, ADMITTED: client} if client is not None else self._base_state
                return event
            gate.counted(refusal.status)
            self.transport.write(refusal.http())
            self.transport.close()
            return h11.PAUSED

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


def uvicorn_config(app, host: str, port: int, limits: ConnectionLimits, log_level: str = "warning",
                   gate: Gate | None = None):
    """A uvicorn Config with every limit set (the CLI and the tests start the server the same way); ``gate``:
    the app's (``app.state.gate``), so that refusals are made before the app."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, log_level=log_level, http=protocol_class(limits, gate if limits.early_refusals else None),
                          timeout_keep_alive=int(limits.keep_alive_s) or 1,
                          h11_max_incomplete_event_size=limits.max_header_bytes, access_log=False)
