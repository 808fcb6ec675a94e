#!/bin/sh
# SPDX-License-Identifier: MIT
# Why the programs are linked statically: `dsh-sandbox run --backend landlock -- true` with the
# static dsh-sandbox (baseline) against the same sources linked to libdsh-sandbox.so
# (bench/dsh-sandbox-shared, the candidate), measured in turn (A B A B ...), median of the pair
# ratios.  Only prints.
#
# Usage: bench/static-vs-shared.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
. "$(dirname "$0")/bench-prelude.sh"
build=${1:-${BUILD_DIR:-build}}
static="$build/dsh-sandbox"
shared="$build/bench/dsh-sandbox-shared"
interleave="$build/bench/interleave"
bench_require static-vs-shared "$static" "$shared" "$interleave"
bench_scratch

"$interleave" --runs "${RUNS:-300}" --name-a "static dsh-sandbox" --name-b "shared dsh-sandbox" -- \
        "$static" run --backend landlock -- true --vs-- "$shared" run --backend landlock -- true ||
        echo "static-vs-shared: the pair could not be measured here"
exit 0
