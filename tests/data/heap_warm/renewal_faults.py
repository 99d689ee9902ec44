"""The timing loop of a CPU worker replayed in one process (engine/fresh.py's FreshInputs, the timing loop, the host
clock; the parent's answers made here): prints, as JSON, the minor page faults of every sample's renewal (its request
to its start mark), per callable, with or without engine/heap_warm.py's warm-up first (argv[1]: "warm" or "cold"; argv[2]: a task id or "optimizer").
Run with the workers' allocator settings (util/worker_env.py, MALLOC_DEFAULTS) in the environment."""

import json
import random
import resource
import sys

import torch

from multikernelbench.engine import heap_warm
from multikernelbench.engine.fresh import FreshInputs
from multikernelbench.engine.messages import FreshGrant
from multikernelbench.prompts.exemplars import all_exemplars
from multikernelbench.tasks import load_suite
from multikernelbench.tasks.module import make_inputs, make_model, materialize
from multikernelbench.timing.config import TimingConfig
from multikernelbench.timing.host import HostClockSampler
from multikernelbench.timing.loop import Timer
from multikernelbench.wire import Series


def faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


if sys.argv[2] == "optimizer":  # the SGD-momentum exemplar's task: three 8 MB inputs
    task = next(e for e in all_exemplars("cpu") if e.category == "optimizer").task()
else:
    task = {t.id: t for t in load_suite()}[sys.argv[2]]
mod = materialize(task)
shape = task.shape_for_timing(True)
rng = random.Random(1)
log: list[tuple[str, str, int]] = []
last: dict[str, list[int]] = {}


def ask(req, payload=None):
    log.append((req.phase, req.fn, faults()))
    if req.phase == "start":
        return FreshGrant(seeds=[], verify=[])
    verify = [[0, rng.getrandbits(60)]] if last.get(req.fn) else []  # every sample verified, as the engine's default
    last[req.fn] = [rng.getrandbits(60) for _ in range(req.calls)]
    return FreshGrant(seeds=last[req.fn], verify=verify)


def make(seed: int) -> list:
    return make_inputs(mod, shape, seed, task.dtype, "cpu")


fresh = FreshInputs(ask, make, 4096, 1024, pin=lambda: [], marks=True)
ref = make_model(mod.Model, mod, shape, 1, task.dtype)
fns = {Series.CANDIDATE: lambda j: ref(*fresh.inputs(Series.CANDIDATE, j)),  # the reference twice: renewals alike
       Series.EAGER: lambda j: ref(*fresh.inputs(Series.EAGER, j))}
if sys.argv[1] == "warm":
    heap_warm.warm_for(make(0))
with torch.no_grad():
    Timer(TimingConfig(min_runs=10, max_runs=10, budget_s=30.0, warmup=1), HostClockSampler()).measure(fns, fresh)
out: dict[str, list[int]] = {}
for (phase, fn, a), (nxt, _, b) in zip(log, log[1:], strict=False):
    if phase == "sample" and nxt == "start":
        out.setdefault(fn, []).append(b - a)
print(json.dumps(out))
