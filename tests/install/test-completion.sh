#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The bash completion of dsh-sandbox: commands, options, mode and backend values, session ids from
# `dsh-sandbox session list`, and nothing of ours once the program's own arguments begin.
# Usage: test-completion.sh COMPLETION_SCRIPT DSH_SANDBOX    (no bash-completion needed)
set -euo pipefail

script=$1 program=$2
failures=0
mkdir -p "$DSH_TEST_SCRATCH"
scratch=$(mktemp -d "$DSH_TEST_SCRATCH/completion.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export DSH_SANDBOX_STATE_DIR=$scratch/state XDG_CONFIG_HOME=$scratch/config
session=$("$program" session new --cwd "$scratch")

# shellcheck source=/dev/null
source "$script"

# The candidates for the last word of "$@" (the command line as bash splits it), one line.
complete_line() {
        COMP_WORDS=("$program" "$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMPREPLY=()
        _dsh_sandbox
        printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

expect() {
        local expected=$1 got
        shift
        got=$(complete_line "$@")
        if [ "$got" = "$expected" ]; then
                echo "ok: dsh-sandbox $* -> $got"
        else
                echo "FAIL: dsh-sandbox $*: expected \"$expected\", got \"$got\""
                failures=$((failures + 1))
        fi
}

expect_without() {
        local unwanted=$1 got
        shift
        got=$(complete_line "$@")
        if [[ " $got " == *" $unwanted "* ]]; then
                echo "FAIL: dsh-sandbox $*: offers \"$unwanted\" where the program's arguments begin"
                failures=$((failures + 1))
        else
                echo "ok: dsh-sandbox $* -> not \"$unwanted\""
        fi
}

expect "bash confine fs mcp policy probe run serve session why" ""
expect "--session" mcp --sess
expect "--op" why --o
expect "connect metadata read write" why --op ""
expect "--json" why --op write --js
expect "--config" serve --con
expect "--help --version" --
expect "--mode" run --mo
expect "danger-full-access read-only workspace-write" run --mode ""
expect "workspace-write" run -m w
expect "danger-full-access read-only workspace-write" run --mode =
expect "landlock" confine --backend = l
expect "auto bwrap landlock" probe -b ""
expect "$session" run -s ""
expect "$session" run --root /x --session ""
expect "--remote" run --rem
expect "--remote" probe --rem
expect_without --mode run --remote host make --m
expect "--allow-env --allow-host --allow-local-port --allow-unix-socket --allow-write" policy resolve --allow
expect "--mask" run --ma
expect "" run --allow-env ""
expect_without --mode run --mask .aws make --m
expect "off on" run --network ""
expect "@github @gitlab @go" run --allow-host @g
expect "" run --allow-local-port ""
expect "--network" mcp --netw
expect "--dns-upstream" bash --dns
expect_without --network fs write --netw
expect_without --mode run --allow-host @npm make --m
expect "context resolve" policy ""
expect "denials list mode new show" session ""
expect "$session" session mode ""
expect "danger-full-access read-only workspace-write" session mode "$session" ""
expect "$session" session show ""
expect "$session" session denials ""
expect "--json" session denials --j
expect "$session" session new --parent ""
expect "--json" session list --j
expect "edit mkdir mv read rm write" fs ""
expect "--create-only" fs write --cr
expect "--recursive" fs rm --rec
expect "--old" fs edit --ol
expect "danger-full-access read-only workspace-write" fs mkdir -m ""
expect_without read-only fs rm -r ""
expect_without read-only run -- ls -m ""
expect_without --mode run make --m
expect_without --mode run -m read-only make --m
expect "--sandbox-permissions" bash --sandbox
expect "danger-full-access read-only workspace-write" bash --sandbox-permissions ""
expect "--justification" bash --sandbox-permissions workspace-write --just
expect "" bash --timeout 100 "make test" ""
expect_without --mode bash -- make --m

[ "$failures" -eq 0 ] || { echo "$failures case(s) failed"; exit 1; }
