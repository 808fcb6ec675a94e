#!/usr/bin/env bash
# Builds dsh-sandbox and runs one confined command that writes once inside its
# workspace (allowed) and once outside it (denied), then shows the disk.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-deps.sh

# The build is quiet when it works; when it fails, its own errors are shown, not swallowed.
build_log=$(mktemp /var/tmp/dsh-demo-build.XXXXXX)
build_quietly() {
  if ! "$@" >"$build_log" 2>&1; then
    cat "$build_log" >&2
    echo "demo: the build failed: $*" >&2
    rm -f "$build_log"
    exit 1
  fi
}
[ -f build/build.ninja ] || build_quietly meson setup build --buildtype=release
build_quietly ninja -C build
rm -f "$build_log"

workspace=$(mktemp -d /var/tmp/dsh-demo-workspace.XXXXXX)
outside=/var/tmp/dsh-demo-outside-$$.txt
trap 'rm -rf "$workspace" "$outside"' EXIT

echo "workspace: $workspace"
echo "$ dsh-sandbox run --mode workspace-write --root \"\$workspace\" -- sh -c 'echo inside > \$workspace/inside.txt; echo outside > $outside'"
set +e
WORKSPACE=$workspace OUTSIDE=$outside ./build/dsh-sandbox run --mode workspace-write --root "$workspace" -- \
  sh -c 'echo inside > "$WORKSPACE/inside.txt" && echo "wrote $WORKSPACE/inside.txt"; echo outside > "$OUTSIDE"'
status=$?
set -e
echo "exit status: $status"
echo
echo "on disk:"
if [ -f "$workspace/inside.txt" ]; then echo "  $workspace/inside.txt exists (allowed write landed)"; else echo "  $workspace/inside.txt MISSING"; fi
if [ -e "$outside" ]; then echo "  $outside EXISTS: the sandbox did not hold"; exit 1; else echo "  $outside absent (denied write left nothing)"; fi
