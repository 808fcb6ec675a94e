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
#                               connection: the floor, what remains is the frame
#                               protocol and the remote's own confinement.
#
# The "remote" is this machine, so the remote login shell's own start-up (a
# ~/.bashrc, for instance) is in every pair that crosses ssh.  Only prints.
#
# Usage: bench/remote.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
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
# Short: the control socket's path must fit a unix socket name.
runtime=$(mktemp -d /var/tmp/dshb.XXXXXX) || exit 0
server_pid= ssh_config=/dev/null host=remote-test
cleanup() {
        for socket in "$runtime"/dsh-sandbox/ssh/*; do
                [ -S "$socket" ] && ssh -F "$ssh_config" -o "ControlPath=$socket" -O exit "$host" 2>/dev/null
        done
        [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
        rm -rf "$scratch" "$runtime"
}
trap cleanup EXIT
export DSH_TEST_SCRATCH="$scratch" XDG_RUNTIME_DIR="$runtime" XDG_CACHE_HOME="$scratch/cache"
export XDG_STATE_HOME="$scratch/state" XDG_CONFIG_HOME="$scratch/config"

python3 "$(dirname "$0")/../tests/remote/sshd_fixture.py" "$tool" > "$scratch/server" &
server_pid=$!
while ! grep -q '^ready\|^skip' "$scratch/server" 2>/dev/null; do
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
done
read -r state server_dir ssh_config remote_program < "$scratch/server" || state=
if [ "$state" != ready ]; then
        echo "remote: the ssh server could not start here: $server_dir $ssh_config $remote_program; nothing measured"
        exit 0
fi
printf '{"sshCommand":["ssh","-F","%s"],"remoteProgram":"%s"}\n' "$ssh_config" "$remote_program" > "$scratch/config.json"
export DSH_SANDBOX_CONFIG="$scratch/config.json"
shared="ControlPath=$runtime/dsh-sandbox/ssh/%C"

echo "-- run --remote against a fresh ssh connection (target <= 0.25x)"
"$interleave" --runs "$runs" --name-a "ssh HOST true (fresh)" --name-b "run --remote HOST -- true" -- \
        ssh -F "$ssh_config" -o ControlPath=none "$host" true --vs-- \
        "$tool" run --remote "$host" -- true < /dev/null ||
        echo "remote: the fresh-connection pair could not be measured here"
echo "-- run --remote against local run (reported)"
"$interleave" --runs "$runs" --name-a "run -- true (local)" --name-b "run --remote HOST -- true" -- \
        "$tool" run -- true --vs-- "$tool" run --remote "$host" -- true < /dev/null ||
        echo "remote: the local pair could not be measured here"
echo "-- run --remote against ssh over the same shared connection (the floor)"
"$interleave" --runs "$runs" --name-a "ssh HOST true (shared)" --name-b "run --remote HOST -- true" -- \
        ssh -F "$ssh_config" -o "$shared" "$host" true --vs-- \
        "$tool" run --remote "$host" -- true < /dev/null ||
        echo "remote: the shared-connection pair could not be measured here"
exit 0
