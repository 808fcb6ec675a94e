#!/bin/sh
# SPDX-License-Identifier: MIT
# What one long-lived `dsh-sandbox mcp` costs an agent's tool call against one CLI process per
# call, measured in turn with the baseline (A B A B ...), median of the pair ratios
# (bench/interleave):
#
#   bash    baseline:  200 x `dsh-sandbox bash --mode workspace-write --root WS --json true`
#           candidate: 200 tools/call bash {command: "true"} to one `dsh-sandbox mcp` process
#   write   baseline:  1,000 x `dsh-sandbox fs write --mode workspace-write --root WS FILE` (stdin empty)
#           candidate: 1,000 tools/call write_file {path: FILE, content: ""} to one mcp process
#
# Each request is answered before the next is sent, as an agent waits for each tool result.  Both
# go through bench/serve-client (its --serve mode speaks the same line framing; the bench skips
# MCP's initialize, which the server does not require).  A ratio below 1 is what the server saves.
# Only prints.
#
# Usage: bench/mcp.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
build=${1:-${BUILD_DIR:-build}}
runs=${MCP_RUNS:-5}
bashes=${MCP_BASH_CALLS:-200}
writes=${MCP_WRITES:-1000}
name=mcp
. "$(dirname "$0")/service-prelude.sh"

echo "-- bash true x $bashes: one CLI process per call vs one mcp process"
"$interleave" --runs "$runs" --warmup 1 --name-a "$bashes x bash --json true" --name-b "mcp: $bashes x tools/call bash true" -- \
        "$client" --repeat "$bashes" -- "$tool" bash --mode workspace-write --root "$workspace" --json true \
        --vs-- "$client" --serve "$bashes" \
        '{"method":"tools/call","params":{"name":"bash","arguments":{"command":"true"}}}' -- \
        "$tool" mcp --mode workspace-write --root "$workspace" ||
        echo "mcp: the bash pair could not be measured here"

echo "-- write an empty file x $writes: one CLI process per call vs one mcp process"
"$interleave" --runs "$runs" --warmup 1 --name-a "$writes x fs write" --name-b "mcp: $writes x tools/call write_file" -- \
        "$client" --repeat "$writes" -- "$tool" fs write --mode workspace-write --root "$workspace" "$workspace/file" \
        --vs-- "$client" --serve "$writes" \
        '{"method":"tools/call","params":{"name":"write_file","arguments":{"path":"file","content":""}}}' -- \
        "$tool" mcp --mode workspace-write --root "$workspace" </dev/null ||
        echo "mcp: the write pair could not be measured here"
exit 0
