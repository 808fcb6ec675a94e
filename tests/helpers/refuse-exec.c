/* SPDX-License-Identifier: MIT */
/*
 * Test helper: `refuse-exec RULE PROGRAM [ARG...]` runs PROGRAM on a host
 * that refuses one thing a container's seccomp profile may refuse, through a
 * filter inherited by everything PROGRAM starts:
 *
 *   process_vm_readv   the call fails with EPERM (Docker's profile before 4.8)
 *   pidfd_getfd        the call fails with EPERM (Docker's profile without CAP_SYS_PTRACE)
 *   pidfd-thread       pidfd_open() with PIDFD_THREAD fails with EINVAL (a kernel before 6.9)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <seccomp.h>

int main(int argc, char **argv)
{
        scmp_filter_ctx filter;
        int result;

        if (argc < 3) {
                fprintf(stderr, "usage: refuse-exec RULE PROGRAM [ARG...]\n");
                return 2;
        }
        filter = seccomp_init(SCMP_ACT_ALLOW);
        if (!filter)
                return 125;
        if (strcmp(argv[1], "pidfd-thread") == 0)
                result = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EINVAL), seccomp_syscall_resolve_name("pidfd_open"), 1,
                                          SCMP_A1(SCMP_CMP_MASKED_EQ, O_EXCL, O_EXCL));
        else
                result = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), seccomp_syscall_resolve_name(argv[1]), 0);
        if (result < 0 || seccomp_load(filter) < 0) {
                fprintf(stderr, "refuse-exec: cannot refuse %s\n", argv[1]);
                return 125;
        }
        seccomp_release(filter);
        execvp(argv[2], &argv[2]);
        fprintf(stderr, "refuse-exec: %s: %s\n", argv[2], strerror(errno));
        return 127;
}
