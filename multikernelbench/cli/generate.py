"""``mkb generate``: sample kernels from a model into a generations store (resumable; optional refinement).

Samplers: ``--api-base URL`` (any OpenAI-compatible server; key from $OPENAI_API_KEY or --api-key-env),
``--vllm`` (offline vLLM with the weights named by --model), ``--hf PATH`` (transformers; ``--hf tiny``
builds a random tiny model in code whose output is noise — for smoke tests only).
"""

from __future__ import annotations

import sys
from pathlib import Path

from multikernelbench.prompts import contract_backends, strategy_names
from multikernelbench.sampling import GenerationStore, SamplingParams, get_sampler
from multikernelbench.sampling.runner import GenerateConfig, engine_evaluator, generate
from multikernelbench.tasks import load_suite

#: Outside any checkout by default; ``mkb eval --generations`` takes the same path.
DEFAULT_OUT = Path.home() / ".cache" / "multikernelbench" / "generations.jsonl"


def add_parser(sub) -> None:
    p = sub.add_parser("generate", help="sample candidate kernels from a model into a generations store")
    p.add_argument("--model", required=True, help="model name (API model id, vLLM weights path, or a label)")
    p.add_argument("--backend", default="cpu", choices=contract_backends())
    p.add_argument("--strategy", default="category_shot", choices=strategy_names())
    p.add_argument("--samples", type=int, default=1, help="samples per task")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--api-base", help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1")
    src.add_argument("--vllm", action="store_true", help="offline vLLM generation (needs the vllm extra)")
    src.add_argument("--hf", metavar="PATH", help="transformers model directory ('tiny' = random test model)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"generations store (JSONL; default {DEFAULT_OUT})")
    p.add_argument("--task", action="append", dest="task_ids", help="only these task ids (repeatable)")
    p.add_argument("--category", action="append", help="only these categories (repeatable)")
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--top-p", type=float, default=0.95)
    p.add_argument("--max-tokens", type=int, default=8192)
    p.add_argument("--seed", type=int, default=None, help="base sampling seed (sample i uses seed+i)")
    p.add_argument("--concurrency", type=int, default=8, help="parallel HTTP requests")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per HTTP request")
    p.add_argument("--max-retries", type=int, default=5)
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    p.add_argument("--batch-size", type=int, default=4, help="prompts per batch (--hf)")
    p.add_argument("--tensor-parallel-size", type=int, default=1, help="GPUs for --vllm")
    p.add_argument("--turns", type=int, default=1, help="refinement: answer + up to N-1 feedback rounds")
    p.add_argument("--stop-on-correct", action="store_true", help="refinement: stop a sample once correct")
    p.add_argument("--db", default="results.sqlite", help="results store for refinement evaluations")
    p.add_argument("--allow-code-execution", action="store_true", help="needed with --turns > 1")
    p.set_defaults(func=run)


def make_sampler(args):
    if args.api_base:
        return get_sampler("openai", model=args.model, api_base=args.api_base, api_key_env=args.api_key_env,
                           concurrency=args.concurrency, timeout_s=args.timeout, max_retries=args.max_retries)
    if args.vllm:
        return get_sampler("vllm", model=args.model, tensor_parallel_size=args.tensor_parallel_size)
    if args.hf == "tiny":
        from multikernelbench.sampling.tiny_model import build_tiny_model

        model, tokenizer = build_tiny_model()
        return get_sampler("hf", model=model, tokenizer=tokenizer, batch_size=args.batch_size)
    return get_sampler("hf", path=args.hf, batch_size=args.batch_size)


def run(args) -> int:
    tasks = load_suite(categories=args.category, ids=args.task_ids)
    params = SamplingParams(temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens, seed=args.seed)
    config = GenerateConfig(model=args.model, backend=args.backend, strategy=args.strategy, samples=args.samples,
                            params=params, turns=args.turns, stop_on_correct=args.stop_on_correct)
    evaluate = None
    store_ctx = None
    if args.turns > 1:
        from multikernelbench.engine.config import EngineConfig
        from multikernelbench.store import ResultStore

        store_ctx = ResultStore(args.db)
        evaluate = engine_evaluator(tasks, EngineConfig(backend=args.backend,
                                                        allow_code_execution=args.allow_code_execution), store_ctx)
    try:
        sampler = make_sampler(args)
    except RuntimeError as exc:  # e.g. vllm not installed
        print(f"mkb generate: {exc}", file=sys.stderr)
        return 2
    try:
        summary = generate(tasks, config, sampler, GenerationStore(args.out), evaluate,
                           log=lambda s: print(s, file=sys.stderr))
    finally:
        sampler.close()
        if store_ctx is not None:
            store_ctx.close()
    print(f"{summary.answered} answered, {summary.failed} failed, {summary.skipped} already stored"
          f"{f', {summary.evaluated} evaluated' if summary.evaluated else ''} -> {args.out}")
    return 1 if summary.failed else 0
