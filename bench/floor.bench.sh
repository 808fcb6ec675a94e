#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 24's table in one run: each row's candidate measured in turn with its baseline (A B A B ...,
# bench/interleave, median of the pair ratios), every baseline in the same run, then one Markdown
# table to paste into the README (docs/performance.md, "The floor table (issue 24)", says what each
# row measures and why that baseline):
#   1  run --backend landlock --mode read-only   against exec-floor (a static exec-only trampoline)  <= 1.10x
#   2  landlock-run --ro / --rw DIR              against the wait floor (exec-floor --wait)           <= 1.10x
#   3  run --backend landlock workspace-write    against the wait floor                               <= 1.10x
#   4  run --backend bwrap workspace-write       against exec-floor --wait + the argv `confine` prints <= 1.05x
#   5  the same run                              against raw bwrap with upstream's usual profile      <= 1.25x
#   6  run --remote HOST -- true                 against the same run -- true locally                 <= 3x
#   7  run --remote HOST -- true                 against a fresh ssh HOST true (ControlPath=none)     <= 0.25x
# Each command is `bash -c true` (rows 1-5) or `true` (6, 7); DIR is a fresh directory of the scratch
# space.  The remote is this machine through a throwaway sshd on 127.0.0.1 (tests/remote/sshd_fixture.py),
# with the account's own login start-up files as they are (root's ~/.bashrc here runs `pyenv init`).
#
# Then, while the shared connection is up, the reach check (tests/remote/control_reach.py): a confined
# run on each backend tries every socket under $XDG_RUNTIME_DIR/dsh-sandbox.  It prints "reach check:
# refused on every backend", or REACHABLE lines and the bench exits 1 (a bench that found a hole must
# not look fine); 2 when the check could not run with sshd present.  Otherwise it only prints.
#
# Usage: bench/floor.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
# RUNS (rows 1-5, default 300) and REMOTE_RUNS (rows 6-7, default 30): about a minute on a 2-core VM.
# shellcheck disable=SC2016 # the table's cells hold Markdown backquotes, never expansions
set -u
. "$(dirname "$0")/bench-prelude.sh"
build=${1:-${BUILD_DIR:-build}}
tool="$build/dsh-sandbox"
launcher="$build/landlock-run"
floor="$build/bench/exec-floor"
interleave="$build/bench/interleave"
runs=${RUNS:-300}
remote_runs=${REMOTE_RUNS:-30}
bench_require floor "$tool" "$launcher" "$floor" "$interleave"
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
tool=$(absolute "$tool") launcher=$(absolute "$launcher") floor=$(absolute "$floor")
interleave=$(absolute "$interleave")
here=$(cd "$(dirname "$0")" && pwd)
bench_scratch
export DSH_TEST_SCRATCH="$scratch"
# start_server, stop_server, $host, $ssh_config, $runtime (sourced before the cd: it finds the fixture by $0).
. "$here/remote-prelude.sh"
dir=$(mktemp -d "$scratch/workspace.XXXXXX") || exit 0
table="$scratch/table"
: > "$table"
cd "$dir" || exit 0

# pair ROW CANDIDATE BASELINE GOAL [interleave options] -- A... --vs-- B...: one interleaved pair, its
# human lines printed, its medians and ratio added to the table (or "not measured").
pair() {
        row=$1 candidate=$2 baseline=$3 goal=$4
        shift 4
        echo "-- row $row: $candidate against $baseline (goal <= ${goal}x)"
        "$interleave" --summary --name-a "baseline" --name-b "candidate" "$@" < /dev/null > "$scratch/pair" 2>&1
        status=$?
        grep -v '^summary ' "$scratch/pair"
        # shellcheck disable=SC2034 # the word "summary"
        if [ $status -eq 0 ] && read -r word baseline_ms candidate_ms ratio <<EOF
$(grep '^summary ' "$scratch/pair")
EOF
        then
                met=$(awk -v r="$ratio" -v g="$goal" 'BEGIN { print (r <= g) ? "yes" : "no" }')
                printf '| %s | %s | %s | %s ms | %s ms | %s× | ≤ %s× | %s |\n' "$row" "$candidate" "$baseline" \
                        "$candidate_ms" "$baseline_ms" "$ratio" "$goal" "$met" >> "$table"
        else
                echo "floor: row $row could not be measured here"
                printf '| %s | %s | %s | not measured | | | ≤ %s× | |\n' "$row" "$candidate" "$baseline" "$goal" \
                        >> "$table"
        fi
}

not_measured() {
        echo "floor: row $1 not measured: $4"
        printf '| %s | %s | %s | not measured (%s) | | | ≤ %s× | |\n' "$1" "$2" "$3" "$4" "$5" >> "$table"
}

# The bwrap argv run spawns for this call, as `confine` prints it (without the supervisor's
# --listener-fd, whose cost is the candidate's to show).  A run first makes the session's scratch
# directories that argv binds.
bwrap_argv() {
        "$tool" run --backend bwrap --mode workspace-write --root "$dir" -- true > /dev/null 2>&1 || return 1
        "$tool" confine --backend bwrap --mode workspace-write --root "$dir" -- bash -c true | python3 -c '
import json, sys
# run itself leaves /proc/irq and /proc/bus to the read-only cover bwrap makes when the caller
# holds CAP_DAC_OVERRIDE over files of the initial root (backend-bwrap.c); the argv of confine
# keeps both binds for callers that may not, so the floor drops them as run does.
def as_run_spawns(words):
    with open("/proc/self/status") as status:
        effective = int(next(l for l in status if l.startswith("CapEff:")).split()[1], 16)
    with open("/proc/self/uid_map") as uid_map:
        maps_root = any(l.split()[1] == "0" for l in uid_map)
    if not (effective & (1 << 1) and maps_root):
        return words
    out, i = [], 0
    while i < len(words):
        if words[i] == "--ro-bind-try" and i + 2 < len(words) and words[i + 1] == words[i + 2] and words[i + 1] in ("/proc/irq", "/proc/bus"):
            i += 3
            continue
        out.append(words[i])
        i += 1
    return out
words = as_run_spawns(json.load(sys.stdin)["argv"])
if any(" " in word or "\n" in word for word in words):
    sys.exit("a word of the argv holds a space")
print(" ".join(words))'
}

table_rows_local() {
        pair 1 '`run --backend landlock --mode read-only`' 'exec-floor' 1.10 --runs "$runs" -- \
                "$floor" bash -c true --vs-- "$tool" run --backend landlock --mode read-only -- bash -c true
        pair 2 '`landlock-run --ro / --rw DIR`' 'wait floor' 1.10 --runs "$runs" -- \
                "$floor" --wait bash -c true --vs-- "$launcher" --ro / --rw "$dir" -- bash -c true
        pair 3 '`run --backend landlock --mode workspace-write`' 'wait floor' 1.10 --runs "$runs" -- \
                "$floor" --wait bash -c true --vs-- \
                "$tool" run --backend landlock --mode workspace-write --root "$dir" -- bash -c true
        run_bwrap='`run --backend bwrap --mode workspace-write`'
        if [ ! -x /usr/bin/bwrap ]; then
                not_measured 4 "$run_bwrap" 'wait floor + same bwrap argv' "no /usr/bin/bwrap" 1.05
                not_measured 5 "$run_bwrap" 'raw bwrap, upstream profile' "no /usr/bin/bwrap" 1.25
                return
        fi
        if argv=$(bwrap_argv); then
                # shellcheck disable=SC2086 # the argv's words hold no space (checked above)
                pair 4 "$run_bwrap" 'wait floor + same bwrap argv' 1.05 --runs "$runs" -- \
                        "$floor" --wait $argv --vs-- \
                        "$tool" run --backend bwrap --mode workspace-write --root "$dir" -- bash -c true
        else
                not_measured 4 "$run_bwrap" 'wait floor + same bwrap argv' "confine's argv unavailable" 1.05
        fi
        pair 5 "$run_bwrap" 'raw bwrap, upstream profile' 1.25 --runs "$runs" -- \
                /usr/bin/bwrap --ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --tmpfs /tmp \
                --bind "$dir" "$dir" -- bash -c true --vs-- \
                "$tool" run --backend bwrap --mode workspace-write --root "$dir" -- bash -c true
}

table_rows_remote() {
        remote='`run --remote HOST -- true`'
        pair 6 "$remote" '`run -- true` locally' 3 --runs "$remote_runs" --warmup 3 -- \
                "$tool" run -- true --vs-- "$tool" run --remote "$host" -- true
        pair 7 "$remote" 'fresh `ssh HOST true`' 0.25 --runs "$remote_runs" --warmup 3 -- \
                ssh -F "$ssh_config" -o ControlPath=none "$host" true --vs-- "$tool" run --remote "$host" -- true
}

# The reach check, while rows 6 and 7's shared connection is up; its status is the bench's.
reach_check() {
        backends=landlock
        [ -x /usr/bin/bwrap ] && backends="bwrap landlock"
        echo "-- reach check: a confined run on each backend against every socket under $runtime/dsh-sandbox"
        # shellcheck disable=SC2086 # two words at most, no space in either
        python3 "$here/../tests/remote/control_reach.py" "$tool" "$runtime" "$scratch/reach" $backends
}

print_table() {
        echo
        echo "| # | candidate | baseline | candidate median | baseline median | ratio | goal | met |"
        echo "|---|---|---|---|---|---|---|---|"
        cat "$table"
}

table_rows_local
reach_status=0
if [ -x /usr/sbin/sshd ]; then
        export DSH_SANDBOX_CONFIG="$scratch/config.json"
        trap 'stop_server; rm -rf "$scratch"' EXIT
        if start_server; then
                table_rows_remote
                reach_check
                reach_status=$?
        else
                not_measured 6 '`run --remote HOST -- true`' '`run -- true` locally' "no ssh server" 3
                not_measured 7 '`run --remote HOST -- true`' 'fresh `ssh HOST true`' "no ssh server" 0.25
                reach_status=2
        fi
else
        echo "floor: no /usr/sbin/sshd; rows 6 and 7 and the reach check are not measured"
        not_measured 6 '`run --remote HOST -- true`' '`run -- true` locally' "no sshd" 3
        not_measured 7 '`run --remote HOST -- true`' 'fresh `ssh HOST true`' "no sshd" 0.25
fi
print_table
case $reach_status in
0) ;;
1) echo "floor: REACHABLE: a confined command reached the shared connection (above)"; exit 1 ;;
*) echo "floor: reach check NOT RUN although sshd is here (above)"; exit 2 ;;
esac
exit 0
