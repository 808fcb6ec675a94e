#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 21's benchmarks: what the network dimension costs (docs/network.md).  Each pair is measured in
# turn with its baseline (A B A B ..., bench/interleave), median of the pair ratios, the goal printed
# beside it; Landlock, then bwrap:
#   gets   baseline: 100 HTTP GETs by one curl (its URL glob, one connection each: the server answers
#                    HTTP/1.0) to a loopback server, under run --network on (curl told the name's address
#                    with --resolve: the host's resolver knows nothing of the test's names)
#          candidate: the same under the allow-list (--allow-host allowed.dsh.test, the fixture's dnsmasq
#                    as --dns-upstream): curl reads HTTP_PROXY, each GET goes through the call's proxy,
#                    which checks the name and resolves it through the DNS stub's upstream
#          goal <= 1.3x
#   unaware  the same 100 GETs by a proxy-unaware client (python3, a socket to the name each time, the
#                    proxy variables unset): under the allow-list each connect is decided by the
#                    supervisor and captured by the proxy; against python3 doing the same under on, its
#                    address given (no goal of its own: what capture costs beside the proxy)
#   start  baseline: `bash -c true` under run --network on
#          candidate: the same under the allow-list (the proxy and the stub started and stopped per call)
#          goal <= 1.10x
# The fixtures (dnsmasq, a python HTTP server: tests/network/fixtures.py) run on the host's loopback,
# started by bench/network-fixture.py and stopped at exit.  The HTTP server is python's: its own time per
# request is in both sides of each pair, so the ratio is of the whole client-to-server path.
# Only prints.  Usage: bench/network.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
. "$(dirname "$0")/bench-prelude.sh"
source_root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${BUILD_DIR:-build}}
tool="$build/dsh-sandbox"
interleave="$build/bench/interleave"
get_runs=${GET_RUNS:-11}
get_count=${GET_COUNT:-100}
start_runs=${START_RUNS:-21}
bench_require network "$tool" "$interleave"
for program in curl python3; do
        command -v $program >/dev/null 2>&1 || { echo "network: no $program; nothing measured"; exit 0; }
done
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")
interleave=$(cd "$(dirname "$interleave")" && pwd)/$(basename "$interleave")
bench_scratch
export HOME="$scratch/home"
mkdir -p "$HOME" "$scratch/workspace" "$scratch/fixtures"
cd "$scratch/workspace" || exit 0
unset HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy NO_PROXY no_proxy

# The fixtures, until this script ends: their stdin is a FIFO this script holds open.
mkfifo "$scratch/fixtures/stdin"
python3 "$source_root/bench/network-fixture.py" "$scratch/fixtures" < "$scratch/fixtures/stdin" \
        > "$scratch/fixtures/ready" 2>"$scratch/fixtures/errors" &
fixture_pid=$!
exec 9> "$scratch/fixtures/stdin"
# At exit: the end of its stdin stops the fixtures (dnsmasq with them), and the script waits for that.
trap 'exec 9>&-; wait "$fixture_pid" 2>/dev/null; rm -rf "$scratch"' EXIT
while ! grep -q . "$scratch/fixtures/ready" 2>/dev/null; do
        kill -0 "$fixture_pid" 2>/dev/null || break
        sleep 0.05
done
read -r state http_port dns_port < "$scratch/fixtures/ready" || state=""
if [ "$state" != ready ]; then
        echo "network: the fixtures did not start ($(cat "$scratch/fixtures/ready" "$scratch/fixtures/errors" | tail -n 3)); nothing measured"
        exit 0
fi
allow="--allow-host allowed.dsh.test --dns-upstream 127.0.0.1:$dns_port"
url="http://allowed.dsh.test:$http_port/[1-$get_count]"
# The proxy-unaware client: a fresh socket to the name for each GET (resolved by glibc each time, as a
# program that opens its connections itself does); the address given under on.
unaware='import socket, sys
host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(count):
    with socket.create_connection((host, port)) as s:
        s.sendall(b"GET /%d HTTP/1.0\r\nHost: allowed.dsh.test\r\n\r\n" % i)
        while s.recv(65536):
            pass'

# pair RUNS WARMUP NAME_A NAME_B A... --vs-- B...: bench/interleave's lines; fails when a run failed.
pair() {
        pair_runs=$1 pair_warmup=$2 pair_name_a=$3 pair_name_b=$4
        shift 4
        "$interleave" --runs "$pair_runs" --warmup "$pair_warmup" --name-a "$pair_name_a" \
                --name-b "$pair_name_b" -- "$@"
}

for backend in landlock bwrap; do
        if [ $backend = bwrap ] && [ ! -x /usr/bin/bwrap ]; then
                echo "network: no /usr/bin/bwrap; the bwrap pairs are not measured"
                continue
        fi
        run="$tool run --backend $backend --mode workspace-write --root $scratch/workspace"
        # $run and $allow are words of this build's paths and options: split on purpose.
        echo "-- $backend: $get_count HTTP GETs by curl, allow-list (through the proxy) against on (goal <= 1.3x)"
        pair "$get_runs" 2 "run --network on" "run allow-list" \
                $run --network on -- curl -sf --resolve "allowed.dsh.test:$http_port:127.0.0.1" "$url" \
                --vs-- $run $allow -- curl -sf "$url" ||
                echo "network: the $backend curl pair could not be measured here (a run failed)"
        echo "-- $backend: $get_count HTTP GETs by a proxy-unaware client, allow-list (captured) against on"
        pair "$get_runs" 2 "run --network on" "run allow-list" \
                $run --network on -- python3 -c "$unaware" 127.0.0.1 "$http_port" "$get_count" \
                --vs-- $run $allow -- env -u HTTP_PROXY -u http_proxy python3 -c "$unaware" allowed.dsh.test \
                "$http_port" "$get_count" ||
                echo "network: the $backend proxy-unaware pair could not be measured here (a run failed)"
        echo "-- $backend: bash -c true, allow-list against on (goal <= 1.10x)"
        pair "$start_runs" 3 "run --network on" "run allow-list" $run --network on -- bash -c true \
                --vs-- $run $allow -- bash -c true ||
                echo "network: the $backend start-up pair could not be measured here (a run failed)"
done
exit 0
