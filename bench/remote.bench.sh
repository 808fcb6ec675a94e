#!/bin/sh
# SPDX-License-Identifier: MIT
# What a confined command on another machine costs (docs/remote.md), against a
# throwaway sshd on 127.0.0.1 (tests/remote/sshd_fixture.py), measured in turn
# with each baseline (A B A B ...), median of the pair ratios (bench/interleave):
#
#   run --remote HOST -- true   against a fresh `ssh HOST true` (a new TCP and SSH
#                               connection each time): target <= 0.25x.  The shared
#                               connection (OpenSSH multiplexing) is what pays.
#                               against local `run -- true`: reported.
#                               against `ssh HOST true` over the same shared
#                               connection: the floor; what remains is the frame
#                               protocol and the remote's own confinement.
#
# The "remote" is this machine.  Every session over ssh also starts the remote
# account's login shell, and its start-up files (~/.bashrc) cost what they cost,
# on both sides of every pair: the pairs are measured first with sessions given
# an empty HOME of their own (sshd's SetEnv: no start-up file runs), then the
# fresh-connection and local pairs again with the account as it is.  A call
# goes through the destination's remote service (docs/remote.md "The remote
# service"): the first call starts it, and the later ones start no remote login
# shell, so the account's start-up files weigh on the baselines only.  With
# BASE_BUILD set (another build of dsh-sandbox), its `run --remote` is paired
# with this one's on the same server too (the remote side is this build's).
# Only prints.
#
# Usage: [BASE_BUILD=DIR] bench/remote.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
build=${1:-${BUILD_DIR:-build}}
tool="$build/dsh-sandbox"
interleave="$build/bench/interleave"
runs=${REMOTE_RUNS:-30}
for program in "$tool" "$interleave" /usr/sbin/sshd; do
        if [ ! -x "$program" ]; then
                echo "remote: no $program; nothing measured"
                exit 0
        fi
done
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")
scratch=$(mktemp -d "${BENCH_SCRATCH:-/var/tmp}/dsh-bench.XXXXXX") || exit 0
export DSH_TEST_SCRATCH="$scratch" XDG_CACHE_HOME="$scratch/cache" XDG_STATE_HOME="$scratch/state"
export XDG_CONFIG_HOME="$scratch/config" DSH_SANDBOX_CONFIG="$scratch/config.json"
# start_server, stop_server, $host, $ssh_config, $runtime.
. "$(dirname "$0")/remote-prelude.sh"

trap 'stop_server; rm -rf "$scratch"' EXIT

fresh_pair() {
        "$interleave" --runs "$runs" --name-a "ssh HOST true (fresh)" --name-b "run --remote HOST -- true" -- \
                ssh -F "$ssh_config" -o ControlPath=none "$host" true --vs-- \
                "$tool" run --remote "$host" -- true < /dev/null ||
                echo "remote: the fresh-connection pair could not be measured here"
}

local_pair() {
        "$interleave" --runs "$runs" --name-a "run -- true (local)" --name-b "run --remote HOST -- true" -- \
                "$tool" run -- true --vs-- "$tool" run --remote "$host" -- true < /dev/null ||
                echo "remote: the local pair could not be measured here"
}

base_pair() {
        [ -n "${BASE_BUILD:-}" ] && [ -x "$BASE_BUILD/dsh-sandbox" ] || return 0
        echo "-- run --remote: BASE_BUILD's against this build's"
        "$interleave" --runs "$runs" --name-a "base run --remote" --name-b "run --remote HOST -- true" -- \
                "$BASE_BUILD/dsh-sandbox" run --remote "$host" -- true --vs-- \
                "$tool" run --remote "$host" -- true < /dev/null ||
                echo "remote: the base pair could not be measured here"
}

start_server clean-home || exit 0
echo "-- run --remote against a fresh ssh connection (target <= 0.25x); sessions with an empty HOME"
fresh_pair
echo "-- run --remote against local run (target <= 3x)"
local_pair
echo "-- run --remote against ssh over the same shared connection (the floor)"
"$interleave" --runs "$runs" --name-a "ssh HOST true (shared)" --name-b "run --remote HOST -- true" -- \
        ssh -F "$ssh_config" -o "ControlPath=$runtime/dsh-sandbox/ssh/%C" "$host" true --vs-- \
        "$tool" run --remote "$host" -- true < /dev/null ||
        echo "remote: the shared-connection pair could not be measured here"
stop_server

start_server || exit 0
echo "-- the same pairs, with the remote account's own login start-up ($(id -un)'s ~/.bashrc)"
fresh_pair
local_pair
base_pair
exit 0
