"""The speed-of-light score: the formula against hand-computed values, its edge cases (above the bound, eager
at the bound, missing baselines), its aggregation in ``compute_scores``, and the ``evaluate`` module giving the
same numbers for records that leave the SOL keys out."""

from __future__ import annotations

import math

import pytest

from multikernelbench.scoring import SolSample, TaskSol, compute_scores, sol_score, task_sol


@pytest.mark.parametrize("fraction, baseline, expected", [
    (0.25, 0.25, 0.5),  # at eager
    (1.0, 0.25, 1.0),  # at the bound
    (0.5, 0.25, 0.75),  # ln2 / ln4 = 1/2 of the way
    (0.125, 0.25, 0.25),  # 2x slower than eager: half of speedup 0.5
    (0.025, 0.25, 0.05),  # 10x slower
    (0.1 ** 0.5, 0.1, 0.75),
    (0.1 ** 0.25, 0.1, 0.875),  # 3/4 of the way in log space
    (0.01, 0.001, 0.5 + 0.5 / 3),  # ln10 / ln1000
    (1.3, 0.1, 1.0),  # faster than the bound: clamped
    (5.0, 0.9, 1.0),
])
def test_sol_score_hand_values(fraction, baseline, expected):
    assert sol_score(fraction, baseline) == pytest.approx(expected, abs=1e-12)


def test_sol_score_is_continuous_and_monotone():
    b = 0.2
    assert sol_score(b * (1 - 1e-12), b) == pytest.approx(0.5, abs=1e-9)
    assert sol_score(b * (1 + 1e-12), b) == pytest.approx(0.5, abs=1e-9)
    grid = [b * 2 ** (i / 8) for i in range(-40, 30)]
    scores = [sol_score(f, b) for f in grid]
    assert all(x <= y for x, y in zip(scores, scores[1:], strict=False))
    assert all(0 < x <= 1 for x in scores)


def test_slow_side_does_not_depend_on_headroom():
    """10 % slower than eager scores 0.5/1.1 whatever the baseline's distance from the bound."""
    for b in (0.9, 0.5, 0.01):
        assert sol_score(b / 1.1, b) == pytest.approx(0.5 / 1.1, rel=1e-12)


@pytest.mark.parametrize("fraction, baseline", [(0.5, 1.0), (0.5, 1.2), (0.5, 0.0), (0.0, 0.5), (-1.0, 0.5),
                                                (math.inf, 0.5), (0.5, math.nan)])
def test_sol_score_rejects_undefined_inputs(fraction, baseline):
    with pytest.raises(ValueError):
        sol_score(fraction, baseline)


def test_task_sol_statuses():
    ok, wrong = SolSample(True, 0.5, 0.25), SolSample(False, None, 0.25)
    r = task_sol([ok, wrong, wrong, ok])
    assert r.status is TaskSol.SCORED and r.score == pytest.approx((0.75 + 0.75) / 4)
    assert task_sol([wrong, wrong]).score == 0.0  # a baseline and no correct sample: 0, not left out
    assert task_sol([SolSample(False, None, None)]).status is TaskSol.NO_BASELINE
    assert task_sol([SolSample(True, 0.5, None), wrong]).status is TaskSol.UNMEASURED  # one record lacks it
    assert task_sol([SolSample(True, None, 0.25)]).status is TaskSol.UNMEASURED
    degenerate = task_sol([SolSample(True, 1.2, 1.0), SolSample(False, None, 1.0)])
    assert degenerate.status is TaskSol.DEGENERATE and degenerate.score is None
    above = task_sol([SolSample(True, 1.4, 0.5), SolSample(True, 1.0, 0.5), SolSample(True, 0.5, 0.5)])
    assert above.above_bound == 1 and above.score == pytest.approx(2.5 / 3)


def _rec(f=None, b=None, correct=True):
    return {"compiled": True, "correct": correct, "speedup": (f / b) if correct and f and b else None,
            "roofline_fraction": f, "baseline_roofline_fraction": b}


def test_compute_scores_sol_hand_computed():
    preds = [
        [_rec(0.5, 0.25), _rec(b=0.25, correct=False)],  # 0.75, 0 -> 0.375
        [_rec(1.3, 0.1), _rec(0.05, 0.1)],  # 1.0 (clamped), 0.25 -> 0.625
        [_rec(0.1 ** 0.25, 0.1)],  # 0.875
        [_rec(0.9, 1.01)],  # degenerate
        [{"compiled": False, "correct": False, "speedup": None}],  # no baseline
        [_rec(0.5, None)],  # correct, no baseline anywhere: no_baseline
        [_rec(None, 0.3), _rec(b=0.3, correct=False)],  # correct without its fraction: unmeasured
    ]
    refs = ["a.1", "a.2", "b.1", "b.2", "c.1", "c.2", "c.3"]
    cats = ["a", "a", "b", "b", "c", "c", "c"]
    s = compute_scores(preds, refs, categories=cats)
    assert s["sol_mean"] == pytest.approx((0.375 + 0.625 + 0.875) / 3)
    assert (s["sol_num_tasks"], s["sol_tasks_degenerate"], s["sol_tasks_no_baseline"],
            s["sol_tasks_unmeasured"], s["sol_samples_above_bound"]) == (3, 1, 2, 1, 1)
    assert s["sol_per_task"] == pytest.approx({"a.1": 0.375, "a.2": 0.625, "b.1": 0.875, "b.2": None,
                                               "c.1": None, "c.2": None, "c.3": None})
    per = s["per_category"]
    assert per["a"]["sol_mean"] == pytest.approx(0.5) and per["a"]["sol_samples_above_bound"] == 1
    assert per["b"]["sol_mean"] == pytest.approx(0.875) and per["b"]["sol_tasks_degenerate"] == 1
    assert per["c"]["sol_mean"] is None and per["c"]["sol_num_tasks"] == 0
    # the SOL keys change nothing else
    plain = [[{k: r[k] for k in ("compiled", "correct", "speedup")} for r in t] for t in preds]
    base = compute_scores(plain, refs)
    assert {k: v for k, v in s.items() if not k.startswith("sol") and k != "per_category"} == \
           {k: v for k, v in base.items() if not k.startswith("sol")}


def test_records_without_sol_keys_score_no_sol():
    s = compute_scores([[{"compiled": True, "correct": True, "speedup": 2.0}]], ["t"])
    assert s["sol_mean"] is None and s["sol_tasks_no_baseline"] == 1 and s["sol_per_task"] == {"t": None}


@pytest.mark.parametrize("key, value", [("roofline_fraction", -0.5), ("roofline_fraction", math.inf),
                                        ("baseline_roofline_fraction", 0.0)])
def test_broken_fractions_are_rejected(key, value):
    rec = _rec(0.5, 0.25)
    rec[key] = value
    with pytest.raises(ValueError, match=key):
        compute_scores([[rec]], ["t"])


def test_evaluate_module_fills_missing_sol_keys_and_agrees():
    evaluate = pytest.importorskip("evaluate")
    from pathlib import Path

    metric = evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / "mkb_speedup"))
    preds = [[_rec(0.5, 0.25), {"compiled": True, "correct": False, "baseline_roofline_fraction": 0.25}],
             [{"compiled": True, "correct": True, "speedup": 1.5}, _rec(0.2, 0.1)],
             [{"compiled": False, "correct": False}]]
    refs = ["x", "y", "z"]
    got = metric.compute(predictions=preds, references=refs, categories=["p", "q", "q"])
    assert got == compute_scores(preds, refs, categories=["p", "q", "q"])
    assert got["sol_per_task"] == {"x": 0.375, "y": None, "z": None}
    assert got["sol_tasks_unmeasured"] == 1 and got["sol_tasks_no_baseline"] == 1


def test_sol_module_doctests():
    """The examples in scoring/sol.py's docstrings are part of its definition: they must hold."""
    import doctest

    import multikernelbench.scoring.sol as sol

    result = doctest.testmod(sol, verbose=False)
    assert result.attempted >= 6 and result.failed == 0
