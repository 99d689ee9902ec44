R0=$PWD; export MKB_ALLOW_CODE_EXECUTION=1
use() { cd $R0/.carry/$1 && python3 -m pip install --no-deps --no-build-isolation -e . -q >/dev/null 2>&1; python3 -c "import multikernelbench.anticheat.runtime as r; print('$1', hasattr(r, 'EXACT_WINDOW_S'))"; }
n=4; for side in head base head base head; do n=$((n+1)); use $side; SKIP_INSTALL=1 RUN=warm_${n}_$side DEADLINE=82 TP_N=40 TP_WARM_S=70 bash scripts/device_run.sh tp_warm 2>&1 | grep -E "^\| mkb|clocks|first result" | cut -c1-160; python3 scripts/throughput/clock_phases.py $OUT/warm_${n}_$side/tp_warm_trace.log.gz | grep -E "held|outside|warm-up|gaps"; done
cd $OUT && tar czf all2.tgz warm_* 2>/dev/null && rm -rf warm_* warm_*.tar.gz; ls $OUT
