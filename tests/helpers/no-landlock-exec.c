/* SPDX-License-Identifier: MIT */
/*
 * Test helper: `no-landlock-exec PROGRAM [ARG...]` runs PROGRAM as on a
 * kernel without Landlock.  A seccomp filter makes the three Landlock system
 * calls fail with ENOSYS (what a kernel built without Landlock returns), and
 * is inherited by everything PROGRAM starts.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <seccomp.h>

int main(int argc, char **argv)
{
        static const char *const calls[] = { "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self" };
        scmp_filter_ctx filter;

        if (argc < 2) {
                fprintf(stderr, "usage: no-landlock-exec PROGRAM [ARG...]\n");
                return 2;
        }
        filter = seccomp_init(SCMP_ACT_ALLOW);
        if (!filter)
                return 125;
        for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
                int number = seccomp_syscall_resolve_name(calls[i]);

                if (number == __NR_SCMP_ERROR || seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), number, 0) < 0) {
                        fprintf(stderr, "no-landlock-exec: cannot filter %s\n", calls[i]);
                        return 125;
                }
        }
        if (seccomp_load(filter) < 0) {
                fprintf(stderr, "no-landlock-exec: cannot load the filter\n");
                return 125;
        }
        seccomp_release(filter);
        execvp(argv[1], &argv[1]);
        fprintf(stderr, "no-landlock-exec: %s: %s\n", argv[1], strerror(errno));
        return 127;
}
