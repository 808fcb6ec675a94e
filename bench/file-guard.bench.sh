#!/usr/bin/env bash
# The file guard's cost per write: an atomic 4 KiB write (O_TMPFILE, fsync, rename over) through
# dsh_file_guard_write() against the same steps unguarded, measured in turn, on /var/tmp (a real
# filesystem, as a workspace is).  Prints the medians and the median of the pair ratios, for a guard
# made once and for a guard made per call (what a tool call pays).  Target: <= 1.3x.
# Informational only: it never fails.
# Usage: bench/file-guard.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${BUILD_DIR:-build}}
if [ ! -x "$build/bench/file-guard-write" ]; then
  echo "file-guard: no $build/bench/file-guard-write; build first (meson setup $build && ninja -C $build)" >&2
  exit 0
fi
LANDLOCK_RUN_BIN="$PWD/$build/landlock-run" "$build/bench/file-guard-write" "${FILE_GUARD_ITERATIONS:-2000}"
