#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `meson install` into a DESTDIR, then the installed copy used as a user and an embedder would.
#
#   test-install.sh layout   every file where it belongs; the soname; headers that compile alone; the
#                            .pc; the man pages; the completion; the installed dsh-sandbox confining a
#                            write under bwrap and under Landlock with the helpers where they are installed
#   test-install.sh embed    examples/embed.c built with `pkg-config --cflags --libs dsh-sandbox` against
#                            the installed headers, library and .pc, run with LD_LIBRARY_PATH into the
#                            DESTDIR: a write inside ROOT lands, one outside does not, and the sandbox's own
#                            config beneath ROOT cannot be rewritten — each checked on disk
#
# The programs compile their install locations in, so a run of the installed copy needs it *at* its
# prefix: each run happens in a private mount namespace where the DESTDIR's tree is overlaid on the
# prefix (read-only; the host's own files below it stay visible), which the host never sees.
#
# The environment (tests/install/meson.build): MESON, BUILD_ROOT, SOURCE_ROOT, DSH_TEST_SCRATCH,
# VERSION, PREFIX, BINDIR, LIBDIR, LIBEXECDIR, INCLUDEDIR, MANDIR, COMPLETIONS_DIR, MAN_PAGES,
# STATIC_PROGRAMS, EMBED_CFLAGS.  Exit 0: pass; 1: fail; 77: skipped (the reason is printed).
set -euo pipefail

part=${1:?usage: test-install.sh layout|embed}
failures=0

fail() {
        echo "FAIL: $*"
        failures=$((failures + 1))
}

pass() {
        echo "ok: $*"
}

skip() {
        echo "SKIP: $*"
        exit 77
}

mkdir -p "$DSH_TEST_SCRATCH"
scratch=$(mktemp -d "$DSH_TEST_SCRATCH/install-$part.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
destdir=$scratch/dest
installed=$destdir$PREFIX

"$MESON" install -C "$BUILD_ROOT" --no-rebuild --quiet --destdir "$destdir" >"$scratch/install.log" 2>&1 ||
        { cat "$scratch/install.log"; echo "FAIL: meson install"; exit 1; }

# Runs "$@" with the DESTDIR's copy at the prefix (see above).
overlay_mount_script='mount -t overlay dsh-sandbox-install -o "lowerdir=$1:$2" "$2" || exit 99; shift 2; exec "$@"'
if [ "$(id -u)" -eq 0 ]; then
        namespace=(unshare --mount --propagation private)
else
        namespace=(unshare --map-root-user --mount --propagation private)
fi
at_prefix() {
        "${namespace[@]}" -- sh -c "$overlay_mount_script" sh "$installed" "$PREFIX" "$@"
}
probe_status=0
at_prefix true 2>"$scratch/overlay.err" || probe_status=$?
if [ "$probe_status" -ne 0 ]; then
        skip "cannot show the DESTDIR's copy at $PREFIX (a mount namespace with overlayfs): $(head -c 300 "$scratch/overlay.err")"
fi

# Status of "$@", without set -e ending the script.
status_of() {
        local status=0
        "$@" || status=$?
        echo "$status"
}

# A write by the installed dsh-sandbox, under `backend`, inside a workspace and outside it, on disk.
check_installed_cli() {
        local backend=$1 status
        local root=$scratch/cli-$backend/root outside=$scratch/cli-$backend/outside
        mkdir -p "$root" "$outside"
        status=$(status_of at_prefix "$BINDIR/dsh-sandbox" run --backend "$backend" --mode workspace-write \
                --root "$root" -- sh -c 'echo inside >"$0/file" && echo outside >"$1/file"' "$root" "$outside")
        if [ "$(cat "$root/file" 2>/dev/null)" = inside ] && [ ! -e "$outside/file" ] && [ "$status" -ne 0 ] &&
                [ "$status" -ne 125 ]; then
                pass "installed dsh-sandbox confines under $backend: the write inside lands, the one outside is denied"
        else
                fail "installed dsh-sandbox under $backend: status $status, inside=$(cat "$root/file" 2>&1)," \
                        "outside exists: $([ -e "$outside/file" ] && echo yes || echo no)"
        fi
}

check_file() {
        if [ -f "$installed_root$1" ]; then pass "installed: $1"; else fail "not installed: $1"; fi
}

layout() {
        installed_root=$destdir
        check_file "$BINDIR/dsh-sandbox"
        check_file "$BINDIR/landlock-run"
        check_file "$LIBEXECDIR/dsh-sandbox-exec"
        check_file "$LIBEXECDIR/dsh-sandbox-mask"
        for misplaced in "$LIBEXECDIR/landlock-run" "$BINDIR/dsh-sandbox-exec" "$LIBEXECDIR/dsh-sandbox"; do
                [ -e "$destdir$misplaced" ] && fail "installed where it does not belong: $misplaced"
        done
        check_file "$LIBDIR/libdsh-sandbox.so.$VERSION"
        if [ "$(readlink "$destdir$LIBDIR/libdsh-sandbox.so.0")" = "libdsh-sandbox.so.$VERSION" ] &&
                [ "$(readlink "$destdir$LIBDIR/libdsh-sandbox.so")" = libdsh-sandbox.so.0 ]; then
                pass "libdsh-sandbox.so -> .so.0 -> .so.$VERSION"
        else
                fail "library links: $(ls -l "$destdir$LIBDIR" | grep libdsh-sandbox)"
        fi
        # Only the shared library is installed: no static archive (the library's own, or cli/'s and service/'s,
        # internal libraries linked into dsh-sandbox).
        local archives
        archives=$(find "$destdir" -name '*.a' -printf '%P ')
        [ -z "$archives" ] && pass "no static archive installed" || fail "installed archives: $archives"
        local soname
        soname=$(readelf -d "$destdir$LIBDIR/libdsh-sandbox.so.$VERSION" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
        [ "$soname" = libdsh-sandbox.so.0 ] && pass "SONAME $soname" || fail "SONAME is \"$soname\""

        # Every public header, and each one compiles on its own.
        local header name
        for header in "$SOURCE_ROOT"/include/dsh-sandbox/*.h; do
                name=$(basename "$header")
                if ! cmp -s "$header" "$destdir$INCLUDEDIR/dsh-sandbox/$name"; then
                        fail "header not installed (or not the same): $INCLUDEDIR/dsh-sandbox/$name"
                elif printf '#include <dsh-sandbox/%s>\n' "$name" |
                        cc -std=c99 -Wall -Wextra -Werror -fsyntax-only -I"$destdir$INCLUDEDIR" -x c - 2>"$scratch/cc.err"; then
                        pass "header installed and self-contained: dsh-sandbox/$name"
                else
                        fail "dsh-sandbox/$name does not compile alone: $(cat "$scratch/cc.err")"
                fi
        done

        # The .pc, read with the DESTDIR as sysroot.
        local pc_flags requires version
        export PKG_CONFIG_PATH=$destdir$LIBDIR/pkgconfig PKG_CONFIG_SYSROOT_DIR=$destdir
        pc_flags=$(pkg-config --cflags --libs dsh-sandbox)
        requires=$(pkg-config --print-requires-private dsh-sandbox)
        version=$(pkg-config --modversion dsh-sandbox)
        unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
        if [[ " $pc_flags " == *" -I$destdir$INCLUDEDIR "* && " $pc_flags " == *" -L$destdir$LIBDIR "* &&
                " $pc_flags " == *" -ldsh-sandbox "* && $requires == jansson* && $version == "$VERSION" ]]; then
                pass "dsh-sandbox.pc: $pc_flags; Requires.private: $requires; version $version"
        else
                fail "dsh-sandbox.pc: flags \"$pc_flags\", Requires.private \"$requires\", version \"$version\""
        fi

        if [ "$MAN_PAGES" = yes ]; then
                for page in dsh-sandbox landlock-run; do
                        if grep -q "^\.TH \"$page\" \"1\"" "$destdir$MANDIR/man1/$page.1" 2>/dev/null; then
                                pass "man page $MANDIR/man1/$page.1"
                        else
                                fail "man page $MANDIR/man1/$page.1 missing or without its title"
                        fi
                done
        else
                echo "note: the man pages are not built (no scdoc), not checked"
        fi
        if [[ $COMPLETIONS_DIR != "$PREFIX"/* ]]; then
                fail "the bash completion goes outside the prefix $PREFIX: $COMPLETIONS_DIR"
        elif bash -n "$destdir$COMPLETIONS_DIR/dsh-sandbox" 2>/dev/null; then
                pass "bash completion $COMPLETIONS_DIR/dsh-sandbox"
        else
                fail "bash completion missing or not bash: $COMPLETIONS_DIR/dsh-sandbox"
        fi

        # The programs run once per confined command: no dynamic loader (see meson.build).
        if [ "$STATIC_PROGRAMS" = yes ]; then
                for program in "$BINDIR/dsh-sandbox" "$BINDIR/landlock-run" "$LIBEXECDIR/dsh-sandbox-exec"; do
                        if readelf -l "$destdir$program" | grep INTERP >/dev/null; then
                                fail "dynamically linked: $program"
                        else
                                pass "statically linked: $program"
                        fi
                done
        fi

        # Installed, they find each other: landlock-run beside dsh-sandbox, dsh-sandbox-exec in libexec.
        local output
        output=$(at_prefix "$BINDIR/dsh-sandbox" --version 2>&1) || true
        [ "$output" = "dsh-sandbox $VERSION" ] && pass "dsh-sandbox --version" || fail "dsh-sandbox --version: $output"
        output=$(at_prefix "$BINDIR/landlock-run" --probe 2>&1) || true
        [[ $output == "landlock: "* ]] && pass "landlock-run --probe: $output" || fail "landlock-run --probe: $output"
        check_installed_cli bwrap
        check_installed_cli landlock
}

# ------------------------------------------------------------------------------------------ embed --

# Runs the embed program built against the installed copy, in an environment of its own: XDG
# directories under the scratch directory, no $DSH_SANDBOX_CONFIG.
embed() {
        local config_home=$1
        shift
        at_prefix env -u DSH_SANDBOX_CONFIG -u DSH_SANDBOX_STATE_DIR LD_LIBRARY_PATH="$destdir$LIBDIR" \
                XDG_CONFIG_HOME="$config_home" XDG_STATE_HOME="$scratch/state" XDG_CACHE_HOME="$scratch/cache" \
                "$scratch/bin/embed" "$@"
}

# A config that makes `backend` the sole one, at $1/dsh-sandbox/config.json ("" for none at all).
write_config() {
        local config_home=$1 backend=$2
        mkdir -p "$config_home/dsh-sandbox"
        [ -n "$backend" ] && printf '{"backends": ["%s"]}\n' "$backend" >"$config_home/dsh-sandbox/config.json"
        return 0
}

check_embed_backend() {
        local backend=$1 base=$scratch/embed-${1:-default} status
        local root=$base/root outside=$base/outside config_home=$base/config
        mkdir -p "$root" "$outside"
        write_config "$config_home" "$backend"
        local label=${backend:-"the default chain"}

        status=$(status_of embed "$config_home" "$root" -- sh -c 'echo inside >"$0/file"' "$root")
        [ "$status" -eq 0 ] && [ "$(cat "$root/file" 2>/dev/null)" = inside ] &&
                pass "embed under $label: a write inside ROOT lands" ||
                fail "embed under $label: a write inside ROOT: status $status, file: $(cat "$root/file" 2>&1)"
        # Started elsewhere, the command starts in ROOT: a relative write lands there, not in the caller's cwd.
        status=$(cd "$outside" && status_of embed "$config_home" "$root" -- sh -c 'echo here >relative')
        [ "$status" -eq 0 ] && [ "$(cat "$root/relative" 2>/dev/null)" = here ] && [ ! -e "$outside/relative" ] &&
                pass "embed under $label: the command starts in ROOT" ||
                fail "embed under $label: a relative write from another cwd: status $status, in ROOT: $(ls "$root")"
        [ -z "$backend" ] && return 0

        status=$(status_of embed "$config_home" "$root" -- sh -c 'echo outside >"$0/file"' "$outside")
        [ ! -e "$outside/file" ] && [ "$status" -ne 0 ] && [ "$status" -ne 125 ] &&
                pass "embed under $label: a write outside ROOT is denied (status $status)" ||
                fail "embed under $label: a write outside ROOT: status $status, exists: $(ls "$outside")"

        status=$(status_of embed "$config_home" "$root" -- sh -c 'exit 7')
        [ "$status" -eq 7 ] && pass "embed under $label: the command's status" || fail "embed: exit 7 came back as $status"
        status=$(status_of embed "$config_home" "$root" -- sh -c 'kill -TERM $$')
        [ "$status" -eq 143 ] && pass "embed under $label: 128+N for a signal" || fail "embed: SIGTERM came back as $status"
        status=$(status_of embed "$config_home" "$root" -- /nonexistent/program)
        [ "$status" -eq 127 ] && pass "embed under $label: 127 for a missing program" ||
                fail "embed: a missing program came back as $status"

        # The sandbox's own config beneath ROOT: rewritten in place, its directory and the one above
        # renamed away and replaced.  bwrap holds them back, and under Landlock, which can only grant,
        # the write supervisor does: the call runs (a file beside them is written), the command fails,
        # and the config on disk is the same.
        local protected_root=$base/protected
        local protected_home=$protected_root/.config
        local config=$protected_home/dsh-sandbox/config.json
        write_config "$protected_home" "$backend"
        cp "$config" "$base/config.orig"
        status=$(status_of embed "$protected_home" "$protected_root" -- sh -c '
                echo ran >"$2/ordinary"
                printf "{\"runnerCommand\": [\"/bin/sh\"], \"runnerFailureSignatures\": [\"x\"]}\n" >"$0"
                mv "$1/dsh-sandbox" "$1/moved"; mv "$1" "$1.moved"
                mkdir -p "$1/dsh-sandbox" && printf "{\"mode\": \"danger-full-access\"}\n" >"$0"' \
                "$config" "$protected_home" "$protected_root")
        if cmp -s "$config" "$base/config.orig" && [ ! -e "$protected_home/moved" ] &&
                [ ! -e "$protected_home.moved" ] && [ "$status" -ne 0 ] && [ "$status" -ne 125 ] &&
                [ -e "$protected_root/ordinary" ]; then
                pass "embed under $label: the command cannot rewrite the sandbox's config beneath ROOT (status $status)"
        else
                fail "embed under $label: the config beneath ROOT (the call must run, the writes fail):" \
                        "status $status, now: $(cat "$config" 2>&1);" \
                        "$(ls -a "$protected_root" "$protected_home" 2>&1 | tr '\n' ' ')"
        fi
}

embed_checks() {
        mkdir -p "$scratch/bin"
        local flags
        flags=$(PKG_CONFIG_PATH=$destdir$LIBDIR/pkgconfig PKG_CONFIG_SYSROOT_DIR=$destdir \
                pkg-config --cflags --libs dsh-sandbox)
        # shellcheck disable=SC2086 # the flags are words
        if ! cc -std=c11 -Wall -Wextra -Werror $EMBED_CFLAGS -o "$scratch/bin/embed" "$SOURCE_ROOT/examples/embed.c" \
                $flags 2>"$scratch/cc.err"; then
                fail "examples/embed.c does not build against the installed copy with $flags: $(cat "$scratch/cc.err")"
                return
        fi
        pass "examples/embed.c builds with: $flags"
        local resolved
        resolved=$(LD_LIBRARY_PATH=$destdir$LIBDIR ldd "$scratch/bin/embed" | awk '$1 == "libdsh-sandbox.so.0" { print $3 }')
        [ "$resolved" = "$destdir$LIBDIR/libdsh-sandbox.so.0" ] && pass "embed loads $resolved" ||
                fail "embed loads libdsh-sandbox.so.0 from \"$resolved\""

        # A prefix the loader does not search (anything but /usr; /usr/local before `ldconfig`): the README's
        # way is an rpath to the .pc's libdir.  Run at the prefix with no LD_LIBRARY_PATH, it must still load.
        local libdir
        libdir=$(PKG_CONFIG_PATH=$destdir$LIBDIR/pkgconfig pkg-config --variable=libdir dsh-sandbox)
        # shellcheck disable=SC2086 # the flags are words
        if ! cc -std=c11 $EMBED_CFLAGS -o "$scratch/bin/embed-rpath" "$SOURCE_ROOT/examples/embed.c" $flags \
                -Wl,-rpath,"$libdir" 2>"$scratch/cc.err"; then
                fail "embed with an rpath to $libdir does not build: $(cat "$scratch/cc.err")"
        elif [ "$(status_of at_prefix env -u LD_LIBRARY_PATH "$scratch/bin/embed-rpath" 2>"$scratch/rpath.err")" -eq 2 ] &&
                grep -q '^usage: ' "$scratch/rpath.err"; then
                pass "embed built with -Wl,-rpath,$libdir loads the library at the prefix without LD_LIBRARY_PATH"
        else
                fail "embed with an rpath to $libdir: $(head -c 400 "$scratch/rpath.err")"
        fi

        local status
        status=$(status_of embed "$scratch" 2>/dev/null)
        [ "$status" -eq 2 ] && pass "embed without arguments: usage error" || fail "embed without arguments: $status"
        check_embed_backend ""
        check_embed_backend bwrap
        check_embed_backend landlock
}

case $part in
layout) layout ;;
embed) embed_checks ;;
*) echo "usage: test-install.sh layout|embed" >&2; exit 2 ;;
esac
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
