# SPDX-License-Identifier: MIT
# Sourced by the benches of the long-lived front ends (serve.bench.sh, mcp.bench.sh), with $name
# (what to call the bench in its messages) and $build set: finds the programs both need, or exits
# 0 saying what is missing (a bench only prints), and makes a scratch directory of its own with
# XDG directories inside it and a workspace, removed at exit.
tool="$build/dsh-sandbox"
interleave="$build/bench/interleave"
client="$build/bench/serve-client"
for program in "$tool" "$interleave" "$client"; do
        if [ ! -x "$program" ]; then
                echo "$name: no $program; nothing measured"
                exit 0
        fi
done
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")
scratch=$(mktemp -d "${BENCH_SCRATCH:-/var/tmp}/dsh-bench.XXXXXX") || exit 0
trap 'rm -rf "$scratch"' EXIT
export XDG_CACHE_HOME="$scratch/cache" XDG_STATE_HOME="$scratch/state" XDG_CONFIG_HOME="$scratch/config"
unset DSH_SANDBOX_CONFIG
workspace="$scratch/workspace"
mkdir -p "$workspace"
