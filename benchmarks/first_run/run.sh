#!/usr/bin/env bash
# A newcomer's first command, timed: a fresh clone of this checkout's HEAD, a fresh venv and a fresh HOME
# (so no pip cache, no build cache, no precompiled header), then README's `pip install torch==2.13.0 -e .`
# and `mkb demo`. Prints install_s, demo_cmd_s and the load average around them. Usage: bash run.sh [WORKDIR]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:-$(mktemp -d)}"
rm -rf "$work/clone" "$work/home" "$work/venv" "$work/run"
git clone -q "$repo" "$work/clone"
mkdir -p "$work/home" "$work/run"
export HOME="$work/home"
unset XDG_CACHE_HOME
python3 -m venv "$work/venv"
# shellcheck disable=SC1091
. "$work/venv/bin/activate"
cd "$work/clone"
uptime
t0=$(date +%s.%N)
pip install -q torch==2.13.0 -e .
t1=$(date +%s.%N)
echo "install_s $(echo "$t1 - $t0" | bc)"
du -sh "$work/venv"
cd "$work/run"
mkb demo
t2=$(date +%s.%N)
echo "demo_cmd_s $(echo "$t2 - $t1" | bc)  first_command_s $(echo "$t2 - $t0" | bc)"
uptime
