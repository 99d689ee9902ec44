"""multikernelbench scores as a Hugging Face ``evaluate`` metric.

This file is only the ``evaluate`` wrapper: the estimators live in :mod:`multikernelbench.scoring` (installed
with the package) so that ``mkb report`` and this metric share one implementation. Load it by name wherever
the package is installed (``evaluate.load("mkb_speedup")``: the package puts this script in ``evaluate``'s
cache, see multikernelbench/hfcache), or by path (``evaluate.load("<repo>/metrics/mkb_speedup")``).

Features are written with plain lists (``[feature]``), the one spelling that ``datasets`` 3 and later all read
(``datasets.List`` only exists from 4.0). Records are checked before ``evaluate`` turns them into Arrow, so a
malformed one is a ``ValueError`` naming the task, the sample and the field, not a ``KeyError`` from deep in
the conversion.
"""

from __future__ import annotations

import numbers

import datasets
import evaluate

from multikernelbench.scoring import compute_scores

_CITATION = """\
@article{wen2025multikernelbench,
  title   = {MultiKernelBench: A Multi-Platform Benchmark for Kernel Generation},
  author  = {Wen, Zhongzhen and Zhang, Yinghui and Li, Zhong and Liu, Zhongxin and Xie, Linna and Zhang, Tian},
  journal = {arXiv preprint arXiv:2507.17773},
  year    = {2025}
}
@article{chen2021codex,
  title   = {Evaluating Large Language Models Trained on Code},
  author  = {Chen, Mark and others},
  journal = {arXiv preprint arXiv:2107.03374},
  year    = {2021}
}
"""

_DESCRIPTION = """\
Scores for LLM-written deep-learning kernels: compilation@k, pass@k and speedup_alpha@k (the unbiased
estimator of the probability that at least one of k samples, drawn without replacement from the n samples of a
task, compiles / is correct / is correct with speedup >= alpha), fast_alpha on each task's first sample, the
geometric-mean speedup over correct samples, the speed-of-light score (0.5 at the eager baseline, 1.0 at the
hardware roofline bound, log scale between; see the card), and per-category versions of all of them.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: one list per task. Scoring mode: per-sample records {"compiled": bool, "correct": bool,
        "speedup": float or None} (speedup is ignored unless correct), optionally "roofline_fraction" and
        "baseline_roofline_fraction" (floats or None) for the SOL score. Executing mode: kernel source strings,
        evaluated by the engine first (needs allow_code_execution=True or MKB_ALLOW_CODE_EXECUTION=1).
    references: the task ids, in the same order as predictions.
    k: list of ints (default [1]); every task needs at least max(k) samples, otherwise ValueError.
    alphas: list of floats (default [1.0]); speedup thresholds for speedup_{alpha}@k and fast_{alpha}.
    categories: optional, one category per task, adds "per_category".
    backend, allow_code_execution, config: executing mode only (the backend name, the opt-in, an
        optional multikernelbench EngineConfig).
    A record may leave out the optional keys (None); a missing "compiled"/"correct", a non-bool there, a
    non-number speedup or an unknown key is a ValueError that names the task, the sample and the field.
Returns:
    num_tasks, num_samples, num_correct_samples, compilation@k, pass@k, speedup_{alpha}@k, fast_{alpha},
    geomean_speedup (None when no correct sample has a measured speedup), sol_mean (None when no task has
    a usable baseline), sol_num_tasks, sol_tasks_no_baseline, sol_tasks_degenerate, sol_tasks_unmeasured,
    sol_samples_above_bound, sol_per_task, per_category (when categories are given). Alphas appear as
    str(float(alpha)): k=[1], alphas=[1] gives "speedup_1.0@1" and "fast_1.0". Executing mode adds
    "details": per task, per sample, what the engine found (task_id, sample, status, message, failure,
    failed_shape, max_abs_err, max_rel_err, speedup, roofline_fraction, median_ms, code_hash), as code_eval
    returns its per-sample results beside pass@k, so a user can see why a sample failed.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/mkb_speedup")  # by path from a checkout; installed: "mkb_speedup"
    >>> ok = {"compiled": True, "correct": True, "speedup": 1.5}
    >>> bad = {"compiled": True, "correct": False, "speedup": None}
    >>> scores = metric.compute(predictions=[[ok, bad], [bad, bad]], references=["t1", "t2"], k=[1, 2])
    >>> scores["compilation@1"], scores["pass@1"], scores["pass@2"], scores["fast_1.0"]
    (1.0, 0.25, 0.5, 0.5)
"""

_RECORD = {"compiled": datasets.Value("bool"), "correct": datasets.Value("bool"),
           "speedup": datasets.Value("float64"), "roofline_fraction": datasets.Value("float64"),
           "baseline_roofline_fraction": datasets.Value("float64")}

#: Keys a record may leave out (they are only needed for the SOL score); filled with None before Arrow.
_OPTIONAL = ("speedup", "roofline_fraction", "baseline_roofline_fraction")
_REQUIRED = ("compiled", "correct")


def _check_record(record, task: int, sample: int) -> dict:
    """The record with every optional key present, or a ValueError that names the field."""
    where = f"predictions[{task}][{sample}]"
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected a record dict with keys {list(_RECORD)} (or a kernel source "
                         f"string in executing mode), got {type(record).__name__}")
    unknown = sorted(set(record) - set(_RECORD))
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}; a record has {list(_RECORD)}")
    for key in _REQUIRED:
        if key not in record:
            raise ValueError(f"{where}: missing required field {key!r} (a bool)")
        if not isinstance(record[key], bool):
            raise ValueError(f"{where}: field {key!r} must be a bool, got {record[key]!r}")
    for key in _OPTIONAL:
        value = record.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise ValueError(f"{where}: field {key!r} must be a number or None, got {value!r}")
    return {**dict.fromkeys(_OPTIONAL), **record}


def _fill_optional(task, index: int = 0):
    """A task's records checked and with every optional key present: ``evaluate`` matches records against the
    feature schema key by key, and a wrong sample naturally has no speedup or roofline fraction."""
    if isinstance(task, (list, tuple)):
        return [r if isinstance(r, str) else _check_record(r, index, j) for j, r in enumerate(task)]
    if task is not None:
        raise ValueError(f"predictions[{index}]: expected the list of one task's samples, got {type(task).__name__}")
    return task


#: Scoring mode (lists of records) first: evaluate picks the first feature set the first example fits.
_FEATURES = [
    datasets.Features({"predictions": [_RECORD], "references": datasets.Value("string")}),
    datasets.Features({"predictions": [datasets.Value("string")], "references": datasets.Value("string")}),
]


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MkbSpeedup(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=_FEATURES,
            reference_urls=["https://arxiv.org/abs/2507.17773", "https://arxiv.org/abs/2107.03374"],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of tasks (records' optional keys filled with None first)."""
        if predictions is not None:
            predictions = [_fill_optional(task, i) for i, task in enumerate(predictions)]
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one task (its records' optional keys filled with None first)."""
        return super().add(prediction=_fill_optional(prediction), reference=reference, **kwargs)

    def _compute(self, predictions, references, k=None, alphas=None, categories=None, backend=None,
                 allow_code_execution=False, config=None):
        k = [1] if k is None else list(k)
        alphas = [1.0] if alphas is None else list(alphas)
        if any(isinstance(sample, str) for task in predictions for sample in task):
            # Imported here: the engine (and torch) is only needed when kernels are actually run.
            from multikernelbench.sampling.evaluate import results_from_sources, sample_details
            from multikernelbench.scoring.from_results import sample_record

            results = results_from_sources(predictions, references, backend=backend,
                                           allow_code_execution=allow_code_execution, config=config)
            scores = compute_scores([[sample_record(r) for r in task] for task in results], references, k=k,
                                    alphas=alphas, categories=categories)
            return {**scores, "details": sample_details(results, references)}
        return compute_scores(predictions, references, k=k, alphas=alphas, categories=categories)
