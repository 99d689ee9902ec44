"""The small things a new user meets in the first hour: `mkb generate --hf PATH` as the README writes it, files
in a solutions folder that are not candidates, usage errors answered before torch is imported, `mkb tasks`'
shapes (nested JSON; the shape the chosen backend times on), examples in `mkb --help`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from multikernelbench.cli.main import main


def _mkb(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "multikernelbench.cli.main", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


@pytest.mark.slow
def test_generate_with_hf_path_needs_no_model_name(tmp_path, capsys):
    pytest.importorskip("transformers")
    from multikernelbench.sampling.store import iter_generations
    from multikernelbench.sampling.tiny_model import save_tiny_model

    folder = save_tiny_model(tmp_path / "my-model", vocab_size=400, n_embd=32, n_positions=4096)
    capsys.readouterr()  # the model writer's progress
    out = tmp_path / "g.jsonl"
    assert main(["generate", "--hf", str(folder), "--device", "cpu", "--backend", "cpu", "--task",
                 "activation.relu", "--max-tokens", "4", "--out", str(out), "--no-progress"]) == 0
    rec, = iter_generations(out)
    capsys.readouterr()
    assert rec.model == "my-model" and rec.sampler == "hf" and rec.error is None
    # Neither --model nor --hf: one line that says what to pass, nothing written.
    assert main(["generate", "--task", "activation.relu", "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mkb generate: --model is required") and "--hf PATH" in err
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.slow
def test_files_that_are_not_candidates_get_a_skipped_line(tmp_path):
    folder = tmp_path / "sols"
    (folder / "notes").mkdir(parents=True)
    (folder / "activation.relu.cpp").write_text("// a kernel without the .py that builds it\n")
    (folder / "README.md").write_text("my kernels\n")
    (folder / "_helpers.py").write_text("X = 1\n")
    (folder / "notes" / "todo.txt").write_text("-\n")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"")
    (folder / ".hidden").write_text("")
    proc = _mkb("eval", "--backend", "cpu", "--solutions", str(folder), "--db", str(tmp_path / "r.sqlite"),
                "--allow-code-execution")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "skipped 4:" in proc.stderr
    assert f"{folder / 'activation.relu.cpp'}: not a candidate (.cpp source: a candidate is a .py file" in proc.stderr
    assert f"{folder / 'README.md'}: not a candidate (not a .py file)" in proc.stderr
    assert f"{folder / '_helpers.py'}: not a candidate (a name starting with '_'" in proc.stderr
    assert f"{folder / 'notes' / 'todo.txt'}: not a candidate" in proc.stderr
    assert ".pyc" not in proc.stderr and ".hidden" not in proc.stderr
    assert "no candidates found" in proc.stderr


PROBE = textwrap.dedent("""
    import json, sys, time
    t = time.perf_counter()
    from multikernelbench.cli.main import main
    try:
        rc = main(sys.argv[2:])
    except SystemExit as exc:
        rc = exc.code
    json.dump({"rc": rc, "torch": "torch" in sys.modules, "s": time.perf_counter() - t}, open(sys.argv[1], "w"))
""")


@pytest.mark.slow
@pytest.mark.parametrize("argv", [
    ["eval", "--bogus"],
    ["eval", "--solutions", "no_such_folder", "--allow-code-execution"],
    ["eval", "--allow-code-execution"],
    ["tasks", "--bogus"],
    ["demo", "--bogus"],
    ["report", "--db"],
    ["nosuchcommand"],
    ["prompt", "--bogus"],
    ["generate", "--bogus"],
    ["backends", "--bogus"],
], ids=lambda a: " ".join(a))
def test_usage_errors_come_before_torch_is_imported(tmp_path, argv):
    """Each is exit status 2 with torch never imported (torch's import was 1-3 s of every usage error)."""
    out = tmp_path / "probe.json"
    proc = subprocess.run([sys.executable, "-c", PROBE, str(out), *argv], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    res = json.loads(out.read_text())
    assert res["rc"] == 2 and not res["torch"], (res, proc.stderr)
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["prompt", "--help"], ["generate", "--help"]],
                         ids=lambda a: " ".join(a))
def test_version_and_help_import_no_torch(tmp_path, argv):
    """They build every command's parser (or one command's, with its choices of backends and strategies): torch's
    import was 1.5 of their 1.7 CPU-s (the backends' interface, the task records and the task loader imported
    it with their modules)."""
    out = tmp_path / "probe.json"
    proc = subprocess.run([sys.executable, "-c", PROBE, str(out), *argv], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    res = json.loads(out.read_text())
    assert res["rc"] == 0 and not res["torch"], (res, proc.stderr)
    assert proc.stdout.strip(), proc.stderr


def test_help_has_examples(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "examples:" in text and "mkb demo" in text and "mkb eval --backend cpu --solutions" in text
    assert "mkb generate --hf" in text


@pytest.mark.slow
def test_tasks_json_nests_shapes(capsys):
    assert main(["tasks", "--category", "loss", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows and all(isinstance(r["bench_shape"], dict) and isinstance(r["cpu_bench_shape"], dict) for r in rows)
    assert all(isinstance(r["test_shapes"], list) and isinstance(r["test_shapes"][0], dict) for r in rows)
    assert "source" not in rows[0]


@pytest.mark.slow
def test_tasks_show_the_shape_the_backend_times_on(capsys):
    from multikernelbench.tasks import load_suite

    task = next(t for t in load_suite() if t.category == "loss")
    assert task.bench_shape != task.cpu_bench_shape
    assert main(["tasks", "--category", "loss", "--backend", "cpu"]) == 0
    head, *lines = capsys.readouterr().out.splitlines()
    assert "bench shape (cpu)" in head.split("\t")
    row = next(line.split("\t") for line in lines if line.startswith(task.id + "\t"))
    assert row[3] == json.dumps(task.cpu_bench_shape) and row[4] == f"{task.cpu_flops / 1e9:.2f}"
    assert main(["tasks", "--category", "loss", "--backend", "cuda"]) == 0
    head, *lines = capsys.readouterr().out.splitlines()
    row = next(line.split("\t") for line in lines if line.startswith(task.id + "\t"))
    assert "bench shape (gpu)" in head.split("\t") and row[3] == json.dumps(task.bench_shape)
    import torch

    if not torch.cuda.is_available():  # a CPU user, no --backend: the CPU shape
        assert main(["tasks", "--category", "loss"]) == 0
        assert "bench shape (cpu)" in capsys.readouterr().out.splitlines()[0]


def test_demo_pch_estimate_says_how_long():
    from multikernelbench.cli.demo import PCH_SET_S, pch_estimate_s

    assert pch_estimate_s(2, 2) == PCH_SET_S  # side by side on two cores
    assert pch_estimate_s(2, 1) == 2 * PCH_SET_S
    assert pch_estimate_s(1, 16) == PCH_SET_S
    assert os.cpu_count()


def test_each_command_module_names_its_command():
    """main imports only the module named like the command given: every module must add that very command."""
    import argparse

    from multikernelbench.cli.main import build_parser, command_names

    full = build_parser()
    sub = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    assert sorted(sub.choices) == command_names()
