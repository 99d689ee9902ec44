#!/bin/bash
# Issue #44, one device call (~7-8 min): what leaves the exclusive clock turns, A/B in one tree on one warm machine.
# A correctness-only run of TP_N (default 40) candidates fills an empty build cache (TP_PRIME_S, default 115 s),
# then the same candidates from that cache with --lanes-per-gpu AB_LANES (default 4) alternately with and
# without --no-worker-prefetch (with it: the clean reference worker starts inside the clock turn and the
# verification's reference is computed after the worker's reply, the engine before issue #44's turn work;
# without: both ahead, engine/device_clean.py and engine/verify_ahead.py), AB_ROUNDS (default 2) pairs, each
# run cut at TP_LANES_S (default 80) s. Every trace is kept, checked for steps of one candidate inside another's
# clock (scripts/lane_windows.py: "0 foreign steps" expected) and split into its turns' phases
# (scripts/throughput/clock_phases.py). Everything under $OUT/ab/, packed as $OUT/ab.tar.gz.
#   TP_N=40 bash scripts/throughput/ab_turns.sh
export PYTHONUNBUFFERED=1 MKB_ALLOW_CODE_EXECUTION=1
R=$OUT/ab; mkdir -p $R; T0=$(date +%s); DEADLINE=${DEADLINE:-570}
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
trap 'tar czf $OUT/ab.tar.gz -C $OUT ab' EXIT
[ -n "$SKIP_INSTALL" ] || python3 -m pip install --no-deps --no-build-isolation -e . -q > $R/pip.log 2>&1 || echo "pip failed"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee $R/gpu.txt
git log --oneline -1 2>/dev/null | tee $R/tree.txt
N=${TP_N:-40}; LANES=${AB_LANES:-4}; CAP=${TP_LANES_S:-80}
rm -rf /tmp/mkb_ab_build /tmp/mkb_ab_prime
P=$(( ${TP_PRIME_S:-115} < $(left) - 10 ? ${TP_PRIME_S:-115} : $(left) - 10 ))
timeout $(( P + 15 )) python3 scripts/throughput_bench.py --backend cuda --only mkb --n $N --budget-s $P \
  --mkb-build-root /tmp/mkb_ab_build --work /tmp/mkb_ab_prime --out $R/prime.json \
  --mkb-args "--no-timing --lanes-per-gpu $LANES" > $R/prime.log 2>&1; tail -3 $R/prime.log
for round in $(seq 1 ${AB_ROUNDS:-2}); do
  for side in ahead inturn; do
    B=$(( CAP < $(left) - 10 ? CAP : $(left) - 10 )); [ $B -lt 30 ] && { echo "no time left for $side $round"; continue; }
    A="--lanes-per-gpu $LANES"; [ $side = inturn ] && A="$A --no-worker-prefetch"
    W=/tmp/mkb_ab_${side}_$round; rm -rf $W; echo "=== $side round $round ($A) cap $B s, $(uptime)"
    timeout $(( B + 15 )) python3 scripts/throughput_bench.py --backend cuda --only mkb --n $N --budget-s $B \
      --mkb-build-root /tmp/mkb_ab_build --work $W --out $R/${side}_$round.json --mkb-args "$A" \
      > $R/${side}_$round.log 2>&1; tail -4 $R/${side}_$round.log
    cp $W/mkb/trace.log $R/${side}_${round}_trace.log 2>/dev/null
    python3 scripts/lane_windows.py $R/${side}_${round}_trace.log | head -3
    python3 scripts/throughput/clock_phases.py $R/${side}_${round}_trace.log | tee $R/${side}_${round}_phases.txt
    grep -c "computed ahead" $R/${side}_${round}_trace.log
  done
done
