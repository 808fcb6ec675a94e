#!/usr/bin/env bash
# Runs every benchmark in one go and prints ratios against baselines measured in
# the same run.  Usage: bench/run.sh [BUILD_DIR]   (default: build-release)
# BENCH_SCRATCH names the directory the scratch trees go under (default /var/tmp): file-heavy
# pairs (tar) measure the filesystem too, so keep it on a quiet, unfragmented one.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-release}
./scripts/ensure-deps.sh
if [ ! -d "$build" ]; then
  meson setup "$build" --buildtype=release -Dtests=false >/dev/null
fi
ninja -C "$build" >/dev/null

export LANDLOCK_RUN_BIN="$PWD/$build/landlock-run"
export DSH_SANDBOX_BIN="$PWD/$build/dsh-sandbox"
export EXEC_FLOOR_BIN="$PWD/$build/bench/exec-floor"

echo "== spawn overhead (issue: foundation) =="
"$build/bench/spawn-overhead" "${SPAWN_ITERATIONS:-1400}"

for extra in bench/*.bench.sh; do
  [ -e "$extra" ] || continue
  echo
  echo "== $(basename "$extra" .bench.sh) =="
  BUILD_DIR="$build" bash "$extra"
done
