#!/bin/sh
# SPDX-License-Identifier: MIT
# What the metadata supervisor costs (docs/supervisor.md), measured in turn
# with the baseline (A B A B ...), median of the pair ratios:
#   tar       baseline: `tar xpf` of an archive of 3,000 files with their modes and
#                       times, into a fresh directory of the workspace, unconfined
#             candidate: the same under run --backend landlock --mode workspace-write,
#                        where every utimensat, fchown and fchmod tar makes is
#                        performed by the supervisor
#             target <= 1.5x
#   floor     the same tar under bench/notify-floor: the same filter, every call answered
#             CONTINUE at once, nothing checked or performed; the kernel's round trip
#             alone, which no supervisor built on user notification can undercut
#   no-owner  the same with --no-same-owner (what tar does for a user who is not root:
#             no fchown, so one supervised call fewer per file)
#   bash      baseline: a static exec-only trampoline running `bash -c true`
#             candidate: run --backend landlock --mode workspace-write -- bash -c true
#             (a command that makes no metadata call: what the stand-in process and
#             the supervisor's thread cost by themselves)
#             target <= 1.10x; and against the same trampoline spawning bash and
#             waiting for it (exec-floor --wait: the floor of a parent that stays)
# Only prints.  Usage: bench/metadata-supervisor.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
. "$(dirname "$0")/bench-prelude.sh"
build=${1:-${BUILD_DIR:-build}}
tool="$build/dsh-sandbox"
floor="$build/bench/exec-floor"
notify_floor="$build/bench/notify-floor"
interleave="$build/bench/interleave"
runs=${RUNS:-300}
tar_runs=${TAR_RUNS:-21}
bench_require metadata-supervisor "$tool" "$floor" "$notify_floor" "$interleave"
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")
floor=$(cd "$(dirname "$floor")" && pwd)/$(basename "$floor")
interleave=$(cd "$(dirname "$interleave")" && pwd)/$(basename "$interleave")
notify_floor=$(cd "$(dirname "$notify_floor")" && pwd)/$(basename "$notify_floor")
bench_scratch

mkdir -p "$scratch/workspace"
bench_make_archive "$scratch/source" "$scratch/archive.tar" ||
        { echo "metadata-supervisor: cannot build the archive; nothing measured"; exit 0; }
cd "$scratch/workspace" || exit 0
extract='d=$(mktemp -d -p .) && cd "$d" && exec tar xpf "$0" "$@"'
run_ws="$tool run --backend landlock --mode workspace-write --root $scratch/workspace --"

echo "-- tar xpf, 3,000 files with modes and times (target <= 1.5x)"
"$interleave" --runs "$tar_runs" --warmup 2 --name-a "unconfined" --name-b "run workspace-write" -- \
        sh -c "$extract" "$scratch/archive.tar" --vs-- $run_ws sh -c "$extract" "$scratch/archive.tar" ||
        echo "metadata-supervisor: the tar pair could not be measured here"
rm -rf "$scratch"/workspace/tmp.*
echo "-- tar xpf under the round trip alone (notify-floor: the floor of any supervisor)"
"$interleave" --runs "$tar_runs" --warmup 2 --name-a "unconfined" --name-b "notify-floor" -- \
        sh -c "$extract" "$scratch/archive.tar" --vs-- "$notify_floor" sh -c "$extract" "$scratch/archive.tar" ||
        echo "metadata-supervisor: the floor pair could not be measured here"
rm -rf "$scratch"/workspace/tmp.*
if [ "$(id -u)" = 0 ]; then
        echo "-- tar xpf --no-same-owner (what a user who is not root gets by default)"
        "$interleave" --runs "$tar_runs" --warmup 2 --name-a "unconfined" --name-b "run workspace-write" -- \
                sh -c "$extract" "$scratch/archive.tar" --no-same-owner --vs-- \
                $run_ws sh -c "$extract" "$scratch/archive.tar" --no-same-owner ||
                echo "metadata-supervisor: the tar pair could not be measured here"
        rm -rf "$scratch"/workspace/tmp.*
fi

echo "-- bash -c true under workspace-write (target <= 1.10x)"
"$interleave" --runs "$runs" --name-a "trampoline bash -c true" --name-b "run workspace-write" -- \
        "$floor" bash -c true --vs-- $run_ws bash -c true ||
        echo "metadata-supervisor: the bash pair could not be measured here"
echo "-- bash -c true under workspace-write, against a trampoline that stays as the parent"
"$interleave" --runs "$runs" --name-a "trampoline --wait bash -c true" --name-b "run workspace-write" -- \
        "$floor" --wait bash -c true --vs-- $run_ws bash -c true ||
        echo "metadata-supervisor: the bash pair could not be measured here"
exit 0
