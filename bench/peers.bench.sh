#!/bin/sh
# SPDX-License-Identifier: MIT
# dsh-sandbox beside the sandboxes users compare it with, on the same machine, in one run:
#   OpenAI's Codex CLI   (`codex sandbox`, npm @openai/codex, pinned below)
#   Anthropic's sandbox-runtime   (`srt`, npm @anthropic-ai/sandbox-runtime, pinned below)
# Each workload runs under ours and under a peer in turn (A B A B ..., bench/interleave), and
# the median of the pair ratios says how many times ours the peer costs:
#   bash -c true                     read-only (ours: run; codex: its default; srt: no writes)
#   git clone of a local repository  workspace-write, the clone landing in the workspace
#                                    (ours: run -m workspace-write; codex: -P :workspace; srt:
#                                    allowWrite the workspace)
# The peers are not installed unless asked: PEERS_INSTALL=1 installs the pinned versions into
# $PEERS_DIR (default /var/tmp/dsh-sandbox-peers) with npm, and sandbox-runtime's Debian
# dependencies (ripgrep, socat) with apt-get.  A peer that is missing or cannot run here is
# said and skipped.  Only prints.
#
# Usage: [PEERS_INSTALL=1] bench/peers.bench.sh [BUILD_DIR]   (default: $BUILD_DIR, else build)
set -u
. "$(dirname "$0")/bench-prelude.sh"
build=${1:-${BUILD_DIR:-build}}
tool="$build/dsh-sandbox"
interleave="$build/bench/interleave"
runs=${RUNS:-40}
codex_version=0.171.0
srt_version=0.0.83
peers=${PEERS_DIR:-/var/tmp/dsh-sandbox-peers}
bench_require peers "$tool" "$interleave"
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")

if [ "${PEERS_INSTALL:-0}" = 1 ]; then
        mkdir -p "$peers" &&
                (cd "$peers" && npm install --no-audit --no-fund --silent \
                        "@openai/codex@$codex_version" "@anthropic-ai/sandbox-runtime@$srt_version") ||
                echo "peers: npm could not install the pinned peers"
        if ! command -v rg >/dev/null || ! command -v socat >/dev/null; then
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep socat >/dev/null ||
                        echo "peers: apt-get could not install ripgrep and socat (sandbox-runtime needs them)"
        fi
fi
codex="$peers/node_modules/.bin/codex"
srt="$peers/node_modules/.bin/srt"
if [ ! -x "$codex" ] && [ ! -x "$srt" ]; then
        echo "peers: no peer installed under $peers; run with PEERS_INSTALL=1 to install the pinned ones"
        exit 0
fi

bench_scratch
# The peers read their own settings from the home: a fresh one, as for ours.
export HOME="$scratch/home"
mkdir -p "$HOME" "$scratch/workspace"
workspace=$(cd "$scratch/workspace" && pwd)
bench_make_repository "$scratch/source" >/dev/null || { echo "peers: the repository could not be made"; exit 0; }
# Each run clones into a directory of its own: removing the last clone would be timed too.
clone="git clone -q '$scratch/source' \"\$(mktemp -d '$workspace/clone.XXXXXX')/c\""
cat > "$scratch/srt-read-only.json" <<EOF
{"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}, "network": {"allowedDomains": [], "deniedDomains": []}}
EOF
cat > "$scratch/srt-workspace.json" <<EOF
{"filesystem": {"denyRead": [], "allowWrite": ["$workspace"], "denyWrite": []}, "network": {"allowedDomains": [], "deniedDomains": []}}
EOF

# works NAME COMMAND...: the peer runs `bash -c true` here (else it is said, with its first line, and skipped).
works() {
        name=$1
        shift
        if ! "$@" >"$scratch/works.out" 2>&1; then
                echo "peers: $name does not run here ($(head -n 1 "$scratch/works.out")); skipped"
                return 1
        fi
        return 0
}
pair() {
        label=$1
        shift
        echo "-- $label"
        "$interleave" --runs "$runs" "$@" || echo "peers: $label could not be measured here"
}

cd "$workspace" || exit 0
ours_ro="$tool run --mode read-only --root $workspace --"
ours_ww="$tool run --mode workspace-write --root $workspace --"
if [ -x "$codex" ] && works codex "$codex" sandbox -- bash -c true; then
        pair "bash -c true: codex sandbox against ours" --name-a "dsh-sandbox run" --name-b "codex sandbox" -- \
                $ours_ro bash -c true --vs-- "$codex" sandbox -- bash -c true
        pair "git clone: codex sandbox -P :workspace against ours" --name-a "dsh-sandbox run -m workspace-write" \
                --name-b "codex sandbox -P :workspace" -- \
                $ours_ww bash -c "$clone" --vs-- "$codex" sandbox -P :workspace -C "$workspace" -- bash -c "$clone"
fi
if [ -x "$srt" ] && works srt "$srt" -s "$scratch/srt-read-only.json" bash -c true; then
        pair "bash -c true: srt against ours" --name-a "dsh-sandbox run" --name-b "srt" -- \
                $ours_ro bash -c true --vs-- "$srt" -s "$scratch/srt-read-only.json" bash -c true
        pair "git clone: srt (allowWrite the workspace) against ours" --name-a "dsh-sandbox run -m workspace-write" \
                --name-b "srt" -- \
                $ours_ww bash -c "$clone" --vs-- "$srt" -s "$scratch/srt-workspace.json" -c "$clone"
fi
