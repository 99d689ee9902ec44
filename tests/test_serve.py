"""``mkb serve`` as a real uvicorn server on loopback: a batch served, the token and limits enforced,
repeated sources answered from the store without running again, clients hanging up mid-request survived.

Candidates are plain PyTorch (no C++ build), evaluated by the real engine (workers, zygote, store).
"""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import time

import pytest

from tests._serve_run import served

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from multikernelbench.anticheat.config import AntiCheatConfig  # noqa: E402
from multikernelbench.client import AsyncClient, Client, ServiceError  # noqa: E402
from multikernelbench.engine.config import EngineConfig, TimingConfig  # noqa: E402

RELU = "activation.relu"
TOKEN = "test-token-7f3a-0123456789"
HEAD = "import torch\nimport torch.nn as nn\n"
HONEST = HEAD + "class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.clamp_min(x, 0.0)\n"
WRONG = HEAD + "class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.clamp_min(x, 0.0) * 1.01\n"
RAISES = HEAD + "class ModelNew(nn.Module):\n    def forward(self, x):\n        raise RuntimeError('no')\n"


@pytest.fixture(scope="module")
def server(build_root, suite, tmp_path_factory):
    from multikernelbench.serve.app import create_app
    from multikernelbench.serve.auth import TokenBook
    from multikernelbench.serve.jobs import EvalService, ServiceConfig

    db = tmp_path_factory.mktemp("serve") / "results.sqlite"
    engine = EngineConfig(build_root=build_root, allow_code_execution=True, seed=11, skip_timing=True,
                          timing=TimingConfig(min_runs=3, max_runs=5, budget_s=0.2, warmup=1),
                          anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))
    service = EvalService(ServiceConfig(engine=engine, db=db, tokens=TokenBook(env_token=TOKEN), max_items_per_request=8,
                                        max_pending_per_client=4, max_body_bytes=16 * 1024,
                                        max_source_bytes=8 * 1024, max_wait_s=20), {RELU: suite[RELU]})
    try:
        with served(create_app(service)) as port:
            yield f"http://127.0.0.1:{port}", service, db, port
    finally:
        service.close()


def raw(port: int, data: bytes, read: bool = True) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(data)
        if not read:
            return b""
        chunks = []
        while chunk := s.recv(65536):  # the requests say Connection: close
            chunks.append(chunk)
        return b"".join(chunks)


def status_and_error(port: int, method: str, path: str, body: bytes = b"", token: str | None = TOKEN,
                     extra: str = "") -> tuple[int, dict]:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    head = (f"{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}{extra}Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    reply = raw(port, head + body)
    status = int(reply.split(b" ", 2)[1])
    payload = reply.split(b"\r\n\r\n", 1)[1]
    return status, json.loads(payload) if payload.startswith(b"{") else {}


@pytest.mark.slow
def test_batch_then_cached_without_running_again(server):
    url, service, db, _ = server
    with Client(url, TOKEN) as c:
        ids = c.submit(items=[{"task_id": RELU, "source": s} for s in (HONEST, WRONG, RAISES, HONEST)])
        jobs = c.wait(ids, timeout=300)
    assert [j["state"] for j in jobs] == ["done"] * 4
    assert [j["result"]["status"] for j in jobs] == ["correct", "incorrect", "runtime_error", "correct"]
    assert jobs[0]["result"]["code_hash"] == jobs[3]["result"]["code_hash"]
    with sqlite3.connect(db) as conn:
        before = conn.execute("SELECT code_hash, created FROM results ORDER BY code_hash").fetchall()
    assert len(before) == 3  # the duplicate joined the first: evaluated once
    queued = service.metrics.counters.get(("jobs", 'outcome="queued"'))
    with Client(url, TOKEN) as c:
        t0 = time.perf_counter()
        again = c.wait(c.submit(items=[{"task_id": RELU, "source": s} for s in (HONEST, WRONG)]))
        seconds = time.perf_counter() - t0
    assert [j["cached"] for j in again] == [True, True]
    assert [j["result"]["status"] for j in again] == ["correct", "incorrect"]
    assert service.metrics.counters.get(("jobs", 'outcome="queued"')) == queued  # nothing reached the engine
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT code_hash, created FROM results ORDER BY code_hash").fetchall() == before
    assert seconds < 2.0

    async def cached_async():
        async with AsyncClient(url, TOKEN) as ac:
            return await ac.evaluate(RELU, HONEST)

    assert asyncio.run(cached_async())["status"] == "correct"


@pytest.mark.slow
def test_token_is_required(server):
    url, _, _, port = server
    assert status_and_error(port, "GET", "/health", token=None)[0] == 200
    for token in (None, "wrong"):
        status, body = status_and_error(port, "POST", "/jobs", json.dumps({"task_id": RELU, "source": HONEST}).encode(),
                                        token=token)
        assert (status, body["error"]) == (401, "missing or wrong bearer token")
        assert status_and_error(port, "GET", "/metrics", token=token)[0] == 401
    with pytest.raises(ServiceError) as exc:
        Client(url, "wrong", retries=0).submit(RELU, HONEST)
    assert exc.value.status == 401


@pytest.mark.parametrize("body, status, reason", [
    (b"{not json", 400, "body is not JSON"),
    (json.dumps({"task_id": "activation.nope", "source": HONEST}).encode(), 404, "unknown task"),
    (json.dumps({"task_id": RELU, "source": HONEST, "backend": "quantum"}).encode(), 400, "unknown backend"),
    (json.dumps({"task_id": RELU, "source": HONEST, "backend": "cuda"}).encode(), 400, "evaluates on 'cpu'"),
    (json.dumps({"task_id": RELU, "source": HONEST, "colour": 1}).encode(), 400, "unknown field"),
    (json.dumps({"task_id": RELU, "source": HONEST, "fresh_shapes": 99}).encode(), 400, "fresh_shapes"),
    (json.dumps({"items": [{"task_id": RELU, "source": HONEST}] * 9}).encode(), 413, "limit is 8"),
    (json.dumps({"task_id": RELU, "source": HONEST + "#" * 9000}).encode(), 413, "source is"),
    (json.dumps({"task_id": RELU, "source": "x" * 20000}).encode(), 413, "body"),
])
def test_bad_requests_are_one_line_4xx_and_queue_nothing(server, body, status, reason):
    _, service, _, port = server
    jobs_before = len(service.jobs)
    got, payload = status_and_error(port, "POST", "/jobs", body)
    assert got == status and reason in payload["error"] and "\n" not in payload["error"]
    assert len(service.jobs) == jobs_before and service.gauges()["queue_depth"] == 0


def test_per_client_limit(server):
    _, service, _, port = server
    fresh = [HEAD + f"class ModelNew(nn.Module):\n    def forward(self, x):\n        return x.relu() + {i}*0\n"
             for i in range(5)]
    body = json.dumps({"items": [{"task_id": RELU, "source": s} for s in fresh]}).encode()
    jobs_before = len(service.jobs)
    status, payload = status_and_error(port, "POST", "/jobs", body, extra="X-MKB-Client: trainer-3\r\n")
    assert status == 429 and "limit of 4" in payload["error"]
    assert len(service.jobs) == jobs_before


@pytest.mark.slow
def test_survives_clients_that_hang_up(server):
    """A body cut short, a long-poll abandoned: the service keeps serving and the job still finishes."""
    url, service, _, port = server
    source = HEAD + "class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
    raw(port, (f"POST /jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 5000\r\n"
               "\r\n{\"task_id\": ").encode(), read=False)
    with Client(url, TOKEN) as c:
        job_id = c.submit(RELU, source)[0]
        with socket.create_connection(("127.0.0.1", port)) as s:  # a long-poll, dropped after 0.3 s
            s.sendall(f"GET /jobs/{job_id}?wait=15 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
                      .encode())
            time.sleep(0.3)
        assert c.health()["ok"]
        job = c.wait([job_id], timeout=300)[0]
    assert job["state"] == "done" and job["result"]["status"] == "correct"
    status, payload = status_and_error(port, "GET", "/jobs/x?wait=abc")
    assert status == 400 and "wait" in payload["error"]


@pytest.mark.slow  # reads the end-to-end stage metric of the jobs the slow tests above ran on this server
def test_metrics_and_reward(server, monkeypatch):
    from multikernelbench.reward import compute_score

    url, _, _, port = server
    reply = raw(port, f"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
                .encode()).decode()
    assert "mkb_queue_depth 0" in reply and 'mkb_stage_seconds_count{stage="end_to_end"}' in reply
    monkeypatch.setenv("MKB_SERVE_TOKEN", TOKEN)
    answer = f"Here is my kernel:\n```python\n{HONEST}```\n"
    assert compute_score("mkb", answer, RELU, {"mkb_url": url}) == pytest.approx(0.3)  # correct, untimed
    assert compute_score("mkb", "no code here", RELU, {"mkb_url": url}) == 0.0


def test_serve_refuses_open_address_without_token(monkeypatch, capsys):
    from multikernelbench.cli.main import main

    monkeypatch.delenv("MKB_SERVE_TOKEN", raising=False)
    monkeypatch.delenv("MKB_ALLOW_CODE_EXECUTION", raising=False)
    assert main(["serve", "--host", "0.0.0.0", "--allow-code-execution"]) == 2
    err = capsys.readouterr().err.strip()
    assert "without a token" in err and "\n" not in err
    assert main(["serve", "--host", "127.0.0.1", "--token", "x" * 20]) == 2  # argv is public: refused
    err = capsys.readouterr().err.strip()
    assert "--token is refused" in err and "\n" not in err
    monkeypatch.setenv("MKB_SERVE_TOKEN", "y" * 20)
    assert main(["serve", "--host", "127.0.0.1"]) == 3  # no code-execution opt-in
