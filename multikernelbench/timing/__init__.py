"""Timing in one place: the statistics, the single A/B loop, and the two clocks (host, CUDA events).

Why it sits below the backends: a backend chooses which clock suits its device (``make_timer``), but the
loop that alternates candidate and references, the adaptive stop, the fresh-input hooks and the summary
statistics are the same for every platform and must not be re-implemented per backend.
"""

from multikernelbench.timing.config import TimingConfig
from multikernelbench.timing.loop import Fresh, NoFresh, Plan, Sampler, Timer
from multikernelbench.timing.stats import converged, summarize

__all__ = ["Fresh", "NoFresh", "Plan", "Sampler", "Timer", "TimingConfig", "converged", "summarize"]
