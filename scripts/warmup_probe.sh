#!/bin/bash
# Does the length of the timing warm-up change what one lane alone measures? (issue #15: on the H200 a lone
# lane timed short bf16 elementwise references 4-8 % slower than six lanes sharing the GPU.) Times the tasks in
# PROBE_TASKS eager-only, for each LANES:WARMUP_S in CONFIGS (default one lane with 0.25 s and 3 s, six lanes
# with 0.25 s), two rounds, while nvidia-smi logs the
# SM clock and power every 100 ms. Output under $OUT/probe/.
export PYTHONUNBUFFERED=1 MKB_ALLOW_CODE_EXECUTION=1
P=$OUT/probe; mkdir -p $P
[ -n "$SKIP_INSTALL" ] || python3 -m pip install --no-deps --no-build-isolation -e . -q > $P/pip.log 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 100 > $P/smi.csv 2>&1 &
SMI=$!
ids=$(sed 's/^/--task /' ${PROBE_TASKS:-probe_tasks.txt} | tr '\n' ' ')
for round in 1 2; do
  for cfg in ${CONFIGS:-1:0.25 1:3 6:0.25}; do
    lanes=${cfg%%:*}; w=${cfg#*:}; f=$P/l${lanes}_w${w}_r$round
    echo "=== round $round lanes $lanes warmup $w $(date +%T.%N)" | tee -a $P/probe.log
    python3 -m multikernelbench.cli.main baseline --backend ${BASELINE_BACKEND:-cuda} --no-compile --lanes-per-gpu $lanes \
      --warmup-s $w --timing-budget-s 0.6 --max-runs 80 $ids --out $f.jsonl --db $f.sqlite >> $P/probe.log 2>&1
    python3 - $f.jsonl <<'PY' | tee -a $P/probe.log
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line); e = r.get("eager") or {}
    print(f"  {r['task_id']:40s} min {e.get('min_ms', 0):.4f} median {e.get('median_ms', 0):.4f} runs {e.get('runs')}")
PY
  done
done
kill $SMI 2>/dev/null
