#!/bin/bash
# The test suite's wall time as CI sees it: a fresh clone of HEAD, a fresh venv, a fresh HOME (no precompiled
# headers, no build cache) and no leftover exemplar builds, then README's test command with --durations and
# /usr/bin/time (CPU seconds). Uses /tmp/mkb-suite-cold*; prints install, pytest wall and the exit code.
#   bash scripts/suite_time_cold.sh > suite.log 2>&1
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
W=/tmp/mkb-suite-cold
rm -rf "$W" /tmp/mkb-exemplar-builds
mkdir -p "$W/home"
git clone -q "$REPO" "$W/repo" && cd "$W/repo" || exit 1
git log --oneline | head -1
python3 -m venv "$W/venv" && source "$W/venv/bin/activate"
export HOME="$W/home" CI=true PIP_DISABLE_PIP_VERSION_CHECK=1
start=$(date +%s)
python -m pip install -q torch==2.13.0 && python -m pip install -q -e ".[test]" || exit 1
echo "install=$(( $(date +%s) - start ))s"
t1=$(date +%s)
/usr/bin/time -v python -m pytest -q -n 2 --dist loadfile --durations=80
rc=$?
echo "exit=$rc pytest_wall=$(( $(date +%s) - t1 ))s total=$(( $(date +%s) - start ))s"
