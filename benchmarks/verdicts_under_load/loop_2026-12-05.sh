#!/bin/bash
# Issue #40's >=500-evaluation false-conviction run on one engine (a clone of 3cfe3da), one batch per call.
# Rep 1 runs every attack of tests/data/timing_attacks beside each load level; reps 2-3 the balanced renewals.
# Between batches it waits while /work/coord/quiet_wanted exists (a soak or a timed suite needs a quiet host).
. /work/venv/bin/activate
cd /tmp/vul3
export PYTHONPATH=/tmp/vul3
OUT=/work/coord/vul_runs_2026-12-05_3cfe3da.jsonl
for rep in 1 2 3; do
  if [ $rep = 1 ]; then ATT=""; else ATT="--attacks record_function_balanced_renewal,renew_profile_balanced,renew_profile_quiet_balanced"; fi
  for lvl in cpu:0 cpu:1 cpu:2 cpu:4 membw:2 mkb:1; do
    while [ -e /work/coord/quiet_wanted ]; do echo "$(date -u +%T) paused for a quiet window"; sleep 20; done
    echo "$(date -u +%T) batch rep=$rep level=$lvl"
    python scripts/verdicts_under_load.py --plan $lvl --repeat 1 $ATT --build-root /tmp/mkb-vul-3cfe --out $OUT
  done
done
echo "$(date -u +%T) all batches done"
