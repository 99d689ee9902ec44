R0=$PWD; python3 -c "import pynvml" 2>/dev/null || python3 -m pip install -q --no-deps --no-index .carry/head/.wh/nvidia_ml_py*.whl; export MKB_ALLOW_CODE_EXECUTION=1
use() { cd $R0/.carry/$1 && python3 -m pip install --no-deps --no-build-isolation -e . -q >/dev/null 2>&1; python3 -c "import multikernelbench.anticheat.runtime as r; print('$1', hasattr(r, 'EXACT_WINDOW_S'))"; }
use base; SKIP_INSTALL=1 RUN=prime DEADLINE=150 TP_N=40 TP_COLD_S=130 bash scripts/device_run.sh tp_cold
n=0; for side in base head head base; do n=$((n+1)); use $side; SKIP_INSTALL=1 RUN=warm_${n}_$side DEADLINE=78 TP_N=40 TP_WARM_S=64 bash scripts/device_run.sh tp_warm 2>&1 | grep -E "^\| mkb|clocks|first result" | cut -c1-160; python3 scripts/throughput/clock_phases.py $OUT/warm_${n}_$side/tp_warm_trace.log.gz | grep -E "held|outside|warm-up|gaps"; done
cat /proc/self/schedstat
cd $OUT && tar czf all.tgz prime warm_* 2>/dev/null && rm -rf prime warm_* prime.tar.gz warm_*.tar.gz; ls $OUT
