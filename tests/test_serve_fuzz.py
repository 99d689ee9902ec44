"""Generated hostile request bodies against a real ``mkb serve`` on loopback: every one is answered with a
one-line 4xx (or accepted), never a 500 or a dropped connection. Hypothesis builds the bodies: deep
nesting, lone surrogates, huge numbers, wrong types, unknown fields, batches of them.

Accepted submissions are empty sources (answered as compile errors without a worker), so the fuzz costs
requests, not evaluations.
"""

from __future__ import annotations

import json
import socket

import pytest

from tests._serve_run import served

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
hypothesis = pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from multikernelbench.engine.config import EngineConfig  # noqa: E402

RELU = "activation.relu"
TOKEN = "fuzz-token-0123456789abcdef"

text = st.text(alphabet=st.characters(codec=None, categories=["L", "N", "P", "S", "Z", "C", "Cs"]), max_size=40)
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10 ** 4000), max_value=10 ** 4000),
                    st.floats(allow_nan=True, allow_infinity=True), text)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(text, inner, max_size=4)), max_leaves=12)
field_values = {
    "task_id": st.one_of(values, st.sampled_from(["activation.nope", "\ud800", "a" * 5000])),
    "source": st.one_of(values, st.just("\udc80"), st.just("")),
    "backend": st.one_of(values, st.sampled_from(["cpu", "cuda", "quantum"])),
    "fresh_shapes": st.one_of(values, st.integers(min_value=-3, max_value=12)),
    "timing_budget_s": st.one_of(values, st.floats(min_value=-1, max_value=100)),
}
submission = st.fixed_dictionaries({}, optional={**field_values, "colour": values, "\ud800": values})
# A submission for the one task is only accepted with an empty source (no worker runs for it).
valid_cheap = st.fixed_dictionaries({"task_id": st.just(RELU), "source": st.sampled_from(["", "  "])},
                                    optional={"fresh_shapes": st.integers(0, 8)})
bodies = st.one_of(
    submission.map(json.dumps),
    st.lists(st.one_of(submission, valid_cheap, values), max_size=10).map(lambda xs: json.dumps({"items": xs})),
    values.map(json.dumps),
    st.integers(1, 120_000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 60_000).map(lambda n: '{"items": ' + '{"a": ' * n + "1" + "}" * n + "}"),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
)


@pytest.fixture(scope="module")
def port(build_root, suite, tmp_path_factory):
    from multikernelbench.serve.app import create_app
    from multikernelbench.serve.auth import TokenBook
    from multikernelbench.serve.jobs import EvalService, ServiceConfig

    tmp = tmp_path_factory.mktemp("serve-fuzz")
    engine = EngineConfig(build_root=build_root, allow_code_execution=True, seed=5, skip_timing=True)
    service = EvalService(ServiceConfig(engine=engine, db=tmp / "r.sqlite", tokens=TokenBook(env_token=TOKEN),
                                        max_items_per_request=8, max_pending_per_client=64), {RELU: suite[RELU]})
    try:
        with served(create_app(service)) as p:
            yield p
    finally:
        service.close()


def exchange(port: int, head: str, body: bytes) -> tuple[int, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(head.encode("latin-1") + body)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    reply = b"".join(chunks)
    assert reply, "the connection was dropped without a reply"
    return int(reply.split(b" ", 2)[1]), reply.split(b"\r\n\r\n", 1)[1]


def check_reply(status: int, payload: bytes) -> None:
    assert status < 500, (status, payload[:300])
    if status >= 400:
        error = json.loads(payload)["error"]
        assert isinstance(error, str) and "\n" not in error and len(error) <= 500, error


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(body=bodies)
def test_post_bodies_are_answered_with_one_line_4xx(port, body):
    data = body.encode("utf-8", "surrogatepass")
    head = (f"POST /jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n")
    check_reply(*exchange(port, head, data))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(job=st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="/?#%"),
                   min_size=1, max_size=300), wait=st.one_of(text, st.floats().map(str), st.integers().map(str)))
def test_job_queries_are_answered_with_one_line_4xx(port, job, wait):
    from urllib.parse import quote

    head = (f"GET /jobs/{quote(job)}?wait={quote(wait, safe='', errors='surrogatepass')} HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n")
    check_reply(*exchange(port, head, b""))
