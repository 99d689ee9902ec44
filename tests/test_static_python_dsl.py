"""Static rules for the Python-syntax GPU DSLs (numba_cuda, helion): pure AST checks, no toolchain needed.

The shipped wrong candidates are the attacks (each passes the correctness checks on the CPU path, where no
device probe exists, unless a static rule convicts it); the shipped correct solutions are the false-alarm
check (torch ops inside Helion's hl.tile loops are its kernel language, not library compute)."""

from __future__ import annotations

import pytest

from multikernelbench.anticheat.static import check_task_candidate
from multikernelbench.engine.candidates import discover_solutions
from multikernelbench.tasks import load_task_file
from tests._engine_check import ROOT


@pytest.fixture(scope="module")
def tasks():
    """Just the tasks the shipped solutions target (loading the whole suite costs tens of seconds)."""
    ids = {c.task_id for b in ("numba_cuda", "helion") for c in discover_solutions(ROOT / "solutions" / b)}
    out = {}
    for tid in ids:
        category, name = tid.split(".", 1)
        for task in load_task_file(ROOT / "multikernelbench" / "suite" / category / f"{name}.py", category=category):
            out[task.id] = task
    return out


@pytest.mark.parametrize("backend", ["numba_cuda", "helion"])
def test_shipped_solutions_flagged_exactly_when_expected(tasks, backend):
    seen = {}
    for cand in discover_solutions(ROOT / "solutions" / backend):
        findings = check_task_candidate(cand.source, tasks[cand.task_id], backend)
        seen[cand.label] = (cand.expect.value if cand.expect else "correct", [f.rule for f in findings])
    for label, (expect, rules) in seen.items():
        if expect == "cheat_detected":
            assert rules, f"{label}: expected a static finding"
        else:
            assert not rules, f"{label}: false alarm {rules}"


HELION_KERNEL = '''
import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[8, 64]))
def k(x: torch.Tensor) -> torch.Tensor:
    {host}
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        out[tile] = {device}
    return out


class ModelNew(nn.Module):
    def forward(self, x):
        return k(x)
'''


def test_helion_device_loop_is_kernel_language_host_code_is_not(tasks):
    task = tasks["activation.relu"]
    inside = HELION_KERNEL.format(host="pass", device="torch.relu(x[tile])")
    assert check_task_candidate(inside, task, "helion") == []
    outside = HELION_KERNEL.format(host="x = torch.relu(x)", device="x[tile]")
    assert [f.rule for f in check_task_candidate(outside, task, "helion")] == ["reference_op"]
    # an alias of the decorator and of hl.tile changes nothing
    aliased = inside.replace("import helion.language as hl", "from helion import language as L, kernel as kk") \
        .replace("@helion.kernel", "@kk").replace("hl.tile", "L.tile")
    assert check_task_candidate(aliased, task, "helion") == []


def test_helion_precision_settings(tasks):
    task = tasks["matmul.square"]
    src = HELION_KERNEL.format(host="pass", device="x[tile]")
    for setting, flagged in (('dot_precision="ieee"', False), ('dot_precision="tf32"', True),
                             ('dot_precision="tf32x3"', True), ("fast_math=True", True)):
        s = src.replace("block_sizes=[8, 64])", f"block_sizes=[8, 64]), {setting}")
        rules = [f.rule for f in check_task_candidate(s, task, "helion")]
        assert (rules == ["helion_precision"]) is flagged, (setting, rules)


def test_numba_host_compute_variants(tasks):
    task = tasks["activation.relu"]
    base = '''
import numpy as np
import torch
import torch.nn as nn
from numba import cuda


class ModelNew(nn.Module):
    def forward(self, x):
        {body}
'''
    for body in ("return torch.from_numpy(np.clip(x.numpy(), 0, None))", "h = cuda.to_device(x); return x",
                 "v = x.tolist(); return x"):
        rules = {f.rule for f in check_task_candidate(base.format(body=body), task, "numba_cuda")}
        assert "numba_host_compute" in rules, body
    ok = base.format(body="n = np.int64(x.numel()); return torch.empty_like(x)")
    assert "numba_host_compute" not in {f.rule for f in check_task_candidate(ok, task, "numba_cuda")}
