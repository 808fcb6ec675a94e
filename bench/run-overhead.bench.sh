#!/bin/sh
# SPDX-License-Identifier: MIT
# What `dsh-sandbox run` costs over the floor any wrapper pays, per backend,
# measured in turn with the baseline (A B A B ...), median of the pair ratios:
#   landlock  baseline: a static exec-only trampoline running `bash -c true`
#             candidate: dsh-sandbox run --backend landlock -- bash -c true
#             target <= 1.10x
#   bwrap     baseline: the same trampoline in front of the bwrap argv that
#             `confine` prints for `bash -c true` (the profile run uses)
#             candidate: dsh-sandbox run --backend bwrap -- bash -c true
#             target <= 1.03x; and against the same trampoline spawning
#             bwrap and waiting for it (the floor of a parent that stays)
# The programs are statically linked; the dynamic loader's work would cost
# more per command than the sandbox's own system calls.  Only prints.
#
# Usage: bench/run-overhead.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
. "$(dirname "$0")/bench-prelude.sh"
build=${1:-${BUILD_DIR:-build}}
tool="$build/dsh-sandbox"
floor="$build/bench/exec-floor"
interleave="$build/bench/interleave"
runs=${RUNS:-300}
bench_require run-overhead "$tool" "$floor" "$interleave"
bench_scratch

echo "-- landlock (target <= 1.10x)"
"$interleave" --runs "$runs" --name-a "trampoline bash -c true" --name-b "run --backend landlock" -- \
        "$floor" bash -c true --vs-- "$tool" run --backend landlock -- bash -c true ||
        echo "run-overhead: the landlock pair could not be measured here"

if [ -x /usr/bin/bwrap ]; then
        # The exact argv run uses, taken from `confine` so the baseline cannot drift.
        set -- $("$tool" confine --backend bwrap --mode read-only -- bash -c true | python3 -c '
import json, sys
print(" ".join(json.load(sys.stdin)["argv"]))') || exit 0
        echo "-- bwrap (target <= 1.03x)"
        "$interleave" --runs "$runs" --name-a "trampoline bwrap argv" --name-b "run --backend bwrap" -- \
                "$floor" "$@" --vs-- "$tool" run --backend bwrap -- bash -c true ||
                echo "run-overhead: the bwrap pair could not be measured here"
        # run stays as bwrap's parent (out-of-band runner status, signals passed on): its own floor
        # is a trampoline that spawns the same argv and waits for it.
        echo "-- bwrap against a trampoline that stays as the parent"
        "$interleave" --runs "$runs" --name-a "waiting trampoline" --name-b "run --backend bwrap" -- \
                "$floor" --wait "$@" --vs-- "$tool" run --backend bwrap -- bash -c true ||
                echo "run-overhead: the bwrap pair could not be measured here"
fi
exit 0
