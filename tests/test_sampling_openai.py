"""The OpenAI-compatible sampler against a real local HTTP server: retries, timeouts, malformed bodies,
resumption, key handling, and the `mkb generate` command."""

from __future__ import annotations

import json

import pytest
from chat_server import ChatServer

from multikernelbench.prompts.exemplars import exemplar_task, load_exemplar
from multikernelbench.sampling import GenerationStore, SamplingParams, get_sampler, iter_generations
from multikernelbench.sampling.openai_client import MalformedResponse, OpenAIConfig, OpenAISampler, parse_chat_response
from multikernelbench.sampling.runner import GenerateConfig, generate

SECRET = "sk-test-do-not-store-0123456789"
CODE = load_exemplar("activation", "cpu").solution
ANSWER = f"Here is the kernel.\n```python\n{CODE}```\n"


def _tasks():
    return [exemplar_task(c) for c in ("activation", "reduce", "broadcast", "math", "loss")]


def _sampler(url, **kw):
    cfg = dict(model="test-model", api_base=url, api_key_env="MKB_TEST_API_KEY", concurrency=4, timeout_s=1.0,
               max_retries=2, backoff_s=0.01, max_backoff_s=0.05)
    cfg.update(kw)
    return OpenAISampler(OpenAIConfig(**cfg))


SCRIPT = {
    "exemplar.activation": [("ok", ANSWER)],
    "exemplar.reduce": [("status", 429), ("ok", ANSWER)],  # rate limited once, then fine
    "exemplar.broadcast": [("status", 500), ("ok", ANSWER)],  # server error once, then fine
    "exemplar.math": [("sleep", 3.0)],  # always slower than the 1 s client timeout
    "exemplar.loss": [("malformed", '{"choices": "not a list"}')],
}


@pytest.mark.slow
def test_retries_timeouts_and_malformed_each_give_a_clear_record(tmp_path, monkeypatch):
    monkeypatch.setenv("MKB_TEST_API_KEY", SECRET)
    out = tmp_path / "gen.jsonl"
    cfg = GenerateConfig(model="test-model", backend="cpu", strategy="category_shot", samples=2,
                         params=SamplingParams(temperature=0.5, top_p=0.9, max_tokens=512, seed=3))
    with ChatServer(SCRIPT) as srv:
        summary = generate(_tasks(), cfg, _sampler(srv.url), GenerationStore(out))
        assert summary.requested == 10 and summary.answered == 6 and summary.failed == 4
        recs = {(r.task_id, r.sample_index): r for r in iter_generations(out)}
        assert len(recs) == 10  # nothing lost: every request has a record
        for s in range(2):
            ok = recs[("exemplar.activation", s)]
            assert ok.error is None and ok.code.strip() == CODE.strip() and "ModelNew" in ok.code
            assert ok.reasoning == "thinking about tiles"
            assert ok.usage == {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
            assert ok.params == {"temperature": 0.5, "top_p": 0.9, "max_tokens": 512, "seed": 3}
            assert recs[("exemplar.reduce", s)].error is None and recs[("exemplar.broadcast", s)].error is None
            assert "timeout" in recs[("exemplar.math", s)].error.lower()
            assert recs[("exemplar.loss", s)].error.startswith("malformed response")
            assert recs[("exemplar.loss", s)].attempts == 3  # 1 + max_retries
        for task in ("exemplar.reduce", "exemplar.broadcast"):  # the first request of each was retried
            assert max(recs[(task, s)].attempts for s in range(2)) == 2
        # per-sample seeds, sampling parameters and the key were sent; the key is never stored
        seeds = sorted({b.get("seed") for b in srv.bodies})
        assert seeds == [3, 4] and all(b["temperature"] == 0.5 and b["max_tokens"] == 512 for b in srv.bodies)
        assert set(srv.auth_headers) == {f"Bearer {SECRET}"}
        assert SECRET not in out.read_text()

        # A rerun skips every stored answer and retries only the failures (which fail again here).
        before = dict(srv.calls)
        summary2 = generate(_tasks(), cfg, _sampler(srv.url), GenerationStore(out))
        assert summary2.skipped == 6 and summary2.requested == 4
        assert srv.calls["exemplar.activation"] == before["exemplar.activation"]
        assert len(list(iter_generations(out))) == 10


@pytest.mark.slow
def test_resume_after_interruption_and_torn_line(tmp_path):
    out = tmp_path / "gen.jsonl"
    tasks = _tasks()[:2]
    cfg1 = GenerateConfig(model="m", backend="cpu", strategy="one_shot", samples=1, params=SamplingParams())
    with ChatServer({}, default=("ok", ANSWER)) as srv:
        generate(tasks, cfg1, _sampler(srv.url), GenerationStore(out))
        with out.open("a") as fh:
            fh.write('{"model": "m", "backend": "cpu", "task_')  # a write cut off by a crash
        cfg3 = GenerateConfig(model="m", backend="cpu", strategy="one_shot", samples=3, params=SamplingParams())
        summary = generate(tasks, cfg3, _sampler(srv.url), GenerationStore(out))
        assert summary.skipped == 2 and summary.requested == 4
        assert sum(srv.calls.values()) == 6
    recs = list(iter_generations(out))
    assert sorted((r.task_id, r.sample_index) for r in recs) == [(t.id, s) for t in tasks for s in range(3)]
    # different sampling parameters are different generations, not overwrites
    assert len({r.params_key for r in recs}) == 1


def test_non_retryable_status_fails_fast(tmp_path):
    with ChatServer({}, default=("status", 401)) as srv:
        results = []
        from multikernelbench.sampling.base import Request

        _sampler(srv.url, max_retries=5).run([Request(("k",), ({"role": "user", "content": "hi"},))],
                                             SamplingParams(), lambda r, c: results.append(c))
        assert results[0].error.startswith("HTTP 401") and results[0].attempts == 1


def test_parse_chat_response_separates_inline_reasoning():
    body = {"choices": [{"message": {"content": "<think>plan</think>answer"}, "finish_reason": "length"}]}
    comp = parse_chat_response(body)
    assert comp.text.strip() == "answer" and comp.reasoning == "plan" and comp.finish_reason == "length"
    with pytest.raises(MalformedResponse):
        parse_chat_response({"id": "x"})


def test_sampler_registry():
    s = get_sampler("openai", model="m", api_base="http://127.0.0.1:9/v1")
    assert s.name == "openai" and s.config.model == "m"
    assert "OPENAI_API_KEY" not in repr(s.config) or SECRET not in repr(s.config)
    with pytest.raises(KeyError):
        get_sampler("nope")


@pytest.mark.slow
def test_mkb_generate_cli(tmp_path, capsys):
    from multikernelbench.cli.main import main

    out = tmp_path / "g.jsonl"
    with ChatServer({}, default=("ok", ANSWER)) as srv:
        argv = ["generate", "--model", "cli-model", "--backend", "triton", "--strategy", "zero_shot",
                "--samples", "2", "--api-base", srv.url, "--task", "activation.relu", "--out", str(out),
                "--max-tokens", "256", "--temperature", "0"]
        assert main(argv) == 0
        assert main(argv) == 0  # resumable: nothing left to do
        assert sum(srv.calls.values()) == 2
    assert "0 answered, 0 failed, 2 already stored" in capsys.readouterr().out
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {(r["task_id"], r["backend"], r["strategy"], r["sample_index"]) for r in rows} == {
        ("activation.relu", "triton", "zero_shot", 0), ("activation.relu", "triton", "zero_shot", 1)}
