"""A device worker's torch.compile of the reference (the compiled baseline), as its own request.

Its own request so that a compile that fails or hangs costs the compiled baseline, not the candidate's verdict;
its own module (split from worker_main) because what the compile legitimately rebinds in torch must be told
apart from what the candidate patched, which is most of its code.
"""

from __future__ import annotations

from typing import Any

from multikernelbench.engine.messages import BaselineCompiled, CompileBaseline, DeviceTurn, TurnGranted


def compile_baseline(state: Any, msg: CompileBaseline) -> BaselineCompiled:
    """torch.compile of the reference for the timing shape, compiled now; ``state`` is the worker's
    :class:`~multikernelbench.engine.worker_main.WorkerState` (its channel, task, backend, evidence and the
    snapshots the compile's own rebinds are taken out of)."""
    import torch
    from torch._inductor import config as inductor_config

    from multikernelbench.anticheat import runtime
    from multikernelbench.engine.device_turns import DeviceTurns
    from multikernelbench.tasks.module import make_inputs

    turns = DeviceTurns(lambda take: state.channel.ask(DeviceTurn(take), TurnGranted), msg.take_turns)
    with turns.turn():  # inputs and weights are made on the device
        example = make_inputs(state.task_mod, msg.shape, msg.seed, state.task.dtype, state.backend.device())
        ref = state.model_for("reference", msg.shape, msg.weight_seed)
        state.backend.synchronize()
    before = state.evidence()  # the candidate's doing so far: judged by the parent like any other evidence
    # In-process compilation: inductor's default pool (a thread plus one process per core) would be
    # indistinguishable from a candidate's background work, and on the H200 host it starved builds.
    inductor_config.compile_threads = 1
    compiled = torch.compile(ref)
    known = runtime.python_threads()
    try:
        with torch.no_grad(), turns.from_compile_end():
            compiled(*example)  # compiles now; threads started by the harness' compile are not the candidate's
            state.backend.synchronize()
    finally:
        turns.give()
    del example
    state.threads_before.update({i: n for i, n in runtime.python_threads().items() if i not in known})
    # torch.compile legitimately rebinds torch internals: later evidence is judged against a snapshot
    # taken now, plus whatever the candidate had patched before (already in ``before``). What changed
    # during the compile itself: the harness's own clock/checker/builtins count as the candidate's doing
    # (its hooks may run inside the reference's forward); other torch internals are only reported.
    rebinds: list[str] = []
    if state.snapshot is not None:
        earlier = set(before.get("patched", []))
        critical = set()
        for name in state.snapshot.changed():
            if name in earlier or name in runtime.COMPILE_REBINDS:
                continue
            if runtime.harness_critical(name):
                critical.add(name)
            else:
                rebinds.append(name)
        state.patched_before_compile = sorted(earlier | critical)
        before = {**before, "patched": state.patched_before_compile}
        state.snapshot = runtime.PatchSnapshot(state.snapshot.targets)
    state.compiled = compiled
    return BaselineCompiled(evidence=before, torch_rebinds=rebinds)
