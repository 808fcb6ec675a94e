/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stddef.h>
#include <dirent.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "process-hardening.h"

#ifndef __NR_close_range
#define __NR_close_range 436
#endif

static int close_range_raw(unsigned int first, unsigned int last)
{
        if (first > last)
                return 0;
        return syscall(__NR_close_range, first, last, 0) < 0 ? -errno : 0;
}

int dsh_close_inherited_fds(int keep_fd, int other_keep_fd)
{
        int low = keep_fd < other_keep_fd ? keep_fd : other_keep_fd;
        int high = keep_fd < other_keep_fd ? other_keep_fd : keep_fd;
        unsigned int next = 3;
        int result;

        for (int i = 0; i < 2; i++) {
                int keep = i == 0 ? low : high;

                if (keep < (int) next)
                        continue;
                result = close_range_raw(next, (unsigned int) keep - 1);
                if (result < 0)
                        return result;
                next = (unsigned int) keep + 1;
        }
        return close_range_raw(next, ~0U);
}

#if defined(__x86_64__)
#define FILTER_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* x32 system calls share x86_64's audit arch and set this bit in the number. */
#define X32_SYSCALL_BIT 0x40000000U

#ifdef FILTER_AUDIT_ARCH
int dsh_install_terminal_injection_filter(void)
{
        /*
         * A syscall from another ABI (e.g. i386 via int 0x80 on x86_64) would
         * carry other numbers; the filter kills the process on an unexpected
         * architecture rather than let an ioctl through unchecked, and fails
         * x32-numbered calls (same audit arch, high bit set) for the same reason.  The ioctl
         * request is compared on its low 32 bits, which is what the kernel's
         * tty layer dispatches on.
         */
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_AUDIT_ARCH, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 4),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 1, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog program = {
                .len = (unsigned short) (sizeof(filter) / sizeof(filter[0])),
                .filter = filter,
        };

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        /*
         * SPEC_ALLOW: without it the kernel may switch the Speculative Store
         * Bypass mitigation on for every seccomp-filtered task.  That
         * mitigation protects a process from speculative leaks *of its own*
         * memory; it is no part of confining the command's file effects, and
         * it was measured at about 1 ms of CPU per command on this project's
         * machines (bench/run.sh), more than all the rest of the sandbox.
         */
        if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &program) < 0)
                return -errno;
        return 0;
}
#else
int dsh_install_terminal_injection_filter(void)
{
        return -ENOSYS;
}
#endif
