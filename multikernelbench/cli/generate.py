"""``mkb generate``: sample kernels from a model into a generations store (resumable; optional refinement).

Samplers: an OpenAI-compatible server by default (``--api-base URL``, else ``$OPENAI_BASE_URL``, else OpenAI;
key from ``$OPENAI_API_KEY`` or the variable named by ``--api-key-env``), ``--vllm`` (offline vLLM with the
weights named by --model), ``--hf PATH`` (transformers; ``--hf tiny`` builds a random tiny model in code whose
output is noise — for smoke tests only). Progress goes to stderr: bars on a terminal, plain lines in a log.
"""

from __future__ import annotations

import sys
from pathlib import Path

from multikernelbench.cli._heldout import add_task_set_option, tasks_for
from multikernelbench.cli._stop import generations_notice
from multikernelbench.cli._usage import UsageError, check_dir, select_tasks
from multikernelbench.cli._vllm_options import add_vllm_arguments, json_object, vllm_config_from_args
from multikernelbench.engine.progress import Progress
from multikernelbench.prompts import contract_backends, strategy_names
from multikernelbench.sampling import GenerationStore, SamplingParams, get_sampler
from multikernelbench.sampling.runner import GenerateConfig, engine_evaluator, generate

#: Outside any checkout by default; ``mkb eval --generations`` takes the same path.
DEFAULT_OUT = Path.home() / ".cache" / "multikernelbench" / "generations.jsonl"


def add_parser(sub) -> None:
    p = sub.add_parser("generate", help="sample candidate kernels from a model into a generations store")
    p.add_argument("--model", default=None,
                   help="model name: the API model id, the vLLM weights path; with --hf a label for the results "
                        "(default: the model folder's name)")
    p.add_argument("--backend", default="cpu", choices=contract_backends())
    p.add_argument("--strategy", default="category_shot", choices=strategy_names())
    p.add_argument("--samples", type=int, default=1, help="samples per task")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--api-base", help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1 "
                                        "(default: $OPENAI_BASE_URL, else https://api.openai.com/v1)")
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
    p.add_argument("--token-limit-param", default="auto", choices=("auto", "max_tokens", "max_completion_tokens"),
                   help="how --max-tokens is sent (auto: max_tokens, switching to max_completion_tokens when a "
                        "reasoning model asks for it)")
    p.add_argument("--extra-body", metavar="JSON", type=json_object, default=None,
                   help='provider-specific request fields, e.g. \'{"reasoning_effort": "high"}\'')
    p.add_argument("--device", default="auto", help="torch device for --hf (default: cuda when present, else cpu)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars or lines on stderr")
    p.add_argument("--batch-size", type=int, default=4, help="prompts per batch (--hf)")
    add_vllm_arguments(p)
    p.add_argument("--turns", type=int, default=1, help="refinement: answer + up to N-1 feedback rounds")
    p.add_argument("--stop-on-correct", action="store_true", help="refinement: stop a sample once correct")
    p.add_argument("--db", default="results.sqlite", help="results store for refinement evaluations")
    p.add_argument("--allow-code-execution", action="store_true", help="needed with --turns > 1")
    add_task_set_option(p)
    p.set_defaults(func=run, stop_notice=generations_notice)


def make_sampler(args):
    if args.vllm:
        return get_sampler("vllm", config=vllm_config_from_args(args))
    if args.hf == "tiny":
        from multikernelbench.sampling.tiny_model import build_tiny_model

        model, tokenizer = build_tiny_model()
        return get_sampler("hf", model=model, tokenizer=tokenizer, batch_size=args.batch_size, device=args.device)
    if args.hf:
        if args.hf.startswith((".", "/", "~")):  # a local folder, not a Hub id: say so if it is not there
            check_dir(Path(args.hf).expanduser(), "--hf model folder")
        return get_sampler("hf", path=args.hf, batch_size=args.batch_size, device=args.device)
    return get_sampler("openai", model=args.model, api_base=args.api_base, api_key_env=args.api_key_env,
                       concurrency=args.concurrency, timeout_s=args.timeout, max_retries=args.max_retries,
                       token_limit_param=args.token_limit_param, extra_body=args.extra_body)


def model_label(args) -> str:
    """--model, or for --hf the folder's name: `mkb generate --hf PATH` needs no second name for the same model."""
    if args.model:
        return args.model
    if args.hf:
        return Path(args.hf.rstrip("/")).name or args.hf
    raise UsageError("--model is required: the API model id (--model gpt-5-mini), the weights for --vllm "
                     "(--vllm --model PATH), or give --hf PATH for a local transformers model")


def run(args) -> int:
    args.model = model_label(args)
    tasks = (tasks_for(args, args.category, args.task_ids) if args.task_set != "suite"
             else select_tasks(args.category, args.task_ids))
    if args.turns > 1 and not args.allow_code_execution:
        from multikernelbench.engine.config import EngineConfig
        from multikernelbench.engine.runner import ALLOW_ENV, CodeExecutionNotAllowed, check_opt_in

        try:
            check_opt_in(EngineConfig(backend=args.backend))
        except CodeExecutionNotAllowed:
            raise UsageError(f"--turns > 1 evaluates every answer: pass --allow-code-execution "
                             f"(or set {ALLOW_ENV}=1)") from None
    params = SamplingParams(temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens, seed=args.seed)
    config = GenerateConfig(model=args.model, backend=args.backend, strategy=args.strategy, samples=args.samples,
                            params=params, turns=args.turns, stop_on_correct=args.stop_on_correct)
    try:
        sampler = make_sampler(args)
    except (RuntimeError, OSError) as exc:  # vllm not installed, weights that do not load, no API key, ...
        print(f"mkb generate: cannot start the sampler: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    evaluate = None
    store_ctx = None
    if args.turns > 1:  # opened only now: a wrong argument above leaves no results store behind
        from multikernelbench.engine.config import EngineConfig
        from multikernelbench.store import ResultStore

        store_ctx = ResultStore(args.db)
        evaluate = engine_evaluator(tasks, EngineConfig(backend=args.backend,
                                                        allow_code_execution=args.allow_code_execution), store_ctx)
    try:
        with Progress(enabled=not args.no_progress) as progress:
            summary = generate(tasks, config, sampler, GenerationStore(args.out), evaluate,
                               log=lambda s: print(s, file=sys.stderr), progress=progress)
    finally:
        sampler.close()
        if store_ctx is not None:
            store_ctx.close()
    print(f"{summary.answered} answered, {summary.failed} failed, {summary.skipped} already stored"
          f"{f', {summary.evaluated} evaluated' if summary.evaluated else ''} -> {args.out}")
    return 1 if summary.failed else 0
