"""Counters and per-stage latency sums for ``GET /metrics`` (Prometheus text exposition format 0.0.4).

Kept by hand (a few counters and sums) instead of adding prometheus_client: the service needs no registry,
no multiprocess mode and no collectors, and the format is a few lines of text.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

#: Upper bounds (seconds) of the latency histograms' buckets.
BUCKETS = (0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900)


@dataclass
class _Histogram:
    counts: list[int] = field(default_factory=lambda: [0] * len(BUCKETS))
    total: float = 0.0
    n: int = 0

    def observe(self, seconds: float) -> None:
        self.total += seconds
        self.n += 1
        for i, bound in enumerate(BUCKETS):
            if seconds <= bound:
                self.counts[i] += 1


class Metrics:
    """Thread-safe: the lanes' threads observe stages, request handlers count requests."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counters: dict[tuple[str, str], int] = {}
        self.stages: dict[str, _Histogram] = {}

    def count(self, name: str, label: str = "", n: int = 1) -> None:
        with self._lock:
            self.counters[(name, label)] = self.counters.get((name, label), 0) + n

    def per_client(self, client: str, **amounts: int) -> None:
        """Per-client counters (``mkb_client_<name>_total{client="..."}``): who waits for the lanes and who holds
        them, which the totals per stage cannot tell (issue #42's soak). Clients are the token file's names, so
        the label set is as bounded as that file."""
        label = 'client="{}"'.format(client.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n"))
        with self._lock:
            for name, n in amounts.items():
                key = ("client_" + name, label)
                self.counters[key] = self.counters.get(key, 0) + n

    def observe(self, stage: str, seconds: float | None) -> None:
        if seconds is None or seconds < 0:
            return
        with self._lock:
            self.stages.setdefault(stage, _Histogram()).observe(seconds)

    def render(self, gauges: dict[str, float]) -> str:
        lines: list[str] = []
        for name, value in sorted(gauges.items()):
            lines += [f"# TYPE mkb_{name} gauge", f"mkb_{name} {value}"]
        with self._lock:
            names = sorted({n for n, _ in self.counters})
            for name in names:
                lines.append(f"# TYPE mkb_{name}_total counter")
                for (n, label), v in sorted(self.counters.items()):
                    if n == name:
                        lines.append(f"mkb_{name}_total{{{label}}} {v}" if label else f"mkb_{name}_total {v}")
            if self.stages:
                lines.append("# TYPE mkb_stage_seconds histogram")
            for stage, h in sorted(self.stages.items()):
                for bound, c in zip(BUCKETS, h.counts, strict=True):
                    lines.append(f'mkb_stage_seconds_bucket{{stage="{stage}",le="{bound}"}} {c}')
                lines.append(f'mkb_stage_seconds_bucket{{stage="{stage}",le="+Inf"}} {h.n}')
                lines.append(f'mkb_stage_seconds_sum{{stage="{stage}"}} {h.total:.6f}')
                lines.append(f'mkb_stage_seconds_count{{stage="{stage}"}} {h.n}')
        return "\n".join(lines) + "\n"
