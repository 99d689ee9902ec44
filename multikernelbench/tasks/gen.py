"""Input-generation helpers for task files.

Every helper draws from the ``torch.Generator`` it is given and creates tensors on that generator's device,
so the trusted parent and the worker regenerate bit-identical inputs from the same seed, and GPU backends
can generate large benchmark inputs on the device without a host round trip.
"""

from __future__ import annotations

import torch


def randn(gen: torch.Generator, *size: int, mean: float = 0.0, std: float = 1.0) -> torch.Tensor:
    t = torch.randn(*size, generator=gen, device=gen.device)
    if std != 1.0:
        t.mul_(std)
    if mean != 0.0:
        t.add_(mean)
    return t


def uniform(gen: torch.Generator, *size: int, low: float = 0.0, high: float = 1.0) -> torch.Tensor:
    t = torch.rand(*size, generator=gen, device=gen.device)
    return t.mul_(high - low).add_(low)


def randint(gen: torch.Generator, low: int, high: int, *size: int) -> torch.Tensor:
    return torch.randint(low, high, size, generator=gen, device=gen.device, dtype=torch.int64)


def positive(gen: torch.Generator, *size: int, low: float = 0.1, high: float = 2.0) -> torch.Tensor:
    """Strictly positive values, for logs, square roots, divisions and probability-like inputs."""
    return uniform(gen, *size, low=low, high=high)


def permutation(gen: torch.Generator, n: int) -> torch.Tensor:
    return torch.randperm(n, generator=gen, device=gen.device)
