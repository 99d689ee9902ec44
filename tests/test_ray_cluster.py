"""``mkb eval --ray`` on a real local Ray cluster: a head and a second node on this machine (one CPU each).

One cluster per module (Ray takes ~10 s to start). Candidates are plain PyTorch (no C++ build); the
device-stage statuses are the engine's own (real workers, real crashes). Lanes are killed for real: the
actor process by SIGKILL, the second node by stopping its raylet.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from multikernelbench.anticheat.config import AntiCheatConfig  # noqa: E402
from multikernelbench.engine.candidates import Candidate  # noqa: E402
from multikernelbench.engine.config import EngineConfig, TimingConfig  # noqa: E402
from multikernelbench.records import Status  # noqa: E402
from multikernelbench.store import ResultStore  # noqa: E402
from tests._executors import EXECUTORS, runner_for  # noqa: E402

pytestmark = pytest.mark.slow

RELU = "activation.relu"
HEAD = "import torch\nimport torch.nn as nn\n"
STORE_MB = 80 * 1024 * 1024

CASES = {  # the same candidates and statuses as tests/test_engine_python.py checks locally
    "honest": ("class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.clamp_min(x, 0.0)\n",
               Status.CORRECT),
    "wrong_value": ("class ModelNew(nn.Module):\n    def forward(self, x):\n"
                    "        return torch.clamp_min(x, 0.0) * 1.01\n", Status.INCORRECT),
    "raises": ("class ModelNew(nn.Module):\n    def forward(self, x):\n"
               "        raise RuntimeError('kernel launch failed')\n", Status.RUNTIME_ERROR),
    "syntax_error": ("class ModelNew(nn.Module)\n    pass\n", Status.COMPILE_ERROR),
    "os_exit": ("import os\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        os._exit(3)\n",
                Status.CRASH),
}


def slow_source(token: str, tag: int, sleep_s: float = 3.0) -> str:
    """Correct, but its first forward writes its pid to a file named by ``token`` in its worker's working
    directory (the only place the sandbox lets it write) and sleeps: a window to kill its lane in."""
    return HEAD + textwrap.dedent(f"""
        import os, time
        _seen = []
        class ModelNew(nn.Module):
            def forward(self, x):
                if not _seen:
                    _seen.append(1)
                    with open("mkb_mark_{token}", "w") as f:
                        f.write(str(os.getpid()))
                    time.sleep({sleep_s})
                return torch.clamp_min(x, 0.0) + {tag} * 0.0
        """)


class Marks:
    """Watches workers' working directories (removed when a worker ends) for a token's marks; ``pids`` are
    the workers seen in a slow forward, in order."""

    def __init__(self, token: str, on_mark=None) -> None:
        import tempfile
        import threading

        self.pattern = str(Path(tempfile.gettempdir()) / "mkb-*" / f"mkb_mark_{token}")
        self.pids: list[int] = []
        self.on_mark = on_mark
        self.error = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        import glob

        while not self.stop.is_set():
            for path in glob.glob(self.pattern):
                try:
                    pid = int(Path(path).read_text())
                except (OSError, ValueError):
                    continue
                if pid not in self.pids:
                    self.pids.append(pid)
                    if self.on_mark is not None:
                        try:
                            self.on_mark(pid)
                        except BaseException as exc:
                            self.error = repr(exc)
            time.sleep(0.05)

    def close(self) -> list[int]:
        self.stop.set()
        self.thread.join(5)
        assert self.error is None, self.error
        return self.pids


def config(build_root: Path, address: str, **kw) -> EngineConfig:
    t = TimingConfig(min_runs=3, max_runs=5, budget_s=0.2, warmup=1)
    return EngineConfig(build_root=build_root, allow_code_execution=True, seed=7, timing=t, skip_timing=True,
                        anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False),
                        ray_address=address, **kw)


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    # A stopped node is noticed after ~5 s instead of Ray's default ~15 s (health checks every second; fewer
    # misses than 5 declared live nodes dead while the 2-core host was loaded).
    system = {"health_check_period_ms": 1000, "health_check_failure_threshold": 5}
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": STORE_MB,
                                                      "include_dashboard": False, "_system_config": system})
    second = c.add_node(num_cpus=1, object_store_memory=STORE_MB)
    ray.init(address=c.address, log_to_driver=False)
    c.wait_for_nodes()
    try:
        yield c, second
    finally:
        ray.shutdown()
        c.shutdown()


@pytest.fixture
def suite_tasks(suite):
    return [suite[RELU]]


def run(cfg, tasks, cands, store=None):
    from multikernelbench.cluster import make_runner

    runner = make_runner(cfg, store, progress=False)
    return runner, runner.evaluate(tasks, cands)


def ancestors(pid: int) -> list[int]:
    out = []
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        out.append(pid)
    return out


def lane_processes() -> list[int]:
    """Pids of the Lane actors running on this machine (their process title is ``ray::Lane...``)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and cmdline(int(entry.name)).startswith("ray::Lane"):
            out.append(int(entry.name))
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT task_id, code_hash, status, created FROM results ORDER BY code_hash").fetchall()


@pytest.mark.parametrize("executor", EXECUTORS)
def test_same_statuses_on_both_executors(cluster, suite_tasks, build_root, tmp_path, executor):
    """The candidates of the local engine tests give the same statuses through the local threads and through
    Ray (engine/executor.py), each stored once."""
    from multikernelbench.cluster.ray_runner import RayRunner

    c, _ = cluster
    cands = [Candidate(task_id=RELU, source=HEAD + src, label=name) for name, (src, _) in CASES.items()]
    with ResultStore(tmp_path / "r.sqlite") as store:
        runner = runner_for(executor, config(build_root, c.address, compile_workers=2), store)
        results = runner.evaluate(suite_tasks, cands)
    assert isinstance(runner, RayRunner) == (executor == "ray")
    assert {r.candidate: r.status for r in results} == {n: s for n, (_, s) in CASES.items()}
    assert runner.rescheduled == [] and getattr(runner, "lane_deaths", 0) == 0
    assert len(rows(tmp_path / "r.sqlite")) == len(CASES)
    assert all(r.hardware and r.hardware == results[0].hardware for r in results)


def test_killed_actor_reschedules_its_candidate_once(cluster, suite_tasks, build_root, tmp_path):
    """SIGKILL the lane actor while a candidate sleeps in its forward: that candidate runs again on a new
    lane, once; every candidate ends correct and stored once."""
    c, _ = cluster
    token = uuid.uuid4().hex
    cands = [Candidate(task_id=RELU, source=slow_source(token, i, 2.0), label=f"slow{i}") for i in range(2)]
    killed = []

    def kill_lane(pid: int) -> None:
        if not killed:
            chain = [p for p in ancestors(pid) if cmdline(p).startswith("ray::Lane")]
            lanes = chain or [p for p in lane_processes()]
            assert len(lanes) == 1, (pid, [(p, cmdline(p)[:60]) for p in ancestors(pid)], lanes)
            os.kill(lanes[0], signal.SIGKILL)
            killed.append(lanes[0])

    marks = Marks(token, kill_lane)
    try:
        with ResultStore(tmp_path / "r.sqlite") as store:
            runner, results = run(config(build_root, c.address, compile_workers=2), suite_tasks, cands, store)
    finally:
        pids = marks.close()
    assert killed
    assert [r.status for r in results] == [Status.CORRECT] * 2, [r.message for r in results]
    assert runner.lane_deaths == 1 and len(runner.rescheduled) == 1
    assert len(rows(tmp_path / "r.sqlite")) == 2
    assert len(pids) == 3  # two candidates, the killed one twice: nothing else ran again


def test_killed_driver_resumes_from_the_store(cluster, suite_tasks, build_root, tmp_path):
    """SIGKILL a driver (its own process, as `mkb eval --ray` is) after its first stored result; a second
    run evaluates only what is missing."""
    c, _ = cluster
    db, token = tmp_path / "r.sqlite", uuid.uuid4().hex
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{str(Path(__file__).parent)!r}, {str(Path(__file__).parents[1])!r}]  # tests._executors
        from test_ray_cluster import config, slow_source, RELU
        from multikernelbench.engine.candidates import Candidate
        from multikernelbench.cluster import evaluate_candidates
        from multikernelbench.store import ResultStore
        from multikernelbench.tasks import load_suite
        from pathlib import Path
        tasks = [t for t in load_suite() if t.id == RELU]
        cands = [Candidate(task_id=RELU, source=slow_source({token!r}, i, 1.5), label=f"c{{i}}") for i in range(4)]
        with ResultStore({str(db)!r}) as store:
            evaluate_candidates(tasks, cands, config(Path({str(build_root)!r}), {c.address!r}), store)
        """))
    marks = Marks(token)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 180
        while time.monotonic() < end and proc.poll() is None:
            if db.exists() and rows(db):
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
        proc.kill()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    before = rows(db)
    assert 1 <= len(before) < 4
    cands = [Candidate(task_id=RELU, source=slow_source(token, i, 1.5), label=f"c{i}") for i in range(4)]
    try:
        with ResultStore(db) as store:
            _, results = run(config(build_root, c.address), suite_tasks, cands, store)
    finally:
        pids = marks.close()
    assert [r.status for r in results] == [Status.CORRECT] * 4
    after = rows(db)
    assert len(after) == 4
    assert set(before) <= set(after)  # same rows, same creation times: reused, not evaluated again
    assert len(pids) >= 4


def test_cli_ray_flag(cluster, build_root, tmp_path, capsys):
    """`mkb eval --ray ADDRESS` reaches the cluster (run in this process, which is connected to it already):
    the static checks run in the build task there, and no lane starts when nothing is left to evaluate."""
    from multikernelbench.cli.main import main

    c, _ = cluster
    folder = tmp_path / "sol"
    folder.mkdir()
    (folder / f"{RELU}.py").write_text(HEAD + CASES["honest"][0])
    db = tmp_path / "cli.sqlite"
    assert main(["eval", "--solutions", str(folder), "--task", RELU, "--ray", c.address, "--allow-code-execution",
                 "--db", str(db), "--build-root", str(build_root), "--no-progress", "--json", "--no-timing"]) == 0
    assert [r[2] for r in rows(db)] == ["cheat_detected"]  # plain PyTorch: no kernel of its own
    assert '"status": "cheat_detected"' in capsys.readouterr().out


def test_ray_missing_is_one_line(tmp_path):
    folder = tmp_path / "sol"
    folder.mkdir()
    (folder / f"{RELU}.py").write_text(HEAD + CASES["honest"][0])
    code = ("import sys; sys.modules['ray'] = None\nfrom multikernelbench.cli.main import main\n"
            f"sys.exit(main(['eval', '--solutions', {str(folder)!r}, '--ray', '--allow-code-execution', "
            f"'--db', {str(tmp_path / 'x.sqlite')!r}]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0
    assert 'pip install "multikernelbench[ray]"' in out.stderr
    assert not (tmp_path / "x.sqlite").exists()


def test_stopped_node_reschedules_its_candidates_once(cluster, suite_tasks, build_root, tmp_path):
    """Two CPU lanes, one per node; the second node is stopped while its lane runs a candidate: that
    candidate runs again on the head's lane, once; nothing is lost or stored twice. (Last in the module: the
    cluster has one node after it.)"""
    c, second = cluster
    token = uuid.uuid4().hex
    raylet = second.all_processes["raylet"][0].process.pid
    cands = [Candidate(task_id=RELU, source=slow_source(token, i, 2.0), label=f"n{i}") for i in range(4)]
    stopped = {}

    def stop_second(pid: int) -> None:
        if not stopped and raylet in ancestors(pid):
            c.remove_node(second, allow_graceful=False)
            stopped["pid"] = pid

    marks = Marks(token, stop_second)
    with ResultStore(tmp_path / "r.sqlite") as store:
        try:
            runner, results = run(config(build_root, c.address, compile_workers=2, device_workers=2),
                                  suite_tasks, cands, store)
        finally:
            marks.close()
    assert stopped, "no candidate ran on the second node"
    assert [r.status for r in results] == [Status.CORRECT] * 4, [r.message for r in results]
    assert runner.lane_deaths >= 1 and 1 <= len(runner.rescheduled) == len(set(runner.rescheduled))
    assert len(rows(tmp_path / "r.sqlite")) == 4
