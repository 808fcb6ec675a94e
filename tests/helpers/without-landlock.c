/* SPDX-License-Identifier: MIT */
/*
 * without-landlock PROGRAM [ARG...]: runs PROGRAM as if the kernel had no
 * Landlock, by installing a seccomp filter that fails the three Landlock
 * system calls with ENOSYS.  The tests use it to prove the sandbox refuses
 * (fails closed) instead of running a command unconfined.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

int main(int argc, char **argv)
{
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_landlock_create_ruleset, 2, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_landlock_add_rule, 1, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_landlock_restrict_self, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog program = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

        if (argc < 2) {
                fputs("usage: without-landlock PROGRAM [ARG...]\n", stderr);
                return 2;
        }
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) < 0) {
                fprintf(stderr, "without-landlock: cannot install the filter: %s\n", strerror(errno));
                return 2;
        }
        execvp(argv[1], argv + 1);
        fprintf(stderr, "without-landlock: exec %s: %s\n", argv[1], strerror(errno));
        return 127;
}
