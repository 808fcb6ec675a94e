#!/bin/sh
# SPDX-License-Identifier: MIT
# What the masks cost per bwrap call (issue 22): the mounts made over each existing mask (the empty
# mask file bound read-only, an empty read-only tmpfs per directory), the pins beside them, and
# dsh-sandbox-exec's inner read layer for the absent ones (--mask, --mask-closed).  The argv is
# confine's for a home holding a typical dotfile set, spawned as it is (B) and with the masks' words
# taken out (A), in turn (A B A B ...), median of the pair ratios:
#   mounts   A: no mask mounted, no --mask   B: the masks mounted, no --mask
#   inner    A: the masks mounted, no --mask B: the whole argv (mounts and the inner layer)
# Only prints.
#
# Usage: bench/bwrap-masks.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
. "$(dirname "$0")/bench-prelude.sh"
build=${1:-${BUILD_DIR:-build}}
tool="$build/dsh-sandbox"
interleave="$build/bench/interleave"
runs=${RUNS:-200}
bench_require bwrap-masks "$tool" "$interleave"
command -v bwrap >/dev/null 2>&1 || { echo "bwrap-masks: no bwrap; nothing measured"; exit 0; }
bench_scratch

home="$scratch/home"
mkdir -p "$home/.ssh" "$home/.aws" "$home/.config/gh" "$home/.docker" "$home/.kube" || exit 0
i=0
while [ $i -lt 50 ]; do : > "$home/.dotfile$i"; i=$((i + 1)); done
for name in id_ed25519 id_ed25519.pub id_rsa id_rsa.pub known_hosts config; do : > "$home/.ssh/$name"; done
for name in .aws/credentials .netrc .config/gh/hosts.yml .docker/config.json .kube/config .git-credentials; do
        : > "$home/$name"
done
export HOME="$home"

for mode in read-only workspace-write; do
        "$tool" confine --backend bwrap --mode "$mode" --root "$home" -- true > "$scratch/argv.json" || {
                echo "bwrap-masks: confine --backend bwrap failed here; nothing measured"
                exit 0
        }
        # Three argvs, one word a line: without the masks' words, with the mounts only, whole.
        python3 - "$scratch" "$build/dsh-sandbox-mask" <<'PY' || exit 0
import json, sys
scratch, mask = sys.argv[1], sys.argv[2]
argv = json.load(open(f"{scratch}/argv.json"))["argv"]
helper = argv.index("--")
def without_mounts(words):
    out, i = [], 0
    while i < len(words):
        if words[i] == "--ro-bind" and words[i + 1].endswith("/dsh-sandbox-mask"):
            i += 3
        elif words[i:i + 3] == ["--perms", "0700", "--tmpfs"]:
            i += 6
        else:
            out.append(words[i]); i += 1
    return out
def without_inner(words):
    out, i = [], 0
    while i < len(words):
        if words[i] in ("--mask", "--mask-closed"):
            i += 2
        else:
            out.append(words[i]); i += 1
    return out
head, tail = argv[:helper], argv[helper:]
for name, words in (("a", without_mounts(head) + without_inner(tail)), ("b", head + without_inner(tail)),
                    ("c", argv)):
    open(f"{scratch}/{name}", "w").write(" ".join(words))
PY
        echo "$mode: $(tr ' ' '\n' < "$scratch/c" | grep -c -- '/dsh-sandbox-mask$') files and" \
             "$(tr ' ' '\n' < "$scratch/c" | grep -c -- '^--remount-ro$') read-only tmpfs (hidden dirs included)," \
             "$(tr ' ' '\n' < "$scratch/c" | grep -c -- '^--mask') names for the inner layer"
        # shellcheck disable=SC2046
        "$interleave" --runs "$runs" --name-a "$mode, no mask mounted" --name-b "$mode, masks mounted" -- \
                $(cat "$scratch/a") --vs-- $(cat "$scratch/b") || echo "bwrap-masks: the mounts pair failed"
        # shellcheck disable=SC2046
        "$interleave" --runs "$runs" --name-a "$mode, masks mounted" --name-b "$mode, + the inner layer" -- \
                $(cat "$scratch/b") --vs-- $(cat "$scratch/c") || echo "bwrap-masks: the inner layer pair failed"
done
