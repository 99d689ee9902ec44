#!/bin/bash
# Device-session driver: runs the named steps on the GPU machine, logs everything under $OUT/run/, and
# packs it into $OUT/run.tar.gz (the device tool returns at most 8 files); nothing is written into the
# checkout (results worth keeping are copied into benchmarks/<claim>/ by hand). Steps: peaks fidelity compile nvsplit
# sandbox (issue #26: kernel sandbox level, start-up cost, gpu sandbox tests) eval_cuda eval_triton eval_pallas eval_opencl (probes NVIDIA's OpenCL driver first) eval_numba eval_helion (installs
# the carried .carry/wheels) gputests baseline, and cuda_full (the issue #11 acceptance run: every shipped
# CUDA solution, right and wrong, with --compile-baseline and default timing and build settings), throughput
# (scripts/throughput_bench.py), tp_cold tp_cold_old tp_cold_flat tp_cold_late tp_cold_machine tp_cold_machine_light tp_cold_machine_auto tp_cold_machine_1lane tp_warm tp_warm_auto tp_warm_1lane tp_per_build probe (issue #28), tp_lanes tp_lanes_warm (issue #44), cuda_loaded trust outputs_cost (issue #40). Env: EVAL_TIMEOUT(_CUDA) (s), COMPILE_WORKERS, DEADLINE (s),
# RUN (name of the log folder and tarball; lets two copies run side by side, one per GPU, pinned with
# CUDA_VISIBLE_DEVICES), SKIP_INSTALL=1 (when a first call already installed the package), RUN_TIMEOUT (s per
# worker request; lower it so one stalled candidate cannot eat the whole call), TIMING_BUDGET (s per callable),
# COMPILE_BASELINE_FOR (backends timed against torch.compile too; default all three), BASELINE_TASKS (a file of
# task ids for step baseline), SPREAD_TASKS (the same for step spread), QUIET_TASKS (more ids for step quiet),
# EVAL_ARGS (more mkb eval options for the eval_* and cuda_full steps, e.g. --lanes-per-gpu 1),
# BASELINE_BACKEND (default cuda; cpu pilots the baseline/spread/quiet steps on a machine without a GPU).
export PYTHONUNBUFFERED=1 MKB_ALLOW_CODE_EXECUTION=1
RUN=${RUN:-run}; R=$OUT/$RUN; mkdir -p $R
T0=$(date +%s); DEADLINE=${DEADLINE:-560}
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
pack() { tar czf $OUT/$RUN.tar.gz -C $OUT $RUN; }
trap pack EXIT
[ -n "$SKIP_INSTALL" ] || python3 -m pip install --no-deps --no-build-isolation -e . -q > $R/pip.log 2>&1 || echo "pip failed" | tee -a $R/pip.log
python3 -c "import multikernelbench.backends.cuda" >> $R/pip.log 2>&1 || { echo IMPORT FAILED; cat $R/pip.log; exit 1; }
nvidia-smi > $R/nvidia-smi.txt 2>&1
mkb() { python3 -m multikernelbench.cli.main "$@"; }
# Keep a run's trace (gzip) and say how many lanes it had and whether a step of one candidate ran inside another's clock.
lanes_check() { [ -f "$1" ] || return 0; grep -m1 "lanes per GPU" "$1" | cut -c1-200
  python3 scripts/lane_windows.py "$1" | head -4; gzip -c "$1" > "$2.gz"; }
for step in "$@"; do
  echo "=== $step $(date +%T) left=$(left)s"
  case $step in
    peaks) timeout 60 python3 scripts/measure_peaks.py --out $R/hardware > $R/peaks.log 2>&1; tail -3 $R/peaks.log ;;
    fidelity) timeout 200 python3 scripts/timing_fidelity.py --procs 5 --ncu --ncu-cache both --out $R/timing_fidelity_h200.json > $R/fidelity.log 2>&1; tail -12 $R/fidelity.log ;;
    nvsplit) timeout 400 python3 scripts/nvcc_split_bench.py --rounds 2 --out $R/nvcc_split_h200.json > $R/nvsplit.log 2>&1; tail -4 $R/nvsplit.log ;;
    compile) timeout 170 python3 scripts/compile_time_bench.py --n 3 --concurrency 3 --fast-first --out $R/compile_time_h200.json > $R/compile.log 2>&1; tail -14 $R/compile.log | cut -c1-200 ;;
    gputests) timeout $(( $(left) - 10 )) python3 -m pytest -q -p no:cacheprovider -m gpu -rA tests/test_backend_cuda.py tests/test_anticheat_gpu.py tests/test_lane_gate_gpu.py \
        -k 'not fast_builder' > $R/gputests.log 2>&1; grep -E "^(PASSED|FAILED|ERROR|SKIPPED)" $R/gputests.log | cut -c1-200; tail -2 $R/gputests.log ;;
    eval_numba|eval_numba_cuda|eval_helion)
      # Numba-CUDA (numba-cuda is on the H200 image) and Helion (not on the image: carried as wheels in
      # .carry/wheels, helion + filecheck, installed without deps or an index). Each goes on to eval_* below.
      [ $step = eval_numba ] && step=eval_numba_cuda; b=${step#eval_}
      if [ $b = helion ]; then
        ls .carry/wheels/*.whl > /dev/null 2>&1 && python3 -m pip install --no-deps --no-index -q .carry/wheels/*.whl > $R/helion_pip.log 2>&1
        python3 -c "import helion, triton; print('helion', __import__('importlib.metadata').metadata.version('helion'), 'triton', triton.__version__)" 2>&1 | tail -1 | tee -a $R/helion_pip.log
      else
        python3 -c "import numba, numba_cuda; from numba import cuda; print('numba', numba.__version__, 'numba-cuda', numba_cuda.__version__, 'cuda', cuda.is_available())" 2>&1 | tail -1
      fi
      python3 -m multikernelbench.cli.main backends 2>&1 | grep -E " $b " | cut -c1-240
      v=EVAL_TIMEOUT_$b; [ -n "${!v}" ] || export EVAL_TIMEOUT_$b=200 ;;&  # ;;& goes on matching: eval_*
    eval_opencl)
      # OpenCL on the GPU through NVIDIA's driver, if the image has it: probe, say what was found, and evaluate the
      # shipped OpenCL solutions only where a GPU device is listed (never on PoCL here: that is CI's job).
      # A driver library without its ICD file is registered for this run only (OCL_ICD_VENDORS), not faked.
      { echo "icd files: $(ls /etc/OpenCL/vendors/ 2>/dev/null | tr '\n' ' ')"
        ldconfig -p 2>/dev/null | grep -E 'libnvidia-opencl|libOpenCL' ; } > $R/opencl_probe.txt 2>&1
      lib=$(ldconfig -p 2>/dev/null | grep -o '/[^ ]*libnvidia-opencl\.so\.1$' | head -1)
      lib=${lib:-$(ls /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 /usr/lib64/libnvidia-opencl.so.1 2>/dev/null | head -1)}
      if ! ls /etc/OpenCL/vendors/*nvidia*.icd >/dev/null 2>&1 && [ -n "$lib" ]; then
        mkdir -p /tmp/mkb_ocl_vendors && echo "$lib" > /tmp/mkb_ocl_vendors/nvidia.icd && export OCL_ICD_VENDORS=/tmp/mkb_ocl_vendors
        echo "registered $lib through OCL_ICD_VENDORS (no ICD file in /etc/OpenCL/vendors)" >> $R/opencl_probe.txt; fi
      python3 backends/opencl_devices.py >> $R/opencl_probe.txt 2>&1; cat $R/opencl_probe.txt | cut -c1-220
      if ! python3 -c "import pyopencl" 2>/dev/null; then echo "eval_opencl unavailable: pyopencl is not installed (carry its wheels)"; continue; fi
      if ! grep -q '"kind": "gpu"' $R/opencl_probe.txt; then
        echo "eval_opencl unavailable: no OpenCL GPU device (${lib:-no libnvidia-opencl.so.1 on the library path})"; continue; fi
      python3 -m multikernelbench.cli.main backends 2>&1 | grep -E "opencl" | cut -c1-240
      EVAL_TIMEOUT_opencl=${EVAL_TIMEOUT_opencl:-240} ;&
    eval_*) b=${step#eval_}
      ET=$([ $b = cuda ] && echo ${EVAL_TIMEOUT_CUDA:-120} || echo ${EVAL_TIMEOUT:-65})
      v=EVAL_TIMEOUT_$b; ET=${!v:-$ET}; CB=$(case " ${COMPILE_BASELINE_FOR:-cuda triton pallas} " in *" $b "*) echo --compile-baseline;; esac)
      S=EVAL_SOLUTIONS_$b  # EVAL_SOLUTIONS_<backend>: another folder of solutions (default solutions/<backend>)
      timeout -s INT -k 20 $ET python3 -m multikernelbench.cli.main eval --backend $b --solutions ${!S:-solutions/$b} --db $R/eval_$b.sqlite \
        $CB --timing-budget-s ${TIMING_BUDGET:-1} --compile-workers ${COMPILE_WORKERS:-4} --run-timeout ${RUN_TIMEOUT:-120} ${EVAL_ARGS} --json --no-progress --trace $R/eval_$b.trace > $R/eval_$b.jsonl 2> $R/eval_$b.err
      echo "rc=$?"; python3 - $R/eval_$b.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    try: r=json.loads(l)
    except Exception: continue
    ct=r.get("candidate_timing") or {}
    f = lambda x: None if x is None else round(x, 3)
    print(f"{r.get('candidate','')[:38]:38s} {r['status']:15s} c={f(r.get('compile_time_s'))}s t={f(ct.get('median_ms'))} "
          f"su={f(r.get('speedup'))} suc={f(r.get('speedup_compile'))} rf={f(r.get('roofline_fraction'))} {r.get('message','')[:150]}")
PY
      tail -5 $R/eval_$b.err ;;
    sandbox) # issue #26: sandbox level, start-up cost per worker, and the gpu-marked sandbox tests (shipped cuda/triton/
      # pallas solutions with the compile baseline under the sandbox; native attacks from a cuda worker)
      mkb backends > $R/sandbox_backends.txt 2>&1; tail -1 $R/sandbox_backends.txt
      timeout 120 python3 scripts/sandbox_startup_bench.py --rounds 50 --workers 10 --out $R/sandbox_startup_h200.json > $R/sandbox_startup.log 2>&1
      grep -E '"(sandbox|added_cpu_p50_ms|added_wall_p50_ms|p50)"' $R/sandbox_startup.log | tr -d '\n'; echo
      timeout $(( $(left) - 10 )) python3 -m pytest -q -p no:cacheprovider -m gpu -rA tests/test_sandbox_kernel.py > $R/sandbox_gputests.log 2>&1
      grep -E "^(PASSED|FAILED|ERROR|SKIPPED)|^(cuda|triton|pallas) " $R/sandbox_gputests.log | cut -c1-300; tail -2 $R/sandbox_gputests.log ;;
    smoke) mkdir -p /tmp/smoke && cp solutions/cuda/activation.relu.py solutions/cuda/matmul.square.py solutions/cuda/wrong/memo_by_content_matmul.py \
        solutions/cuda/wrong/relu_skips_tail.py /tmp/smoke/; mkdir -p /tmp/smoke/matmul.square
      cp tests/data/honest_twins/cuda/matmul.square.py /tmp/smoke/matmul.square/honest_twin.py
      timeout -s INT -k 10 ${SMOKE_TIMEOUT:-200} python3 -m multikernelbench.cli.main eval --backend cuda --solutions /tmp/smoke \
        --compile-baseline --timing-budget-s 1 --db $R/smoke.sqlite --json --no-progress --trace $R/smoke.trace > $R/smoke.jsonl 2> $R/smoke.err
      echo "rc=$?"; python3 scripts/summarize_eval.py $R/smoke.jsonl; tail -5 $R/smoke.err; tail -4 $R/smoke.trace
      ls -la ~/.cache/multikernelbench/builds/cuda/_ext_cache/pch/*/ 2>/dev/null | head -5; cat ~/.cache/multikernelbench/builds/cuda/_ext_cache/pch/warm.*.log 2>/dev/null | cut -c1-300 ;;
    integrity) timeout $(( $(left) - 10 )) python3 -m pytest -q -p no:cacheprovider -m gpu -rA -s tests/test_timing_integrity_gpu.py > $R/integrity.log 2>&1
      grep -E "^(PASSED|FAILED|ERROR)|speedup=" $R/integrity.log | cut -c1-300; tail -2 $R/integrity.log ;;
    timers) timeout ${TIMERS_TIMEOUT:-120} python3 -m pytest -q -p no:cacheprovider -m gpu -rA tests/test_backend_cuda.py -k 'timer or side_stream or busy_host' > $R/timers.log 2>&1
      grep -E "^(PASSED|FAILED|ERROR)" $R/timers.log | cut -c1-200; tail -2 $R/timers.log ;;
    cuda_full) mkdir -p solutions_twins/matmul.square && cp tests/data/honest_twins/cuda/matmul.square.py solutions_twins/matmul.square/honest_twin.py
      S0=$(date +%s.%N); timeout -s INT -k 20 ${FULL_TIMEOUT:-480} python3 -m multikernelbench.cli.main eval \
        --backend cuda --solutions solutions/cuda --solutions solutions_twins --compile-baseline --db $R/cuda_full.sqlite ${EVAL_ARGS} --json --no-progress \
        --trace $R/cuda_full.trace > $R/cuda_full.jsonl 2> $R/cuda_full.err
      echo "rc=$? wall=$(python3 -c "print(round($(date +%s.%N)-$S0,1))")s" | tee $R/cuda_full.wall
      python3 scripts/summarize_eval.py $R/cuda_full.jsonl | tee $R/cuda_full.summary; tail -3 $R/cuda_full.err ;;
    cuda_loaded) # issue #40: the shipped CUDA set (right, wrong, the honest twin) beside a second GPU process
      # (scripts/gpu_neighbour_load.py, bursts of bf16 products at LOAD_DUTY of the wall time): statuses must hold
      mkdir -p solutions_twins/matmul.square && cp tests/data/honest_twins/cuda/matmul.square.py solutions_twins/matmul.square/honest_twin.py
      python3 scripts/gpu_neighbour_load.py --duty ${LOAD_DUTY:-0.5} > $R/cuda_loaded_neighbour.log 2>&1 & NB=$!
      S0=$(date +%s.%N); timeout -s INT -k 20 ${LOADED_TIMEOUT:-$(( $(left) - 25 ))} python3 -m multikernelbench.cli.main eval \
        --backend cuda --solutions solutions/cuda --solutions solutions_twins --compile-baseline --db $R/cuda_loaded.sqlite --json --no-progress \
        --trace $R/cuda_loaded.trace > $R/cuda_loaded.jsonl 2> $R/cuda_loaded.err
      echo "rc=$? wall=$(python3 -c "print(round($(date +%s.%N)-$S0,1))")s"; kill $NB; wait $NB 2>/dev/null; tail -2 $R/cuda_loaded_neighbour.log
      python3 scripts/summarize_eval.py $R/cuda_loaded.jsonl | tee $R/cuda_loaded.summary; tail -3 $R/cuda_loaded.err ;;
    trust) # issue #40 on the GPU: raw output reads, the native-hook attacks, the honest strided control; the GPU wrong set
      timeout ${TRUST_TIMEOUT:-200} python3 -m pytest -q -p no:cacheprovider -m gpu -rA -s tests/test_verdict_outputs_gpu.py tests/test_anticheat_gpu.py \
        > $R/trust.log 2>&1; grep -E "^(PASSED|FAILED|ERROR|SKIPPED)" $R/trust.log | cut -c1-200; tail -2 $R/trust.log ;;
    outputs_cost) # issue #40: what the trusted-side output read costs per verified output on the GPU
      timeout 90 python3 benchmarks/verdict_outputs/bench_raw_outputs.py --device cuda > $R/outputs_cost.log 2>&1; tail -20 $R/outputs_cost.log ;;
    probe) timeout 120 python3 scripts/cuda_neighbour_probe.py --out $R/cuda_neighbour_probe.json > $R/probe.log 2>&1
      python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['start_costs_p50_s']); [print(p) for p in d['phases']]" $R/cuda_neighbour_probe.json ;;
    throughput) B=$(( $(left) - 15 )); timeout $(( B + 10 )) python3 scripts/throughput_bench.py --backend cuda --budget-s $B \
        --out $R/throughput_h200.json ${THROUGHPUT_ARGS} > $R/throughput.log 2>&1; tail -25 $R/throughput.log ;;
    # Issue #28, one call (~9 min): tp_cold tp_per_build tp_warm. TP_N candidates (default 36) from an empty build
    # cache; five candidates built light / builder / stock (reusing tp_cold's PCH); the same TP_N candidates with
    # every build cached (same --mkb-build-root). Budgets (s): TP_COLD_S 240, TP_PB_S 330 (stock needs > 60 s of it at 5 builds at once), TP_WARM_S 115.
    # tp_cold_old: the same with one build per core throughout (--compile-workers = the cores: what the build gate
    # settled at before it took crowding out in 2c01af9), for an A/B in one call: tp_cold tp_cold_old
    # tp_cold. TP_MKB_ARGS: more mkb eval options. Each run's build profile (cores and crowding per build) is kept.
    # tp_cold_flat: the same with every build at one nice (--no-build-rank-nice), for an A/B of the rank nice.
    # tp_cold_late: the start-up before c280f7f (the zygote started after the tasks and
    # candidates are read; a first build's light compile waits for its analysis), for an A/B: tp_cold tp_cold_late tp_cold.
    # tp_cold_machine (issue #44: "cached per machine"): every candidate built from scratch, but the trusted warmer's
    # per-machine artefacts (PCH, host prefix, light-header analyses of the flag sets: <build root>/cuda/_ext_cache)
    # kept from a run before (tp_cold first): what a machine's next run of new candidates pays.
    # tp_cold_machine_light: the same with the ops path off (--backend-option light_ops=false: every operator's
    # header, as the light path read them before backends/extbuild/ops_headers.py), the A/B of issue #44's ops path.
    # tp_cold_machine_auto: tp_cold_machine with --lanes-per-gpu 0 (engine/lane_count.py picks the lanes), the A/B of
    # the default lane count from an empty build cache; tp_warm_auto: tp_warm with --lanes-per-gpu 0. Both keep the
    # run's trace and check it with scripts/lane_windows.py ("0 foreign steps inside a clock" expected). Since the
    # CUDA default became automatic lanes (backends/cuda.py default_lanes_per_gpu), the plain steps run auto too;
    # tp_cold_machine_1lane / tp_warm_1lane (--lanes-per-gpu 1) are the one-lane side of the A/B.
    # tp_cold_machine_fullmain: tp_cold_machine with main.cpp on the full precompiled torch/extension.h
    # (--backend-option light_main=false), the A/B of backends/extbuild/light_main.py.
    tp_cold|tp_cold_old|tp_cold_flat|tp_cold_late|tp_cold_machine|tp_cold_machine_light|tp_cold_machine_auto|tp_cold_machine_1lane|tp_cold_machine_fullmain)
      if [ $step != tp_cold ] && [ "${step#tp_cold_machine}" != "$step" ]; then
        [ -d /tmp/mkb_tp_build/cuda/_ext_cache ] || { echo "tp_cold_machine: no per-machine artefacts (run tp_cold first)"; continue; }
        find /tmp/mkb_tp_build -mindepth 1 -maxdepth 1 ! -name cuda -exec rm -rf {} +
        find /tmp/mkb_tp_build/cuda -mindepth 1 -maxdepth 1 ! -name _ext_cache -exec rm -rf {} +
      else rm -rf /tmp/mkb_tp_build; fi; B=$(( ${TP_COLD_S:-240} < $(left) - 10 ? ${TP_COLD_S:-240} : $(left) - 10 ))
      MA="$TP_MKB_ARGS"; F=throughput_cold; L=tp_cold
      [ $step = tp_cold_old ] && { MA="--compile-workers $(nproc) $TP_MKB_ARGS"; F=throughput_cold_old; L=tp_cold_old; }
      [ $step = tp_cold_flat ] && { MA="--no-build-rank-nice $TP_MKB_ARGS"; F=throughput_cold_flat; L=tp_cold_flat; }
      [ $step = tp_cold_late ] && { MA="--no-zygote-prestart --backend-option light_ahead=false $TP_MKB_ARGS"; F=throughput_cold_late; L=tp_cold_late; }
      [ $step = tp_cold_machine ] && { F=throughput_cold_machine; L=tp_cold_machine; }
      [ $step = tp_cold_machine_light ] && { MA="--backend-option light_ops=false $TP_MKB_ARGS"; F=throughput_cold_machine_light; L=tp_cold_machine_light; }
      [ $step = tp_cold_machine_auto ] && { MA="--lanes-per-gpu 0 $TP_MKB_ARGS"; F=throughput_cold_machine_auto; L=tp_cold_machine_auto; }
      [ $step = tp_cold_machine_1lane ] && { MA="--lanes-per-gpu 1 $TP_MKB_ARGS"; F=throughput_cold_machine_1lane; L=tp_cold_machine_1lane; }
      [ $step = tp_cold_machine_fullmain ] && { MA="--backend-option light_main=false $TP_MKB_ARGS"; F=throughput_cold_machine_fullmain; L=tp_cold_machine_fullmain; }
      # Repeated in one call (tp_cold tp_cold ...): each run's files get the next number (_2, _3, ...).
      i=1; n=""; while [ -e $R/$F${n}_h200.json ]; do i=$(( i + 1 )); n=_$i; done
      rm -rf /tmp/mkb_tp_work_$L$n
      timeout $(( B + 15 )) python3 scripts/throughput_bench.py --backend cuda --only mkb --n ${TP_N:-36} --budget-s $B \
        --mkb-build-root /tmp/mkb_tp_build --work /tmp/mkb_tp_work_$L$n --out $R/$F${n}_h200.json ${TP_ARGS} --mkb-args "$MA" > $R/$L${n}.log 2>&1; tail -8 $R/$L${n}.log
      cp /tmp/mkb_tp_build/cuda/_build_profile.json $R/$F${n}_build_profile.json 2>/dev/null
      lanes_check /tmp/mkb_tp_work_$L$n/mkb/trace.log $R/$L${n}_trace.log ;;
    # Issue #44, one call (~8 min): tp_lanes. The same TP_N (default 40) candidates from an empty build cache, first
    # with one lane per GPU (--lanes-per-gpu 1: the engine before lanes shared a GPU's turns), then with TP_LANES
    # (default 0 = auto, docs/lanes.md); TP_LANES_S (default 200) s cap each. Each run's trace is kept and checked
    # for steps of one candidate inside another's clock (scripts/lane_windows.py: "0 foreign steps" expected).
    # tp_lanes_warm: the same A/B with every build cached (the lane is the bound there, not the builds): one
    # correctness-only run of the TP_N candidates first fills the build cache (TP_PRIME_S, default 180 s), then
    # both runs reuse it (TP_LANES_S default 120 s each); files named throughput_lanes_warm_*.
    tp_lanes|tp_lanes_warm) W=""; [ $step = tp_lanes_warm ] && W=warm_
      if [ -n "$W" ]; then rm -rf /tmp/mkb_tp_build /tmp/mkb_tp_prime; P=$(( ${TP_PRIME_S:-180} < $(left) - 10 ? ${TP_PRIME_S:-180} : $(left) - 10 ))
        timeout $(( P + 15 )) python3 scripts/throughput_bench.py --backend cuda --only mkb --n ${TP_N:-40} --budget-s $P \
          --mkb-build-root /tmp/mkb_tp_build --work /tmp/mkb_tp_prime --out $R/throughput_lanes_prime_h200.json \
          ${TP_ARGS} --mkb-args "--no-timing $TP_MKB_ARGS" > $R/tp_lanes_prime.log 2>&1; tail -3 $R/tp_lanes_prime.log; fi
      for lanes in 1 ${TP_LANES:-0}; do
        D=$([ -n "$W" ] && echo 120 || echo 200)
        B=$(( ${TP_LANES_S:-$D} < $(left) - 10 ? ${TP_LANES_S:-$D} : $(left) - 10 )); [ $B -lt 30 ] && { echo "no time left for $step $lanes"; continue; }
        [ -n "$W" ] || rm -rf /tmp/mkb_tp_build; rm -rf /tmp/mkb_tp_lanes_$lanes
        timeout $(( B + 15 )) python3 scripts/throughput_bench.py --backend cuda --only mkb --n ${TP_N:-40} --budget-s $B \
          --mkb-build-root /tmp/mkb_tp_build --work /tmp/mkb_tp_lanes_$lanes --out $R/throughput_lanes_${W}${lanes}_h200.json \
          ${TP_ARGS} --mkb-args "--lanes-per-gpu $lanes $TP_MKB_ARGS" > $R/tp_lanes_${W}$lanes.log 2>&1; tail -8 $R/tp_lanes_${W}$lanes.log
        cp /tmp/mkb_tp_lanes_$lanes/mkb/trace.log $R/tp_lanes_${W}${lanes}_trace.log 2>/dev/null
        grep -m1 "lanes per GPU" $R/tp_lanes_${W}${lanes}_trace.log
        python3 scripts/lane_windows.py $R/tp_lanes_${W}${lanes}_trace.log | head -6
      done ;;
    tp_warm|tp_warm_auto|tp_warm_1lane) B=$(( ${TP_WARM_S:-115} < $(left) - 10 ? ${TP_WARM_S:-115} : $(left) - 10 ))
      F=throughput_warm; MA="$TP_MKB_ARGS"; [ $step = tp_warm_auto ] && { F=throughput_warm_auto; MA="--lanes-per-gpu 0 $TP_MKB_ARGS"; }
      [ $step = tp_warm_1lane ] && { F=throughput_warm_1lane; MA="--lanes-per-gpu 1 $TP_MKB_ARGS"; }
      i=1; n=""; while [ -e $R/$F${n}_h200.json ]; do i=$(( i + 1 )); n=_$i; done; rm -rf /tmp/mkb_tp_work_$step$n
      timeout $(( B + 15 )) python3 scripts/throughput_bench.py --backend cuda --only mkb --n ${TP_N:-36} --budget-s $B \
        --mkb-build-root /tmp/mkb_tp_build --work /tmp/mkb_tp_work_$step$n --out $R/$F${n}_h200.json ${TP_ARGS} --mkb-args "$MA" \
        > $R/$step$n.log 2>&1; tail -6 $R/$step$n.log
      cp /tmp/mkb_tp_build/cuda/_build_profile.json $R/build_profile.json 2>/dev/null
      lanes_check /tmp/mkb_tp_work_$step$n/mkb/trace.log $R/$step${n}_trace.log ;;
    tp_per_build) B=$(( ${TP_PB_S:-330} < $(left) - 10 ? ${TP_PB_S:-330} : $(left) - 10 )); [ $B -lt 30 ] && { echo "no time left for tp_per_build"; continue; }
      timeout $(( B + 15 )) python3 scripts/throughput_bench.py --backend cuda --per-build --n 5 --budget-s $B \
        --pch-root /tmp/mkb_tp_build/cuda/_ext_cache/pch --out $R/per_build_h200.json > $R/tp_per_build.log 2>&1; tail -12 $R/tp_per_build.log ;;
    baseline) B=$(( $(left) - 30 )); [ $B -lt 20 ] && { echo "no time left for baseline"; continue; }
      # Resumes from BASELINE_FROM (default: the committed rows; "none": start empty): done tasks are skipped.
      # Copy $R/baseline_cuda_h200.jsonl back by hand (and into the checkout, so the next call resumes it).
      FROM=${BASELINE_FROM:-multikernelbench/baselines/cuda_h200.jsonl}
      [ -f $R/baseline_cuda_h200.jsonl ] || { [ "$FROM" = none ] && : > $R/baseline_cuda_h200.jsonl || cp $FROM $R/baseline_cuda_h200.jsonl; }
      # BASELINE_TASKS: a file of task ids (one per line) to measure instead of the whole suite.
      ids=$([ -n "$BASELINE_TASKS" ] && sed 's/^/--task /' $BASELINE_TASKS | tr '\n' ' ')
      timeout $(( B + 25 )) python3 -m multikernelbench.cli.main baseline --backend ${BASELINE_BACKEND:-cuda} --out $R/baseline_cuda_h200.jsonl \
        --budget-s $B --trace $R/baseline.trace $ids ${BASELINE_ARGS} > $R/baseline.log 2>&1; echo "rc=$?"; tail -3 $R/baseline.log
      python3 - $R/baseline_cuda_h200.jsonl $R/baseline.trace <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
err = [r for r in rows if "error" in r]; cerr = [r for r in rows if "compile_error" in r]; fl = [r for r in rows if r.get("flags")]
w = [r["warmup_s"] for r in rows if "warmup_s" in r]
print(f"rows {len(rows)} errors {len(err)} compile_errors {len(cerr)} flagged {len(fl)} warmup p50 {statistics.median(w) if w else None}")
for r in (err + cerr + fl)[:40]:
    print(" ", r["task_id"], (r.get("error") or r.get("compile_error") or "")[:160], r.get("flags", ""))
try:
    import re
    d = {}
    for line in open(sys.argv[2]):
        m = re.search(r"\+\s*([\d.]+)s (\S+) \[.*\]: (\S+) (start|end after ([\d.]+) s)", line)
        if m and m.group(5):
            d.setdefault(m.group(3), []).append(float(m.group(5)))
    print("phase seconds (n, p50, sum):", {k: (len(v), round(statistics.median(v), 2), round(sum(v))) for k, v in d.items()})
except OSError:
    pass
PY
      ;;
    spread) B=${SPREAD_BUDGET:-120}; ids=$(sed 's/^/--task /' ${SPREAD_TASKS:-spread_tasks.txt} | tr '\n' ' ')
      # An independent second measurement of a sample of tasks (own process, seeds and store): #15's spread check.
      # A second "spread" step in the same call is the second, independent run (its own file, store and seeds).
      n=1; while [ -f $R/spread$n.jsonl ]; do n=$((n+1)); done
      timeout $(( B + 40 )) python3 -m multikernelbench.cli.main baseline --backend ${BASELINE_BACKEND:-cuda} --out $R/spread$n.jsonl \
        --db $R/spread$n.sqlite --budget-s $B $ids ${BASELINE_ARGS} > $R/spread$n.log 2>&1
      echo "rc=$? run $n"; tail -2 $R/spread$n.log
      [ $n -ge 2 ] && python3 scripts/mark_suspect_baseline.py $R/spread1.jsonl --repeat $R/spread$n.jsonl \
        --out $R/spread_marked.jsonl --report $R/spread_report.txt | tail -3 ;;
    quiet) B=$(( $(left) - 20 )); [ $B -lt 20 ] && { echo "no time left for the quiet pass"; continue; }
      # Rows whose median is > 1.05x their fastest sample (this call's baseline and spread rows, plus QUIET_TASKS),
      # measured again by one lane alone: no other worker starts, compiles or ends beside the clock.
      rows=$(ls $R/baseline_cuda_h200.jsonl $R/spread[0-9].jsonl 2>/dev/null)
      { [ -n "$rows" ] && python3 scripts/mark_suspect_baseline.py $(echo $rows | sed 's/ / --also /g') --list-skewed
        [ -n "$QUIET_TASKS" ] && cat $QUIET_TASKS; } | sort -u > $R/quiet_tasks.txt
      echo "$(wc -l < $R/quiet_tasks.txt) tasks for the quiet pass"
      ids=$(sed 's/^/--task /' $R/quiet_tasks.txt | tr '\n' ' ')
      [ -n "$ids" ] && timeout $(( B + 15 )) python3 -m multikernelbench.cli.main baseline --backend ${BASELINE_BACKEND:-cuda} \
        --out $R/quiet_cuda_h200.jsonl --db $R/quiet.sqlite --budget-s $B $ids ${BASELINE_ARGS} --lanes-per-gpu 1 \
        > $R/quiet.log 2>&1; echo "rc=$?"; tail -2 $R/quiet.log ;;
    baseline_eager) B=$(( $(left) - 20 )); [ $B -lt 20 ] && { echo "no time left for eager baseline"; continue; }
      timeout $(( B + 15 )) python3 -m multikernelbench.cli.main baseline --backend ${BASELINE_BACKEND:-cuda} --out $R/baseline_cuda_h200_eager.jsonl \
        --budget-s $B --no-compile > $R/baseline_eager.log 2>&1; tail -3 $R/baseline_eager.log ;;
  esac
done
