"""LLM sampling: samplers (OpenAI-compatible HTTP, vLLM offline, transformers), the generations store and the
generate/refine driver. Heavy dependencies (openai, vllm, transformers) are imported only by the sampler
that needs them."""

from multikernelbench.sampling.base import (
           Completion,
           Request,
           Sampler,
           Usage,
           get_sampler,
           register_sampler,
           sampler_names,
)
from multikernelbench.sampling.params import SamplingParams
from multikernelbench.sampling.store import GenerationRecord, GenerationStore, iter_generations

__all__ = ["Completion", "GenerationRecord", "GenerationStore", "Request", "Sampler", "SamplingParams", "Usage",
           "get_sampler", "iter_generations", "register_sampler", "sampler_names"]
