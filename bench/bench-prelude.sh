# SPDX-License-Identifier: MIT
# Sourced by the bench/*.bench.sh scripts: the checks and the scratch space they share.  A bench
# only prints, so what is missing ends it with status 0 and a line saying so.

# bench_require NAME PROGRAM...: exits 0 ("NAME: no PROGRAM; nothing measured") unless each
# PROGRAM is executable.
bench_require() {
        bench_name=$1
        shift
        for program in "$@"; do
                if [ ! -x "$program" ]; then
                        echo "$bench_name: no $program; nothing measured"
                        exit 0
                fi
        done
}

# bench_scratch: a fresh $scratch under /var/tmp (or $BENCH_SCRATCH), removed at exit, holding the
# CLI's XDG directories so that no run reads or writes the user's own (nor a $DSH_SANDBOX_CONFIG).
bench_scratch() {
        scratch=$(mktemp -d "${BENCH_SCRATCH:-/var/tmp}/dsh-bench.XXXXXX") || exit 0
        trap 'rm -rf "$scratch"' EXIT
        export XDG_CACHE_HOME="$scratch/cache" XDG_STATE_HOME="$scratch/state" XDG_CONFIG_HOME="$scratch/config"
        unset DSH_SANDBOX_CONFIG
}
