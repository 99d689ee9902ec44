"""Refusals made in the HTTP protocol, before the ASGI app (serve/gate.py, serve/limits.py), against a real uvicorn
serving the real ``mkb serve`` app on loopback, with raw sockets.

The attack (issue #42's soak): a cache flooder refused 429 reconnects and is refused again as fast as loopback
allows; each refusal went through uvicorn's request cycle, FastAPI's middleware and routing and a JSONResponse
on the service's one core, the core the honest clients' evaluations need. Now a request without a valid token
or over its client's rate is answered by the protocol and never becomes an ASGI request; an admitted one is
charged once (the app does not charge it again).
"""

from __future__ import annotations

import socket
from typing import Any

import pytest

from tests._serve_run import served, two_client_service

RELU = "activation.relu"
TOKEN_A = "gate-a-token-0123456789abcdef"
TOKEN_B = "gate-b-token-0123456789abcdef"


class Counting:
    """The real app behind a recorder of every HTTP request that reached ASGI (``state``: the app's, so that
    tests/_serve_run.py finds its gate)."""

    def __init__(self, app: Any) -> None:
        self.app, self.state, self.seen = app, app.state, []

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            self.seen.append(f"{scope['method']} {scope['path']}")
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def gated(build_root, suite, tmp_path_factory):
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    from multikernelbench.serve.app import create_app
    from multikernelbench.serve.ratelimit import RateLimits

    service = two_client_service(tmp_path_factory.mktemp("serve-gate"), build_root, {RELU: suite[RELU]},
                                 {"A": TOKEN_A, "B": TOKEN_B})
    app = Counting(create_app(service, RateLimits(requests_per_s=0.25, bytes_per_s=0, burst_s=16)))  # 4 at once
    try:
        with served(app) as port:
            yield port, app
    finally:
        service.close()


def ask(port: int, head: str, close_within_s: float = 5.0) -> tuple[int, dict[str, str], bytes, bool]:
    """(status, headers, body, whether the service closed the connection within ``close_within_s`` of its
    answer) of one request on a keep-alive connection (the request does not ask for a close)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head.encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(65536)
        raw, _, payload = data.partition(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
        while len(payload) < int(headers.get("content-length", 0)):
            payload += s.recv(65536)
        s.settimeout(close_within_s)
        try:
            closed = s.recv(1) == b""
        except TimeoutError:
            closed = False
        except ConnectionResetError:
            closed = True
    return int(lines[0].split(" ", 2)[1]), headers, payload, closed


def get(path: str, token: str | None) -> str:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return f"GET {path} HTTP/1.1\r\nHost: x\r\n{auth}\r\n"


@pytest.mark.slow
def test_a_refused_request_never_reaches_the_app(gated):
    port, app = gated
    before = len(app.seen)
    status, headers, payload, closed = ask(port, get("/jobs/abc", "wrong-token-0123456789abcdef"))
    assert (status, payload) == (401, b'{"error":"missing or wrong bearer token"}')
    assert headers["connection"] == "close" and closed
    # a 1.6 MB body declared and not sent: the answer comes at once, from the head alone
    head = (f"POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {1_600_000}\r\n\r\n")
    status, headers, _, closed = ask(port, head)
    assert status == 401 and closed
    assert app.seen[before:] == [], "a refused request reached the ASGI app"
    assert ask(port, get("/health", None))[0] == 200  # a route without a client is the app's, as before
    assert app.seen[before:] == ["GET /health"]


def test_an_admitted_request_is_charged_once_and_the_one_over_the_rate_is_refused_before_the_app(gated):
    port, app = gated
    before = len(app.seen)
    answers = [ask(port, get("/jobs/nope", TOKEN_B), 0.1) for _ in range(4)]  # a burst of 4 requests
    assert [a[0] for a in answers] == [404] * 4, answers  # charged twice, the third would be a 429
    assert not any(a[3] for a in answers)  # admitted ones are kept alive
    status, headers, payload, closed = ask(port, get("/jobs/nope", TOKEN_B))
    assert status == 429 and 1 <= int(headers["retry-after"]) <= 4 and closed, (status, headers)
    assert payload.startswith(b'{"error":"client B is over its request rate') and b"\n" not in payload
    assert app.seen[before:] == ["GET /jobs/nope"] * 4
    assert ask(port, get("/jobs/nope", TOKEN_A), 0.1)[0] == 404  # A has its own bucket
