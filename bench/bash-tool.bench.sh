#!/bin/sh
# SPDX-License-Identifier: MIT
# What the bash tool (`dsh-sandbox bash`) costs over `dsh-sandbox run` for the same
# command, per backend, measured in turn with the baseline (A B A B ...), median of
# the pair ratios (bench/interleave):
#
#   true      baseline:  run --backend B -- bash -c true
#             candidate: bash --backend B true            (and with --json)
#             target <= 1.05x.  `run` under Landlock replaces itself with the command;
#             the tool must stay to capture and attribute, so it pays one process
#             more.  The floor of that (bench/wait-floor against bench/exec-floor,
#             both static) is printed first, measured the same way.
#   100 MB    the command `cat FILE` of a 100 MB text file (in the page cache):
#             baseline:  run --backend B -- cat FILE | cat    (a pipe and a reader)
#             candidate: bash --backend B --json 'cat FILE'  (the capture keeps 256 KiB)
#             target: within 10%.  For reference, against `run ... > /dev/null`,
#             where no byte crosses a pipe at all, and the human form through `| cat`.
# Only prints.
#
# Usage: bench/bash-tool.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
. "$(dirname "$0")/bench-prelude.sh"
build=${1:-${BUILD_DIR:-build}}
tool="$build/dsh-sandbox"
interleave="$build/bench/interleave"
runs=${RUNS:-300}
throughput_runs=${THROUGHPUT_RUNS:-20}
bench_require bash-tool "$tool" "$interleave"
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")
build=$(cd "$build" && pwd)
bench_scratch

# The floor: a static program that spawns `bash -c true` and waits, against one that execs it.
if [ -x "$build/bench/exec-floor" ] && [ -x "$build/bench/wait-floor" ]; then
        echo "-- floor: what staying to wait costs in itself"
        "$interleave" --runs "$runs" --name-a "exec-floor bash -c true" --name-b "wait-floor bash -c true" -- \
                "$build/bench/exec-floor" bash -c true --vs-- "$build/bench/wait-floor" bash -c true ||
                echo "bash-tool: the floor could not be measured here"
fi

backends=landlock
[ -x /usr/bin/bwrap ] && backends="bwrap landlock"

for backend in $backends; do
        echo "-- $backend: true (target <= 1.05x)"
        "$interleave" --runs "$runs" --name-a "run -b $backend bash -c true" --name-b "bash -b $backend true" -- \
                "$tool" run --backend "$backend" -- bash -c true --vs-- "$tool" bash --backend "$backend" true ||
                echo "bash-tool: the $backend pair could not be measured here"
        "$interleave" --runs "$runs" --name-a "run -b $backend bash -c true" --name-b "bash -b $backend --json" -- \
                "$tool" run --backend "$backend" -- bash -c true --vs-- \
                "$tool" bash --backend "$backend" --json true ||
                echo "bash-tool: the $backend --json pair could not be measured here"
done

# 100 MB of text, read from the page cache by the command.
big="$scratch/100mb.txt"
yes 'the quick brown fox jumps over the lazy dog, 0123456789' | head -c 100000000 > "$big" || exit 0
cat "$big" > /dev/null

for backend in $backends; do
        echo "-- $backend: 100 MB to stdout (target: within 10% of run through a pipe)"
        "$interleave" --runs "$throughput_runs" --name-a "run -b $backend cat | cat" \
                --name-b "bash -b $backend --json" -- \
                sh -c "'$tool' run --backend $backend -- cat '$big' | cat" --vs-- \
                sh -c "exec '$tool' bash --backend $backend --json 'cat $big'" ||
                echo "bash-tool: the $backend throughput pair could not be measured here"
        "$interleave" --runs "$throughput_runs" --name-a "run -b $backend cat | cat" \
                --name-b "bash -b $backend (human) | cat" -- \
                sh -c "'$tool' run --backend $backend -- cat '$big' | cat" --vs-- \
                sh -c "'$tool' bash --backend $backend 'cat $big' | cat" ||
                echo "bash-tool: the $backend human-form pair could not be measured here"
        "$interleave" --runs "$throughput_runs" --name-a "run -b $backend cat > /dev/null" \
                --name-b "bash -b $backend --json" -- \
                "$tool" run --backend "$backend" -- cat "$big" --vs-- \
                "$tool" bash --backend "$backend" --json "cat $big" ||
                echo "bash-tool: the $backend /dev/null pair could not be measured here"
done
exit 0
