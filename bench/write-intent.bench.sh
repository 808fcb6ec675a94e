#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 20's benchmarks: what supervising write intent costs (docs/supervisor.md, "Write intent").
# Each pair is measured in turn with its baseline (A B A B ..., bench/interleave), median of the
# pair ratios, the goal printed beside it:
#   grep      baseline: `grep -r` over a copy of this project's tree (its tracked files), the tree
#                       named GREP_REPEAT times (default 25) to one grep, unconfined
#             candidate: the same under run --mode workspace-write, Landlock, then bwrap
#             goal <= 1.03x.  A read-heavy command pays nothing for write supervision: plain reads
#             never notify, which one counted run under bench/notify-floor shows (0 notifications),
#             and the filter alone (the same grep under notify-floor) is measured against unconfined
#             too: what the backends cost beyond it is Landlock's own check of every open.
#             What starting a confined call costs is measured in its own pair (`true`) and taken
#             out in a line of its own: the grep is long enough that start-up is a small share of it,
#             not so long that the bench outgrows a shared machine.
#   clone     baseline: `git clone --no-hardlinks` of a local repository (400 files in 20
#                       directories, 4 commits) into a fresh directory of the workspace, unconfined
#             candidate: the same under run --backend landlock --mode workspace-write
#             goal <= 1.15x
#   build     baseline: `meson setup` and `ninja` of a small C project (24 files, a library and a
#                       program) into a fresh build directory of the workspace, unconfined
#             candidate: the same under run --backend landlock --mode workspace-write
#             goal <= 1.10x
#   call      one write-intent open (O_WRONLY|O_CREAT|O_TRUNC of one file, then close), against a
#             plain read open, CALL_COUNT times in one process (bench/write-intent-call, timed inside
#             it: no start-up), unconfined, under notify-floor and under each backend, CALL_ROUNDS
#             rounds in turn, the median of each; what one call costs is each minus unconfined.
#   tar       baseline: `tar xpf` of 3,000 files with their modes and times into a fresh directory
#                       of the workspace under bench/notify-floor (the same filter, every notification
#                       answered CONTINUE at once: the kernel's round trip alone, the floor of any
#                       supervisor built on user notification)
#             candidate: the same under run --backend landlock --mode workspace-write
#             goal <= 1.5x; and each against unconfined, from which what one call costs is printed:
#             (candidate - unconfined) per file and per notification, the notifications counted in
#             one run under notify-floor --count.
# --no-hardlinks: a clone from a repository outside the roots cannot hard-link its objects under
# Landlock (EXDEV), and git then copies them; unconfined it would link them, a different piece of work.
# Only prints.  Usage: bench/write-intent.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
. "$(dirname "$0")/bench-prelude.sh"
source_root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${BUILD_DIR:-build}}
tool="$build/dsh-sandbox"
notify_floor="$build/bench/notify-floor"
interleave="$build/bench/interleave"
call="$build/bench/write-intent-call"
start_runs=${START_RUNS:-21}
grep_runs=${GREP_RUNS:-15}
grep_repeat=${GREP_REPEAT:-25}
clone_runs=${CLONE_RUNS:-15}
build_runs=${BUILD_RUNS:-7}
tar_runs=${TAR_RUNS:-15}
call_rounds=${CALL_ROUNDS:-7}
call_count=${CALL_COUNT:-2000}
bench_require write-intent "$tool" "$notify_floor" "$interleave" "$call"
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")
interleave=$(cd "$(dirname "$interleave")" && pwd)/$(basename "$interleave")
notify_floor=$(cd "$(dirname "$notify_floor")" && pwd)/$(basename "$notify_floor")
call=$(cd "$(dirname "$call")" && pwd)/$(basename "$call")
bench_scratch
export HOME="$scratch/home"
mkdir -p "$HOME" "$scratch/workspace"
cd "$scratch/workspace" || exit 0

# pair RUNS WARMUP NAME_A NAME_B A... --vs-- B...: prints bench/interleave's lines and sets
# $median_a and $median_b (milliseconds) from them; fails when a run failed.
pair() {
        pair_runs=$1 pair_warmup=$2 pair_name_a=$3 pair_name_b=$4
        shift 4
        pair_output=$("$interleave" --runs "$pair_runs" --warmup "$pair_warmup" --name-a "$pair_name_a" \
                --name-b "$pair_name_b" -- "$@") || return 1
        printf '%s\n' "$pair_output"
        median_a=$(printf '%s\n' "$pair_output" | awk 'NR == 1 { print $(NF - 1) }')
        median_b=$(printf '%s\n' "$pair_output" | awk 'NR == 2 { print $(NF - 1) }')
}

# notifications COMMAND...: prints how many notifications COMMAND sends under the filter (one run
# under notify-floor --count) and sets $notification_count to their total.
notifications() {
        notification_line=$("$notify_floor" --count "$@" 2>&1 >/dev/null | grep '^notify-floor: [0-9]* notifications')
        notification_count=$(printf '%s\n' "$notification_line" | awk '{ print $2 }')
        printf '%-28s %s\n' "notifications, one run" "${notification_line#notify-floor: }"
}

# per_call TOTAL_MS BASE_MS COUNT: (TOTAL - BASE) / COUNT in microseconds.
per_call() {
        awk -v total="$1" -v base="$2" -v count="$3" 'BEGIN { printf "%.1f", (total - base) * 1000 / count }'
}

# The project's tree: its tracked files (git archive), else its source folders as they are.
mkdir -p "$scratch/workspace/project"
if ! git -C "$source_root" archive HEAD 2>/dev/null | tar x -C "$scratch/workspace/project" 2>/dev/null; then
        tar -C "$source_root" -cf - include src cli service tests docs bench | tar x -C "$scratch/workspace/project" ||
                { echo "write-intent: cannot copy the project's tree; nothing measured"; exit 0; }
fi
set --
i=0
while [ $i -lt "$grep_repeat" ]; do
        set -- "$@" project
        i=$((i + 1))
done
# A string every source file holds: grep exits 0, and reads every file to its end all the same.
search="grep -r -F -e SPDX-License-Identifier"
echo "-- grep -r over the project's tree, $(find project -type f | wc -l) files, named $grep_repeat times (goal <= 1.03x)"
notifications $search project
# The filter alone (notify-floor: the same program, nothing notified here) against the backends below,
# whose opens also pay Landlock's own path check (bwrap's command has a Landlock domain of its own too).
echo "-- the filter alone: grep -r under notify-floor (goal <= 1.03x)"
pair "$grep_runs" 2 "unconfined" "notify-floor" $search "$@" --vs-- "$notify_floor" $search "$@" ||
        echo "write-intent: the filter's grep pair could not be measured here"
for backend in landlock bwrap; do
        if [ $backend = bwrap ] && [ ! -x /usr/bin/bwrap ]; then
                echo "write-intent: no /usr/bin/bwrap; the bwrap grep pair is not measured"
                continue
        fi
        run="$tool run --backend $backend --mode workspace-write --root $scratch/workspace --"
        echo "-- $backend: starting a call (true), to take out of the grep below"
        pair "$start_runs" 3 "true, unconfined" "run $backend workspace-write" /bin/true --vs-- $run /bin/true ||
                { echo "write-intent: the $backend start-up pair could not be measured here"; continue; }
        start_up=$(awk -v a="$median_a" -v b="$median_b" 'BEGIN { print b - a }')
        echo "-- $backend: grep -r (goal <= 1.03x)"
        pair "$grep_runs" 2 "unconfined" "run $backend workspace-write" $search "$@" --vs-- $run $search "$@" ||
                { echo "write-intent: the $backend grep pair could not be measured here"; continue; }
        awk -v a="$median_a" -v b="$median_b" -v s="$start_up" \
                'BEGIN { printf "%-28s %7.3fx  (medians, %.3f ms of start-up taken out)\n", "without start-up", (b - s) / a, s }'
done

run_ws="$tool run --backend landlock --mode workspace-write --root $scratch/workspace --"
if command -v git >/dev/null 2>&1 && bench_make_repository "$scratch/repository"; then
        clone='d=$(mktemp -d -p .) && exec git clone -q --no-hardlinks "$0" "$d/clone"'
        echo "-- git clone of a local repository, 400 files, Landlock (goal <= 1.15x)"
        notifications sh -c "$clone" "$scratch/repository"
        rm -rf "$scratch"/workspace/tmp.*
        pair "$clone_runs" 2 "unconfined" "run workspace-write" sh -c "$clone" "$scratch/repository" \
                --vs-- $run_ws sh -c "$clone" "$scratch/repository" ||
                echo "write-intent: the clone pair could not be measured here"
        rm -rf "$scratch"/workspace/tmp.*
else
        echo "write-intent: no git, or the repository cannot be made; the clone pair is not measured"
fi

if command -v meson >/dev/null 2>&1 && command -v ninja >/dev/null 2>&1 && bench_make_project "$scratch/project"; then
        compile='d=$(mktemp -d -p .) && meson setup "$d/build" "$0" >/dev/null && exec ninja -C "$d/build"'
        echo "-- meson setup and ninja of a small C project, 24 files, Landlock (goal <= 1.10x)"
        notifications sh -c "$compile" "$scratch/project"
        rm -rf "$scratch"/workspace/tmp.*
        pair "$build_runs" 1 "unconfined" "run workspace-write" sh -c "$compile" "$scratch/project" \
                --vs-- $run_ws sh -c "$compile" "$scratch/project" ||
                echo "write-intent: the build pair could not be measured here"
        rm -rf "$scratch"/workspace/tmp.*
else
        echo "write-intent: no meson or ninja; the build pair is not measured"
fi

# call_ways: the four ways write-intent-call runs, one a line: a name, then the command's prefix.
call_ways() {
        printf '%s\n' "unconfined|" "notify-floor|$notify_floor"
        printf '%s\n' "run landlock workspace-write|$tool run --backend landlock --mode workspace-write --root $scratch/workspace --"
        [ -x /usr/bin/bwrap ] &&
                printf '%s\n' "run bwrap workspace-write|$tool run --backend bwrap --mode workspace-write --root $scratch/workspace --"
}

# call_median NAME FIELD: the median of FIELD (2: write, 4: read) over the rounds NAME ran.
call_median() {
        awk -v field="$2" '{ print $field }' "$scratch/call-$(printf '%s' "$1" | tr ' ' '-')" | sort -n |
                awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "-- one write-intent call: open(O_WRONLY|O_CREAT|O_TRUNC) + close, $call_count in one process, against a read open"
: > "$scratch/workspace/call-target"
round=0
call_failed=""
while [ $round -lt "$call_rounds" ]; do
        while IFS='|' read -r way prefix; do
                # $prefix is words of this build's paths and options: split on purpose.
                $prefix "$call" "$call_count" "$scratch/workspace/call-target" \
                        < /dev/null >> "$scratch/call-$(printf '%s' "$way" | tr ' ' '-')" 2>/dev/null || call_failed="$way"
        done <<EOF_WAYS
$(call_ways)
EOF_WAYS
        round=$((round + 1))
done
if [ -n "$call_failed" ]; then
        echo "write-intent: write-intent-call failed under $call_failed; the call pairs are not measured"
else
        while IFS='|' read -r way prefix; do
                printf '%-28s write %s us, read %s us  (median of %s rounds, in turn)\n' "$way" \
                        "$(call_median "$way" 2)" "$(call_median "$way" 4)" "$call_rounds"
        done <<EOF_WAYS
$(call_ways)
EOF_WAYS
        base=$(call_median unconfined 2)
        while IFS='|' read -r way prefix; do
                [ "$way" = unconfined ] && continue
                printf '%-28s %s us over unconfined, per write-intent call\n' "$way" \
                        "$(awk -v w="$(call_median "$way" 2)" -v b="$base" 'BEGIN { printf "%.1f", w - b }')"
        done <<EOF_WAYS
$(call_ways)
EOF_WAYS
fi

if ! bench_make_archive "$scratch/source" "$scratch/archive.tar"; then
        echo "write-intent: cannot build the archive; the tar pairs are not measured"
        exit 0
fi
extract='d=$(mktemp -d -p .) && cd "$d" && exec tar xpf "$0"'
echo "-- tar xpf of 3,000 files with modes and times, Landlock workspace-write against the floor (goal <= 1.5x)"
notifications sh -c "$extract" "$scratch/archive.tar"
files_notified=$notification_count
rm -rf "$scratch"/workspace/tmp.*
pair "$tar_runs" 2 "notify-floor" "run workspace-write" "$notify_floor" sh -c "$extract" "$scratch/archive.tar" \
        --vs-- $run_ws sh -c "$extract" "$scratch/archive.tar" ||
        echo "write-intent: the floor pair could not be measured here"
rm -rf "$scratch"/workspace/tmp.*
echo "-- the same, each against unconfined: what one call costs"
if pair "$tar_runs" 2 "unconfined" "run workspace-write" sh -c "$extract" "$scratch/archive.tar" \
        --vs-- $run_ws sh -c "$extract" "$scratch/archive.tar"; then
        supervised_unconfined=$median_a supervised=$median_b
        rm -rf "$scratch"/workspace/tmp.*
        if pair "$tar_runs" 2 "unconfined" "notify-floor" sh -c "$extract" "$scratch/archive.tar" \
                --vs-- "$notify_floor" sh -c "$extract" "$scratch/archive.tar"; then
                printf '%-28s supervisor %s us, floor %s us  ((each - unconfined) / 3,000)\n' "per file" \
                        "$(per_call "$supervised" "$supervised_unconfined" 3000)" "$(per_call "$median_b" "$median_a" 3000)"
                if [ "${files_notified:-0}" -gt 0 ]; then
                        printf '%-28s supervisor %s us, floor %s us  ((each - unconfined) / %s notifications)\n' \
                                "per notification" "$(per_call "$supervised" "$supervised_unconfined" "$files_notified")" \
                                "$(per_call "$median_b" "$median_a" "$files_notified")" "$files_notified"
                fi
        else
                echo "write-intent: the unconfined floor pair could not be measured here"
        fi
else
        echo "write-intent: the unconfined tar pair could not be measured here"
fi
rm -rf "$scratch"/workspace/tmp.*
exit 0
