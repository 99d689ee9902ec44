"""Per-client rate limits (serve/ratelimit.py) against a real ``mkb serve`` app on loopback, and the buckets'
rules with a clock passed in.

The attack: a client sends requests (cached floods, long-polls it hangs up on) back to back; before the
limits every one was read, parsed and answered, at whatever rate the client sent (issue #42's soak: that CPU
was the honest clients' too). After: past its bucket a client gets a one-line 429 with ``Retry-After``, other
clients are untouched, and after waiting ``Retry-After`` it gets in again.
"""

from __future__ import annotations

import socket
import time

import pytest

from multikernelbench.serve.ratelimit import RateLimiter, RateLimits, retry_after
from tests._serve_run import served, two_client_service

RELU = "activation.relu"
TOKEN_A = "rate-a-token-0123456789abcdef"
TOKEN_B = "rate-b-token-0123456789abcdef"
MAX_BODY = 20_000


def test_buckets_refill_hold_a_burst_and_charge_real_bytes():
    now = [0.0]
    lim = RateLimiter(RateLimits(requests_per_s=2, bytes_per_s=1000, burst_s=2), max_body_bytes=3000,
                      clock=lambda: now[0])
    assert lim.byte_cap == 3000  # at least one largest body
    assert [lim.admit("a") for _ in range(4)] == [0.0] * 4
    assert lim.admit("a") == pytest.approx(0.5)
    assert lim.admit("b") == 0.0  # b's own bucket
    now[0] = 0.5
    assert lim.admit("a") == 0.0
    assert lim.admit("c", 2500) == 0.0
    assert lim.admit("c", 1000) == pytest.approx(0.5)  # 500 left, 1000 declared
    lim.charge_bytes("c", 1500)  # a body of unknown length: charged after it was read, into debt
    now[0] = 1.0  # 500 - 1500 + 500 refilled: 500 in debt
    assert lim.admit("c") == pytest.approx(0.5)
    now[0] = 10.0
    assert lim.admit("c", 3000) == 0.0  # refilled to the cap, not beyond
    assert lim.admit("c", 1) > 0
    assert retry_after(0.01) == "1" and retry_after(2.2) == "3"


def test_unknown_length_waits_while_in_debt():
    now = [0.0]
    lim = RateLimiter(RateLimits(requests_per_s=0, bytes_per_s=100, burst_s=1), max_body_bytes=100,
                      clock=lambda: now[0])
    lim.charge_bytes("a", 300)  # 100 - 300: 200 in debt
    assert lim.admit("a") == pytest.approx(2.0)
    now[0] = 2.0
    assert lim.admit("a") == 0.0


@pytest.fixture(scope="module")
def port(build_root, suite, tmp_path_factory):
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    from multikernelbench.serve.app import create_app

    service = two_client_service(tmp_path_factory.mktemp("serve-rate"), build_root, {RELU: suite[RELU]},
                                 {"A": TOKEN_A, "B": TOKEN_B}, max_body_bytes=MAX_BODY)
    rate = RateLimits(requests_per_s=0.5, bytes_per_s=2000, burst_s=8)  # 4 requests, 16 KB (20 KB: one body) at once
    try:
        with served(create_app(service, rate)) as p:
            yield p
    finally:
        service.close()


def request(port: int, method: str, path: str, token: str, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    head = (f"{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(head.encode() + body)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    raw, _, payload = b"".join(chunks).partition(b"\r\n\r\n")
    lines = raw.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    return int(lines[0].split(" ", 2)[1]), headers, payload


def test_a_request_flood_is_429_with_retry_after_and_others_are_untouched(port):
    codes = [request(port, "GET", "/jobs/nope", TOKEN_A)[0] for _ in range(4)]
    assert codes == [404] * 4
    status, headers, payload = request(port, "GET", "/jobs/nope", TOKEN_A)
    assert status == 429, (status, payload)
    assert payload.count(b"\n") == 0 and payload.startswith(b'{"error":"client A is over its request rate')
    wait = int(headers["retry-after"])
    assert 1 <= wait <= 2  # one request refills in 2 s
    assert request(port, "GET", "/jobs/nope", TOKEN_B)[0] == 404  # B has its own bucket
    time.sleep(wait)
    assert request(port, "GET", "/jobs/nope", TOKEN_A)[0] == 404  # waiting Retry-After is enough


def test_a_byte_flood_is_429_before_its_body_is_read(port):
    junk = b"x" * 15_000  # not JSON: a 400 once read, but its bytes count
    assert request(port, "POST", "/jobs", TOKEN_B, junk)[0] == 400
    status, headers, payload = request(port, "POST", "/jobs", TOKEN_B, junk)
    assert status == 429 and int(headers["retry-after"]) >= 1, (status, payload)
    assert request(port, "GET", "/jobs/nope", TOKEN_B)[0] == 404  # the request bucket still has room


def test_a_refused_body_is_not_read_the_connection_is_closed(port):
    """A refusal that leaves the body unread closes the connection: kept alive, the service read every byte of
    the refused body to find the next request, so a flooder re-sending refused 1.6 MB bodies on one connection
    cost the service's core as much as accepted ones (issue #42's soak, ``--attacks flood``: -49 % honest
    results). The proof: a request pipelined behind the refused body gets no answer."""
    big = b"x" * (3 * MAX_BODY)  # over the body limit and over the byte bucket: refused before it is read
    head = (f"POST /jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN_A}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(big)}\r\n\r\n").encode()
    after = f"GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN_A}\r\n\r\n".encode()
    chunks = []
    with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
        try:
            s.sendall(head + big + after)
            while chunk := s.recv(65536):
                chunks.append(chunk)
        except (ConnectionResetError, BrokenPipeError):
            pass  # the service closed while bytes were still on their way: what is asked for
        except TimeoutError:
            pass  # kept alive: the count below says so
    answer = b"".join(chunks)
    assert answer.split(b" ", 2)[1] in (b"413", b"429"), answer[:200]
    assert answer.count(b"HTTP/1.1 ") == 1, answer[:400]
