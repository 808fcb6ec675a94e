#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 19's benchmarks: what confinement costs everyday work, each pair measured in turn with its
# baseline (A B A B ..., bench/interleave), median of the pair ratios:
#   bwrap     baseline: a static trampoline that spawns the exact bwrap argv `run --backend bwrap
#                       -- bash -c true` spawns (recorded by a bwrap stand-in that logs its argv, status
#                       fds included: the trampoline opens them on /dev/null) and waits for it; without
#                       the supervisor's --listener-fd, whose cost is the candidate's to show
#             candidate: dsh-sandbox run --backend bwrap -- bash -c true
#             target <= 1.05x
#   clone     baseline: `git clone --no-hardlinks` of a local repository (400 files in 20 directories,
#                       4 commits) into a fresh directory of the workspace, unconfined
#             candidate: the same under run --backend landlock --mode workspace-write
#             target <= 1.10x
#   build     baseline: `meson setup` and `ninja` of a small C project (24 files, a library and a
#                       program) into a fresh build directory of the workspace, unconfined
#             candidate: the same under run --backend landlock --mode workspace-write
#             target <= 1.10x
# --no-hardlinks: a clone from a repository outside the roots cannot hard-link its objects under
# Landlock (a link across the policy's boundary is EXDEV), and git then copies them; unconfined it
# would link them, a different piece of work.  Only prints.
#
# Usage: bench/reach.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
. "$(dirname "$0")/bench-prelude.sh"
build=${1:-${BUILD_DIR:-build}}
tool="$build/dsh-sandbox"
floor="$build/bench/exec-floor"
interleave="$build/bench/interleave"
runs=${RUNS:-300}
clone_runs=${CLONE_RUNS:-21}
build_runs=${BUILD_RUNS:-9}
bench_require reach "$tool" "$floor" "$interleave"
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")
floor=$(cd "$(dirname "$floor")" && pwd)/$(basename "$floor")
interleave=$(cd "$(dirname "$interleave")" && pwd)/$(basename "$interleave")
bench_scratch
export HOME="$scratch/home"
mkdir -p "$HOME" "$scratch/workspace"

# The exact argv the backend spawns, recorded by a stand-in for bwrap (NUL-separated, then the real bwrap).
bwrap_pair() {
        recorder="$scratch/bwrap-recorder"
        printf '#!/bin/sh\nprintf "%%s\\0" "$@" > "%s/argv"\nexec /usr/bin/bwrap "$@"\n' "$scratch" > "$recorder"
        chmod 755 "$recorder"
        DSH_SANDBOX_BWRAP=$recorder "$tool" run --backend bwrap -- bash -c true >/dev/null 2>&1 || return 1
        # The trampoline's words: --open-fd N for each status fd the argv names, then --wait /usr/bin/bwrap ARGV...
        python3 - "$scratch/argv" "$scratch/baseline" <<'PY' || return 1
import sys
words = open(sys.argv[1], "rb").read().split(b"\0")[:-1]
# The supervisor's socket has nobody at its other end in the baseline: dsh-sandbox-exec runs unsupervised
# there (its filter refuses metadata and connect in the kernel), so what the supervisor costs is the candidate's.
if b"--listener-fd" in words:
    at = words.index(b"--listener-fd")
    del words[at:at + 2]
words = [word for word in words if word != b"--temp-root"]
fds = [words[i + 1] for i, word in enumerate(words) if word in (b"--json-status-fd", b"--status-fd")]
baseline = [b"--open-fd " + fd for fd in fds] + [b"--wait", b"/usr/bin/bwrap"] + words
open(sys.argv[2], "wb").write(b"\0".join(part for item in baseline for part in item.split(b" ")) + b"\0")
PY
        # The recorded words never hold a space or a newline here (paths of this build and scratch).
        set -- $(tr '\0' ' ' < "$scratch/baseline")
        "$interleave" --runs "$runs" --name-a "trampoline --wait, same bwrap argv" --name-b "run --backend bwrap" -- \
                "$floor" "$@" --vs-- "$tool" run --backend bwrap -- bash -c true
}

if [ -x /usr/bin/bwrap ]; then
        echo "-- bwrap run -- bash -c true against a trampoline spawning the same argv (target <= 1.05x)"
        bwrap_pair || echo "reach: the bwrap pair could not be measured here"
else
        echo "reach: no /usr/bin/bwrap; the bwrap pair is not measured"
fi

cd "$scratch/workspace" || exit 0
run_ws="$tool run --backend landlock --mode workspace-write --root $scratch/workspace --"
repository="$scratch/repository"
project="$scratch/project"
if command -v git >/dev/null 2>&1 && bench_make_repository "$repository"; then
        clone='d=$(mktemp -d -p .) && exec git clone -q --no-hardlinks "$0" "$d/clone"'
        echo "-- git clone of a local repository, 400 files (target <= 1.10x)"
        "$interleave" --runs "$clone_runs" --warmup 2 --name-a "unconfined" --name-b "run workspace-write" -- \
                sh -c "$clone" "$repository" --vs-- $run_ws sh -c "$clone" "$repository" ||
                echo "reach: the clone pair could not be measured here"
        rm -rf "$scratch"/workspace/tmp.*
else
        echo "reach: no git, or the repository cannot be made; the clone pair is not measured"
fi
if command -v meson >/dev/null 2>&1 && command -v ninja >/dev/null 2>&1 && bench_make_project "$project"; then
        compile='d=$(mktemp -d -p .) && meson setup "$d/build" "$0" >/dev/null && exec ninja -C "$d/build"'
        echo "-- meson setup and ninja of a small C project, 24 files (target <= 1.10x)"
        "$interleave" --runs "$build_runs" --warmup 1 --name-a "unconfined" --name-b "run workspace-write" -- \
                sh -c "$compile" "$project" --vs-- $run_ws sh -c "$compile" "$project" ||
                echo "reach: the build pair could not be measured here"
        rm -rf "$scratch"/workspace/tmp.*
else
        echo "reach: no meson or ninja; the build pair is not measured"
fi
exit 0
