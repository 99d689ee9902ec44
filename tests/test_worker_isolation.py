"""What a worker inherits (issue #41): its environment, its read scope, its disk use.

Real candidates through the real engine (CPU backend: zygote-forked and fresh workers, and under ``mkb eval
--ray``). Each attack reads through libc (ctypes), so the Python audit hook never sees it: only the environment the worker was given and the kernel
(Landlock) decide. On the code before this change (2bfa3e1) the canary secrets were in ``os.environ`` and in
``/proc/self/environ`` and came back in the stored result, and every file below was readable, because the read
scope followed ``sys.path`` (the folder here stands for the driver's working folder that Ray puts there) and took
the whole checkout of an editable install.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sqlite3
import sys
import uuid
from pathlib import Path

import pytest

from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.kernel_sandbox import support
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.records import Status
from multikernelbench.store import ResultStore

pytestmark = [pytest.mark.skipif(not support().complete, reason="this kernel lacks Landlock or seccomp"),
              pytest.mark.timing]

RELU = "activation.relu"
NONCE = uuid.uuid4().hex[:12]
CANARIES = {"HF_TOKEN": f"hf_canary{NONCE}", "MKB_SERVE_TOKEN": f"serve-canary-{NONCE}",
            "AWS_SECRET_ACCESS_KEY": f"aws-canary-{NONCE}", "FOO_API_KEY": f"foo-canary-{NONCE}"}

CANDIDATE = '''
import ctypes, os
import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_libc.open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
_libc.read.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]

def _read(path, flags=os.O_RDONLY):
    fd = _libc.open(path.encode(), flags, 0)
    if fd < 0:
        return None
    buf = ctypes.create_string_buffer(1 << 16)
    n = _libc.read(fd, buf, 1 << 16)
    _libc.close(fd)
    return buf.raw[:max(n, 0)].decode("latin-1")

import resource
print(f"UID {{os.getuid()}} {{os.geteuid()}} NPROC {{resource.getrlimit(resource.RLIMIT_NPROC)[0]}}", flush=True)
def _secrets(pairs):  # what an attacker looks for in an environment: compact, so the stored stdout keeps it
    return " ".join(f"{{k}}={{v}}" for k, v in pairs if any(w in k for w in ("TOKEN", "KEY", "SECRET")))

_found = ["ENV " + _secrets(os.environ.items())]
_verdicts = []
for name, (path, flags) in {paths!r}.items():
    path = path.replace("PPID", str(os.getppid()))
    got = _read(path, os.O_RDONLY | flags)
    _verdicts.append(f"READ {{name}}: " + ("SUCCEEDED" if got is not None else
                                           f"blocked errno={{ctypes.get_errno()}}"))
    if got:
        if name.endswith("environ"):
            got = _secrets(kv.partition("=")[::2] for kv in got.split("\\0"))
        _found.append(f"{{name}}: {{got[:200]}}")
_leak = " | ".join(_found)
print("LEAK " + _leak, flush=True)
print("\\n".join(_verdicts), flush=True)

class ModelNew(nn.Module):
    def forward(self, x):
        if x.numel() < 0:
            raise RuntimeError(_leak)
        return torch.clamp_min(x, 0.0)
'''


def _config(build_root, **kw):
    from multikernelbench.anticheat.config import AntiCheatConfig
    from multikernelbench.engine.config import EngineConfig, TimingConfig

    return EngineConfig(build_root=build_root, allow_code_execution=True, seed=7, skip_timing=True,
                        compile_workers=1, run_timeout_s=60.0,
                        timing=TimingConfig(min_runs=3, max_runs=5, budget_s=0.2, warmup=1),
                        anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False), **kw)


def _reads(stdout: str) -> dict[str, str]:
    got = {}
    for text in stdout.splitlines():
        if text.startswith("READ "):
            name, _, verdict = text[len("READ "):].partition(": ")
            got[name] = verdict
    return got


@pytest.fixture(scope="module")
def driver_folder():
    """A folder inside the checkout (which an editable install used to make readable), standing for the
    driver's working folder: a token file, a results store, another candidate's source."""
    import multikernelbench

    root = Path(multikernelbench.__file__).resolve().parent.parent / f".mkb-isolation-{NONCE}"
    (root / "raybuilds" / "cpu" / "victim").mkdir(parents=True)
    (root / "token").write_text(f"token-file-{NONCE}\n")
    (root / "raybuilds" / "cpu" / "victim" / "candidate.py").write_text(f"# victim-{NONCE}\n")
    store = sqlite3.connect(str(root / "results.sqlite"))
    store.execute("create table t (x text)")
    store.execute("insert into t values (?)", (f"stored-{NONCE}",))
    store.commit()
    store.close()
    yield root
    shutil.rmtree(root, ignore_errors=True)


#: How the candidate is run: a zygote-forked worker, a fresh interpreter, and ``mkb eval --ray`` (a Ray instance
#: this fixture starts with the canaries in its environment, as a driver's would be, and a lane actor's zygote).
MODES = ("zygote", "fresh", "ray")
RAY_CONTROL: dict[str, str | None] = {}  # what a plain Ray task of that instance saw in its environment


def _evaluate(mode: str, suite, build_root, cand, store):
    cfg = _config(build_root, zygote=mode != "fresh", drop_root=True)
    if mode != "ray":
        (r,) = evaluate_candidates([suite[RELU]], [cand], cfg, store=store)
        return r
    ray = pytest.importorskip("ray")
    from multikernelbench.cluster.ray_runner import RayRunner

    assert not ray.is_initialized()  # the instance must start now, from the environment with the canaries
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        def env_of_a_ray_task(name: str) -> str | None:
            return os.environ.get(name)

        # The control: Ray's own processes hold the canary; only the worker's allow-list keeps it from the candidate.
        RAY_CONTROL["HF_TOKEN"] = ray.get(ray.remote(env_of_a_ray_task).remote("HF_TOKEN"))
        (r,) = RayRunner(dataclasses.replace(cfg, ray_address="local"), store, progress=False).evaluate(
            [suite[RELU]], [cand])
    finally:
        ray.shutdown()
    return r


@pytest.fixture(scope="module")
def isolation_results(suite, build_root, driver_folder, tmp_path_factory):
    """One candidate in each of :data:`MODES`, run from the driver folder (the current folder, and first on
    sys.path as Ray puts it) with the canaries in the harness's environment."""
    paths = {"cwd": (str(driver_folder), os.O_DIRECTORY), "token": (str(driver_folder / "token"), 0),
             "store": (str(driver_folder / "results.sqlite"), 0),
             "other_source": (str(driver_folder / "raybuilds/cpu/victim/candidate.py"), 0),
             "checkout": (str(driver_folder.parent / "pyproject.toml"), 0),
             "self_environ": ("/proc/self/environ", 0), "parent_environ": ("/proc/PPID/environ", 0),
             "harness_environ": (f"/proc/{os.getpid()}/environ", 0), "shadow": ("/etc/shadow", 0)}
    out = {}
    store_path = tmp_path_factory.mktemp("isolation-store") / "results.sqlite"
    old_cwd, old_path, old_env = os.getcwd(), list(sys.path), dict(os.environ)
    os.environ.update(CANARIES)
    os.chdir(driver_folder)
    sys.path.insert(0, str(driver_folder))
    try:
        for mode in MODES:
            cand = Candidate(task_id=RELU, label=f"leak-{mode}",
                             source=CANDIDATE.format(paths=paths) + f"\n# mode={mode}\n")
            try:
                out[mode] = _evaluate(mode, suite, build_root, cand, ResultStore(store_path))
            except pytest.skip.Exception as exc:
                out[mode] = exc
    finally:
        os.chdir(old_cwd)
        sys.path[:] = old_path
        os.environ.clear()
        os.environ.update(old_env)
    return out, store_path


def _result(isolation_results, mode):
    results, store_path = isolation_results
    if isinstance(results[mode], pytest.skip.Exception):
        pytest.skip(str(results[mode]))
    return results[mode], store_path


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_every_read_outside_the_declared_scope_is_refused(isolation_results, mode):
    r, _ = _result(isolation_results, mode)
    reads = _reads(r.stdout)
    assert set(reads) == {"cwd", "token", "store", "other_source", "checkout", "self_environ", "parent_environ",
                          "harness_environ", "shadow"}, (r.status, r.message[-2000:], r.stdout[-2000:])
    refused = {k: v for k, v in reads.items() if k not in ("self_environ",)}
    assert all(v.startswith("blocked") for v in refused.values()), reads
    assert r.status == Status.CORRECT, (r.status, r.message[-1500:])


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the harness is not root here: nothing to drop")
@pytest.mark.parametrize("mode", MODES)
def test_a_root_harness_runs_candidates_unprivileged_with_a_process_cap(isolation_results, mode):
    """With ``drop_root`` (on by default), a root harness (here and on the H200) runs its workers as
    ``EngineConfig.worker_uid`` before candidate code, so
    ``/etc/shadow`` (inside the read scope: /etc) is refused by its file mode, and ``RLIMIT_NPROC`` binds. On the
    code before (2bfa3e1) the candidate ran as uid 0 and read /etc/shadow."""
    from multikernelbench.engine.config import EngineConfig

    r, _ = _result(isolation_results, mode)
    line = next(t for t in r.stdout.splitlines() if t.startswith("UID "))
    shadow = _reads(r.stdout)["shadow"]
    assert not line.startswith("UID 0 ") and shadow.startswith("blocked"), (line, "shadow: " + shadow)
    cfg = EngineConfig(drop_root=True)
    assert line == f"UID {cfg.worker_uid} {cfg.worker_uid} NPROC {cfg.worker_max_processes}", line


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_canary_secrets_never_reach_a_worker_nor_a_stored_field(isolation_results, mode):
    r, store_path = _result(isolation_results, mode)
    assert "LEAK " in r.stdout, r.stdout[-2000:]
    leak = r.stdout.split("LEAK ", 1)[1]
    assert "self_environ:" in leak  # the candidate did read its own /proc/self/environ
    blob = json.dumps(dataclasses.asdict(r), default=str)
    with open(store_path, "rb") as fh:
        stored = fh.read()
    for path in Path(store_path).parent.glob("results.sqlite*"):  # the WAL holds recent rows
        stored += path.read_bytes()
    if mode == "ray":
        assert RAY_CONTROL["HF_TOKEN"] == CANARIES["HF_TOKEN"]  # it reached Ray's processes: the test can fail
    for name, value in CANARIES.items():
        assert value not in leak, f"{name} readable by the candidate"
        assert value not in blob, f"{name} in the result"
        assert value.encode() not in stored, f"{name} in the store"
    for secret in (f"token-file-{NONCE}", f"victim-{NONCE}", f"stored-{NONCE}"):
        assert secret not in blob


def test_worker_environment_is_an_allow_list(monkeypatch):
    """The builder itself (used by the local workers, the zygote and the Ray actors' zygotes): declared toolchain
    variables pass, secrets never, even where a pattern would let them."""
    from multikernelbench.backends.triton import TritonBackend
    from multikernelbench.util.worker_env import base_env, inherited

    for k, v in CANARIES.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("TRITON_API_KEY", "x")
    monkeypatch.setenv("TRITON_PRINT_AUTOTUNING", "1")
    monkeypatch.setenv("TRITON_CACHE_DIR", "/shared/cache")
    monkeypatch.setenv("UNRELATED_SETTING", "1")
    env = {**base_env(home="/w"), **TritonBackend().worker_env(Path("/b"))}
    assert env["HOME"] == env["TMPDIR"] == "/w"
    assert env["TRITON_PRINT_AUTOTUNING"] == "1"
    for k in list(CANARIES) + ["TRITON_API_KEY", "UNRELATED_SETTING"]:
        assert k not in env
    assert env.get("TRITON_CACHE_DIR") != "/shared/cache"  # writable folders come from the backend only
    assert inherited(("*",), {"GH_TOKEN": "x", "LANG": "C"}) == {"LANG": "C"}


FILL = '''
import os
import torch
import torch.nn as nn

def _fill(tag):
    folder = os.environ["TORCH_EXTENSIONS_DIR"]  # the candidate's own build folder
    for i in range(3):  # 3 x 100 MiB, each under RLIMIT_FSIZE; sparse, so fast
        with open(os.path.join(folder, f"fill-{{tag}}-{{i}}.bin"), "wb") as fh:
            fh.truncate(100 << 20)

{at_import}

class ModelNew(nn.Module):
    def forward(self, x):
        {at_run}
        return torch.clamp_min(x, 0.0)
'''


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["build", "run"])
def test_a_candidate_over_its_disk_quota_is_a_runtime_error_and_its_folder_goes(suite, build_root, stage):
    """300 MiB written into its build folder, at import (the build) or in forward (the device stage): on the code
    before (2bfa3e1) the candidate was ``correct`` and its 300 MiB stayed in the build cache."""
    from multikernelbench.engine.runner import Runner

    src = FILL.format(at_import="_fill('import')" if stage == "build" else "",
                      at_run="_fill('run')" if stage == "run" else "pass") + f"\n# {NONCE}\n"
    cand = Candidate(task_id=RELU, label=f"fill-{stage}", source=src)
    cfg = _config(build_root)
    build_dir = Runner(cfg, progress=False).build_dir(cand)
    (r,) = evaluate_candidates([suite[RELU]], [cand], cfg)
    assert r.status == Status.RUNTIME_ERROR, (r.status, r.message[-1500:])
    assert "disk quota" in r.message, r.message[-1500:]
    assert not build_dir.exists() or not any(build_dir.glob("fill-*")), sorted(build_dir.iterdir())


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the harness is not root here: no other uid can own its folders")
@pytest.mark.parametrize("left_to, drop", [(65534, False), (0, True)], ids=["nobody->root", "root->nobody"])
def test_a_build_folder_left_to_another_uid_is_usable_again(suite, build_root, left_to, drop):
    """A run with ``drop_root`` on leaves the candidate's build folder to ``nobody``; a later run with it off
    (workers stay root but without capabilities: file permissions bind them) loaded the same build and failed
    with ``PermissionError`` on its own ``candidate.py`` (seen on a reused build root); and the other way round.
    The trusted parent gives the worker's writable folders to the uid the worker runs as."""
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.engine.runner import evaluate_candidates
    from multikernelbench.records import Status

    relu = suite["activation.relu"]
    shipped = Path(__file__).resolve().parents[1] / "solutions" / "cpu" / "activation.relu.py"
    cand = Candidate(task_id=relu.id, source=shipped.read_text(), label="relu")
    cfg = _config(build_root, drop_root=drop)
    assert evaluate_candidates([relu], [cand], cfg)[0].status == Status.CORRECT
    folders = [p for p in (build_root / "cpu").iterdir() if (p / "candidate.py").is_file()
               and (p / "candidate.py").read_text() == cand.source]
    assert folders, "the candidate's build folder"
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            os.chown(path, left_to, left_to, follow_symlinks=False)
    r = evaluate_candidates([relu], [cand], cfg)[0]
    assert r.status == Status.CORRECT, r.message
    runs_as = 65534 if drop else 0
    assert all(p.stat().st_uid == runs_as for f in folders for p in [f, *f.rglob("*")])


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_workers_stay_root_where_only_root_may_open_the_gpu_nodes(tmp_path):
    """A worker dropped to ``nobody`` on a host whose GPU nodes are ``0660 root`` could not open the GPU: the
    harness keeps its workers root there. Checked on real character devices (copies of /dev/null's numbers)."""
    from multikernelbench.engine.worker_uid import device_nodes_open

    open_node, root_node = tmp_path / "nvidia0", tmp_path / "nvidia1"
    try:
        os.mknod(open_node, 0o020666, os.makedev(1, 3))
        os.mknod(root_node, 0o020660, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"no mknod here: {exc}")
    os.chmod(open_node, 0o666)  # the umask may have narrowed it
    os.chmod(root_node, 0o660)
    assert device_nodes_open([str(open_node), str(tmp_path / "missing")])
    assert not device_nodes_open([str(open_node), str(root_node)])
    assert device_nodes_open([str(tmp_path)])  # not a device: not judged
