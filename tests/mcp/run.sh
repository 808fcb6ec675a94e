#!/bin/sh
# The MCP tests (mcp.test.mjs): the official MCP TypeScript SDK's client drives `dsh-sandbox mcp`.
# Skipped (77) only on a host without node; the SDK itself is installed by scripts/ensure-npm-deps.sh
# (scripts/test.sh runs it), pinned by package-lock.json.
set -eu
here=$(dirname "$0")
if ! command -v node >/dev/null 2>&1; then
  echo "skipped: node is not installed (the MCP tests drive the server with the official TypeScript SDK)"
  exit 77
fi
if [ ! -d "$here/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "tests/mcp/node_modules is missing: run scripts/ensure-npm-deps.sh (scripts/test.sh does)" >&2
  exit 1
fi
exec node --test-reporter=tap "$here/mcp.test.mjs"
