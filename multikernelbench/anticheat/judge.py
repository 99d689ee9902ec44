"""Parent-side judgement of the evidence a worker reports (the timing's numbers are judged beside it, in
anticheat/timing_judge.py).

The evidence comes from a process that ran candidate code, so it can only ever *convict*: missing or
malformed evidence where evidence is required is itself a finding, and nothing a worker reports can turn
a failed parent-side check into a pass.
"""

from __future__ import annotations

from multikernelbench.anticheat import refusals
from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.wire import Evidence

#: aten ops a candidate's forward may call: allocation, views, copies, metadata. Anything else the worker's
#: dispatcher recording (:class:`multikernelbench.anticheat.runtime.OpRecorder`) saw during the forward is
#: library compute doing (part of) the task's work.
HELPER_OPS = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "new_zeros",
    "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "scalar_tensor", "fill", "fill_", "zero_",
    "copy_", "clone", "contiguous", "_to_copy", "to", "_copy_from", "_copy_from_and_resize", "resize_",
    "set_", "detach", "alias", "lift_fresh", "lift_fresh_copy", "view", "_unsafe_view", "reshape",
    "_reshape_alias", "as_strided", "expand", "permute", "transpose", "t", "squeeze", "unsqueeze", "select",
    "slice", "narrow", "split", "split_with_sizes", "chunk", "unbind", "flatten", "unflatten", "view_as",
    "_local_scalar_dense", "item", "is_nonzero", "sym_size", "sym_stride", "sym_numel", "sym_storage_offset",
    "arange", "record_stream", "is_pinned", "pin_memory", "_has_compatible_shallow_copy_type",
})


def library_ops(ops: dict[str, int], extra_allowed: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The recorded ops (``namespace::name`` -> count) that are not on the helper allow-list."""
    allowed = HELPER_OPS | {o.split("::")[-1] for o in extra_allowed}
    return sorted(o for o in ops if o.split("::")[-1] not in allowed)


def behaviour_findings(evidence: Evidence | None, cfg: AntiCheatConfig, building: bool = False,
                       shared: tuple[str, ...] = ()) -> list[str]:
    """Findings that do not depend on output values: judged before outputs are compared. ``building``: the
    evidence of compiling or importing the candidate (some refusals are not findings then: refusals.py);
    ``shared``: refusals.shared_folders of the candidate's build."""
    if not cfg.runtime_checks or not evidence:
        return []
    out = []
    _, violations = refusals.split(list(evidence.get("violations") or []), building, shared)
    if violations:
        out.append("sandbox violation: " + "; ".join(violations[:5]))
    if evidence.get("patched"):
        names = evidence["patched"]
        out.append(f"candidate patched harness/library functions: {', '.join(names[:8])}"
                   + (f" (+{len(names) - 8} more)" if len(names) > 8 else ""))
    if evidence.get("new_threads"):
        out.append("background thread(s) still running after forward returned (work outside the timed call): "
                   + ", ".join(map(str, evidence["new_threads"][:5])))
    if evidence.get("busy_threads"):
        out.append("thread(s) still computing after forward returned (work outside the timed call): tids "
                   + ", ".join(map(str, evidence["busy_threads"][:5])))
    if evidence.get("children"):
        out.append(f"candidate left child process(es) running: pids {evidence['children'][:5]}")
    if evidence.get("speed_state"):
        out.append("candidate changed the process settings that decide the reference's speed (put back before "
                   "every reference sample): " + "; ".join(map(str, evidence["speed_state"][:8])))
    return out


def refusal_message(evidence: Evidence | None, cfg: AntiCheatConfig, building: bool = False,
                    shared: tuple[str, ...] = ()) -> str | None:
    """What the sandbox refused that an honest author writes (anticheat/refusals.py), said with what the
    harness allows; None when nothing was. Judged after :func:`behaviour_findings`, which convict first."""
    if not cfg.runtime_checks or not evidence:
        return None
    refused, _ = refusals.split(list(evidence.get("violations") or []), building, shared)
    return refusals.message(refused) if refused else None


def kernel_findings(evidence: Evidence | None, cfg: AntiCheatConfig, expect_probe: bool) -> list[str]:
    """"The candidate's own kernel does the work": judged after the outputs were found correct."""
    if not cfg.require_custom_kernel or not cfg.runtime_checks:
        return []
    evidence = evidence or {}
    out = []
    ops = evidence.get("ops")
    if not isinstance(ops, dict):
        out.append("no dispatcher evidence from the worker (instrumentation disabled or tampered with)")
    else:
        lib = library_ops(ops, cfg.extra_allowed_ops)
        if lib:
            out.append("forward calls library compute op(s) " + ", ".join(lib[:8]) +
                       " (only allocation/view/copy helpers are allowed; see anticheat README)")
    kernels = evidence.get("kernels")
    if expect_probe:
        if not isinstance(kernels, dict):
            out.append("no own-kernel evidence from the worker (instrumentation disabled or tampered with)")
        else:
            if not kernels.get("own_kernels"):
                out.append(f"no kernel of the candidate's own ran during forward ({kernels.get('method', '')})")
            if kernels.get("library_kernels"):
                out.append("library kernels did the work: " + ", ".join(kernels["library_kernels"][:6]))
    return out


def alias_findings(candidate_aliases: list[int], reference_aliases: list[int]) -> list[str]:
    extra = sorted(set(candidate_aliases) - set(reference_aliases))
    if extra:
        return [f"output(s) {extra} share memory with an input (the reference returns fresh tensors)"]
    return []
