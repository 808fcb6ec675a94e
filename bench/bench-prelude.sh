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

# The workloads more than one bench runs, each made once per run in the scratch space.

# bench_make_repository DIR: a git repository of 400 files in 20 directories, in 4 commits.
bench_make_repository() {
        mkdir -p "$1" && (
                cd "$1" || exit 1
                git init -q . && git config user.email bench@example.com && git config user.name bench || exit 1
                for commit in 1 2 3 4; do
                        i=0
                        while [ $i -lt 100 ]; do
                                directory=d$((i % 20))
                                mkdir -p $directory
                                printf 'commit %s file %s\n%0200d\n' $commit $i $i > $directory/f$commit-$i.txt
                                i=$((i + 1))
                        done
                        git add -A && git commit -q -m "commit $commit" || exit 1
                done
        )
}

# bench_make_project DIR: a meson C project of 24 files, a library of 20 sources with their headers
# and a program that uses it.
bench_make_project() {
        mkdir -p "$1/src" || return 1
        project_sources=""
        i=0
        while [ $i -lt 20 ]; do
                printf '#include "part%d.h"\nint part%d(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * %d; return s; }\n' \
                        $i $i $i > "$1/src/part$i.c"
                printf 'int part%d(int x);\n' $i > "$1/src/part$i.h"
                project_sources="$project_sources 'src/part$i.c',"
                i=$((i + 1))
        done
        printf '#include <stdio.h>\n#include "part0.h"\nint main(void) { printf("%%d\\n", part0(10)); return 0; }\n' \
                > "$1/src/main.c"
        printf "project('bench', 'c')\nparts = static_library('parts', [%s])\nexecutable('bench', 'src/main.c', link_with : parts)\n" \
                "$project_sources" > "$1/meson.build"
}

# bench_make_archive DIR ARCHIVE: 3,000 files in 30 directories under DIR, modes 0600/0644/0640/0755 in
# turn, one fixed time, archived with them into ARCHIVE.
bench_make_archive() {
        mkdir -p "$1" && (
                cd "$1" || exit 1
                i=0
                while [ $i -lt 3000 ]; do
                        directory=d$((i % 30))
                        [ -d $directory ] || mkdir $directory
                        echo $i > $directory/f$i
                        i=$((i + 1))
                done
                find . -type f -name 'f*[0]' -exec chmod 0600 {} + && find . -type f -name 'f*[13]' -exec chmod 0640 {} + &&
                        find . -type f -name 'f*[57]' -exec chmod 0755 {} + &&
                        find . -exec touch -h -d '2020-01-02 03:04:05 UTC' {} + && tar cf "$2" .
        )
}
