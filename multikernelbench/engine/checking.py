"""Compare a candidate's outputs with the expected ones (in the trusted parent only)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from multikernelbench.records import FailureKind


@dataclass
class CheckOutcome:
    ok: bool
    failure: FailureKind | None = None
    message: str = ""
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0


def _describe(shape: dict[str, Any] | None) -> str:
    return f" at shape {shape}" if shape else ""


def compare_outputs(outputs: list[torch.Tensor], expected: list[torch.Tensor], atol: float, rtol: float,
                    shape: dict[str, Any] | None = None) -> CheckOutcome:
    where = _describe(shape)
    if len(outputs) != len(expected):
        return CheckOutcome(False, FailureKind.SHAPE_MISMATCH,
                            f"returned {len(outputs)} tensor(s), expected {len(expected)}{where}")
    worst_abs = worst_rel = 0.0
    for i, (out, ref) in enumerate(zip(outputs, expected, strict=True)):
        if type(out) is not torch.Tensor:  # noqa: E721
            return CheckOutcome(False, FailureKind.BAD_OUTPUT_TYPE, f"output {i} is not a plain tensor{where}")
        if tuple(out.shape) != tuple(ref.shape):
            return CheckOutcome(False, FailureKind.SHAPE_MISMATCH,
                                f"output {i} has shape {tuple(out.shape)}, expected {tuple(ref.shape)}{where}")
        if out.dtype != ref.dtype:
            return CheckOutcome(False, FailureKind.DTYPE_MISMATCH,
                                f"output {i} has dtype {out.dtype}, expected {ref.dtype}{where}")
        out = out.to(ref.device)  # compared where the reference lives (the GPU for GPU tasks)
        if not ref.is_floating_point() and not ref.is_complex():
            mismatched = int((out != ref).sum())
            if mismatched:
                return CheckOutcome(False, FailureKind.VALUE_MISMATCH,
                                    f"output {i}: {mismatched} of {ref.numel()} integer values differ{where}")
            continue
        o, r = out.double(), ref.double()
        nan_mismatch = torch.isnan(o) != torch.isnan(r)
        if nan_mismatch.any():
            return CheckOutcome(False, FailureKind.NON_FINITE,
                                f"output {i}: {int(nan_mismatch.sum())} NaN value(s) where the reference has "
                                f"none{where}")
        finite = torch.isfinite(r) & torch.isfinite(o)
        inf_mismatch = (~finite) & (o != r) & ~torch.isnan(r)
        if inf_mismatch.any():
            return CheckOutcome(False, FailureKind.NON_FINITE,
                                f"output {i}: infinities differ from the reference{where}")
        diff = torch.where(finite, (o - r).abs(), torch.zeros_like(o))
        bound = atol + rtol * r.abs()
        bad = diff > torch.where(finite, bound, torch.full_like(bound, float("inf")))
        max_abs = float(diff.max()) if diff.numel() else 0.0
        rel = diff / r.abs().clamp_min(atol)
        max_rel = float(rel.max()) if rel.numel() else 0.0
        worst_abs, worst_rel = max(worst_abs, max_abs), max(worst_rel, max_rel)
        if bad.any():
            n_bad = int(bad.sum())
            idx = int(torch.argmax((diff - bound).flatten()))
            pos = tuple(int(x) for x in torch.unravel_index(torch.tensor(idx), tuple(r.shape))) if r.dim() else ()
            return CheckOutcome(
                False, FailureKind.VALUE_MISMATCH,
                f"output {i}: {n_bad} of {r.numel()} values outside atol={atol:g}, rtol={rtol:g}{where}; "
                f"max abs error {max_abs:.4g}; worst at index {pos}: got {float(o.flatten()[idx]):.6g}, "
                f"expected {float(r.flatten()[idx]):.6g}",
                max_abs, max_rel)
    return CheckOutcome(True, None, "", worst_abs, worst_rel)


def sample_positions(seed: int, count: int, edge: int) -> torch.Tensor:
    """Flat positions to compare in large outputs: the first and last ``edge`` elements (tails are where
    kernels go wrong) plus ``count`` uniformly random ones; negative values count from the end."""
    g = torch.Generator().manual_seed(seed)
    return torch.cat([torch.arange(edge), torch.randint(0, 2**62, (count,), generator=g),
                      -1 - torch.arange(edge)])


def sample_flat(t: torch.Tensor, positions: torch.Tensor | None, full_limit: int) -> torch.Tensor:
    """``t`` itself when small (or no positions given), else its flat values at ``positions mod numel``.

    Used identically on the candidate's outputs (in the worker) and the expected ones (in the parent)."""
    if positions is None or t.numel() <= full_limit:
        return t
    flat = t.reshape(-1)
    return flat[torch.remainder(positions.to(flat.device), flat.numel())]


def meta_mismatch(meta: list[list[Any]], expected: list[torch.Tensor]) -> str | None:
    """Why the reported (shape, dtype) of timed outputs cannot match ``expected``, or None."""
    if len(meta) != len(expected):
        return f"returned {len(meta)} tensor(s), expected {len(expected)}"
    for i, ((shape, dtype), ref) in enumerate(zip(meta, expected, strict=True)):
        if tuple(shape) != tuple(ref.shape):
            return f"output {i} has shape {tuple(shape)}, expected {tuple(ref.shape)}"
        if dtype != str(ref.dtype):
            return f"output {i} has dtype {dtype}, expected {ref.dtype}"
    return None


def inputs_unchanged(before: list[Any], after: list[Any]) -> tuple[bool, str]:
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        if not isinstance(b, torch.Tensor):
            continue
        if a is None or tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
            return False, f"input {i} changed shape or dtype during the call"
        if not torch.equal(torch.nan_to_num(a.cpu(), nan=0.0), torch.nan_to_num(b.cpu(), nan=0.0)):
            return False, f"input {i} was modified in place by the candidate"
    return True, ""
