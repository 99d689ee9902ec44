"""Errors a person can act on: `mkb` run for real (subprocesses), wrong arguments end in one line with the
closest valid names and exit status 2, nothing is written, skipped files and lines are reported, ids are whole
in a pipe, `mkb --version`, and `mkb backends` names interpreters."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from multikernelbench.tasks import load_suite

pytestmark = pytest.mark.slow

SOURCE = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"


def mkb(*args: str, cwd, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "multikernelbench.cli.main", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def usage_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def sols(tmp_path):
    folder = tmp_path / "my_solutions"
    folder.mkdir()
    (folder / "activation.relu.py").write_text(SOURCE)
    return folder


def test_unknown_backend_is_one_line_and_writes_no_store(tmp_path, sols):
    db = tmp_path / "x.sqlite"
    for backend, hint in (("zzqx", "valid: cpu, cuda"), ("cpuu", "did you mean cpu")):
        proc = mkb("eval", "--backend", backend, "--solutions", str(sols), "--db", str(db),
                   "--allow-code-execution", cwd=tmp_path)
        usage_error(proc, f"mkb eval: unknown backend {backend!r}", hint)
        assert not db.exists()


def test_unknown_task_and_category_name_the_closest(tmp_path, sols):
    db = tmp_path / "x.sqlite"
    proc = mkb("eval", "--solutions", str(sols), "--task", "activation.rleu", "--db", str(db),
               "--allow-code-execution", cwd=tmp_path)
    usage_error(proc, "unknown task 'activation.rleu'", "did you mean activation.relu")
    assert not db.exists()
    usage_error(mkb("tasks", "--category", "activatoin", cwd=tmp_path),
                "mkb tasks: unknown category 'activatoin'", "did you mean activation")
    usage_error(mkb("prompt", "activation.rleu", cwd=tmp_path), "mkb prompt: unknown task", "activation.relu")
    out = tmp_path / "g.jsonl"
    usage_error(mkb("generate", "--model", "m", "--api-base", "http://127.0.0.1:9/v1", "--task", "reduce.smu_dim",
                    "--out", str(out), cwd=tmp_path), "mkb generate: unknown task", "reduce.sum_dim")
    assert not out.exists()


def test_missing_folder_and_file_name_the_closest(tmp_path, sols):
    usage_error(mkb("eval", "--solutions", "my_solution", "--allow-code-execution", cwd=tmp_path),
                "solutions folder my_solution does not exist", "did you mean my_solutions?")
    (tmp_path / "gens.jsonl").write_text("")
    usage_error(mkb("eval", "--generations", "gen.jsonl", "--allow-code-execution", cwd=tmp_path),
                "generations file gen.jsonl does not exist", "did you mean gens.jsonl?")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gens.jsonl", "my_solutions"]  # nothing written
    usage_error(mkb("eval", "--bogus", cwd=tmp_path), "unrecognized arguments: --bogus")


def test_skipped_solution_files_and_generation_lines_are_counted_and_named(tmp_path):
    folder = tmp_path / "sols"
    folder.mkdir()
    (folder / "activation.rleu.py").write_text(SOURCE)  # a typo'd file name
    gens = tmp_path / "gens.jsonl"
    record = {"model": "m", "backend": "triton", "strategy": "zero_shot", "task_id": "activation.relu",
              "sample_index": 0, "params": {}, "params_key": "p", "code": SOURCE}
    gens.write_text("\n".join(["[1, 2]", '"text"', json.dumps(record), json.dumps({"model": "m"}),
                               '{"model": "m", "backend": "cp']) + "\n")
    db = tmp_path / "x.sqlite"
    proc = mkb("eval", "--backend", "cpu", "--solutions", str(folder), "--generations", str(gens), "--db", str(db),
               "--allow-code-execution", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    err = proc.stderr
    assert "skipped 5:" in err
    assert "activation.rleu.py: no task 'activation.rleu'; did you mean activation.relu" in err
    assert "line 1: a JSON list, not an object" in err and "line 2: a JSON str, not an object" in err
    assert "line 4: missing backend" in err and "line 5: not JSON" in err
    assert "1 record(s) for other backends than cpu" in err
    assert "no candidates found" in err
    assert not db.exists()


def test_version():
    from importlib.metadata import version

    proc = subprocess.run([sys.executable, "-m", "multikernelbench.cli.main", "--version"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == f"mkb (multikernelbench) {version('multikernelbench')}"


def test_tasks_in_a_pipe_prints_whole_ids(tmp_path):
    proc = mkb("tasks", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first_fields = [line.split("\t")[0] for line in proc.stdout.splitlines()[1:]]
    assert first_fields == [t.id for t in load_suite()]
    assert "activation.relu\tactivation\t" in proc.stdout  # `mkb tasks | grep activation.relu` finds it


def test_backends_names_interpreters_on_a_machine_without_gpu(tmp_path):
    from multikernelbench.backends.cuda import cuda_device_reason

    if not cuda_device_reason():
        pytest.skip("a GPU is present: triton and pallas run natively")
    proc = mkb("backends", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split("│")[1].strip(): line for line in proc.stdout.splitlines() if line.count("│") >= 4}
    assert "native" in rows["cpu"]
    import importlib.util

    for name, package in (("triton", "triton"), ("pallas", "jax")):
        if importlib.util.find_spec(package) is None:  # not installed: "no" with the reason, nothing to name
            continue
        assert "yes" in rows[name] and "interpreter" in rows[name] and "no timing" in rows[name]
