/* SPDX-License-Identifier: MIT */
/*
 * The metadata supervisor's reach into the command (metadata-tracee.c): the
 * tracee's memory and files, apart from deciding and acting on them
 * (metadata-supervisor.c).  Everything read here is hostile: the command's
 * memory is copied once and only the copy is used; its descriptors, cwd and
 * root are reached through its calling thread (pidfd_getfd(), else
 * /proc/<tid>/...), and every /proc/<tid> entry or pidfd opened for a call
 * is trusted only once dsh_metadata_call_still_valid() says the thread that
 * made the call is still there (the tid of a live task is unique).
 * libc only, like the rest of core/.
 */
#ifndef DSH_SANDBOX_METADATA_TRACEE_H
#define DSH_SANDBOX_METADATA_TRACEE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "core/kernel-abi.h"
#include "core/metadata-call.h"

/* The kernel's struct xattr_args (setxattrat, 6.13) and struct file_attr (file_setattr, 6.17), version 0. */
struct command_xattr_args {
        uint64_t value;
        uint32_t size;
        uint32_t flags;
};

struct command_file_attr {
        uint64_t xflags;
        uint32_t extsize;
        uint32_t nextents;
        uint32_t projid;
        uint32_t cowextsize;
};

/*
 * The threads seen lately, with their pidfds: a pidfd names one task for
 * good, so a cached one is either the calling thread's (the tid of a live
 * task is unique) or a dead task's, which pidfd_getfd() refuses (ESRCH) and
 * which is then opened afresh.
 */
#define DSH_METADATA_PIDFD_CACHE_SIZE 8

struct dsh_metadata_cached_pidfd {
        pid_t tid;
        int fd;                         /* -1: empty */
};

/* What the supervisor keeps across calls to reach the command: one per supervisor, used by its one thread. */
typedef struct dsh_metadata_tracee {
        struct dsh_metadata_cached_pidfd pidfds[DSH_METADATA_PIDFD_CACHE_SIZE];
        size_t next_pidfd;
        char *value_buffer;             /* an xattr value: XATTR_SIZE_MAX bytes */
        bool descriptors_through_proc;  /* pidfd_getfd() is refused here: /proc/<tid>/fd/N instead */
        bool no_thread_pidfds;          /* the kernel has no PIDFD_THREAD */
} dsh_metadata_tracee;

/* An empty cache and the value buffer.  Returns 0 or -ENOMEM. */
int dsh_metadata_tracee_init(dsh_metadata_tracee *tracee);

/* Closes the cached pidfds and frees the buffer. */
void dsh_metadata_tracee_clear(dsh_metadata_tracee *tracee);

/* The arguments once copied out of the command: the only copy used. */
typedef struct dsh_metadata_payload {
        struct timespec times[2];
        bool times_now;
        char name[XATTR_NAME_MAX + 1];
        size_t value_size;              /* the value itself is in the tracee's value_buffer */
        struct command_file_attr file_attr;
        union {
                int flags;
                struct command_fsxattr {
                        uint32_t xflags;
                        uint32_t extsize;
                        uint32_t nextents;
                        uint32_t projid;
                        uint32_t cowextsize;
                        unsigned char pad[8];
                } fsxattr;
        } ioctl_buffer;
        size_t ioctl_size;
} dsh_metadata_payload;

/* One notification being handled. */
typedef struct dsh_metadata_call {
        dsh_metadata_tracee *tracee;
        int listener;
        uint64_t id;
        pid_t tid;
        int pidfd;                      /* the calling thread (the cache's), or -1 (descriptors through /proc) */
        long long deadline_ms;
        bool unreadable;                /* the command's memory or descriptors could not be read */
        bool reopened;                  /* the last descriptor acquired is a reopening through /proc */
} dsh_metadata_call;

/*
 * Answers the call with `error` (0: success), a result the supervisor
 * produced itself: never SECCOMP_USER_NOTIF_FLAG_CONTINUE.  A call gone
 * (its thread killed) needs no answer.
 */
void dsh_metadata_call_answer(const dsh_metadata_call *c, int error);

/*
 * Lets the call go on to the kernel (SECCOMP_USER_NOTIF_FLAG_CONTINUE),
 * which reads its arguments again.  Only for a call nothing was decided on
 * (write-supervisor.c says which two).
 */
void dsh_metadata_call_let_through(const dsh_metadata_call *c);

/*
 * Answers the call with our `fd` installed in the command
 * (SECCOMP_IOCTL_NOTIF_ADDFD, SEND), close-on-exec there as asked.
 * Returns 0 (also when the call is gone) or a negative errno, the call then
 * still to answer.
 */
int dsh_metadata_call_answer_with_fd(const dsh_metadata_call *c, int fd, bool close_on_exec);

/* CLOCK_MONOTONIC in milliseconds: what a call's deadline is measured in. */
long long dsh_metadata_monotonic_ms(void);

/* Whether canonical `path` is `directory` (its first `length` bytes) or lies beneath it. */
bool dsh_metadata_path_within(const char *path, const char *directory, size_t length);

/* The notification is still pending: its thread is alive, so what was opened by its tid was that thread's. */
bool dsh_metadata_call_still_valid(const dsh_metadata_call *c);

/*
 * Sets c->pidfd to the calling thread's pidfd, from the cache or new (-1:
 * none, descriptors then go through /proc).  Returns false when the call is
 * no longer valid: the tid may already name another task.
 */
bool dsh_metadata_find_thread_pidfd(dsh_metadata_call *c);

/* Copies everything `op` needs besides its target into `p` (and the xattr value into the buffer).  0 or -errno. */
int dsh_metadata_copy_payload(dsh_metadata_call *c, dsh_metadata_request *op, dsh_metadata_payload *p);

/*
 * The command's descriptor `command_fd` as one of ours: the same open file
 * (pidfd_getfd()), or, where that is refused, /proc/<tid>/fd/N reopened
 * (O_PATH, or read-only for `real_file`; c->reopened then says so).
 * Returns the fd or a negative errno (-EBADF: no such descriptor).
 */
int dsh_metadata_acquire_descriptor(dsh_metadata_call *c, int command_fd, bool real_file);

/*
 * Opens the call's target in `*fd` as the kernel would resolve it for the
 * calling thread, never through a magic link; `*form` says how the target
 * was named in the end.  Returns 0 or the negative errno to answer.
 */
int dsh_metadata_open_target(dsh_metadata_call *c, const dsh_metadata_request *op, dsh_metadata_target *form,
                             int *fd);

/*
 * The rest of dsh_metadata_open_target() for a path already copied: `path`
 * opened O_PATH as the calling thread would resolve it (absolute beneath its
 * root, relative from its cwd or from its descriptor `dirfd`), following a
 * trailing symlink when `follow`; its own /proc/self/fd/N is its descriptor
 * N, any other magic link is refused.  Returns 0 or a negative errno.
 */
int dsh_metadata_open_path(dsh_metadata_call *c, const char *path, int dirfd, bool follow, int *fd);

/* Exactly `size` bytes at `address` in the command, copied once into `buffer`: 0, -EFAULT or -EPERM. */
int dsh_metadata_copy_exact(dsh_metadata_call *c, uint64_t address, void *buffer, size_t size);

/* A path of at most `capacity` bytes with its NUL, copied once: 0, -ENAMETOOLONG, -EFAULT or -EPERM. */
int dsh_metadata_copy_path(dsh_metadata_call *c, uint64_t address, char *buffer, size_t capacity);

/*
 * Where the calling thread resolves `path` from: its root for an absolute
 * path (`*resolve` then holds RESOLVE_IN_ROOT), its cwd (AT_FDCWD), or its
 * descriptor `dirfd`; `*resolve` always holds RESOLVE_NO_MAGICLINKS.
 * Returns the O_PATH fd (ours) or a negative errno.
 */
int dsh_metadata_open_base(dsh_metadata_call *c, const char *path, int dirfd, uint64_t *resolve);

/* The calling thread's umask: 0 with `*umask_out` set, or a negative errno. */
int dsh_metadata_command_umask(dsh_metadata_call *c, mode_t *umask_out);

/*
 * Whether a supervisor can read a child's arguments on this host, checked
 * before anything runs: Yama's ptrace_scope 2 or 3 forbids
 * process_vm_readv() (and pidfd_getfd()) without CAP_SYS_PTRACE, which the
 * supervisor does not keep, and a seccomp profile (a container's) may refuse
 * either call outright.  Returns 0, or a negative errno with `*reason` a
 * static sentence.  pidfd_getfd() refused alone is no reason: the supervisor
 * then reaches the command's descriptors through /proc/<tid>/fd.
 */
int dsh_metadata_supervisor_check_host(const char **reason);

/* The name of our fd `fd` as the kernel gives it (d_path): 0, -ENAMETOOLONG when it does not fit, or -errno. */
int dsh_metadata_descriptor_name(int fd, char *name, size_t size);

/* openat2() with `resolve`, O_CLOEXEC added, retried while a rename races it (EAGAIN).  The fd or -errno. */
int dsh_metadata_open_resolved(int directory_fd, const char *path, int flags, uint64_t resolve);

#endif
