"""Messages lead with their cause (issue #45, item 7): a real ``mkb eval`` of three broken candidates
(tests/data/reasons/: a syntax error, a wrong ``__init__`` signature, an extension built in /tmp, one built at
the first forward). The last two were ``cheat_detected`` before: blocked, but not gaming."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from multikernelbench.anticheat import refusals
from multikernelbench.reasons import lead_with_cause

DATA = Path(__file__).parent / "data" / "reasons"
#: Written at test time (a file of it under tests/ would fail the lint's parse).
SYNTAX_ERROR = """# A syntax error: its cause is the compiler's last line, and the line of the candidate it points at.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.clamp_min(x, 0.0
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reasons")
    sols = tmp / "sols"
    shutil.copytree(DATA, sols)
    (sols / "activation.relu.py").write_text(SYNTAX_ERROR)
    db = tmp / "r.sqlite"
    base = [sys.executable, "-m", "multikernelbench.cli.main", "eval", "--backend", "cpu", "--solutions", str(sols),
            "--db", str(db), "--build-root", str(tmp / "builds"), "--allow-code-execution", "--no-progress",
            "--seed", "3"]
    table = subprocess.run(base, capture_output=True, text=True, timeout=600)
    assert table.returncode == 0, table.stderr
    with sqlite3.connect(db) as conn:
        records = {t: json.loads(rec) for t, rec in conn.execute("SELECT task_id, record FROM results")}
    return table.stdout, records


CAUSES = {
    "activation.relu": ("compile_error", "exception",
                        "compiling: SyntaxError: '(' was never closed — candidate.py line 8: return torch.clamp_min("),
    "activation.elu": ("runtime_error", "exception",
                       "TypeError: ModelNew.__init__() takes 1 positional argument but 2 were given"),
    "activation.sigmoid": ("compile_error", "environment_refused",
                           "compiling: refused by the harness: os.mkdir on /tmp/mkb_my_ext_build"),
    "activation.tanh": ("runtime_error", "environment_refused",
                        "refused by the harness: process creation (subprocess.Popen of "),
}


@pytest.mark.slow
@pytest.mark.parametrize("task_id", sorted(CAUSES))
def test_the_stored_message_leads_with_the_cause(run, task_id):
    table, records = run
    status, failure, cause = CAUSES[task_id]
    rec = records[task_id]
    assert rec["status"] == status and rec["failure"] == failure, rec["message"]
    first = rec["message"].splitlines()[0]
    assert cause in first, first
    assert cause[:40] in table, table  # the table shows it too
    if "Traceback" in rec["message"]:  # the full traceback stays in the store, after the cause
        assert rec["message"].index("Traceback (most recent call last):") > len(first)


@pytest.mark.slow
def test_a_refusal_says_what_the_harness_allows(run):
    _, records = run
    msg = records["activation.sigmoid"]["message"]
    assert "load_inline without build_directory" in msg
    lazy = records["activation.tanh"]["message"]  # a build inside forward: told where a build may happen instead
    assert "build the extension at import" in lazy and "ModelNew.__init__" in lazy, lazy
    assert "expected" not in run[0].split("\n", 3)[2]  # no file declares an expectation: no such column


def test_refusals_and_cheats_are_told_apart():
    assert refusals.is_refusal("os.mkdir on /tmp/x (outside the working directory)", building=True)
    assert refusals.is_refusal("write to /tmp/x/a.so (outside the working directory)", building=True)
    assert refusals.is_refusal("process creation (subprocess.Popen of ninja) during forward", building=False)
    # gaming stays a violation: a temporary file written while forward runs, writes into caches or other
    # folders, deleting harness files, other programs, the network
    assert not refusals.is_refusal("write to /tmp/x (outside the working directory)", building=False)
    assert not refusals.is_refusal("write to /root/.cache/huggingface/x (outside the working directory)", True)
    assert not refusals.is_refusal("os.remove on /work/expected.pt (outside the working directory)", True)
    assert not refusals.is_refusal("process creation (subprocess.Popen of python) during forward", False)
    assert not refusals.is_refusal("network access (socket.connect ('1.2.3.4', 80))", True)
    refused, other = refusals.split(["os.mkdir on /tmp/x (outside the working directory)",
                                     "network access (socket.connect ('1.2.3.4', 80))"], building=True)
    assert len(refused) == 1 and len(other) == 1


def test_lead_with_cause_is_idempotent_and_leaves_plain_messages():
    tb = ("running: Traceback (most recent call last):\n  File \"/x/candidate.py\", line 3, in forward\n"
          "    return 1 / 0\nZeroDivisionError: division by zero\n")
    once = lead_with_cause(tb)
    assert once.splitlines()[0] == ("running: ZeroDivisionError: division by zero "
                                    "— candidate.py line 3: return 1 / 0")
    assert lead_with_cause(once) == once and once.endswith(tb)
    assert lead_with_cause("values differ at [0, 3]") == "values differ at [0, 3]"


def test_a_record_stored_before_reads_back_with_its_cause_first():
    from multikernelbench.records import EvalResult

    tb = ("compiling: Traceback (most recent call last):\n  File \"/b/candidate.py\", line 2\n    def f(:\n"
          "          ^\nSyntaxError: invalid syntax\n")
    r = EvalResult.from_dict({"task_id": "t", "task_hash": "h", "backend": "cpu", "candidate": "c",
                              "code_hash": "x", "status": "compile_error", "message": tb})
    assert r.message.splitlines()[0] == "compiling: SyntaxError: invalid syntax — candidate.py line 2: def f(:"
    assert r.message.endswith(tb)  # the traceback is kept, after it


def test_shared_folders_under_tmp_are_never_a_folder_of_ones_own(tmp_path, monkeypatch):
    """A HOME or a build root under /tmp (a CI container, a test's build root): a write into the caches there or
    into another candidate's build is a violation, not an author's scratch folder. Before, every write under
    /tmp while building was a refusal, and the sandbox attack test came back compile_error, not cheat_detected,
    in a run with HOME=/tmp/mkb-suite-cold/home (135fcdd)."""
    from multikernelbench.anticheat import judge
    from multikernelbench.anticheat.config import AntiCheatConfig

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    build_dir = tmp_path / "builds" / "cpu" / "0123456789abcdef"
    shared = refusals.shared_folders(str(build_dir))
    assert str(tmp_path).startswith("/tmp/"), "the case needs folders under /tmp"
    hf = f"write to {home}/.cache/huggingface/x.py (outside the working directory)"
    other = f"write to {tmp_path}/builds/cpu/fedcba9876543210/x.py (outside the working directory)"
    scratch = "write to /tmp/my-own-build/a.so (outside the working directory)"
    for v in (hf, other):
        assert refusals.is_refusal(v, True), "without the shared folders it looks like a scratch folder"
        assert not refusals.is_refusal(v, True, shared), v
    assert refusals.is_refusal(scratch, True, shared)
    evidence = {"violations": [hf, other, scratch]}
    findings = judge.behaviour_findings(evidence, AntiCheatConfig(), True, shared)
    assert findings and "huggingface" in findings[0] and "fedcba9876543210" in findings[0], findings
    assert "my-own-build" not in findings[0]
