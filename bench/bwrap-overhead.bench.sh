#!/bin/sh
# SPDX-License-Identifier: MIT
# The cost of going through dsh-sandbox for bwrap, as ratios against raw bwrap
# with the same profile, measured in the same run:
#   raw bwrap            bwrap <the profile dsh-sandbox builds> -- bash -c true
#   floor                a static program that only execs that raw bwrap (any wrapper's floor)
#   run --backend bwrap  the sole candidate: no probe, no cache
#   run --backend auto   the bwrap, landlock chain with a warm verdict cache
# Target: <= 1.05x raw bwrap.  A benchmark never fails a test: it only prints.
#
# Usage: bench/bwrap-overhead.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
build=${1:-${BUILD_DIR:-build}}
tool="$build/dsh-sandbox"
if ! command -v hyperfine >/dev/null 2>&1; then
        echo "bwrap-overhead: hyperfine is not installed; nothing measured"
        exit 0
fi
if [ ! -x "$tool" ] || [ ! -x /usr/bin/bwrap ]; then
        echo "bwrap-overhead: need $tool and /usr/bin/bwrap; nothing measured"
        exit 0
fi
scratch=$(mktemp -d "$build/bench-bwrap.XXXXXX") || exit 0
trap 'rm -rf "$scratch"' EXIT
export XDG_CACHE_HOME="$scratch/cache"
echo '{}' > "$scratch/config.json"
export DSH_SANDBOX_CONFIG="$scratch/config.json"

# The exact profile dsh-sandbox uses, taken from `confine` so the baseline cannot drift.
raw=$("$tool" confine --backend bwrap --mode read-only -- bash -c true | python3 -c '
import json, shlex, sys
print(" ".join(shlex.quote(word) for word in json.load(sys.stdin)["argv"]))') || exit 0
# The floor any wrapper pays: a static program that only execs raw bwrap.
floor="$build/bench/exec-floor"
[ -x "$floor" ] || { echo "bwrap-overhead: no $floor; nothing measured"; exit 0; }
# Warm the verdict cache for auto (one probe, persisted).
"$tool" probe >/dev/null 2>&1

hyperfine -N --warmup 20 --runs "${RUNS:-300}" --export-json "$scratch/result.json" \
        -n raw-bwrap "$raw" \
        -n floor-bwrap "$floor $raw" \
        -n run-bwrap "$tool run --backend bwrap --mode read-only -- bash -c true" \
        -n run-auto-warm "$tool run --mode read-only -- bash -c true" >/dev/null 2>&1 || {
        echo "bwrap-overhead: hyperfine failed; nothing measured"
        exit 0
}
python3 - "$scratch/result.json" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
base = results["raw-bwrap"]
floor = results["floor-bwrap"]
print(f"{'variant':<25} {'median':>10} {'x raw bwrap':>12} {'x floor':>9}")
for name in ("raw-bwrap", "floor-bwrap", "run-bwrap", "run-auto-warm"):
    r = results[name]
    print(f"{name:<25} {r['median'] * 1000:7.2f} ms {r['median'] / base['median']:11.3f}x {r['median'] / floor['median']:8.3f}x")
print("target: run <= 1.05x raw bwrap; floor-bwrap is what any wrapper process costs on this host")
PY
exit 0
