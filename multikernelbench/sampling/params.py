"""Sampling parameters: one frozen dataclass shared by every sampler, with a stable key for the store."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 0.7
    top_p: float = 0.95
    max_tokens: int = 8192
    seed: int | None = None  # base seed; sample i uses seed + i where the sampler supports seeds

    def to_dict(self) -> dict:
        return asdict(self)

    def key(self) -> str:
        """Short stable hash: generations with different parameters never overwrite each other."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:12]

    def seed_for(self, sample_index: int) -> int | None:
        return None if self.seed is None else self.seed + sample_index
