#!/bin/sh
# SPDX-License-Identifier: MIT
# Why the programs are linked statically: `dsh-sandbox run --backend landlock -- true` with the
# static dsh-sandbox (baseline) against the same sources linked to libdsh-sandbox.so
# (bench/dsh-sandbox-shared, the candidate), measured in turn (A B A B ...), median of the pair
# ratios.  Only prints.
#
# Usage: bench/static-vs-shared.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
build=${1:-${BUILD_DIR:-build}}
static="$build/dsh-sandbox"
shared="$build/bench/dsh-sandbox-shared"
interleave="$build/bench/interleave"
for program in "$static" "$shared" "$interleave"; do
        if [ ! -x "$program" ]; then
                echo "static-vs-shared: no $program; nothing measured"
                exit 0
        fi
done
scratch=$(mktemp -d "${BENCH_SCRATCH:-/var/tmp}/dsh-bench.XXXXXX") || exit 0
trap 'rm -rf "$scratch"' EXIT
export XDG_CACHE_HOME="$scratch/cache" XDG_STATE_HOME="$scratch/state" XDG_CONFIG_HOME="$scratch/config"
unset DSH_SANDBOX_CONFIG

"$interleave" --runs "${RUNS:-300}" --name-a "static dsh-sandbox" --name-b "shared dsh-sandbox" -- \
        "$static" run --backend landlock -- true --vs-- "$shared" run --backend landlock -- true ||
        echo "static-vs-shared: the pair could not be measured here"
exit 0
