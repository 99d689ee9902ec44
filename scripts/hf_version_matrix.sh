#!/usr/bin/env bash
# Load the dataset and the metric by name, offline, from an empty folder, with one (datasets, evaluate) pair
# installed into a fresh venv (no system site packages: their own dependency resolution), plus this checkout's
# wheel. Prints one JSON line (or the error). Usage:
#   bash scripts/hf_version_matrix.sh datasets==3.0.0 evaluate==0.4.0 [WORKDIR]
# Results: benchmarks/hf_by_name/README.md.
set -euo pipefail
ds=$1; ev=$2
work=${3:-$(mktemp -d)}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work/src" "$work/run"
(cd "$repo" && cp -r multikernelbench backends dataset_builder metrics setup.py pyproject.toml README.md MANIFEST.in \
    multikernelbench-hfcache.pth "$work/src/")
python -m pip wheel -q --no-deps --no-build-isolation "$work/src" -w "$work/dist"
python -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "$ds" "$ev" pyyaml numpy
"$work/venv/bin/python" -m pip install -q --no-deps "$work"/dist/*.whl
cd "$work/run"
HF_HOME="$work/hf" HF_HUB_OFFLINE=1 "$work/venv/bin/python" - <<'PY' 2> >(grep -v "latest cached\|Found the latest" >&2)
import json
import datasets, evaluate
out = {"datasets": datasets.__version__, "evaluate": evaluate.__version__}
ds = datasets.load_dataset("multikernelbench", split="test")
out.update(rows=len(ds), version=str(ds.info.version), category=type(ds.features["category"]).__name__,
           shapes=str(ds.features["test_shapes"])[:60],
           loss=len(datasets.load_dataset("multikernelbench", "loss", split="test")))
m = evaluate.load("mkb_speedup")
recs = [[{"compiled": True, "correct": True, "speedup": 2.0}, {"compiled": True, "correct": False}]]
out["pass@1"] = m.compute(predictions=recs, references=["a"])["pass@1"]
try:
    m.compute(predictions=[[{"compiled": True}]], references=["a"])
except ValueError as e:
    out["malformed"] = str(e)
print(json.dumps(out))
PY
