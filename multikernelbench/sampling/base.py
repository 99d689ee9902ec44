"""The sampler interface and registry: every backend (HTTP API, vLLM, transformers) answers the same requests.

A sampler receives a batch of :class:`Request` and reports one :class:`Completion` per request through a
callback as soon as it has it, so the caller can persist each one immediately (an interrupted run loses
at most the requests in flight). Failures are completions too — with ``error`` set and the text empty —
never exceptions that would drop the rest of the batch.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from multikernelbench.registry import Registry
from multikernelbench.sampling.params import SamplingParams


@dataclass(frozen=True)
class Request:
    key: tuple  # the generation key (see sampling.store.GenerationKey); opaque to samplers
    messages: tuple[dict[str, str], ...]
    sample_index: int = 0


@dataclass
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None


@dataclass
class Completion:
    text: str = ""  # the answer, reasoning removed
    reasoning: str = ""  # separated reasoning ("reasoning_content" field or inline <think> blocks)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    error: str | None = None  # set when no usable answer came back (after retries)
    attempts: int = 1
    latency_s: float | None = None
    raw: dict[str, Any] | None = None  # provider-specific extras worth keeping (response id, model)
    omitted_params: list[str] = field(default_factory=list)  # sampling parameters the server refused, not sent


OnResult = Callable[[Request, Completion], None]


class Sampler(abc.ABC):
    """Turns chat requests into completions. Subclasses register with ``@register_sampler(name)``."""

    name: str = ""

    @abc.abstractmethod
    def run(self, requests: Sequence[Request], params: SamplingParams, on_result: OnResult) -> None:
        """Answer every request, calling ``on_result`` once per request (in any order)."""

    def close(self) -> None:  # noqa: B027 - a hook: nothing to do unless a subclass has
        """Release clients or GPU memory."""


#: name -> Sampler class: in-tree samplers lazily (their heavy dependencies load only when chosen), others by
#: ``@register_sampler(name)`` or an entry point in the ``multikernelbench.samplers`` group.
SAMPLERS: Registry[type[Sampler]] = Registry("sampler", entry_point_group="multikernelbench.samplers", lazy={
    "openai": "multikernelbench.sampling.openai_client:OpenAISampler",
    "vllm": "multikernelbench.sampling.vllm_sampler:VLLMSampler",
    "hf": "multikernelbench.sampling.hf_sampler:HFSampler",
})


def register_sampler(name: str):
    """Class decorator; a name already taken by another class raises RegistryCollision."""

    def deco(cls):
        SAMPLERS.register(name, cls)
        cls.name = name
        return cls

    return deco


def sampler_names() -> list[str]:
    return SAMPLERS.names()


def get_sampler(name: str, **options: Any) -> Sampler:
    """Build a sampler by name; its module (and heavy dependencies) is imported only now."""
    return SAMPLERS.get(name)(**options)


def split_reasoning(text: str) -> tuple[str, str]:
    """(reasoning, answer): inline ``<think>`` blocks some open models emit, via the shared extractor."""
    from multikernelbench.extract import split_reasoning as _split

    return _split(text or "")
