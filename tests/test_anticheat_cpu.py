"""Anti-cheat on the CPU backend: fast static-rule tests with line numbers, in-process evidence helpers,
every exploit/fault candidate in solutions/cpu/wrong/ through the real engine (status AND reason), and
shipped correct solutions free of false alarms.

Each wrong candidate's header names ``# task:``, ``# expect:`` (status) and ``# reason:`` (a substring of
the message; ``a || b`` when the message depends on chance, e.g. what uninitialised memory holds); ``# runtime-expect:`` / ``# runtime-reason:`` give the verdict with the static filter off,
so the runtime defence behind each static rule is exercised too; ``# config: key=value`` overrides engine
settings for that candidate (e.g. a short compile timeout).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from multikernelbench.anticheat import AntiCheatConfig
from multikernelbench.anticheat.judge import alias_findings, kernel_findings, library_ops
from multikernelbench.anticheat.runtime import OpRecorder, PatchSnapshot, aliased_outputs, busy_threads
from multikernelbench.anticheat.static import check_source
from multikernelbench.anticheat.timing_judge import bound_findings
from multikernelbench.engine.candidates import Candidate, read_headers
from multikernelbench.engine.config import TimingConfig
from multikernelbench.engine.runner import evaluate_candidates
from multikernelbench.records import Status

REPO = Path(__file__).resolve().parents[1]
WRONG = sorted((REPO / "solutions" / "cpu" / "wrong").glob("*.py"))
#: Correct solutions run by default. The prompts' 16 CPU exemplars (one kernel per category: unary, weighted,
#: gated, row-wise, reductions, ...) already go through the engine with timing and every defence on
#: (test_prompt_exemplars); what they lack is a kernel with two outputs (values and indices), hence max_dim.
#: relu is also built by test_demo (one shared build) and takes the speedup-bound check below.
#: MKB_ALL_SOLUTIONS=1 runs all of them (~27 builds).
REPRESENTATIVE = ["activation.relu", "reduce.max_dim"]


def headers(path: Path) -> dict[str, str]:
    return read_headers(path.read_text())


def _quick_timing() -> TimingConfig:
    return TimingConfig(min_runs=3, max_runs=8, budget_s=0.3, warmup=1)


# ---- static rules (no workers) --------------------------------------------------------------------------

RELU_REF = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"


def _rules(src: str, dtype: str = "float32", backend: str = "cpu", **kw) -> list[tuple[int, str]]:
    return [(f.line, f.rule) for f in check_source(src, backend, RELU_REF, dtype, **kw)]


def test_static_reference_op_with_line():
    src = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return self.f(x)\n" \
          "    def f(self, x):\n        return x.relu()\n"
    assert _rules(src) == [(6, "reference_op")]
    assert _rules(src, require_custom_kernel=False) == []


def test_static_extension_call_named_like_reference_is_fine():
    src = "import torch\n_ext = object()\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n" \
          "        return _ext.relu(x)\n"
    assert _rules(src) == []


def test_static_library_compute_and_layers():
    src = ("import torch\nimport torch.nn.functional as F\nclass ModelNew(torch.nn.Module):\n"
           "    def __init__(self):\n        super().__init__()\n        self.lin = torch.nn.Linear(4, 4)\n"
           "    def forward(self, x):\n        y = x @ x\n        z = F.gelu(y)\n        return self.lin(z)\n")
    assert _rules(src) == [(8, "library_compute"), (9, "library_compute"), (10, "library_compute")]


def test_static_cxx_library_call_line_inside_string():
    src = 'import torch\n_CPP = r"""\n#include <torch/extension.h>\n// at::relu(x) in a comment is fine\n' \
          'torch::Tensor f(torch::Tensor x) {\n    auto o = torch::empty_like(x);\n    return at::matmul(x, x);\n}\n"""\n'
    assert _rules(src) == [(7, "cxx_library_call")]
    assert _rules(src.replace("at::matmul", "cublasSgemm")) == [(7, "cxx_library_call")]


@pytest.mark.parametrize("snippet,rule", [
    ("import threading\n", "streams_threads"),
    ("s = torch.cuda.Stream()\n", "streams_threads"),
    ('K = """\nvoid f() { std::thread t(g); }\n"""\n', "streams_threads"),
    ("torch.relu = lambda x: x\n", "monkey_patch"),
    ("import time\ntime.perf_counter = lambda: 0.0\n", "monkey_patch"),
    ("import sys\nf = sys._getframe(1)\n", "monkey_patch"),
    ("setattr(torch, 'allclose', None)\n", "monkey_patch"),
    ("class T(torch.Tensor):\n    pass\n", "tensor_subclass"),
    ("y = torch.ones(2).as_subclass(object)\n", "tensor_subclass"),
    ("f = torch.compile(lambda x: x)\n", "compile_fallback"),
    ("try:\n    import k\nexcept ImportError:\n    k = None\n", "try_fallback"),
    ("y = torch.ones(2).half()\n", "precision_downcast"),
    ("torch.backends.cuda.matmul.allow_tf32 = True\n", "precision_downcast"),
    ('K = """\n__global__ void f(__half* x) { }\n"""\n', "precision_downcast"),
])
def test_static_rule_fires(snippet, rule):
    found = _rules("import torch\n" + snippet)
    assert rule in {r for _, r in found}, found
    assert all(line >= 2 for line, _ in found)


def test_static_precision_respects_task_dtype():
    assert _rules("import torch\ny = torch.ones(2).half()\n", dtype="float16") == []


def test_static_try_that_reraises_is_fine():
    assert _rules("import torch\ntry:\n    import k\nexcept ImportError:\n    raise\n") == []


@pytest.mark.slow
def test_static_shipped_solutions_clean(suite):
    """No false alarm on any shipped correct solution of any backend (static rules are backend-aware)."""
    for path in sorted((REPO / "solutions").glob("*/*.py")):
        backend, task_id = path.parent.name, path.stem
        task = suite[task_id]
        found = check_source(path.read_text(), backend, task.source, task.dtype)
        assert not found, f"{path}: {[str(f) for f in found]}"


# ---- worker-side evidence helpers and parent judgement (in-process) ---------------------------------------

def test_op_recorder_sees_library_ops_and_allows_helpers():
    import torch

    x = torch.randn(4, 4)
    with OpRecorder() as rec:
        out = torch.empty_like(x)
        out.copy_(x)
        torch.relu(x)
    assert library_ops(rec.ops) == ["aten::relu"]
    assert library_ops(rec.ops, ["relu"]) == []


def test_patch_snapshot_names_the_patched_function():
    import types

    mod = types.SimpleNamespace(clock=time.perf_counter, other=len)
    snap = PatchSnapshot({"m": mod})
    mod.clock = lambda: 0.0
    assert snap.changed() == ["m.clock"]


def test_aliasing_and_judgement():
    import torch

    x = torch.randn(8)
    assert aliased_outputs([x.view(2, 4), x.clone()], [x]) == [0]
    assert alias_findings([0], []) and not alias_findings([0], [0])


@pytest.mark.slow
def test_busy_background_thread_is_seen():
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            sum(range(1000))

    t = threading.Thread(target=spin, daemon=True)
    t.start()
    try:
        assert busy_threads(window_s=0.5)
        assert busy_threads()  # the default window (exact CPU time where the kernel keeps it)
    finally:
        stop.set()
        t.join()


@pytest.mark.slow
def test_a_thread_busy_a_third_of_the_time_is_seen_in_the_default_window():
    """The default window is shorter where per-thread CPU time is exact (issue #44: it is waited inside the GPU's
    clock turn); a thread doing background work in bursts, a third of the time, is still reported every time,
    and an idle one never. benchmarks/busy_window/ has the shares and the machine load side by side."""
    stop = threading.Event()

    def bursts():
        while not stop.is_set():
            end = time.perf_counter() + 0.002
            while time.perf_counter() < end:
                pass
            time.sleep(0.004)

    idle = threading.Thread(target=stop.wait, daemon=True)
    idle.start()
    assert [busy_threads() for _ in range(3)] == [[], [], []]
    t = threading.Thread(target=bursts, daemon=True)
    t.start()
    try:
        seen = [busy_threads() for _ in range(5)]
        assert all(str(t.native_id) in found for found in seen), seen
    finally:
        stop.set()
        t.join()


def test_kernel_and_timing_judgement():
    cfg = AntiCheatConfig()
    assert kernel_findings({"ops": {}, "kernels": {"own_kernels": ["ext.f"]}}, cfg, True) == []
    assert "no kernel of the candidate's own" in kernel_findings({"ops": {}, "kernels": {"own_kernels": []}},
                                                                cfg, True)[0]
    assert "no dispatcher evidence" in kernel_findings({}, cfg, False)[0]
    assert kernel_findings({}, AntiCheatConfig(require_custom_kernel=False), True) == []
    assert "sanity bound" in bound_findings(5000.0, None, cfg)[0].text
    assert "roofline" in bound_findings(2.0, 3.0, cfg)[0].text
    assert bound_findings(3.0, 0.5, cfg) == []


# ---- every exploit and fault through the real engine ---------------------------------------------------

def _config(engine_config, overrides: dict[str, str], static: bool):
    cfg = engine_config(run_timeout_s=30.0, output_limit_mb=16.0, timing=_quick_timing(),
                        anticheat=AntiCheatConfig(static_checks=static))
    for key, value in overrides.items():
        setattr(cfg, key, type(getattr(cfg, key))(value))
    return cfg


def _wrong_runs(suite, engine_config, static: bool) -> list[tuple[list, list, object]]:
    """One engine run per distinct ``# config:`` header: (tasks, candidates, config)."""
    groups: dict[tuple, list[Path]] = {}
    for path in WRONG:
        h = headers(path)
        if not static and "runtime-expect" not in h:
            continue
        cfg_items = tuple(sorted(dict(kv.split("=", 1) for kv in h.get("config", "").split() if kv).items()))
        groups.setdefault(cfg_items, []).append(path)
    runs = []
    for cfg_items, paths in groups.items():
        cands = [Candidate(task_id=headers(p)["task"], source=p.read_text(), label=p.stem) for p in paths]
        runs.append(([suite[c.task_id] for c in cands], cands, _config(engine_config, dict(cfg_items), static)))
    return runs


@pytest.fixture(scope="module")
def wrong_results(suite, build_root):
    """Every wrong candidate with the static filter on, and the runtime-expect ones again with it off. The
    engine runs (one per pass and ``# config:`` set) go side by side: much of their time is waiting (a compile
    that never ends, a candidate that hangs until its timeout), and they share no build (the runtime pass holds
    only candidates the static filter stops; builders of one folder would take its lock and build it once)."""
    from concurrent.futures import ThreadPoolExecutor

    from multikernelbench.engine.config import EngineConfig

    def factory(**overrides):
        cfg = EngineConfig(backend="cpu", build_root=build_root, allow_code_execution=True, seed=1234,
                           compile_timeout_s=600.0)
        for k, v in overrides.items():
            setattr(cfg, k, v)
        return cfg

    t0 = time.perf_counter()
    passes = {static: _wrong_runs(suite, factory, static) for static in (True, False)}
    with ThreadPoolExecutor(sum(len(runs) for runs in passes.values())) as pool:
        futures = {static: [(cands, pool.submit(evaluate_candidates, tasks, cands, cfg))
                            for tasks, cands, cfg in runs] for static, runs in passes.items()}
        out = {static: {c.label: r for cands, fut in runs for c, r in zip(cands, fut.result(), strict=True)}
               for static, runs in futures.items()}
    print(f"\nwrong candidates: {time.perf_counter() - t0:.0f} s")
    return out[True], out[False]


def reason_matches(expected: str, message: str) -> bool:
    return any(alt.strip() in message for alt in expected.split("||"))


@pytest.mark.slow
@pytest.mark.parametrize("path", WRONG, ids=[p.stem for p in WRONG])
def test_wrong_candidate_caught(wrong_results, path):
    h = headers(path)
    result = wrong_results[0][path.stem]
    # ``# or-expect:`` / ``# or-reason:``: a second verdict that leaves the trick unrewarded too (the memo
    # candidates: timed at their honest speed, or convicted by a runtime check for what their memo does to the
    # worker; see their docstrings). Never a static-filter verdict: the attack must have run.
    if "or-expect" in h and result.status == Status(h["or-expect"]):
        assert reason_matches(h["or-reason"], result.message), f"{path.name}: {result.message}"
        assert not result.message.startswith("static check"), f"{path.name}: {result.message}"
        return
    assert result.status == Status(h["expect"]), f"{path.name}: {result.status} {result.message}"
    assert reason_matches(h.get("reason", ""), result.message), f"{path.name}: {result.message}"


RUNTIME_WRONG = [p for p in WRONG if "runtime-expect" in headers(p)]


@pytest.mark.slow
@pytest.mark.parametrize("path", RUNTIME_WRONG, ids=[p.stem for p in RUNTIME_WRONG])
def test_wrong_candidate_caught_at_runtime_without_static_filter(wrong_results, path):
    h = headers(path)
    result = wrong_results[1][path.stem]
    assert result.status == Status(h["runtime-expect"]), f"{path.name}: {result.status} {result.message}"
    assert reason_matches(h["runtime-reason"], result.message), f"{path.name}: {result.message}"


@pytest.mark.slow
def test_no_leftovers_outside_workdir(wrong_results):
    assert not Path("/tmp/mkb_wrong_escape.txt").exists()


# ---- correct solutions: no false alarm ------------------------------------------------------------------

def _correct_paths() -> list[Path]:
    paths = sorted((REPO / "solutions" / "cpu").glob("*.py"))
    if os.environ.get("MKB_ALL_SOLUTIONS") != "1":
        paths = [p for p in paths if p.stem in REPRESENTATIVE]
    return paths


@pytest.mark.slow
def test_correct_solutions_not_flagged(suite, engine_config):
    paths = _correct_paths()
    cands = [Candidate(task_id=p.stem, source=p.read_text(), label=p.stem) for p in paths]
    t0 = time.perf_counter()
    results = evaluate_candidates([suite[c.task_id] for c in cands], cands,
                                  engine_config(timing=_quick_timing()))
    print(f"\n{len(cands)} correct solutions: {time.perf_counter() - t0:.0f} s")
    bad = {c.label: f"{r.status.value}: {r.message}" for c, r in zip(cands, results, strict=True) if r.status != Status.CORRECT}
    assert not bad, bad
    # The speedup bound really applies to a correct kernel's measured numbers.
    relu = [c for c in cands if c.task_id == "activation.relu"]
    cfg = engine_config(timing=_quick_timing(), anticheat=AntiCheatConfig(max_speedup=1e-6))
    (flagged,) = evaluate_candidates([suite["activation.relu"]], relu, cfg)
    assert flagged.status == Status.CHEAT_DETECTED and "sanity bound" in flagged.message


@pytest.mark.slow
def test_torch_compile_rebinds_only_what_the_worker_expects():
    """What torch.compile itself rebinds among the patch targets: the worker re-bases its snapshot after the
    baseline compile and judges harness-critical changes made meanwhile, so this list must stay small and
    torch-only (a torch upgrade that changes it fails here, before it turns into false alarms)."""
    import torch
    from torch._inductor import config as inductor_config

    from multikernelbench.anticheat.runtime import COMPILE_REBINDS, default_patch_targets, harness_critical

    snap = PatchSnapshot(default_patch_targets())
    inductor_config.compile_threads = 1
    model = torch.compile(torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU()))
    with torch.no_grad():
        model(torch.randn(4, 16))
    changed = snap.changed()
    assert set(changed) <= COMPILE_REBINDS, changed
    assert not any(harness_critical(n) for n in COMPILE_REBINDS)


@pytest.mark.parametrize("name, critical", [
    ("time.perf_counter", True), ("builtins.open", True), ("torch.cuda.synchronize", True),
    ("torch.cuda.Event.elapsed_time", True), ("multikernelbench.timing.loop.Timer", True),
    ("timing.Timer.measure", True), ("torch.relu", False), ("torch.nn.Module.__init__", False),
    ("torch.Tensor.add", False)])
def test_harness_critical_targets(name, critical):
    from multikernelbench.anticheat.runtime import harness_critical

    assert harness_critical(name) is critical
