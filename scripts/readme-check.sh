#!/usr/bin/env bash
# What a new user types first, run as the README writes it: the Quick start's demo, then the
# Install section (release build, test programs included, into a DESTDIR), then the installed copy
# used by an embedder (the 'install' suite of that same release tree: pkg-config, examples/embed.c
# with LD_LIBRARY_PATH and with an rpath, the installed programs confining a write).
# Usage: scripts/readme-check.sh RESULTS_JSONL
# Each step appends one record in the shape of meson's testlog.json to RESULTS_JSONL, so that
# scripts/count-tests.py counts it; the script exits 1 when any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
results=${1:?usage: scripts/readme-check.sh RESULTS_JSONL}
: >"$results"
scratch=$(mktemp -d /var/tmp/dsh-readme-check.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
status=0

record() {
  printf '{"name": "readme-%s", "result": "%s"}\n' "$1" "$2" >>"$results"
  echo "readme-check: $1: $2"
  [ "$2" = OK ] || status=1
}

# 1. The Quick start: ./scripts/demo.sh exits 0 and shows the allowed write landed, the other absent.
if ./scripts/demo.sh >"$scratch/demo.out" 2>&1 && grep -q 'exists (allowed write landed)' "$scratch/demo.out" &&
    grep -q 'absent (denied write left nothing)' "$scratch/demo.out"; then
  record demo OK
else
  cat "$scratch/demo.out"
  record demo FAIL
fi

# 2. The Install section, word for word but for the DESTDIR (the README says DESTDIR works as usual).
# The demo already set up build/ as a release tree; a tree set up otherwise is set up again.
install_log=$scratch/install.log
stage=$scratch/stage
if [ -f build/build.ninja ] && [ "$(meson introspect --buildoptions build 2>/dev/null |
    python3 -c 'import json,sys; o={x["name"]: x["value"] for x in json.load(sys.stdin)}; print(o["buildtype"], o["prefix"])')" != "release /usr/local" ]; then
  meson setup --wipe build --buildtype=release --prefix=/usr/local >"$install_log" 2>&1
fi
installed() {
  [ -x "$stage/usr/local/bin/dsh-sandbox" ] && [ -x "$stage/usr/local/bin/landlock-run" ] &&
    [ -x "$stage/usr/local/libexec/dsh-sandbox-exec" ] &&
    [ -n "$(find "$stage/usr/local" -name libdsh-sandbox.so.0 -print -quit)" ]
}
if { [ -f build/build.ninja ] || meson setup build --buildtype=release --prefix=/usr/local; } >>"$install_log" 2>&1 &&
    ninja -C build >>"$install_log" 2>&1 && DESTDIR=$stage meson install -C build >>"$install_log" 2>&1 && installed; then
  record install OK
else
  tail -40 "$install_log"
  record install FAIL
fi

# 3. The installed copy as an embedder and a user use it, from that same release tree.
if meson test -C build --suite install --print-errorlogs >"$scratch/suite.out" 2>&1; then
  record install-suite OK
else
  cat "$scratch/suite.out"
  record install-suite FAIL
fi
exit $status
