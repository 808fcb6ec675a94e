#!/bin/sh
# SPDX-License-Identifier: MIT
# What the masks cost per Landlock call (issue 22): the read grant of "/" becomes an enumeration of
# every directory on the way to a mask (core/read-mask.h), once per call.  In turn with the
# baseline (A B A B ...), median of the pair ratios:
#   launcher  baseline: landlock-run --ro / --rw /dev/null -- true
#             candidate: the same with the default masks' --mask/--mask-closed, as `confine` passes
#             them for a home holding a typical dotfile set (60 entries, .ssh with keys)
#   run       baseline: dsh-sandbox run --backend landlock with maskedPaths [] (no mask)
#             candidate: the same call with the default masks
# Only prints.
#
# Usage: bench/masks.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
. "$(dirname "$0")/bench-prelude.sh"
build=${1:-${BUILD_DIR:-build}}
tool="$build/dsh-sandbox"
launcher="$build/landlock-run"
interleave="$build/bench/interleave"
runs=${RUNS:-300}
bench_require masks "$tool" "$launcher" "$interleave"
bench_scratch

home="$scratch/home"
mkdir -p "$home/.ssh" "$home/.aws" "$home/proj" "$home/.config/gh" "$home/.local/share" || exit 0
i=0
while [ $i -lt 50 ]; do : > "$home/.dotfile$i"; i=$((i + 1)); done
for name in id_ed25519 id_ed25519.pub id_rsa id_rsa.pub known_hosts config; do : > "$home/.ssh/$name"; done
: > "$home/.aws/credentials"; : > "$home/.netrc"; : > "$home/.config/gh/hosts.yml"
export HOME="$home"
echo '{"maskedPaths": []}' > "$scratch/no-masks.json"

set -- $("$tool" confine --backend landlock --mode read-only --root "$home/proj" -- true | python3 -c '
import json, sys
argv = json.load(sys.stdin)["argv"]
print(" ".join(argv[1:argv.index("--")]))') || exit 0
echo "-- launcher: $(echo "$@" | tr ' ' '\n' | grep -c -- '^--mask') masks"
"$interleave" --runs "$runs" --name-a "landlock-run --ro /" --name-b "landlock-run --ro / + masks" -- \
        "$launcher" --ro / --rw /dev/null -- true --vs-- "$launcher" "$@" -- true ||
        echo "masks: the launcher pair could not be measured here"

if "$tool" run --config "$scratch/no-masks.json" --backend landlock --mode read-only --root "$home/proj" -- true \
        >/dev/null 2>&1; then
        echo "-- run"
        "$interleave" --runs "$runs" --name-a "run, maskedPaths []" --name-b "run, default masks" -- \
                "$tool" run --config "$scratch/no-masks.json" --backend landlock --mode read-only --root "$home/proj" \
                -- true --vs-- "$tool" run --backend landlock --mode read-only --root "$home/proj" -- true ||
                echo "masks: the run pair could not be measured here"
else
        echo "masks: this build's config takes no maskedPaths; the run pair is not measured"
fi
