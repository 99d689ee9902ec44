"""Scoring: unbiased pass@k-style estimators and the aggregate scores built on them.

Pure functions over plain records (no torch, no store), shared by the ``evaluate`` module in
``metrics/mkb_speedup`` and by ``mkb report``.
"""

from multikernelbench.scoring.compute import (
                                              Sample,
                                              alpha_label,
                                              compilation_key,
                                              compute_scores,
                                              fast_key,
                                              pass_key,
                                              speedup_key,
                                              to_sample,
)
from multikernelbench.scoring.estimators import geometric_mean, mean_pass_at_k, pass_at_k
from multikernelbench.scoring.from_results import Group, category_of, group_results, sample_record
from multikernelbench.scoring.sol import SolSample, TaskSol, sol_score, sol_summary, task_sol

__all__ = ["Group", "Sample", "category_of", "group_results", "sample_record", "alpha_label", "compilation_key",
           "compute_scores", "fast_key", "geometric_mean", "mean_pass_at_k", "pass_at_k", "pass_key", "speedup_key",
           "to_sample",
           "SolSample", "TaskSol", "sol_score", "sol_summary", "task_sol"]
