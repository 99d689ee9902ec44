"""The scorer against brute force: every k-subset enumerated, exact fractions, small random cases."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest

from multikernelbench.scoring import compute_scores, geometric_mean, pass_at_k


def brute_at_k(successes: list[bool], k: int) -> Fraction:
    """Share of all k-subsets (without replacement) that contain at least one success."""
    subsets = list(itertools.combinations(range(len(successes)), k))
    hits = sum(any(successes[i] for i in s) for s in subsets)
    return Fraction(hits, len(subsets))


def random_record(rng: random.Random) -> dict:
    compiled = rng.random() < 0.8
    correct = compiled and rng.random() < 0.6
    speedup = round(rng.choice([0.5, 0.9, 1.0, 1.2, 2.0, 3.5]) * rng.uniform(0.9, 1.1), 3) if correct else None
    return {"compiled": compiled, "correct": correct, "speedup": speedup}


def test_pass_at_k_matches_brute_force_on_every_small_case():
    rng = random.Random(1234)
    checked = 0
    for n in range(1, 9):
        for _ in range(6):
            mask = [rng.random() < rng.random() for _ in range(n)]
            for k in range(1, n + 1):
                expected = brute_at_k(mask, k)
                assert pass_at_k(n, sum(mask), k) == pytest.approx(float(expected), abs=1e-12), (mask, k)
                checked += 1
    assert checked > 150


def test_pass_at_k_is_stable_for_large_n():
    # exact value through big-integer binomials; the product form must agree without overflowing
    for n, c, k in [(10_000, 37, 100), (2_000, 1, 1_000), (500, 250, 10), (1_000, 0, 5)]:
        exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        assert pass_at_k(n, c, k) == pytest.approx(float(exact), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("n,c,k", [(3, 1, 4), (0, 0, 1), (5, 6, 1), (5, -1, 1), (5, 2, 0)])
def test_pass_at_k_rejects_impossible_arguments(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_compute_scores_matches_brute_force_with_uneven_sample_counts():
    rng = random.Random(7)
    for trial in range(25):
        n_tasks = rng.randint(1, 5)
        preds = [[random_record(rng) for _ in range(rng.randint(3, 6))] for _ in range(n_tasks)]
        refs = [f"task{i}" for i in range(n_tasks)]
        ks, alphas = [1, 2, 3], [0.9, 1.0, 2.0]
        got = compute_scores(preds, refs, k=ks, alphas=alphas)
        for k in ks:
            comp = sum(brute_at_k([r["compiled"] for r in t], k) for t in preds) / n_tasks
            corr = sum(brute_at_k([r["correct"] for r in t], k) for t in preds) / n_tasks
            assert got[f"compilation@{k}"] == pytest.approx(float(comp), abs=1e-12)
            assert got[f"pass@{k}"] == pytest.approx(float(corr), abs=1e-12)
            for a in alphas:
                fast = sum(brute_at_k([r["correct"] and r["speedup"] >= a for r in t], k) for t in preds) / n_tasks
                assert got[f"speedup_{a}@{k}"] == pytest.approx(float(fast), abs=1e-12), (trial, k, a)
        for a in alphas:
            first = sum(t[0]["correct"] and t[0]["speedup"] >= a for t in preds) / n_tasks
            assert got[f"fast_{a}"] == pytest.approx(first, abs=1e-15)
        speedups = [r["speedup"] for t in preds for r in t if r["correct"]]
        if speedups:
            assert got["geomean_speedup"] == pytest.approx(math.prod(speedups) ** (1 / len(speedups)), rel=1e-12)
        else:
            assert got["geomean_speedup"] is None
        assert got["num_tasks"] == n_tasks
        assert got["num_samples"] == sum(len(t) for t in preds)
        assert got["num_correct_samples"] == len(speedups)


def test_per_category_equals_scoring_each_category_alone():
    rng = random.Random(99)
    preds = [[random_record(rng) for _ in range(4)] for _ in range(9)]
    refs = [f"t{i}" for i in range(9)]
    cats = ["a", "b", "c"] * 3
    got = compute_scores(preds, refs, k=[1, 2], alphas=[1.0], categories=cats)
    assert sorted(got["per_category"]) == ["a", "b", "c"]
    for cat in "abc":
        idx = [i for i, c in enumerate(cats) if c == cat]
        alone = compute_scores([preds[i] for i in idx], [refs[i] for i in idx], k=[1, 2], alphas=[1.0])
        assert got["per_category"][cat] == alone


def test_exact_small_example():
    ok = {"compiled": True, "correct": True, "speedup": 4.0}
    slow = {"compiled": True, "correct": True, "speedup": 0.25}
    bad = {"compiled": False, "correct": False, "speedup": 123.0}  # speedup ignored: not correct
    got = compute_scores([[bad, ok], [slow, slow]], ["x", "y"], k=[1, 2], alphas=[1])
    assert got["compilation@1"] == 0.75 and got["compilation@2"] == 1.0
    assert got["pass@1"] == 0.75 and got["pass@2"] == 1.0
    assert got["speedup_1.0@1"] == 0.25 and got["speedup_1.0@2"] == 0.5
    assert got["fast_1.0"] == 0.0  # x's first sample failed, y's first is slow
    assert got["geomean_speedup"] == pytest.approx((4.0 * 0.25 * 0.25) ** (1 / 3))


def test_fewer_samples_than_k_is_an_error_not_a_dropped_task():
    preds = [[{"compiled": True, "correct": True, "speedup": 1.0}] * 3, [{"compiled": True, "correct": True, "speedup": 1.0}]]
    with pytest.raises(ValueError, match="task 'b' has 1 samples, fewer than k=2"):
        compute_scores(preds, ["a", "b"], k=[1, 2])


def test_unmeasured_speedup_counts_as_correct_but_never_fast():
    rec = {"compiled": True, "correct": True, "speedup": None}
    got = compute_scores([[rec]], ["a"], alphas=[0.01])
    assert got["pass@1"] == 1.0 and got["speedup_0.01@1"] == 0.0 and got["fast_0.01"] == 0.0
    assert got["geomean_speedup"] is None and got["num_correct_samples"] == 1


@pytest.mark.parametrize("record", [
    {"compiled": False, "correct": True, "speedup": 1.0},  # correct without compiling
    {"compiled": True, "correct": True, "speedup": 0.0},
    {"compiled": True, "correct": True, "speedup": -2.0},
    {"compiled": True, "correct": True, "speedup": float("inf")},
    {"compiled": 1, "correct": True, "speedup": 1.0},  # not a bool
])
def test_invalid_records_are_rejected(record):
    with pytest.raises(ValueError):
        compute_scores([[record]], ["a"])


def test_mismatched_lengths_and_duplicate_tasks_are_rejected():
    rec = {"compiled": True, "correct": False, "speedup": None}
    with pytest.raises(ValueError, match="references"):
        compute_scores([[rec], [rec]], ["a"])
    with pytest.raises(ValueError, match="appears twice"):
        compute_scores([[rec], [rec]], ["a", "a"])
    with pytest.raises(ValueError, match="categories"):
        compute_scores([[rec]], ["a"], categories=["x", "y"])


def test_geometric_mean():
    assert geometric_mean([1e300, 1e300, 1e-300]) == pytest.approx(1e100, rel=1e-9)  # no overflow
    assert geometric_mean([]) is None


@pytest.mark.parametrize("module_name", ["multikernelbench.scoring.estimators", "multikernelbench.scoring.compute"])
def test_library_docstring_examples(module_name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module_name), verbose=False)
    assert result.attempted >= 2 and result.failed == 0
