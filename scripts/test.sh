#!/usr/bin/env bash
# The whole test suite, twice: the normal build and an ASan+UBSan build; then a short fuzz run; then
# the README's own commands (demo, Install) in its release build; then the house check.
# Usage: scripts/test.sh        (installs missing build dependencies when root)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-deps.sh
./scripts/ensure-npm-deps.sh

# A build tree under /tmp would put the sandbox's own programs inside Landlock's temp area, and every
# workspace-write call under Landlock refuses a writable root that holds them (a confined command
# could replace the next call's runner): a checkout under /tmp builds under /var/tmp instead.
build_root=.
case "$PWD/" in
  /tmp/*) build_root=/var/tmp/dsh-sandbox-build-$(printf '%s' "$PWD" | sha256sum | cut -c1-12) ;;
esac

status=0
run_suite() {
  local build=$1; shift
  if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$@" >/dev/null
  fi
  ninja -C "$build" >/dev/null
  echo "== meson test ($build) =="
  meson test -C "$build" --print-errorlogs --num-processes 2 || status=1
}

run_suite "$build_root/build-test" --buildtype=debugoptimized
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  run_suite "$build_root/build-sanitize" --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false

# The fuzz smoke: every libFuzzer target over its committed corpus for a few seconds (clang build in
# build-fuzz/).  A crash fails the run; scripts/fuzz.sh SECONDS runs longer sessions.
echo "== fuzz smoke (build-fuzz) =="
./scripts/fuzz.sh 3 || status=1

# What a new user types first, as the README writes it: the demo, the Install (release, test
# programs included, into a DESTDIR) and the installed copy's 'install' suite, in the README's build/.
echo "== the README's commands (build) =="
./scripts/readme-check.sh "$build_root/readme-results.jsonl" || status=1

# The house (docs/architecture.md): no include cycle, no file over 1,000 lines, no include going
# upwards, but those scripts/house-exceptions.txt lists; one record per check for the closing count.
echo "== the house (scripts/check-house.py) =="
: >"$build_root/house-results.jsonl"
python3 scripts/check-house.py --results "$build_root/house-results.jsonl" || status=1

# One closing line over every test case of both builds (cmocka prints per-case results) and
# every fuzz target (one case each).
python3 scripts/count-tests.py "$build_root/build-test/meson-logs/testlog.json" \
  "$build_root/build-sanitize/meson-logs/testlog.json" \
  build-fuzz/fuzz-results.jsonl "$build_root/readme-results.jsonl" "$build_root/house-results.jsonl"
exit $status
