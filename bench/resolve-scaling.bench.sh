#!/usr/bin/env bash
# `policy resolve --session` on session logs of 10, 10k and 1M events: replay must
# grow at most linearly, and a 1M-event log (~80 MB) must resolve in under a second.
# Prints the median wall time per size, the cost per event, and the growth ratio per
# decade of events (linear growth is <= 10x per decade; a fixed start-up cost makes
# it smaller), against a baseline (`dsh-sandbox --version`) measured in the same run.  Two logs per size: mode switches only (the shape this library
# writes, replayed on its fast path), and a mixed log where every other event is a
# type this library does not know (parsed in full by jansson).  Informational only:
# it never fails.
# Usage: bench/resolve-scaling.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${BUILD_DIR:-build}}
if [ ! -x "$build/dsh-sandbox" ]; then
  echo "resolve-scaling: no $build/dsh-sandbox; build first (meson setup $build && ninja -C $build)" >&2
  exit 0
fi
bin="$PWD/$build/dsh-sandbox"
state=$(mktemp -d "${TMPDIR:-/tmp}/dsh-resolve-scaling.XXXXXX")
trap 'rm -rf "$state"' EXIT
export DSH_SANDBOX_STATE_DIR="$state" DSH_SANDBOX_CONFIG= XDG_CONFIG_HOME="$state"

# Writes a log of $2 events named $1; $3 = mixed|mode.  Lines are byte-for-byte what
# the library writes (compact JSON, seq 1..N), so the benchmark measures replay, not a
# hand-made shortcut.
make_log() {
  awk -v id="$1" -v n="$2" -v shape="$3" -v cwd="$state" 'BEGIN {
    split("read-only workspace-write danger-full-access", modes, " ")
    t = 1790000000000
    printf "{\"type\":\"session\",\"version\":0,\"id\":\"%s\",\"createdAt\":%d,\"cwd\":\"%s\",\"delegationDepth\":0}\n", id, t, cwd
    for (i = 1; i <= n; i++) {
      if (shape == "mixed" && i % 2 == 0)
        printf "{\"type\":\"user/message\",\"seq\":%d,\"time\":%d,\"data\":{\"text\":\"event %d\"}}\n", i, t + i, i
      else
        printf "{\"type\":\"sandbox/mode\",\"seq\":%d,\"time\":%d,\"data\":{\"mode\":\"%s\"}}\n", i, t + i, modes[i % 3 + 1]
    }
  }' > "$state/$1.jsonl"
}

# Median wall time in milliseconds of $1 runs of the command after it.  Timed with
# bash's $EPOCHREALTIME, so no clock process is forked inside the measurement.
median_ms() {
  local runs=$1 samples=() start end
  shift
  "$@" > /dev/null   # warm the page cache
  for ((r = 0; r < runs; r++)); do
    start=${EPOCHREALTIME/[.,]/}
    "$@" > /dev/null
    end=${EPOCHREALTIME/[.,]/}
    samples+=($((end - start)))
  done
  printf '%s\n' "${samples[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.3f", a[int((NR + 1) / 2)] / 1000 }'
}

# The baseline: starting the tool at all (`--version`), measured in the same run.
floor=$(median_ms 21 "$bin" --version)
echo "baseline: dsh-sandbox --version takes $floor ms (process start-up, in every row below)"

sizes=(10 10000 1000000)
for shape in mode mixed; do
  echo "-- $shape log --"
  printf '%10s %10s %12s %12s %14s\n' events bytes "median ms" "x baseline" "us per event"
  declare -A ms=()
  for n in "${sizes[@]}"; do
    id="bench-$shape-$n"
    make_log "$id" "$n" "$shape"
    runs=21; [ "$n" -ge 1000000 ] && runs=5
    ms[$n]=$(median_ms "$runs" "$bin" policy resolve --session "$id" --json)
    bytes=$(stat -c %s "$state/$id.jsonl")
    printf '%10d %10d %12s %12s %14s\n' "$n" "$bytes" "${ms[$n]}" \
      "$(awk -v t="${ms[$n]}" -v f="$floor" 'BEGIN { printf "%.2f", t / f }')" \
      "$(awk -v t="${ms[$n]}" -v f="$floor" -v n="$n" 'BEGIN { d = t - f; if (d < 0) d = 0; printf "%.3f", d * 1000 / n }')"
    rm -f "$state/$id.jsonl"
  done
  awk -v a="${ms[10]}" -v b="${ms[10000]}" -v c="${ms[1000000]}" -v f="$floor" 'BEGIN {
    printf "ratio per decade (wall): 10 -> 10k: %.2fx   10k -> 1M: %.2fx   (linear: <= 10x)\n", (b / a) ^ (1 / 3), (c / b) ^ (1 / 2)
    rb = b - f; rc = c - f
    if (rb < 0.001) rb = 0.001
    printf "ratio per decade (minus start-up): 10k -> 1M: %.2fx   (replay alone; linear: 10x)\n", (rc / rb) ^ (1 / 2)
    printf "1M events resolve in %.0f ms: %s\n", c, (c < 1000 ? "under a second" : "OVER a second")
  }'
  unset ms
done
