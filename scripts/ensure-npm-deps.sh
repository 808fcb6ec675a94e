#!/usr/bin/env bash
# Installs the npm packages the tests need — tests/mcp: the official MCP TypeScript SDK, whose
# client drives `dsh-sandbox mcp` — exactly as their package-lock.json pins them, when they are
# missing or were installed from another lock.  node_modules is never committed.
set -euo pipefail
cd "$(dirname "$0")/.."

for directory in tests/mcp; do
  stamp=$directory/node_modules/.installed-package-lock.json
  cmp -s "$directory/package-lock.json" "$stamp" && continue
  if ! command -v npm >/dev/null 2>&1; then
    echo "ensure-npm-deps: npm is not installed: the tests in $directory cannot run" >&2
    exit 1
  fi
  echo "ensure-npm-deps: npm ci in $directory" >&2
  npm ci --prefix "$directory" --no-audit --no-fund >&2
  cp "$directory/package-lock.json" "$stamp"
done
