"""Sampling throughput of the tiny random model through vLLM (offline ``LLM.chat``) and through transformers
(``generate``), in one run, on the same prompts with the same sampling parameters.

    ~/.cache/multikernelbench/vllm-venv/bin/python scripts/vllm_cpu_throughput.py      # after scripts/vllm_check.sh

Needs vllm and transformers in one environment (the venv that ``scripts/vllm_check.sh`` makes). Both run the
project's own samplers (``VLLMSampler``, ``HFSampler``) on the requests ``mkb generate`` would send: the
``--strategy`` prompt of every task in ``--category`` × ``--samples``. The model is the one
``tiny_model.save_tiny_model`` writes (random 2-layer GPT-2, n_embd 128, 2000-token BPE trained on prompt text):
its output is noise, so this measures the serving machinery on a small model, not a real model's speed.

Reported per sampler: ``load_s`` (model load; vLLM: engine start incl. its worker processes), ``gen_s`` (wall
time of ``Sampler.run`` over all requests), prompt and completion tokens as the samplers count them,
``completion_tokens_per_s`` = completion tokens / gen_s, ``total_tokens_per_s`` = (prompt + completion) / gen_s
and ``requests_per_s``. transformers pads a batch to its longest prompt and keeps decoding until every row
stops; vLLM schedules requests continuously. Output: a table on stdout and JSON at ``--out`` (default
``$OUT/vllm_cpu_throughput.json`` or ``~/.cache/multikernelbench/benchmarks/``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from multikernelbench.util.results_dir import default_out


def build_requests(category: str, strategy: str, samples: int, backend: str = "cpu"):
    from multikernelbench.prompts import build_prompt
    from multikernelbench.sampling.base import Request
    from multikernelbench.tasks import load_suite

    requests = []
    for task in load_suite(categories=[category]):
        messages = tuple(build_prompt(task, backend, strategy).messages)
        for s in range(samples):
            requests.append(Request(("bench", task.id, s), messages, s))
    return requests


def measure(name: str, make_sampler, requests, params) -> dict:
    """Load the sampler, run every request through it once, count what came back."""
    t0 = time.perf_counter()
    sampler = make_sampler()
    load_s = time.perf_counter() - t0
    comps = []
    t1 = time.perf_counter()
    sampler.run(requests, params, lambda req, comp: comps.append(comp))
    gen_s = time.perf_counter() - t1
    sampler.close()
    errors = [c.error for c in comps if c.error]
    prompt = sum(c.usage.prompt_tokens for c in comps)
    completion = sum(c.usage.completion_tokens for c in comps)
    return {"sampler": name, "requests": len(requests), "answered": len(comps) - len(errors),
            "errors": errors[:3], "load_s": round(load_s, 2), "gen_s": round(gen_s, 3),
            "prompt_tokens": prompt, "completion_tokens": completion,
            "completion_tokens_per_s": round(completion / gen_s, 1),
            "total_tokens_per_s": round((prompt + completion) / gen_s, 1),
            "requests_per_s": round(len(comps) / gen_s, 2)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--category", default="activation")
    p.add_argument("--strategy", default="category_shot")
    p.add_argument("--samples", type=int, default=2)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hf-batch-size", type=int, default=8)
    p.add_argument("--max-model-len", type=int, default=4096)
    p.add_argument("--kv-cache-memory-bytes", type=int, default=512 << 20)
    p.add_argument("--enforce-eager", action="store_true", help="vLLM without torch.compile")
    p.add_argument("--model-dir", type=Path, default=None, help="default: write the tiny model to a temp dir")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)

    import torch
    import transformers
    import vllm

    from multikernelbench.sampling import SamplingParams, get_sampler
    from multikernelbench.sampling.tiny_model import save_tiny_model
    from multikernelbench.sampling.vllm_sampler import VLLMConfig

    model_dir = args.model_dir or save_tiny_model(Path(tempfile.mkdtemp(prefix="tiny-vllm-")) / "model", seed=0)
    requests = build_requests(args.category, args.strategy, args.samples)
    params = SamplingParams(temperature=args.temperature, top_p=0.95, max_tokens=args.max_tokens, seed=args.seed)
    results = [
        measure("transformers", lambda: get_sampler("hf", path=str(model_dir), batch_size=args.hf_batch_size,
                                                    device="cpu"), requests, params),
        measure("vllm", lambda: get_sampler("vllm", config=VLLMConfig(
            model=str(model_dir), max_model_len=args.max_model_len, kv_cache_memory_bytes=args.kv_cache_memory_bytes,
            dtype="float32", seed=args.seed, enforce_eager=True if args.enforce_eager else None)), requests, params),
    ]
    report = {"command": " ".join([Path(sys.executable).name, *sys.argv]),
              "host": {"cpus": os.cpu_count(), "machine": platform.machine(), "torch_threads": torch.get_num_threads(),
                       "torch": torch.__version__, "transformers": transformers.__version__,
                       "vllm": vllm.__version__, "load_avg_1m": round(os.getloadavg()[0], 2)},
              "workload": {"category": args.category, "strategy": args.strategy, "samples": args.samples,
                           "requests": len(requests), "max_tokens": args.max_tokens,
                           "temperature": args.temperature, "hf_batch_size": args.hf_batch_size,
                           "enforce_eager": args.enforce_eager},
              "results": results}
    cols = ("sampler", "requests", "answered", "load_s", "gen_s", "prompt_tokens", "completion_tokens",
            "completion_tokens_per_s", "total_tokens_per_s", "requests_per_s")
    print(" | ".join(cols))
    for r in results:
        print(" | ".join(str(r[c]) for c in cols))
    out = args.out or default_out("vllm_cpu_throughput.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"-> {out}")
    return 0 if all(not r["errors"] for r in results) else 1


if __name__ == "__main__":  # vLLM starts its engine in spawned processes, which re-import this module
    raise SystemExit(main())
