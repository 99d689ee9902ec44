"""The kernel sandbox (engine/kernel_sandbox.py) through the real engine: candidates that try every forbidden
thing from Python and from native code, and a listing of the shared folders before and after.

Each attack goes through libc (ctypes from Python, plain C++ in an extension), so the Python audit hook never
sees it: only the kernel can refuse it. On the code before the sandbox (4854a3f..385e7da) every write landed,
``/proc/<harness>/mem`` opened and ``PTRACE_SEIZE`` of the harness succeeded (issue #26); here each line of the
candidate's report must say ``blocked``. The Python candidate also makes one plain ``open()`` write into the
Hugging Face cache, which the audit hook sees: its result must say ``cheat_detected``.

The C++ candidate uses the shipped solutions' compile flags, so its one build takes the precompiled header.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.kernel_sandbox import support
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.records import Status

#: Under pytest-xdist these run alone (the ``timing`` lock of tests/conftest.py): the listing of the shared build
#: root before and after the attacks must not pick up the other worker's concurrent builds (seen in CI).
pytestmark = [pytest.mark.skipif(not support().complete, reason="this kernel lacks Landlock or seccomp"),
              pytest.mark.timing]

RELU = "activation.relu"
NONCE = f"mkb-sbx-{uuid.uuid4().hex[:10]}"
ATTACKS = ("pch", "other_build", "hf_cache", "home", "tmp", "parent_mem", "zygote_mem", "ptrace", "tcp", "signal",
           "chmod")


def _mode_target() -> str:
    """A root-owned file among the shared precompiled headers (in every worker's read scope) whose mode a
    candidate tries to take away: as uid 0 (drop_root off) the owner, and Landlock has no right for chmod, so
    before the seccomp rule (util/seccomp.py, ``_NO_EFFECT``) ``chmod 000`` of the harness's shared files
    landed and broke every later build."""
    from multikernelbench.backends.cpu import CpuBackend

    path = CpuBackend().pch_root() / f"{NONCE}.mode"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    path.chmod(0o644)
    return str(path)


def _targets(build_root: Path) -> dict[str, str]:
    from multikernelbench.backends.cpu import CpuBackend

    home = Path.home()
    victim = Path(build_root) / "cpu" / "0123456789abcdef-victim"
    victim.mkdir(parents=True, exist_ok=True)
    hf = home / ".cache" / "huggingface"
    hf.mkdir(parents=True, exist_ok=True)
    return {"pch": str(CpuBackend().pch_root() / NONCE), "other_build": str(victim / NONCE),
            "hf_cache": str(hf / NONCE), "home": str(home / NONCE), "tmp": f"/tmp/{NONCE}"}


PY_ATTACK = '''
import ctypes, os, socket
import torch
import torch.nn as nn
_libc = ctypes.CDLL(None, use_errno=True)
_libc.open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
def _report(name, ok):
    print(f"ATTACK {{name}}: " + ("SUCCEEDED" if ok else f"blocked errno={{ctypes.get_errno()}}"), flush=True)
for name, path in {targets!r}.items():
    fd = _libc.open(path.encode() + b".py", os.O_WRONLY | os.O_CREAT, 0o644)
    _report(name, fd >= 0)
for name, pid in (("parent_mem", {harness}), ("zygote_mem", os.getppid())):
    _report(name, _libc.open(f"/proc/{{pid}}/mem".encode(), os.O_RDONLY, 0) >= 0)
_report("ptrace", _libc.ptrace(0x4206, {harness}, 0, 0) == 0)  # PTRACE_SEIZE
_report("tcp", _libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0) >= 0)
_report("signal", _libc.kill({harness}, 0) == 0)
_libc.chmod({mode!r}.encode(), 0)
_report("chmod", os.stat({mode!r}).st_mode & 0o777 == 0)  # the mode changed, whatever chmod returned
try:  # through Python: the audit hook sees this one and records it
    open({hf!r} + ".hook", "w").write("x")
except OSError:
    pass
class ModelNew(nn.Module):
    def forward(self, x):
        return torch.clamp_min(x, 0.0)
'''

CPP_ATTACK = r'''
import os
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cerrno>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

static std::string line(const std::string& name, bool ok) {
    return "ATTACK " + name + ": " + (ok ? std::string("SUCCEEDED") : "blocked errno=" + std::to_string(errno)) + "\n";
}

std::string attack(std::vector<std::string> names, std::vector<std::string> paths, int64_t harness, int64_t zygote,
                   std::string mode_path) {
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
        int fd = open((paths[i] + ".cpp").c_str(), O_WRONLY | O_CREAT, 0644);
        out += line(names[i], fd >= 0);
        if (fd >= 0) { ssize_t n = write(fd, "x", 1); (void)n; close(fd); }
    }
    out += line("parent_mem", open(("/proc/" + std::to_string(harness) + "/mem").c_str(), O_RDONLY) >= 0);
    out += line("zygote_mem", open(("/proc/" + std::to_string(zygote) + "/mem").c_str(), O_RDONLY) >= 0);
    out += line("ptrace", ptrace((enum __ptrace_request)0x4206, (pid_t)harness, nullptr, nullptr) == 0);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    bool tcp = s >= 0;
    if (s >= 0) {
        sockaddr_in a{}; a.sin_family = AF_INET; a.sin_port = htons(9); a.sin_addr.s_addr = htonl(0x7f000001);
        tcp = connect(s, (sockaddr*)&a, sizeof a) == 0 || errno == ECONNREFUSED;  // the call itself was let through
        close(s);
    }
    out += line("tcp", tcp);
    out += line("signal", kill((pid_t)harness, 0) == 0);
    chmod(mode_path.c_str(), 0);
    struct stat st{};
    out += line("chmod", stat(mode_path.c_str(), &st) == 0 && (st.st_mode & 0777) == 0);
    return out;
}
"""

_ext = load_inline(name="mkb_sandbox_attack", cpp_sources=_CPP, functions=["attack"],
                   extra_cflags=["-O3", "-march=native", "-fopenmp", "-fno-trapping-math"],
                   extra_ldflags=["-fopenmp"], verbose=False)
_T = @TARGETS@
print(_ext.attack(list(_T), list(_T.values()), @HARNESS@, os.getppid(), @MODE@), flush=True)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.clamp_min(x, 0.0)
'''


def _config(build_root):
    from multikernelbench.anticheat.config import AntiCheatConfig
    from multikernelbench.engine.config import EngineConfig, TimingConfig

    return EngineConfig(build_root=build_root, allow_code_execution=True, seed=7, skip_timing=True,
                        compile_workers=2, run_timeout_s=60.0,
                        timing=TimingConfig(min_runs=3, max_runs=5, budget_s=0.2, warmup=1),
                        anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))


def _listing(roots: list[Path]) -> dict[str, tuple[int, int, int]]:
    """(size, mtime_ns, mode) of every file and folder under ``roots`` but the candidates' own build folders."""
    out = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in _OWN]
            for name in dirnames + filenames:
                p = os.path.join(dirpath, name)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                out[p] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return out


_OWN: set[str] = set()  # build folders of this file's candidates (their own: they may write there)


def _report(stdout: str) -> dict[str, str]:
    got = {}
    for text in stdout.splitlines():
        if text.startswith("ATTACK "):
            name, _, verdict = text[len("ATTACK "):].partition(": ")
            got[name] = verdict
    return got


def _stray(targets: dict[str, str]) -> list[str]:
    """Files an attack left, removed here so a failing run leaves no trace in shared folders."""
    found = []
    for path in targets.values():
        for suffix in (".py", ".cpp", ".hook"):
            p = Path(path + suffix)
            if p.exists():
                found.append(str(p))
                p.unlink()
    return found


@pytest.fixture(scope="module")
def attack_results(suite, build_root):
    targets = _targets(build_root)
    hf = targets["hf_cache"]
    mode = _mode_target()
    cands = [Candidate(task_id=RELU, label="python", source=PY_ATTACK.format(targets=targets, harness=os.getpid(),
                                                                             hf=hf, mode=mode)),
             Candidate(task_id=RELU, label="cpp", source=CPP_ATTACK.replace("@TARGETS@", repr(targets))
                                                                 .replace("@HARNESS@", str(os.getpid()))
                                                                 .replace("@MODE@", repr(mode)))]
    _OWN.update(c.code_hash for c in cands)
    from multikernelbench.backends.cpu import CpuBackend

    backend = CpuBackend()
    roots = [Path(build_root) / "cpu", backend.pch_root(), Path(hf).parent]
    _prune_as_the_run_will(backend)
    before = _listing(roots)
    try:
        results = evaluate_candidates([suite[RELU]], cands, _config(build_root))
    finally:
        stray = _stray(targets)
    after = _listing(roots)
    Path(mode).unlink()
    return {c.label: r for c, r in zip(cands, results, strict=True)}, before, after, stray


@pytest.mark.slow
def test_python_candidate_attacks_fail_in_the_kernel(attack_results):
    results, *_ = attack_results
    r = results["python"]
    report = _report(r.stdout)
    assert set(report) == set(ATTACKS), r.stdout
    assert all(v.startswith("blocked") for v in report.values()), report
    # The plain open() write was seen by the audit hook too: the verdict says so.
    assert r.status == Status.CHEAT_DETECTED and "write to" in r.message, (r.status, r.message)
    assert r.sandbox == support().label()


@pytest.mark.slow
def test_cpp_candidate_attacks_fail_in_the_kernel(attack_results):
    results, *_ = attack_results
    r = results["cpp"]
    report = _report(r.stdout)
    assert set(report) == set(ATTACKS), (r.status, r.message[-2000:], r.stdout)
    assert all(v.startswith("blocked") for v in report.values()), report
    # Native code is invisible to the audit hook; the kernel refused everything, so the kernel is correct.
    assert r.status == Status.CORRECT, (r.status, r.message[-1500:])
    assert r.sandbox.startswith("landlock")


def _prune_as_the_run_will(backend) -> None:
    """The trusted parent's own writes at a CPU run's start (backends/extbuild/pch_cache.py): it removes stale
    precompiled-header sets beyond the cap, leaving their lock files. Done here first, so the run finds nothing
    to prune and the listings compare only what the candidates could have done."""
    from multikernelbench.backends.extbuild.cuda_warm import pch_dirs
    from multikernelbench.backends.extbuild.pch_cache import prune

    if backend.opts.pch_cache_gb > 0:
        prune(backend.pch_root(), int(backend.opts.pch_cache_gb * 1e9),
              keep=pch_dirs(backend.pch_root(), backend.WARM_VARIANTS).values())


def _touched_by_the_parent(path: str, before: tuple, after: tuple | None) -> bool:
    """A precompiled-header set's folder whose mtime alone moved: the run's start touches the sets it uses (their
    least-recently-used order, pch_cache.touch). A worker's write inside one changes a listed file as well."""
    from multikernelbench.backends.cpu import CpuBackend

    return (after is not None and Path(path).parent == CpuBackend().pch_root() and before[0] == after[0]
            and before[2] == after[2])


@pytest.mark.slow
def test_nothing_outside_the_workers_folders_changed(attack_results):
    _, before, after, stray = attack_results
    assert not stray, f"attacks left files behind: {stray}"
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    changed = [p for p in changed if not (p in before and _touched_by_the_parent(p, before[p], after.get(p)))]
    assert not changed, changed


@pytest.mark.slow
def test_fresh_interpreter_workers_are_sandboxed_too(suite, build_root):
    """Without the zygote (``EngineConfig.zygote=False``, also the fallback when it cannot start) the sandbox is
    entered in ``preexec_fn`` and holds across the ``exec`` of the fresh interpreter."""
    targets = _targets(build_root)
    mode = _mode_target()
    cand = Candidate(task_id=RELU, label="python-fresh", source=PY_ATTACK.format(
        targets=targets, harness=os.getpid(), hf=targets["hf_cache"], mode=mode) + "\n# fresh\n")
    cfg = _config(build_root)
    cfg.zygote = False
    try:
        (r,) = evaluate_candidates([suite[RELU]], [cand], cfg)
    finally:
        stray = _stray(targets)
        Path(mode).unlink()
    report = _report(r.stdout)
    assert set(report) == set(ATTACKS) and all(v.startswith("blocked") for v in report.values()), r.stdout
    assert not stray
    assert r.status == Status.CHEAT_DETECTED, (r.status, r.message)


# ---- on the GPU host (marked gpu): what CUDA, CUPTI/torch.profiler, Triton's launcher build, torch.compile and
# JAX need still works under the sandbox, and native attacks from a CUDA-backend worker still fail ---------------

#: Shipped solutions per GPU backend: an elementwise kernel, a matmul and a softmax (Triton compiles its C
#: launcher with gcc at the first launch; the compile baseline runs inductor in the same worker).
GPU_SHIPPED = ("activation.relu", "matmul.square", "attention.causal_softmax")
REPO = Path(__file__).resolve().parents[1]


def _gpu_backend_or_skip(name: str):
    import torch

    from multikernelbench.backends import get_backend

    if not torch.cuda.is_available():
        pytest.skip("needs an NVIDIA GPU")
    backend = get_backend(name)
    avail = backend.availability()
    if not avail.ok or getattr(backend, "interpret", False):
        pytest.skip(f"{name} unavailable on the GPU here: {avail.reason or 'interpreter only'}")
    return backend


@pytest.mark.slow
@pytest.mark.gpu
@pytest.mark.parametrize("backend", ["cuda", "triton", "pallas"])
def test_shipped_gpu_solutions_correct_under_the_sandbox(suite, build_root, backend):
    from multikernelbench.engine.config import EngineConfig, TimingConfig

    _gpu_backend_or_skip(backend)
    paths = [REPO / "solutions" / backend / f"{t}.py" for t in GPU_SHIPPED]
    cands = [Candidate(task_id=p.stem, source=p.read_text(), label=p.stem) for p in paths if p.exists()]
    assert cands
    cfg = EngineConfig(backend=backend, build_root=build_root, allow_code_execution=True, seed=11,
                       run_timeout_s=180.0, timing=TimingConfig(min_runs=3, max_runs=10, budget_s=0.3,
                                                                 compile_baseline=True))
    results = evaluate_candidates([suite[c.task_id] for c in cands], cands, cfg)
    for c, r in zip(cands, results, strict=True):
        print(backend, c.label, r.status.value, r.sandbox, r.speedup, r.speedup_compile, r.message[:300])
    bad = {c.label: (r.status.value, r.message[-1500:]) for c, r in zip(cands, results, strict=True) if r.status != Status.CORRECT}
    assert not bad, bad
    assert all(r.sandbox == support().label() and r.compile_timing is not None for r in results)


@pytest.mark.gpu
def test_native_attacks_fail_in_a_cuda_worker(suite, build_root):

    _gpu_backend_or_skip("cuda")
    targets = _targets(build_root)
    mode = _mode_target()
    cand = Candidate(task_id=RELU, label="cpp-cuda", source=CPP_ATTACK.replace("@TARGETS@", repr(targets))
                     .replace("@HARNESS@", str(os.getpid())).replace("@MODE@", repr(mode)))
    cfg = _config(build_root)
    cfg.backend = "cuda"
    try:
        (r,) = evaluate_candidates([suite[RELU]], [cand], cfg)
    finally:
        stray = _stray(targets)
        Path(mode).unlink()
    report = _report(r.stdout)
    assert set(report) == set(ATTACKS) and all(v.startswith("blocked") for v in report.values()), \
        (r.status, r.message[-1500:], r.stdout)
    assert not stray
    assert r.status == Status.CORRECT, (r.status, r.message[-1500:])
