"""End to end on the CPU backend: prompt -> generation -> extraction -> evaluation -> stored results.

Two generators feed the same pipeline: the tiny transformers model built in code (random weights, locally
trained tokenizer — its output is noise, so it yields no code and exercises the no-code path) and a local
OpenAI-compatible server scripted to answer with real kernels (so the engine compiles and checks them).
In this suite vLLM is exercised through a stand-in module with vLLM's documented API (the real engine is a
3.4 GB install kept out of CI: tests/real_vllm/, run by scripts/vllm_check.sh).
"""

from __future__ import annotations

import sys
import tempfile
import types
from pathlib import Path

import pytest
from chat_server import ChatServer

from multikernelbench.prompts.exemplars import exemplar_task, load_exemplar
from multikernelbench.sampling import GenerationStore, SamplingParams, get_sampler, iter_generations
from multikernelbench.sampling.evaluate import candidates_from_generations
from multikernelbench.sampling.openai_client import OpenAIConfig, OpenAISampler
from multikernelbench.sampling.runner import GenerateConfig, engine_evaluator, generate

BUILD_ROOT = Path(tempfile.gettempdir()) / "mkb-exemplar-builds"  # shared with test_prompt_exemplars
GOOD = load_exemplar("activation", "cpu").solution
BROKEN = "import torch\nimport torch.nn as nn\n\nclass NotTheRightName(nn.Module):\n    pass\n"


@pytest.fixture(scope="module")
def tiny():
    from multikernelbench.sampling.tiny_model import build_tiny_model

    return build_tiny_model(seed=0)


def _engine_config():
    from multikernelbench.engine.config import EngineConfig

    return EngineConfig(backend="cpu", build_root=BUILD_ROOT, allow_code_execution=True, skip_timing=True,
                        compile_workers=1, compile_timeout_s=1200.0, run_timeout_s=120.0, seed=5)


@pytest.mark.slow
def test_tiny_model_generation_is_stored_and_resumable(tmp_path, tiny):
    model, tokenizer = tiny
    tasks = [exemplar_task("activation"), exemplar_task("reduce")]
    out = tmp_path / "gen.jsonl"
    cfg = GenerateConfig(model="tiny-random", backend="cpu", strategy="category_shot", samples=2,
                         params=SamplingParams(temperature=1.0, top_p=0.9, max_tokens=12, seed=0))
    sampler = get_sampler("hf", model=model, tokenizer=tokenizer, batch_size=4)
    summary = generate(tasks, cfg, sampler, GenerationStore(out))
    assert summary.answered == 4 and summary.failed == 0
    recs = list(iter_generations(out))
    assert len(recs) == 4
    for r in recs:
        assert r.sampler == "hf" and r.error is None and r.raw_text  # noise, but real generated text
        assert r.usage["completion_tokens"] <= 12 and r.usage["prompt_tokens"] > 100
        assert r.messages[-1]["content"].endswith("one ```python block.")
    # noise contains no ModelNew, so nothing reaches the engine; the records say so
    assert candidates_from_generations(out) == [] or all(c.source for c in candidates_from_generations(out))
    again = generate(tasks, cfg, sampler, GenerationStore(out))
    assert again.requested == 0 and again.skipped == 4


@pytest.mark.slow
def test_refinement_keeps_every_turn_with_a_fake_evaluator(tmp_path):
    """Turn 0 fails, the feedback goes back, turn 1 is correct: both turns and both summaries are kept."""
    tasks = [exemplar_task("activation")]
    out = tmp_path / "gen.jsonl"
    answers = [f"```python\n{BROKEN}```", f"```python\n{GOOD}```"]

    def fake_evaluate(records):
        return {r.generation_id: ({"status": "correct", "speedup": 1.5, "roofline_fraction": 0.2,
                                   "median_ms": 0.1, "message": ""} if "ModelNew" in r.code else
                                  {"status": "runtime_error", "message": "candidate defines no ModelNew"})
                for r in records}

    cfg = GenerateConfig(model="m", backend="cpu", strategy="category_shot", samples=1, turns=3,
                         stop_on_correct=True, params=SamplingParams(max_tokens=64))
    with ChatServer({"exemplar.activation": [("by_turn", answers)]}) as srv:
        sampler = OpenAISampler(OpenAIConfig(model="m", api_base=srv.url, backoff_s=0.01))
        summary = generate(tasks, cfg, sampler, GenerationStore(out), evaluate=fake_evaluate)
        assert srv.calls["exemplar.activation"] == 2  # stopped once correct
        turn1_messages = srv.bodies[1]["messages"]
    assert summary.evaluated == 2
    recs = sorted(iter_generations(out), key=lambda r: r.turn)
    assert [r.turn for r in recs] == [0, 1]
    assert recs[0].eval["status"] == "runtime_error" and recs[1].eval["status"] == "correct"
    assert [m["role"] for m in turn1_messages] == ["system", "user", "assistant", "user"]
    assert "defines no ModelNew" in turn1_messages[-1]["content"] and recs[1].feedback == turn1_messages[-1]["content"]


@pytest.mark.slow
def test_end_to_end_generate_extract_evaluate_store(tmp_path, tiny):
    """Real engine: one server answer compiles and is correct, one is broken; tiny-model noise is no code."""
    from multikernelbench.records import Status
    from multikernelbench.store import ResultStore

    tasks = [exemplar_task("activation"), exemplar_task("reduce")]
    out = tmp_path / "gen.jsonl"
    script = {"exemplar.activation": [("ok", f"Sure.\n```python\n{GOOD}```")],
              "exemplar.reduce": [("ok", f"```python\n{BROKEN}```")]}
    params = SamplingParams(max_tokens=64)
    with ChatServer(script) as srv:
        sampler = OpenAISampler(OpenAIConfig(model="served", api_base=srv.url, backoff_s=0.01))
        generate(tasks, GenerateConfig(model="served", backend="cpu", strategy="one_shot", params=params),
                 sampler, GenerationStore(out))
    model, tokenizer = tiny
    generate(tasks, GenerateConfig(model="tiny-random", backend="cpu", strategy="zero_shot", params=params),
             get_sampler("hf", model=model, tokenizer=tokenizer), GenerationStore(out))

    cands = candidates_from_generations(out, {t.id for t in tasks})
    served = [c for c in cands if c.meta.model == "served"]
    assert sorted(c.task_id for c in served) == ["exemplar.activation", "exemplar.reduce"]
    with ResultStore(tmp_path / "results.sqlite") as store:
        evaluate = engine_evaluator(tasks, _engine_config(), store)
        summaries = evaluate([r for r in iter_generations(out) if r.code])
    by_task = {gid.split("/")[3]: s for gid, s in summaries.items() if gid.startswith("served/")}
    assert by_task["exemplar.activation"]["status"] == Status.CORRECT.value
    assert by_task["exemplar.reduce"]["status"] != Status.CORRECT.value
    assert (tmp_path / "results.sqlite").stat().st_size > 0


def test_vllm_sampler_through_a_stand_in_module(tmp_path, monkeypatch):
    """Without the real engine (tests/real_vllm/ has it): a stand-in with vLLM's documented offline API drives
    the same path."""
    calls = {}

    class SamplingParamsStub:
        def __init__(self, n=1, temperature=1.0, top_p=1.0, max_tokens=16, seed=None):
            self.n, self.temperature, self.top_p, self.max_tokens, self.seed = n, temperature, top_p, max_tokens, seed

    class LLMStub:
        def __init__(self, model, **kwargs):
            calls["init"] = (model, kwargs)

        def chat(self, messages, sampling_params=None, use_tqdm=True, **kwargs):
            calls["chat"] = (messages, sampling_params, use_tqdm)
            seq = types.SimpleNamespace(text=f"<think>hmm</think>```python\n{GOOD}```", token_ids=[1] * 30,
                                        finish_reason="stop")
            return [types.SimpleNamespace(outputs=[seq], prompt_token_ids=[0] * 50) for _ in messages]

    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(LLM=LLMStub, SamplingParams=SamplingParamsStub))
    sampler = get_sampler("vllm", model="/weights/some-model", tensor_parallel_size=2)
    out = tmp_path / "gen.jsonl"
    cfg = GenerateConfig(model="some-model", backend="cpu", strategy="category_shot", samples=2,
                         params=SamplingParams(temperature=0.6, max_tokens=100, seed=10))
    generate([exemplar_task("activation")], cfg, sampler, GenerationStore(out))
    assert calls["init"] == ("/weights/some-model", {"tensor_parallel_size": 2})
    messages, sps, use_tqdm = calls["chat"]
    assert len(messages) == 2 and messages[0][0]["role"] == "system" and use_tqdm is False
    assert [sp.seed for sp in sps] == [10, 11] and all(sp.max_tokens == 100 and sp.n == 1 for sp in sps)
    recs = list(iter_generations(out))
    assert all(r.reasoning == "hmm" and "ModelNew" in r.code and r.usage["total_tokens"] == 80 for r in recs)


def test_vllm_missing_gives_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    with pytest.raises(RuntimeError, match="needs the `vllm` package"):
        get_sampler("vllm", model="x")


@pytest.mark.slow
def test_mkb_generate_tiny_then_mkb_eval(tmp_path, capsys):
    """The CLI pair: `mkb generate --hf tiny` (noise) then `mkb eval --generations` records each sample."""
    import json

    from multikernelbench.cli.main import main

    gen, db = tmp_path / "g.jsonl", tmp_path / "r.sqlite"
    argv = ["generate", "--model", "tiny-random", "--hf", "tiny", "--task", "activation.relu", "--samples", "2",
            "--max-tokens", "8", "--out", str(gen)]
    assert main(argv) == 0 and main(argv) == 0
    capsys.readouterr()
    assert main(["eval", "--generations", str(gen), "--backend", "cpu", "--allow-code-execution", "--db", str(db),
                 "--no-timing", "--task", "activation.relu", "--json", "--no-progress"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert len(rows) == 2 and all(r["task_id"] == "activation.relu" for r in rows)
    assert all(r["status"] == "compile_error" for r in rows)  # noise has no code: a failed sample, not lost
