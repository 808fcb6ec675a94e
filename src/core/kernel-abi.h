/* SPDX-License-Identifier: MIT */
/*
 * What the kernel offers that the build's headers may not name yet: the
 * numbers of newer system calls and the values of newer flags, each defined
 * only where the headers lack it.  One home, so that every file that calls
 * openat2 or pidfd_getfd uses the same number; a value here is the kernel's
 * ABI, fixed once released, never a guess (the numbers are the generic table's,
 * the same on x86_64 and aarch64 for every call added since Linux 5.1).
 * Whether the running kernel has a call is learned at run time (ENOSYS), not
 * from these.  libc and kernel headers only: the launchers include it too.
 */
#ifndef DSH_SANDBOX_CORE_KERNEL_ABI_H
#define DSH_SANDBOX_CORE_KERNEL_ABI_H

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

/* ---------------------------------------------------------- system calls -- */

#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef __NR_fsopen
#define __NR_fsopen 430
#endif
#ifndef __NR_fsconfig
#define __NR_fsconfig 431
#endif
#ifndef __NR_fsmount
#define __NR_fsmount 432
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
#ifndef __NR_file_setattr
#define __NR_file_setattr 469
#endif

/* ----------------------------------------------------------------- flags -- */

/* pidfd_open(): a pidfd for a thread (Linux 6.9), spelt as the kernel does. */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

#ifndef XATTR_NAME_MAX
#define XATTR_NAME_MAX 255
#endif
#ifndef XATTR_SIZE_MAX
#define XATTR_SIZE_MAX 65536
#endif

/* seccomp user notification: the listener's flags and the supervisor's answers. */
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif

#endif
