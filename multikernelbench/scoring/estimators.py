"""Unbiased estimators of "at least one of k samples succeeds".

Drawing all k-subsets of n samples and counting those with a success is exact but exponential; the
closed form of Chen et al. (2021, "Evaluating Large Language Models Trained on Code") is
``1 - C(n-c, k) / C(n, k)``. The binomials overflow floats for realistic n, so the ratio is computed as a
running product ``prod_{i=n-c+1}^{n} (1 - k/i)``, which stays in [0, 1] and needs no big integers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of ``k`` samples drawn without replacement from ``n`` is a success,
    when ``c`` of the ``n`` are successes.

    >>> pass_at_k(5, 0, 1), pass_at_k(5, 5, 3), pass_at_k(4, 1, 1), round(pass_at_k(4, 1, 2), 6)
    (0.0, 1.0, 0.25, 0.5)

    Fewer samples than ``k`` is an error rather than a silently optimistic estimate:

    >>> pass_at_k(2, 1, 3)
    Traceback (most recent call last):
    ...
    ValueError: need n >= k samples per task, got n=2, k=3
    """
    n, c, k = int(n), int(c), int(k)
    if k < 1:
        raise ValueError(f"k must be >= 1, got k={k}")
    if n < k:
        raise ValueError(f"need n >= k samples per task, got n={n}, k={k}")
    if not 0 <= c <= n:
        raise ValueError(f"successes must satisfy 0 <= c <= n, got c={c}, n={n}")
    if n - c < k:  # every k-subset must contain a success
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """Average of :func:`pass_at_k` over tasks given as ``(n, c)`` pairs; each task keeps its own ``n``."""
    values = [pass_at_k(n, c, k) for n, c in counts]
    if not values:
        raise ValueError("no tasks to score")
    return math.fsum(values) / len(values)


def geometric_mean(values: Iterable[float]) -> float | None:
    """Geometric mean of positive numbers (via logs, so long products cannot overflow); None when empty.

    >>> geometric_mean([2.0, 8.0]), geometric_mean([])
    (4.0, None)
    """
    logs = [math.log(v) for v in values]
    if not logs:
        return None
    return math.exp(math.fsum(logs) / len(logs))
