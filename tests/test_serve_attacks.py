"""Issue #42's attack table against a real ``mkb serve`` (uvicorn in a thread, loopback): each test is one
row, written as the hostile client did it, and failed on the service before the fix (see the report).

Two clients hold tokens from a token file (A and B). Candidates are plain PyTorch, evaluated by the real
engine with timing on (a small budget), so the cache's strength rules are exercised for real.
"""

from __future__ import annotations

import concurrent.futures
import gc
import json
import socket
import time
from pathlib import Path

import pytest

from tests._held_sleeper import held, release
from tests._serve_run import served

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from multikernelbench.anticheat.config import AntiCheatConfig  # noqa: E402
from multikernelbench.client import Client, ServiceError  # noqa: E402
from multikernelbench.engine.config import EngineConfig, TimingConfig  # noqa: E402

RELU = "activation.relu"
TOKEN_A = "client-a-token-0123456789abcdef"
TOKEN_B = "client-b-token-0123456789abcdef"
HEAD = "import torch\nimport torch.nn as nn\n"
HEADER_TIMEOUT_S = 1.5
MAX_CONNECTIONS = 48


def kernel(tag: str, body: str = "return torch.clamp_min(x, 0.0)", pad: int = 0) -> str:
    return (HEAD + f"# {tag}\n" + "#" * pad + "\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
            f"        {body}\n")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def svc(build_root, suite, tmp_path_factory):
    from multikernelbench.serve.app import create_app
    from multikernelbench.serve.auth import TokenBook
    from multikernelbench.serve.jobs import EvalService, ServiceConfig
    from multikernelbench.serve.limits import ConnectionLimits

    tmp = tmp_path_factory.mktemp("serve-attacks")
    token_file = tmp / "tokens"
    token_file.write_text(f"# name token\nA {TOKEN_A}\nB {TOKEN_B}\n")
    engine = EngineConfig(build_root=build_root, allow_code_execution=True, seed=11,
                          timing=TimingConfig(min_runs=3, max_runs=5, budget_s=0.2, warmup=1),
                          anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))
    service = EvalService(ServiceConfig(engine=engine, db=tmp / "results.sqlite", tokens=TokenBook(token_file),
                                        max_items_per_request=8, max_pending_per_client=4,
                                        max_body_bytes=4 * 1024 * 1024, max_wait_s=30, body_timeout_s=3,
                                        max_table_bytes=8 * 1024 * 1024, max_jobs_in_memory_per_client=50),
                          {RELU: suite[RELU]})
    limits = ConnectionLimits(max_connections=MAX_CONNECTIONS, header_timeout_s=HEADER_TIMEOUT_S)
    try:
        with served(create_app(service), limits) as port:
            yield f"http://127.0.0.1:{port}", service, port, token_file
    finally:
        service.close()


def request(port: int, method: str, path: str, body: bytes = b"", token: str | None = TOKEN_A,
            extra: str = "") -> tuple[int, bytes]:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    head = (f"{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}{extra}Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(head + body)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    reply = b"".join(chunks)
    return int(reply.split(b" ", 2)[1]), reply.split(b"\r\n\r\n", 1)[1]


def one_line_4xx(status: int, payload: bytes) -> str:
    assert 400 <= status < 500, (status, payload[:200])
    error = json.loads(payload)["error"]
    assert isinstance(error, str) and "\n" not in error and len(error) <= 500
    return error


@pytest.mark.slow
def test_a_job_belongs_to_its_client_and_results_name_no_job(svc):
    url, _, _, _ = svc
    source = kernel("owned")
    with Client(url, TOKEN_A) as a:
        job_a = a.wait(a.submit(RELU, source), timeout=300)[0]
    assert job_a["state"] == "done" and job_a["result"]["status"] == "correct"
    with Client(url, TOKEN_B, retries=0) as b:
        with pytest.raises(ServiceError) as exc:
            b.job(job_a["id"])
        assert exc.value.status == 404
        ids = b.submit(RELU, source)
        reply = b.http.get(f"/jobs/{ids[0]}").text
    assert json.loads(reply)["cached"] is True
    assert job_a["id"] not in reply and "candidate" not in json.loads(reply)["result"]


def test_a_self_declared_client_name_does_not_multiply_the_limit(svc):
    _, service, port, _ = svc
    accepted = 0
    for n in range(10):
        body = json.dumps({"items": [{"task_id": RELU, "source": f"x = ({n}, {i}"} for i in range(4)]}).encode()
        status, payload = request(port, "POST", "/jobs", body, token=TOKEN_B, extra=f"X-MKB-Client: trainer-{n}\r\n")
        if status == 200:
            accepted += len(json.loads(payload)["jobs"])
        else:
            assert status == 429 and "limit of 4" in one_line_4xx(status, payload)
    assert accepted <= 4


@pytest.mark.slow
@pytest.mark.parametrize("body", [
    b"[" * 200_000 + b"]" * 200_000,
    b'{"items": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
    json.dumps({"task_id": RELU, "source": "\ud800"}).encode(),
    json.dumps({"task_id": "\udfff", "source": "x"}).encode(),
    b'{"task_id": "activation.relu", "source": "x", "fresh_shapes": 1' + b"0" * 5000 + b"}",
])
def test_hostile_json_is_a_one_line_400(svc, body):
    _, _, port, _ = svc
    status, payload = request(port, "POST", "/jobs", body)
    assert status == 400, (status, payload[:120])
    one_line_4xx(status, payload)


@pytest.mark.slow
def test_slow_headers_are_cut_and_do_not_hold_the_service(svc):
    """More connections than the cap, each sending its headers a byte at a time, no token: the ones over the cap
    are dropped at once, the rest closed at the header deadline, and an honest client is answered after."""
    url, _, port, _ = svc
    conns = []
    for _ in range(MAX_CONNECTIONS + 20):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET /hea")
        conns.append(s)
    t0 = time.monotonic()
    closed = 0
    for s in conns:
        s.settimeout(max(0.1, HEADER_TIMEOUT_S + 5 - (time.monotonic() - t0)))
        try:
            s.sendall(b"l")
            closed += s.recv(100) == b""
        except (ConnectionError, TimeoutError, OSError):
            closed += 1
        finally:
            s.close()
    assert closed == len(conns)
    assert time.monotonic() - t0 < HEADER_TIMEOUT_S + 5
    with Client(url, TOKEN_A, retries=3, backoff_s=0.2) as c:
        assert c.health()["ok"]


@pytest.mark.slow
def test_long_polls_hold_no_thread_and_end_when_the_client_hangs_up(svc, build_root):
    """45 long-polls on a job held until the end of the test (half of them hang up): another client's submission
    is answered at once, and a hung-up poll leaves nothing waiting in the service. (The job slept 6 s at its build
    and again at its load before, which the next tests' jobs waited behind.)"""
    _, service, port, _ = svc
    slow = HEAD + held() + kernel("slow").split("\n", 2)[2]
    try:
        _long_polls(service, port, slow)
    finally:
        release(build_root, slow)


def _long_polls(service, port: int, slow: str) -> None:
    with Client(f"http://127.0.0.1:{port}", TOKEN_A) as a:
        job_id = a.submit(RELU, slow)[0]
    poll = (f"GET /jobs/{job_id}?wait=20 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN_A}\r\n\r\n").encode()
    socks = []
    for _ in range(45):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(poll)
        socks.append(s)
    time.sleep(0.5)
    for s in socks[::2]:  # hang up
        s.close()
    live = socks[1::2]
    time.sleep(0.5)
    body = json.dumps({"task_id": RELU, "source": kernel("queued behind the slow one")}).encode()
    t0 = time.monotonic()
    status, _ = request(port, "POST", "/jobs", body, token=TOKEN_B)  # through the service's submit (a pool thread)
    latency = time.monotonic() - t0
    assert status in (200, 429)  # queued, or over B's limit: either way an answer from EvalService.submit
    assert latency < 2.0, f"a submission waited {latency:.1f} s behind long-polls"
    job = service.jobs[job_id]
    assert len(job.waiters) == len(live)  # the hung-up polls' waits ended
    for s in live:
        s.close()
    time.sleep(0.5)
    assert not job.waiters


@pytest.mark.slow
def test_cache_answers_only_as_strong_a_request(svc):
    """B asks for a weak check (one fresh shape, a 1 ms timing budget); A's stronger request later is
    evaluated again, not answered with B's result. A request no stronger is answered from the cache."""
    url, _, _, _ = svc
    source = kernel("strength")
    with Client(url, TOKEN_B) as b, Client(url, TOKEN_A) as a:
        weak = b.wait(b.submit(RELU, source, fresh_shapes=1, timing_budget_s=0.001), timeout=300)[0]
        assert weak["state"] == "done" and not weak["cached"]
        for options in ({"fresh_shapes": 3, "timing_budget_s": 0.001}, {"fresh_shapes": 1}):
            job = a.wait(a.submit(RELU, source, **options), timeout=300)[0]
            assert job["state"] == "done" and job["cached"] is False, options
        again = a.wait(a.submit(RELU, source, fresh_shapes=1, timing_budget_s=0.001), timeout=60)[0]
        assert again["cached"] is True


@pytest.mark.slow
def test_a_cached_flood_keeps_memory_bounded(svc):
    """300 POSTs of 8 copies of one cached 200 KB source grew the server by 600 MB: cached jobs kept their
    sources and counted against nothing. Now a finished job keeps its result only, and a client's flood
    pushes out its own old jobs, not another client's."""
    url, service, port, _ = svc
    big = kernel("big", pad=200_000)
    with Client(url, TOKEN_A) as a:
        first = a.wait(a.submit(RELU, big), timeout=300)[0]
    assert first["result"]["status"] == "correct"
    body = json.dumps({"items": [{"task_id": RELU, "source": big}] * 8}).encode()
    gc.collect()
    before = rss_mb()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        replies = list(pool.map(lambda _: request(port, "POST", "/jobs", body, token=TOKEN_B), range(40)))
    assert all(status == 200 and all(json.loads(p)["cached"]) for status, p in replies)
    gc.collect()
    grown = rss_mb() - before
    assert grown < 30, f"the server grew by {grown:.0f} MB for 320 cached jobs"
    assert sum(1 for j in service.jobs.values() if j.client == "B") <= 50
    assert first["id"] in service.jobs  # A's job was not pushed out by B's flood
    assert service.table_bytes <= service.config.max_table_bytes


@pytest.mark.slow
def test_build_folders_of_finished_jobs_are_removed(svc, build_root):
    url, _, _, _ = svc
    with Client(url, TOKEN_A) as a:
        job = a.wait(a.submit(RELU, kernel("folder")), timeout=300)[0]
    assert job["state"] == "done"
    assert not (Path(build_root) / "cpu" / job["code_hash"]).exists()


@pytest.mark.slow
def test_tokens_rotate_without_a_restart(svc):
    url, _, port, token_file = svc
    new_b = "client-b-rotated-0123456789abcd"
    original = token_file.read_text()
    try:
        token_file.write_text(f"A {TOKEN_A}\nB {new_b}\n")
        assert request(port, "GET", "/metrics", token=TOKEN_B)[0] == 401
        assert request(port, "GET", "/metrics", token=new_b)[0] == 200
        token_file.write_text("A short\n")  # a bad file keeps the last good table
        assert request(port, "GET", "/metrics", token=new_b)[0] == 200
    finally:
        token_file.write_text(original)
    assert request(port, "GET", "/metrics", token=TOKEN_B)[0] == 200
