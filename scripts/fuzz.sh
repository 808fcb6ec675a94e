#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang, ASan+UBSan, in build-fuzz/) and runs each one over
# its committed seed corpus for SECONDS_PER_TARGET seconds (default 5).  Any crash, leak, UB, hang
# (an input that runs over 10 s) or broken invariant fails the run; the input that did it is kept
# in build-fuzz/artifacts/ and the command to replay it is printed.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]     (scripts/fuzz.sh 600 for a long session)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-5}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET] (a positive whole number)" >&2
  exit 2
fi
targets=(config session-log cli-arguments landlock-run-arguments json-decode metadata-call write-call inet-message
         remote-frames host-pattern tls-hello http-head dns-answer)
build=build-fuzz
# One record per target in the shape of meson's testlog.json, so that scripts/count-tests.py
# counts each target as one test case.
results=$build/fuzz-results.jsonl

record() {
  printf '{"name": "fuzz-%s", "result": "%s"}\n' "$1" "$2" >>"$results"
}

scratch=
finish() {
  local code=$?
  if [ -n "$scratch" ]; then rm -rf "$scratch"; fi
  # Whatever stopped this script early still leaves a failed record for the closing count.
  if [ $code -ne 0 ] && ! grep -q '"FAIL"' "$results" 2>/dev/null; then record run FAIL; fi
}
trap finish EXIT

mkdir -p "$build"
rm -f "$results"
# Quiet when the build works; a failing one shows its own errors.
build_log=$(mktemp /var/tmp/dsh-fuzz-build.XXXXXX)
build_quietly() {
  if ! "$@" >"$build_log" 2>&1; then
    cat "$build_log" >&2
    rm -f "$build_log"
    record build FAIL
    exit 1
  fi
}
if [ ! -f "$build/build.ninja" ]; then
  build_quietly env CC=clang meson setup "$build" -Dfuzz=true -Dtests=false --buildtype=debugoptimized
fi
build_quietly ninja -C "$build"
rm -f "$build_log"

# The session-log target writes every input to a file: on tmpfs, and removed afterwards.
scratch=$(mktemp -d /dev/shm/dsh-fuzz.XXXXXX)

status=0
for target in "${targets[@]}"; do
  binary=$build/fuzz/fuzz-$target
  # New inputs go to the first directory, in the build tree; the committed seeds are only read.
  work_corpus=$build/corpus/$target
  log=$build/logs/$target.log
  mkdir -p "$work_corpus" "$build/artifacts" "$build/logs"
  # -close_fd_mask=3: the parsers' usage errors would flood the log; sanitizer reports still go through.
  if TMPDIR=$scratch UBSAN_OPTIONS=print_stacktrace=1 "$binary" "$work_corpus" "fuzz/corpus/$target" \
       -max_total_time="$seconds" -timeout=10 -close_fd_mask=3 -print_final_stats=1 \
       -artifact_prefix="$build/artifacts/$target-" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz $target: ok, ${runs:-?} inputs in ${seconds} s"
    record "$target" OK
  else
    status=1
    echo "fuzz $target: FAILED (log: $log)"
    grep -aE '^(==[0-9]+==ERROR|SUMMARY|invariant failed|error message is not|.*runtime error)' "$log" | head -20 || true
    artifact=$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)
    echo "replay: $binary ${artifact:-ARTIFACT}"
    echo "once fixed, add that input to fuzz/corpus/$target/ as a regression seed"
    record "$target" FAIL
  fi
done
exit $status
