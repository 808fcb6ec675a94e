/* SPDX-License-Identifier: MIT */
/*
 * landlock-run: the minimal Landlock launcher.
 *
 *   landlock-run [--ro PATH]... [--rw PATH]... [--new-session] -- ARGV...
 *   landlock-run --probe
 *
 * A drop-in for the upstream launcher contract (docs/cli.md): the same flags,
 * exit 125 for every launcher failure, the same one-line diagnostics, so a
 * harness built for the upstream launcher uses this one unchanged.  After
 * exec the command's own status passes through untouched (even its own 125).
 * `--help` and `--version`, each alone, print on stdout and exit 0.
 *
 * Beyond the contract, always on because it cannot break it: inherited fds
 * above 2 are closed, a seccomp filter refuses terminal injection
 * (TIOCSTI/TIOCLINUX), every capability is dropped (root included), and from
 * Landlock ABI 6 the domain is scoped: the command can neither signal nor
 * connect to the abstract unix sockets of processes outside it.  `--new-session` additionally setsid()s; it is a flag
 * because an in-place exec that leaves the terminal's session no longer gets
 * the user's Ctrl-C.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "core/landlock.h"
#include "core/process-hardening.h"
#include "landlock-run-arguments.h"

static const char help_text[] =
        "Usage: landlock-run [--ro PATH]... [--rw PATH]... [--new-session] -- ARGV...\n"
        "       landlock-run --probe | --help | --version\n"
        "Runs ARGV (found on PATH, environment unchanged) confined by Landlock: read and execute\n"
        "beneath each --ro PATH; beneath each --rw PATH, every access the kernel's Landlock ABI\n"
        "governs but creating devices; nothing else.  Inherited descriptors above 2 are closed,\n"
        "every capability is dropped and terminal injection is refused.  --new-session also calls\n"
        "setsid().  --probe prints whether this kernel enforces Landlock fully or partially.\n"
        "Exit status: ARGV's own once it runs (even 125); 125 for every launcher failure (usage,\n"
        "no Landlock, a grant that cannot be opened, exec failure), and ARGV did not run.\n";

/* Both answers go to stdout, and a failure to write them is a failure. */
static int print_and_exit_status(const char *text)
{
        fputs(text, stdout);
        return fflush(stdout) == 0 ? 0 : LAUNCHER_FAILURE;
}

static int probe(void)
{
        int abi = dsh_landlock_abi();

        if (abi < 0 || !dsh_landlock_abi_usable(abi))
                return fail("landlock is not enforced by this kernel (ABI unsupported or disabled)");
        if (dsh_landlock_enforcement(abi) == DSH_ENFORCEMENT_FULL)
                puts("landlock: fully enforced");
        else
                puts("landlock: partially enforced (older ABI)");
        return fflush(stdout) == 0 ? 0 : LAUNCHER_FAILURE;
}

/* Builds the ruleset; returns its fd, or -1 after printing the contract's line. */
static int build_ruleset(const struct launch_request *request)
{
        dsh_landlock_ruleset ruleset = DSH_LANDLOCK_RULESET_INIT;
        int result = dsh_landlock_ruleset_open(&ruleset);

        if (result == -ENOSYS || result == -EOPNOTSUPP) {
                fail("landlock is not enforced by this kernel (ABI unsupported or disabled)");
                return -1;
        }
        if (result < 0) {
                fail("landlock ruleset error: %s", strerror(-result));
                return -1;
        }
        for (size_t i = 0; i < request->grant_count; i++) {
                const char *failed_step = "";

                result = dsh_landlock_ruleset_grant(&ruleset, request->grants[i].path, request->grants[i].writable,
                                                    false, &failed_step);
                if (result < 0) {
                        if (strcmp(failed_step, "open") == 0)
                                fail("cannot open rule path: %s: %s", request->grants[i].path, strerror(-result));
                        else
                                fail("landlock ruleset error: %s", strerror(-result));
                        dsh_landlock_ruleset_close(&ruleset);
                        return -1;
                }
        }
        if (dsh_landlock_enforcement(ruleset.abi) == DSH_ENFORCEMENT_PARTIAL)
                fputs("landlock-run: partial enforcement (older Landlock ABI)\n", stderr);
        return ruleset.fd;
}

/*
 * Returns only on failure.  The order is the library's (src/spawn.c,
 * dsh_exec_plan_apply), with the fds closed first so nothing inherited
 * survives into the domain:
 *  - no_new_privs: no exec grants privileges from here, and the filter and
 *    the Landlock restriction become legal without CAP_SYS_ADMIN;
 *  - the terminal filter;
 *  - every capability dropped (bounding set and locked securebits while
 *    CAP_SETPCAP is still held, then capset() to zero), before the Landlock
 *    restriction, which needs none: root keeps nothing, and nothing after
 *    runs with a privilege;
 *  - the Landlock restriction (with the scopes the ABI has);
 *  - exec.
 * Any failure on the way ends in 125 with the command never run.
 */
static int launch(const struct launch_request *request)
{
        int ruleset_fd, result;

        if (dsh_close_inherited_fds(-1, -1) < 0)
                return fail("landlock ruleset error: cannot close inherited descriptors: %s", strerror(errno));
        ruleset_fd = build_ruleset(request);
        if (ruleset_fd < 0)
                return LAUNCHER_FAILURE;
        if (request->new_session)
                (void) setsid();  /* EPERM for a group leader: the terminal filter still holds */
        result = dsh_set_no_new_privs();
        if (result < 0)
                return fail("landlock ruleset error: cannot set no_new_privs: %s", strerror(-result));
        result = dsh_install_terminal_injection_filter();
        if (result < 0)
                return fail("landlock ruleset error: cannot install the terminal filter: %s", strerror(-result));
        result = dsh_drop_capabilities();
        if (result < 0)
                return fail("landlock ruleset error: cannot drop capabilities: %s", strerror(-result));
        result = dsh_landlock_enforce(ruleset_fd);
        if (result < 0)
                return fail("landlock ruleset error: %s", strerror(-result));
        close(ruleset_fd);
        execvp(request->command[0], request->command);
        return fail("exec failed: %s", strerror(errno));
}

int main(int argc, char **argv)
{
        struct launch_request request = { 0 };
        int result = landlock_run_parse_arguments(argc, argv, &request);

        if (result == 0 && request.help)
                result = print_and_exit_status(help_text);
        else if (result == 0 && request.version)
                result = print_and_exit_status("landlock-run (dsh-sandbox) " DSH_SANDBOX_VERSION "\n");
        else if (result == 0)
                result = request.probe ? probe() : launch(&request);
        free(request.grants);
        return result;
}
