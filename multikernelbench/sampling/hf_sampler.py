"""Local generation with transformers ``generate`` (batched, left-padded), for small or test models.

Takes a model and tokenizer (or a path to load them from). Prompts are rendered with the tokenizer's chat
template when it has one, else with a plain "role: content" transcript, so tiny test tokenizers without a
template still work. ``device`` is any torch device string; ``"auto"`` is the first GPU when torch sees one,
else the CPU.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
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


def resolve_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def render_chat(tokenizer: Any, messages: Sequence[dict[str, str]]) -> str:
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
    return "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant: "


@register_sampler("hf")
class HFSampler(Sampler):
    def __init__(self, path: str | None = None, model: Any = None, tokenizer: Any = None, batch_size: int = 4,
                 device: str = "auto", max_prompt_tokens: int | None = None) -> None:
        if model is None or tokenizer is None:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            if path is None:
                raise ValueError("HFSampler needs a path or a (model, tokenizer) pair")
            tokenizer = tokenizer or AutoTokenizer.from_pretrained(path)
            model = model or AutoModelForCausalLM.from_pretrained(path)
        device = resolve_device(device)
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.tokenizer.padding_side = "left"  # decoder-only batching: pad on the left
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.batch_size = batch_size
        self.device = device
        self.max_prompt_tokens = max_prompt_tokens

    def _generate(self, batch: list[Request], params: SamplingParams) -> list[Completion]:
        import torch

        texts = [render_chat(self.tokenizer, r.messages) for r in batch]
        enc = self.tokenizer(texts, return_tensors="pt", padding=True, truncation=self.max_prompt_tokens is not None,
                             max_length=self.max_prompt_tokens).to(self.device)
        seed = params.seed_for(batch[0].sample_index)
        if seed is not None:
            torch.manual_seed(seed)
        do_sample = params.temperature > 0
        sampling = {"temperature": params.temperature, "top_p": params.top_p} if do_sample else {}
        with torch.no_grad():
            out = self.model.generate(**enc, max_new_tokens=params.max_tokens, do_sample=do_sample,
                                      pad_token_id=self.tokenizer.pad_token_id, **sampling)
        prompt_len = enc["input_ids"].shape[1]
        comps = []
        for i in range(len(batch)):
            new = out[i, prompt_len:]
            n_prompt = int(enc["attention_mask"][i].sum())
            n_out = int((new != self.tokenizer.pad_token_id).sum())
            reasoning, answer = split_reasoning(self.tokenizer.decode(new, skip_special_tokens=True))
            finish = "length" if n_out >= params.max_tokens else "stop"
            comps.append(Completion(text=answer, reasoning=reasoning, usage=Usage(n_prompt, n_out, n_prompt + n_out),
                                    finish_reason=finish))
        return comps

    def run(self, requests: Sequence[Request], params: SamplingParams, on_result: OnResult) -> None:
        for start in range(0, len(requests), self.batch_size):
            batch = list(requests[start:start + self.batch_size])
            t0 = time.perf_counter()
            try:
                comps = self._generate(batch, params)
            except Exception as exc:
                comps = [Completion(error=f"hf generate: {type(exc).__name__}: {exc}") for _ in batch]
            for r, c in zip(batch, comps, strict=True):
                c.latency_s = (time.perf_counter() - t0) / len(batch)
                on_result(r, c)
