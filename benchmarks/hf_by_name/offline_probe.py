"""Time the bare-name loads on a machine whose Hub is unreachable. Usage (HF_HUB_OFFLINE unset on purpose):
   env -u HF_HUB_OFFLINE HF_HOME=$(mktemp -d) HF_ENDPOINT=http://127.0.0.1:9 python offline_probe.py
Run it twice with the same HF_HOME (the first run also fills the caches); MKB_HF_OFFLINE_FIRST=0 for the old path."""
import time, sys
t0 = time.perf_counter()
import datasets, evaluate
t1 = time.perf_counter()
ds = datasets.load_dataset("multikernelbench", split="test")
t2 = time.perf_counter()
m = evaluate.load("mkb_speedup")
t3 = time.perf_counter()
print(f"rows={len(ds)} import_s={t1-t0:.1f} load_dataset_s={t2-t1:.1f} evaluate_load_s={t3-t2:.1f}", file=sys.stderr)
