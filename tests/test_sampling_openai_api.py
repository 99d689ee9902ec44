"""Sampling from today's API models through the official openai client, against a real local HTTP server that
speaks the chat-completions protocol (tests/chat_server.py; remote providers cannot be reached here):
max_completion_tokens for reasoning models, Retry-After, OPENAI_BASE_URL/OPENAI_API_KEY, --extra-body,
progress of `mkb generate`, and --device for transformers sampling."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from chat_server import ChatServer, reasoning_refusal

from multikernelbench.prompts.exemplars import exemplar_task, load_exemplar
from multikernelbench.sampling import GenerationStore, SamplingParams, iter_generations
from multikernelbench.sampling.base import Request
from multikernelbench.sampling.openai_client import OpenAIConfig, OpenAISampler
from multikernelbench.sampling.runner import GenerateConfig, generate

SECRET = "sk-test-never-stored-9876543210"
CODE = load_exemplar("activation", "cpu").solution
ANSWER = f"```python\n{CODE}```\n"


def _sampler(url, **kw):
    cfg = dict(model="o4-mini", api_base=url, api_key_env="MKB_TEST_API_KEY", concurrency=1, timeout_s=5.0,
               max_retries=2, backoff_s=0.01, max_backoff_s=5.0)
    cfg.update(kw)
    return OpenAISampler(OpenAIConfig(**cfg))


def _ask(sampler, n=1, params=None):
    params = params or SamplingParams(max_tokens=512)
    results = []
    reqs = [Request((i,), ({"role": "user", "content": f"question {i}"},)) for i in range(n)]
    sampler.run(reqs, params, lambda r, c: results.append(c))
    return results


def test_reasoning_model_is_sent_max_completion_tokens_and_only_the_parameters_it_accepts(tmp_path):
    tasks = [exemplar_task(c) for c in ("activation", "reduce", "math")]
    cfg = GenerateConfig(model="o4-mini", backend="cpu", strategy="zero_shot", samples=1,
                         params=SamplingParams(temperature=0.7, top_p=0.95, max_tokens=512))
    out = tmp_path / "gen.jsonl"
    with ChatServer({}, default=("ok", ANSWER)) as srv:
        summary = generate(tasks, cfg, _sampler(srv.url), GenerationStore(out))
        assert summary.answered == 3 and summary.failed == 0
        # one refusal each (the API's real 400 bodies), then every request is sent what the model accepts
        assert srv.refused == ["max_tokens", "temperature", "top_p"] and len(srv.bodies) == 6
        assert srv.bodies[0]["max_tokens"] == 512 and srv.bodies[0]["temperature"] == 0.7
        for body in srv.bodies[3:]:
            assert body["max_completion_tokens"] == 512 and "max_tokens" not in body
            assert "temperature" not in body and "top_p" not in body
    recs = list(iter_generations(out))
    assert all(r.omitted_params == ["temperature", "top_p"] for r in recs)  # the record says what was not sent
    assert all(r.params["temperature"] == 0.7 for r in recs)


@pytest.mark.slow
def test_token_limit_param_can_be_named():
    with ChatServer({}, default=("ok", "hi")) as srv:
        forced_old = _ask(_sampler(srv.url, token_limit_param="max_tokens"))[0]
        assert forced_old.error.startswith("HTTP 400") and "max_completion_tokens" in forced_old.error
        assert forced_old.attempts == 1  # a 400 is not retried
        n = len(srv.bodies)
        ok = _ask(_sampler(srv.url, token_limit_param="max_completion_tokens"),
                  params=SamplingParams(temperature=1, top_p=1, max_tokens=512))[0]
        assert ok.error is None and ok.omitted_params == []
        assert len(srv.bodies) == n + 1 and srv.refused == ["max_tokens"]  # sent right the first time
        kept = _ask(_sampler(srv.url, token_limit_param="max_completion_tokens", omit_refused_params=False))[0]
        assert kept.error.startswith("HTTP 400") and "'temperature' does not support 0.7" in kept.error
    with ChatServer({}, default=("ok", "hi")) as srv:  # a model that is not a reasoning model keeps max_tokens
        assert _ask(_sampler(srv.url, model="llama-3-8b"))[0].error is None
        assert srv.bodies[0]["max_tokens"] == 512 and "max_completion_tokens" not in srv.bodies[0]


@pytest.mark.slow
def test_retry_after_is_honoured_and_no_key_sends_no_authorization(monkeypatch):
    monkeypatch.delenv("MKB_TEST_API_KEY", raising=False)
    with ChatServer({"": [("status", 429, "1"), ("ok", "hi")]}) as srv:
        comp = _ask(_sampler(srv.url, model="llama", backoff_s=0.01))[0]
        assert comp.error is None and comp.attempts == 2
        (_, t0), (_, t1) = srv.times
        assert t1 - t0 >= 0.9, "the client retried before the server's Retry-After: 1"
        assert srv.auth_headers == [None, None]


@pytest.mark.slow
def test_openai_base_url_key_extra_body_and_progress_through_mkb_generate(tmp_path):
    out = tmp_path / "g.jsonl"
    with ChatServer({}, default=("ok", ANSWER)) as srv:
        env = {**os.environ, "OPENAI_BASE_URL": srv.url, "OPENAI_API_KEY": SECRET}
        cmd = [sys.executable, "-m", "multikernelbench.cli.main", "generate", "--model", "gpt-5-mini",
               "--task", "activation.relu", "--task", "activation.tanh", "--samples", "2", "--out", str(out),
               "--max-tokens", "300", "--extra-body", '{"reasoning_effort": "high"}', "--strategy", "zero_shot"]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        assert proc.returncode == 0, proc.stderr
        answered = [b for b in srv.bodies if reasoning_refusal(b) is None]  # requests race: several may be refused
        assert len(answered) == 4 and all(b["reasoning_effort"] == "high" for b in srv.bodies)
        assert all(b["max_completion_tokens"] == 300 for b in answered)
        assert set(srv.auth_headers) == {f"Bearer {SECRET}"}
    assert "4 answered, 0 failed" in proc.stdout
    # not a terminal: plain progress lines on stderr, the last one with every request counted
    progress = [line for line in proc.stderr.splitlines() if line.startswith("[mkb ")]
    assert progress and "sampling 4/4" in progress[-1], proc.stderr
    recs = list(iter_generations(out))
    assert len(recs) == 4 and all(r.error is None and "ModelNew" in r.code for r in recs)
    assert SECRET not in out.read_text()


@pytest.mark.slow
def test_extra_body_must_be_a_json_object(tmp_path):
    cmd = [sys.executable, "-m", "multikernelbench.cli.main", "generate", "--model", "m", "--api-base",
           "http://127.0.0.1:9/v1", "--extra-body", "[1, 2]", "--out", str(tmp_path / "g.jsonl")]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "--extra-body" in proc.stderr and "JSON object" in proc.stderr
    assert not (tmp_path / "g.jsonl").exists()


@pytest.mark.slow
def test_hf_sampling_takes_a_device(tmp_path, capsys):
    from multikernelbench.cli.main import main

    out = tmp_path / "g.jsonl"
    argv = ["generate", "--model", "tiny", "--hf", "tiny", "--device", "cpu", "--task", "activation.relu",
            "--max-tokens", "8", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    rec, = iter_generations(out)
    assert rec.sampler == "hf" and rec.error is None and rec.usage["completion_tokens"] <= 8
    wrong = [a if a != "cpu" else "no-such-device" for a in argv] + ["--samples", "2"]
    assert main(wrong) == 2
    assert "no-such-device" in capsys.readouterr().err
    missing = [a if a != "tiny" else str(tmp_path / "no-model") for a in argv]
    assert main(missing) == 2
    assert capsys.readouterr().err.strip() == f"mkb generate: --hf model folder {tmp_path / 'no-model'} does not exist"


@pytest.mark.slow
def test_openai_without_a_key_is_a_usage_error_before_any_request(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    out = tmp_path / "g.jsonl"
    cmd = [sys.executable, "-m", "multikernelbench.cli.main", "generate", "--model", "gpt-5-mini", "--task",
           "activation.relu", "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "OPENAI_API_KEY" in proc.stderr and "--api-base" in proc.stderr
    assert not out.exists()
