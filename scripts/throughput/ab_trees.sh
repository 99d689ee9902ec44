#!/bin/bash
# An A/B of two trees of the code on one GPU machine, in one device call, on one build cache (issue #44).
# Run from a checkout that holds both trees as archives: .carry/base and .carry/head (`git archive REV | tar -x -C
# .carry/base`, carried with the device tool's `carry`). Each run installs its side first (an editable install: the
# workers import the package from there too), then runs scripts/device_run.sh's STEP with that side's code.
#   PRIME: a step run once from `base` first (default tp_cold: fills the build cache and the machine's artefacts;
#          "none" to skip), then ORDER (default "base head head base") runs of STEP (default tp_warm). A side may
#          name its lanes per GPU as side:N (e.g. "head:8": --lanes-per-gpu 8 for that run only).
#   Env passed on: TP_N, TP_WARM_S, TP_COLD_S, DEADLINE_EACH (s per run, default 80), PRIME_DEADLINE (default 150).
# Each run's files land in $OUT/<n>_<side>/ (packed into $OUT/ab.tgz at the end); its clock turns are split by
# scripts/throughput/clock_phases.py when the step kept a trace.
R0=$PWD; export MKB_ALLOW_CODE_EXECUTION=1
STEP=${STEP:-tp_warm}; PRIME=${PRIME:-tp_cold}
use() { cd "$R0/.carry/$1" && python3 -m pip install --no-deps --no-build-isolation -e . -q > /dev/null 2>&1
  echo "== $1: $(python3 -c 'import multikernelbench, os; print(os.path.dirname(multikernelbench.__file__))')"; }
[ "$PRIME" = none ] || { use base; SKIP_INSTALL=1 RUN=0_prime DEADLINE=${PRIME_DEADLINE:-150} bash scripts/device_run.sh $PRIME 2>&1 | grep -E "^\| mkb|clocks"; }
n=0
for run in ${ORDER:-base head head base}; do
  side=${run%%:*}; lanes=""; [ "$run" != "$side" ] && lanes="--lanes-per-gpu ${run#*:}"
  n=$((n + 1)); use $side; echo "   run $n: $run"
  TP_MKB_ARGS="$lanes $TP_MKB_ARGS" SKIP_INSTALL=1 RUN=${n}_${run/:/_} DEADLINE=${DEADLINE_EACH:-80} bash scripts/device_run.sh $STEP 2>&1 \
    | grep -E "^\| mkb|clocks|first result|lanes per GPU" | cut -c1-200
  t=$(ls $OUT/${n}_${run/:/_}/*_trace.log.gz 2>/dev/null | head -1)
  [ -n "$t" ] && python3 scripts/throughput/clock_phases.py "$t" | grep -E "held|outside|warm-up|plan|loop|samples|gaps"
done
cd "$OUT" && tar czf ab.tgz --exclude='*.tar.gz' [0-9]*_* && rm -rf [0-9]*_*; ls "$OUT"
