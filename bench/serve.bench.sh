#!/bin/sh
# SPDX-License-Identifier: MIT
# What one long-lived `dsh-sandbox serve` saves a harness over one CLI process per call, measured
# in turn with the baseline (A B A B ...), median of the pair ratios (bench/interleave):
#
#   resolve   baseline:  1,000 x `dsh-sandbox policy resolve --mode workspace-write --root WS --json`
#             candidate: 1,000 policy.resolve requests to one serve process, each answered before the
#                        next is sent (a harness waiting for each answer, not a pipelined burst)
#   bash      baseline:  200 x `dsh-sandbox bash --mode workspace-write --root WS --json true`
#             candidate: 200 bash.run {command: "true"} requests to one serve process, the same way
#
# Both go through bench/serve-client (posix_spawn and wait, or one request line and its answer).
# A ratio below 1 is what the service saves.  Only prints.
#
# Usage: bench/serve.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
build=${1:-${BUILD_DIR:-build}}
runs=${SERVE_RUNS:-5}
resolves=${SERVE_RESOLVES:-1000}
bashes=${SERVE_BASH_CALLS:-200}
name=serve
. "$(dirname "$0")/service-prelude.sh"

echo "-- policy.resolve x $resolves: one CLI process per call vs one serve process"
"$interleave" --runs "$runs" --warmup 1 --name-a "$resolves x policy resolve" --name-b "serve: $resolves x policy.resolve" -- \
        "$client" --repeat "$resolves" -- "$tool" policy resolve --mode workspace-write --root "$workspace" --json \
        --vs-- "$client" --serve "$resolves" \
        "{\"method\":\"policy.resolve\",\"params\":{\"mode\":\"workspace-write\",\"root\":\"$workspace\"}}" -- \
        "$tool" serve ||
        echo "serve: the policy.resolve pair could not be measured here"

echo "-- bash.run true x $bashes: one CLI process per call vs one serve process"
"$interleave" --runs "$runs" --warmup 1 --name-a "$bashes x bash --json true" --name-b "serve: $bashes x bash.run true" -- \
        "$client" --repeat "$bashes" -- "$tool" bash --mode workspace-write --root "$workspace" --json true \
        --vs-- "$client" --serve "$bashes" \
        "{\"method\":\"bash.run\",\"params\":{\"mode\":\"workspace-write\",\"root\":\"$workspace\",\"command\":\"true\"}}" -- \
        "$tool" serve ||
        echo "serve: the bash.run pair could not be measured here"
exit 0
