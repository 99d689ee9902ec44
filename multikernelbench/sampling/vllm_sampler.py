"""Offline batched generation with vLLM (``pip install multikernelbench[vllm]``), for open-weight models.

Kept deliberately small and to vLLM's documented API only: ``vllm.LLM(model=..., **engine_args)``,
``vllm.SamplingParams(n=1, temperature=, top_p=, max_tokens=, seed=)`` and
``LLM.chat(messages=<list of conversations>, sampling_params=<list, one per conversation>, use_tqdm=False)``
which applies the model's chat template and returns one ``RequestOutput`` per conversation
(``.outputs[0].text / .token_ids / .finish_reason``, ``.prompt_token_ids``). vLLM is not installable on the
machines this was written on, so this path is exercised in tests only through a stand-in ``vllm`` module
with the same API; it shares the request/completion interface with the tested samplers.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from multikernelbench.sampling.base import Completion, OnResult, Request, Sampler, Usage, register_sampler, \
    split_reasoning
from multikernelbench.sampling.params import SamplingParams


def _import_vllm():
    try:
        import vllm
    except ImportError as exc:
        raise RuntimeError("the vLLM sampler needs the `vllm` package (pip install 'multikernelbench[vllm]' on a "
                           "CUDA machine); use --api-base with a vLLM server or --hf PATH instead") from exc
    return vllm


@register_sampler("vllm")
class VLLMSampler(Sampler):
    def __init__(self, model: str, batch_size: int = 256, chat_template: str | None = None,
                 **engine_args: Any) -> None:
        self.vllm = _import_vllm()
        self.model = model
        self.batch_size = batch_size
        self.chat_template = chat_template
        self.llm = self.vllm.LLM(model=model, **engine_args)

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
            for r, out in zip(batch, outputs):
                seq = out.outputs[0]
                reasoning, answer = split_reasoning(seq.text)
                n_prompt = len(out.prompt_token_ids or [])
                n_out = len(seq.token_ids or [])
                on_result(r, Completion(text=answer, reasoning=reasoning,
                                        usage=Usage(n_prompt, n_out, n_prompt + n_out),
                                        finish_reason=seq.finish_reason, latency_s=latency))

    def close(self) -> None:
        self.llm = None
