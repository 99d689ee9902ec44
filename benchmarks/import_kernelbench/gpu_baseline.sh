#!/usr/bin/env bash
# The MultiKernelBench reference tasks' eager baseline on one GPU, with roofline fractions beside our suite's.
# Needs the imported task folder carried to the device: .carry/mkb_ref_tasks (written by
# `mkb tasks import /path/to/MultiKernelBench/reference --format kernelbench --out .carry/mkb_ref_tasks`).
# Fits one 8-minute device call: tasks stop starting after BUDGET_S seconds; a rerun resumes (rows already
# in the output file are skipped).
set -euo pipefail
OUT=${OUT:-/tmp/mkb_ref_out}
BUDGET_S=${BUDGET_S:-390}
mkdir -p "$OUT"
python -m multikernelbench.cli.main baseline --backend cuda --tasks .carry/mkb_ref_tasks --no-compile --budget-s "$BUDGET_S" \
    --timing-budget-s 0.3 --max-runs 30 --lanes-per-gpu 2 --out "$OUT/mkb_ref_eager_h200.jsonl" \
    2>&1 | tail -n 400 > "$OUT/baseline.log"
python benchmarks/import_kernelbench/compare_categories.py "$OUT/mkb_ref_eager_h200.jsonl" | tee "$OUT/compare.md"
