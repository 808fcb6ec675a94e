# SPDX-License-Identifier: MIT
# Sourced by the benches of the long-lived front ends (serve.bench.sh, mcp.bench.sh), with $name
# (what to call the bench in its messages) and $build set: the programs both need (or exit 0 saying
# what is missing), a scratch directory with the XDG directories inside it, and a workspace.
. "$(dirname "$0")/bench-prelude.sh"
tool="$build/dsh-sandbox"
interleave="$build/bench/interleave"
client="$build/bench/serve-client"
bench_require "$name" "$tool" "$interleave" "$client"
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")
bench_scratch
workspace="$scratch/workspace"
mkdir -p "$workspace"
