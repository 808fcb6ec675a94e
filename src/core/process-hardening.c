/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <dirent.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/kernel-abi.h"
#include "core/process-hardening.h"

static int close_range_raw(unsigned int first, unsigned int last)
{
        if (first > last)
                return 0;
        return syscall(__NR_close_range, first, last, 0) < 0 ? -errno : 0;
}

/* The smallest fd of `keep` (any order) that is at least `floor`, or -1. */
static int next_kept_fd(const int *keep, size_t count, int floor)
{
        int next = -1;

        for (size_t i = 0; i < count; i++)
                if (keep[i] >= floor && (next < 0 || keep[i] < next))
                        next = keep[i];
        return next;
}

int dsh_close_inherited_fds_except(const int *keep, size_t count)
{
        unsigned int next = 3;
        int kept, result;

        /* Walks the kept fds in ascending order (no sorting: nothing here may allocate). */
        while ((kept = next_kept_fd(keep, count, (int) next)) >= 0) {
                result = close_range_raw(next, (unsigned int) kept - 1);
                if (result < 0)
                        return result;
                next = (unsigned int) kept + 1;
        }
        return close_range_raw(next, ~0U);
}

int dsh_close_inherited_fds(int keep_fd, int other_keep_fd)
{
        const int keep[] = { keep_fd, other_keep_fd };

        return dsh_close_inherited_fds_except(keep, 2);
}

int dsh_set_no_new_privs(void)
{
        return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : 0;
}

/* _LINUX_CAPABILITY_VERSION_3: two 32-bit words per set, capabilities 0..63. */
#define CAPABILITY_WORDS 2
#define CAPABILITY_LIMIT (CAPABILITY_WORDS * 32)

static int capabilities_get(struct __user_cap_data_struct data[CAPABILITY_WORDS])
{
        struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };

        return syscall(__NR_capget, &header, data) < 0 ? -errno : 0;
}

static int capabilities_set(const struct __user_cap_data_struct data[CAPABILITY_WORDS])
{
        struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };

        return syscall(__NR_capset, &header, data) < 0 ? -errno : 0;
}

/*
 * Drops capabilities from the bounding set upwards until the kernel answers
 * EINVAL, its word for "past CAP_LAST_CAP" (no file to read, nothing to
 * allocate).  A kernel that still knows a capability at 64 has one that
 * capset()'s format cannot even name: refuse rather than leave it.
 */
static int drop_bounding_set(void)
{
        for (unsigned long capability = 0; capability < CAPABILITY_LIMIT; capability++) {
                if (prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) == 0)
                        continue;
                if (errno == EINVAL && capability > 0)
                        return 0;
                return -errno;
        }
        if (prctl(PR_CAPBSET_READ, (unsigned long) CAPABILITY_LIMIT, 0, 0, 0) < 0 && errno == EINVAL)
                return 0;  /* CAP_LAST_CAP is 63: all dropped */
        return -EOVERFLOW;
}

/*
 * NOROOT: an exec by uid 0 (or of a setuid-root file) grants no capability.
 * NO_SETUID_FIXUP: a uid change does not recompute the sets.
 * NO_CAP_AMBIENT_RAISE: the ambient set stays empty.  KEEP_CAPS is locked at
 * whatever it is (the kernel clears it at every exec anyway).  Each is locked,
 * so neither the command nor anything it execs can turn them back off.  Bits
 * already set are kept: a caller that locked one of them off makes this fail.
 */
#define LOCKED_SECUREBITS (SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | \
                           SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | \
                           SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

static int lock_securebits(void)
{
        int current = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);

        if (current < 0)
                return -errno;
        if (prctl(PR_SET_SECUREBITS, (unsigned long) current | LOCKED_SECUREBITS, 0, 0, 0) < 0)
                return -errno;
        return 0;
}

/*
 * The bounding set and the securebits need CAP_SETPCAP in the effective set,
 * so both come before capset() empties it.  A process that holds CAP_SETPCAP
 * only in its permitted set raises it first: it can, and the bounding set of
 * such a process is worth emptying.
 */
static int drop_privileged_sets(struct __user_cap_data_struct data[CAPABILITY_WORDS])
{
        const unsigned int setpcap = CAP_TO_MASK(CAP_SETPCAP);
        int result;

        if (!(data[CAP_TO_INDEX(CAP_SETPCAP)].permitted & setpcap))
                return 0;
        if (!(data[CAP_TO_INDEX(CAP_SETPCAP)].effective & setpcap)) {
                data[CAP_TO_INDEX(CAP_SETPCAP)].effective |= setpcap;
                result = capabilities_set(data);
                if (result < 0)
                        return result;
        }
        result = drop_bounding_set();
        if (result < 0)
                return result;
        return lock_securebits();
}

int dsh_forbid_core_dumps(void)
{
        struct rlimit none = { 0, 0 };

        return syscall(__NR_prlimit64, 0, RLIMIT_CORE, &none, NULL) < 0 ? -errno : 0;
}

int dsh_drop_capabilities(void)
{
        struct __user_cap_data_struct data[CAPABILITY_WORDS] = { { 0, 0, 0 }, { 0, 0, 0 } };
        int result;

        /* capset() below would clear it too (ambient stays within permitted and inheritable); said outright. */
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
                return -errno;
        result = capabilities_get(data);
        if (result == 0)
                result = drop_privileged_sets(data);
        if (result < 0)
                return result;
        for (int i = 0; i < CAPABILITY_WORDS; i++)
                data[i] = (struct __user_cap_data_struct) { 0, 0, 0 };
        result = capabilities_set(data);
        if (result == 0)
                result = capabilities_get(data);
        if (result < 0)
                return result;
        /* Read back: whatever the kernel or an LSM did, the command starts only with empty sets. */
        for (int i = 0; i < CAPABILITY_WORDS; i++)
                if (data[i].effective || data[i].permitted || data[i].inheritable)
                        return -EPERM;
        return 0;
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
         * tty layer dispatches on.  TIOCSETD is refused with the injection
         * ioctls: a line discipline set on an inherited terminal outlives the
         * call (N_NULL leaves the user's terminal discarding all input and
         * output), and nothing a command is run for needs to set one.
         */
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_AUDIT_ARCH, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 5),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 2, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 1, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSETD, 0, 1),
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

void dsh_reset_caught_signals(void)
{
        struct sigaction action;

        for (int signal_number = 1; signal_number < NSIG; signal_number++) {
                if (sigaction(signal_number, NULL, &action) < 0 || action.sa_handler == SIG_IGN ||
                    action.sa_handler == SIG_DFL)
                        continue;
                action.sa_handler = SIG_DFL;
                action.sa_flags = 0;
                sigaction(signal_number, &action, NULL);
        }
}
