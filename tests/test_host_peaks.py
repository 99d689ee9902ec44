"""This host's CPU peaks (measured once, cached) and what ``mkb report`` makes of them: roofline fractions and a
SOL score for CPU results, against the eager reference timed in the same run, never against another
machine's baseline."""

from __future__ import annotations

import json

import pytest

from multikernelbench import host_peaks
from multikernelbench.records import CorrectnessReport, EvalResult, FailureKind, Status, TimingStats
from multikernelbench.roofline import bandwidth_gbps, bound_ms
from multikernelbench.store import Label, ResultStore
from multikernelbench.tasks import load_from_dataset

HW = "Test CPU x2"


@pytest.mark.slow
def test_measured_once_then_read_from_the_cache(tmp_path):
    """A real measurement with torch (a few seconds): every peak positive, the bandwidth curve never faster for
    a larger working set, and a second call reads the file instead of measuring again."""
    table = host_peaks.cached_or_measure(HW, threads=1, root=tmp_path)
    path = host_peaks.cache_path(HW, tmp_path)
    assert json.loads(path.read_text()) == table and table["device"] == HW and table["threads"] == 1
    for key in ("copy_bandwidth_gbps", "fp32_matmul_tflops", "fp64_matmul_tflops", "bf16_matmul_tflops",
                "fp16_matmul_tflops"):
        assert table[key] > 0, key
    curve = [table["copy_bandwidth_by_bytes_gbps"][k] for k in sorted(table["copy_bandwidth_by_bytes_gbps"], key=int)]
    assert curve == sorted(curve, reverse=True) and curve[-1] == table["copy_bandwidth_gbps"]
    path.write_text(json.dumps({**table, "fp32_matmul_tflops": 123.0}))
    assert host_peaks.cached_or_measure(HW, threads=1, root=tmp_path)["fp32_matmul_tflops"] == 123.0


def test_bandwidth_follows_the_working_set():
    cpu = {"copy_bandwidth_gbps": 10.0, "copy_bandwidth_by_bytes_gbps": {"1000": 100.0, "100000": 40.0,
                                                                         "10000000": 10.0}}
    assert [bandwidth_gbps(cpu, n) for n in (10, 1000, 99_999, 100_000, 5_000_000, 10**9)] == \
        [100.0, 100.0, 100.0, 40.0, 40.0, 10.0]
    assert bandwidth_gbps({"copy_bandwidth_gbps": 7.0}, 10) == 7.0  # a GPU table: one number (L2 flushed)


@pytest.fixture
def cpu_store(tmp_path, monkeypatch):
    """A store of two CPU samples of activation.relu measured on HW, and HW's peak table in a private cache."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    table = {"device": HW, "copy_bandwidth_gbps": 10.0, "fp32_matmul_tflops": 1.0,
             "copy_bandwidth_by_bytes_gbps": {"1000": 100.0, "10000000": 10.0}}
    host_peaks.cache_path(HW).parent.mkdir(parents=True)
    host_peaks.cache_path(HW).write_text(json.dumps(table))
    task = load_from_dataset(ids=["activation.relu"])[0]

    def stats(ms):
        return TimingStats(ms, ms, ms, ms, 0.0, 10, 0.01, "host_perf_counter")

    store = ResultStore(tmp_path / "r.sqlite")
    common = dict(task_id=task.id, task_hash=task.content_hash, backend="cpu", hardware=HW,
                  timing_shape=dict(task.cpu_bench_shape))
    store.put(EvalResult(candidate="fast.py", code_hash="a", status=Status.CORRECT, speedup=2.0,
                         candidate_timing=stats(2.0), eager_timing=stats(4.0),
                         correctness=CorrectnessReport(trials=3, passed=3), **common), Label(category="activation"))
    store.put(EvalResult(candidate="wrong.py", code_hash="b", status=Status.INCORRECT,
                         failure=FailureKind.VALUE_MISMATCH, **common), Label(sample_index=1, category="activation"))
    store.close()
    return tmp_path / "r.sqlite", task, table


@pytest.mark.slow
def test_report_gives_cpu_results_roofline_fractions_and_sol_against_their_own_eager(cpu_store):
    from multikernelbench.baselines import load_baseline
    from multikernelbench.report import load_report_data
    from multikernelbench.scoring import sol_score

    path, task, table = cpu_store
    data = load_report_data(path, baseline=load_baseline(None))  # the committed H200 baseline: not this HW
    bound = bound_ms(table, task.dtype, task.cpu_flops, task.cpu_bytes)
    assert bound == pytest.approx(task.cpu_bytes / 10e9 * 1e3)  # 16 MiB: past the 1 kB level, DRAM rate
    g = data.find("shipped", "cpu")
    assert g.roofline == [pytest.approx(bound / 2.0)]
    assert data.own_eager == {(HW, task.id): pytest.approx(bound / 4.0)}
    want = (sol_score(bound / 2.0, bound / 4.0) + 0) / 2  # the task's mean over its two samples (wrong = 0)
    assert g.scores["sol_mean"] == pytest.approx(want) and g.scores["sol_num_tasks"] == 1
    assert not g.baseline.points and not g.baseline.matches  # never placed against the H200's rows
    assert any("SOL score is against the eager reference timed in the same run on Test CPU x2" in n
               for n in data.notes())
    from multikernelbench.report import build_report

    md = build_report(data, plots=False).markdown
    assert "(measured on NVIDIA H200): not used, no result was measured on that hardware." in md
    assert "### Speed-of-light score per category" in md and "### Hardware and baseline" not in md


@pytest.mark.slow
def test_a_changed_task_or_another_shape_gets_no_fraction(cpu_store, tmp_path):
    """FLOP and byte counts are the task's at its bench shape: a result on other task content (stale hash) or
    timed at another shape gets no fraction rather than a wrong one."""
    from multikernelbench.report import load_report_data

    _, task, _ = cpu_store
    timing = TimingStats(1.0, 1.0, 1.0, 1.0, 0.0, 10, 0.01, "host_perf_counter")
    store = ResultStore(tmp_path / "other.sqlite")
    for i, change in enumerate(({"task_hash": "stale"}, {"timing_shape": {"batch": 1, "dim": 1}})):
        fields = dict(task_id=task.id, task_hash=task.content_hash, backend="cpu", hardware=HW,
                      timing_shape=dict(task.cpu_bench_shape), candidate=f"c{i}.py", code_hash=f"c{i}",
                      status=Status.CORRECT, speedup=1.0, candidate_timing=timing, eager_timing=timing,
                      correctness=CorrectnessReport(trials=3, passed=3))
        fields.update(change)
        store.put(EvalResult(**fields), Label(sample_index=i, category="activation"))
    store.close()
    data = load_report_data(tmp_path / "other.sqlite")
    assert data.find("shipped", "cpu").roofline == [] and data.own_eager == {}
