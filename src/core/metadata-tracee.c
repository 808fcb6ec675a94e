/* SPDX-License-Identifier: MIT */
/*
 * The metadata supervisor's reach into the command (metadata-tracee.h): its
 * memory read once into our copy (process_vm_readv, cut at page
 * boundaries), its descriptors, cwd and root taken through its calling
 * thread's pidfd or /proc/<tid>, and a call's target opened O_PATH the way
 * the kernel would resolve it for that thread, never through a magic link.
 * Deciding and acting on what is opened here is metadata-supervisor.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "core/kernel-abi.h"
#include "core/metadata-filter.h"
#include "core/metadata-tracee.h"

#define XATTR_ARGS_SIZE_VER0 16
/* copy_struct_from_user()'s bound on a struct argument: the kernel refuses anything larger with E2BIG. */
#define STRUCT_ARGUMENT_LIMIT 4096
/* openat2() with RESOLVE_BENEATH or RESOLVE_IN_ROOT answers EAGAIN when a rename raced its ".." handling. */
#define RESOLVE_ATTEMPTS 16

int dsh_metadata_tracee_init(dsh_metadata_tracee *tracee)
{
        memset(tracee, 0, sizeof(*tracee));
        for (size_t i = 0; i < DSH_METADATA_PIDFD_CACHE_SIZE; i++)
                tracee->pidfds[i].fd = -1;
        tracee->value_buffer = malloc(XATTR_SIZE_MAX);
        return tracee->value_buffer ? 0 : -ENOMEM;
}

void dsh_metadata_tracee_clear(dsh_metadata_tracee *tracee)
{
        for (size_t i = 0; i < DSH_METADATA_PIDFD_CACHE_SIZE; i++)
                if (tracee->pidfds[i].fd >= 0)
                        close(tracee->pidfds[i].fd);
        free(tracee->value_buffer);
        tracee->value_buffer = NULL;
}

/* ------------------------------------------------------- the command's memory -- */

/*
 * Copies up to `size` bytes from `address` in the command into `buffer`,
 * stopping at the first page that cannot be read.  The remote range is cut
 * at page boundaries so that a partial copy is the readable prefix, however
 * the kernel splits a fault.  Returns the bytes copied, or a negative errno
 * when the command's memory may not be read at all (-EPERM, -ESRCH).
 */
static ssize_t copy_from_command(dsh_metadata_call *c, uint64_t address, void *buffer, size_t size)
{
        const size_t page = (size_t) sysconf(_SC_PAGESIZE);
        struct iovec remote[16];
        size_t done = 0;

        if (address == 0 || address + size < address)
                return 0;
        while (done < size) {
                struct iovec local = { (char *) buffer + done, 0 };
                size_t count = 0;
                ssize_t copied;

                while (count < sizeof(remote) / sizeof(remote[0]) && done + local.iov_len < size) {
                        uint64_t at = address + done + local.iov_len;
                        size_t length = page - (size_t) (at % page);

                        if (length > size - done - local.iov_len)
                                length = size - done - local.iov_len;
                        remote[count++] = (struct iovec) { (void *) (uintptr_t) at, length };
                        local.iov_len += length;
                }
                copied = process_vm_readv(c->tid, &local, 1, remote, count, 0);
                if (copied < 0) {
                        if (errno == EFAULT)
                                break;
                        if (errno == EPERM || errno == EACCES)
                                c->unreadable = true;
                        return done > 0 ? (ssize_t) done : -errno;
                }
                done += (size_t) copied;
                if ((size_t) copied < local.iov_len)
                        break;
        }
        return (ssize_t) done;
}

/* Exactly `size` bytes, or -EFAULT. */
static int copy_exact(dsh_metadata_call *c, uint64_t address, void *buffer, size_t size)
{
        ssize_t copied = copy_from_command(c, address, buffer, size);

        if (copied < 0)
                return (int) copied;
        return (size_t) copied == size ? 0 : -EFAULT;
}

/* A NUL-terminated string of at most `capacity` bytes with the NUL; too long: `too_long`. */
static int copy_string(dsh_metadata_call *c, uint64_t address, char *buffer, size_t capacity, int too_long)
{
        ssize_t copied = copy_from_command(c, address, buffer, capacity);

        if (copied < 0)
                return (int) copied;
        if (memchr(buffer, '\0', (size_t) copied))
                return 0;
        return (size_t) copied < capacity ? -EFAULT : -too_long;
}

/*
 * copy_struct_from_user()'s rule for a versioned struct argument: the first
 * `known` bytes are the struct, anything the caller passed beyond them must
 * be zero (E2BIG otherwise).
 */
static int copy_struct(dsh_metadata_call *c, uint64_t address, uint64_t size, void *known_struct, size_t known)
{
        unsigned char extra[STRUCT_ARGUMENT_LIMIT];
        int result;

        memset(known_struct, 0, known);
        if (size > STRUCT_ARGUMENT_LIMIT)
                return -E2BIG;
        result = copy_exact(c, address, known_struct, size < known ? (size_t) size : known);
        if (result < 0 || size <= known)
                return result;
        result = copy_exact(c, address + known, extra, (size_t) (size - known));
        if (result < 0)
                return result;
        for (size_t i = 0; i < size - known; i++)
                if (extra[i])
                        return -E2BIG;
        return 0;
}

static int copy_times(dsh_metadata_call *c, const dsh_metadata_request *op, dsh_metadata_payload *p)
{
        p->times_now = op->times == 0;
        if (p->times_now)
                return 0;
        switch (op->times_format) {
        case DSH_METADATA_TIMES_UTIMBUF: {
                struct {
                        int64_t actime, modtime;
                } buffer;
                int result = copy_exact(c, op->times, &buffer, sizeof(buffer));

                if (result < 0)
                        return result;
                p->times[0] = (struct timespec) { buffer.actime, 0 };
                p->times[1] = (struct timespec) { buffer.modtime, 0 };
                return 0;
        }
        case DSH_METADATA_TIMES_TIMEVAL: {
                struct {
                        int64_t seconds, microseconds;
                } buffer[2];
                int result = copy_exact(c, op->times, buffer, sizeof(buffer));

                if (result < 0)
                        return result;
                for (int i = 0; i < 2; i++) {
                        if (buffer[i].microseconds < 0 || buffer[i].microseconds >= 1000000)
                                return -EINVAL;
                        p->times[i] = (struct timespec) { buffer[i].seconds, buffer[i].microseconds * 1000 };
                }
                return 0;
        }
        case DSH_METADATA_TIMES_TIMESPEC:
                /* The kernel checks the nanoseconds (UTIME_NOW, UTIME_OMIT) when it acts on the copy. */
                return copy_exact(c, op->times, p->times, sizeof(p->times));
        }
        return -EINVAL;
}

/* Copies everything the dsh_metadata_request needs besides its target. */
int dsh_metadata_copy_payload(dsh_metadata_call *c, dsh_metadata_request *op, dsh_metadata_payload *p)
{
        struct command_xattr_args xattr_args = { 0, 0, 0 };
        int result;

        switch (op->kind) {
        case DSH_METADATA_CHMOD:
        case DSH_METADATA_CHOWN:
                return 0;
        case DSH_METADATA_TIMES:
                return copy_times(c, op, p);
        case DSH_METADATA_SETXATTR:
        case DSH_METADATA_REMOVEXATTR:
                result = copy_string(c, op->name, p->name, sizeof(p->name), ERANGE);
                if (result < 0)
                        return result;
                if (p->name[0] == '\0')
                        return -ERANGE;
                if (op->kind == DSH_METADATA_REMOVEXATTR)
                        return 0;
                if (op->xattr_args) {
                        if (op->struct_size < XATTR_ARGS_SIZE_VER0)
                                return -EINVAL;
                        result = copy_struct(c, op->struct_argument, op->struct_size, &xattr_args, sizeof(xattr_args));
                        if (result < 0)
                                return result;
                        op->value = xattr_args.value;
                        op->size = xattr_args.size;
                        op->xattr_flags = (int) xattr_args.flags;
                }
                if (op->xattr_flags & ~(XATTR_CREATE | XATTR_REPLACE))
                        return -EINVAL;
                if (op->size > XATTR_SIZE_MAX)
                        return -E2BIG;
                p->value_size = (size_t) op->size;
                return p->value_size ? copy_exact(c, op->value, c->tracee->value_buffer, p->value_size) : 0;
        case DSH_METADATA_FILE_SETATTR:
                return copy_struct(c, op->struct_argument, op->struct_size, &p->file_attr, sizeof(p->file_attr));
        case DSH_METADATA_PTY_PEER:
                return 0;  /* the flags came in the arguments */
        case DSH_METADATA_IOCTL:
                /* FS_IOC_SETFLAGS takes an int whatever its number says (get_user(int) in the kernel). */
                p->ioctl_size = op->ioctl_command == DSH_FS_IOC_FSSETXATTR ? sizeof(p->ioctl_buffer.fsxattr)
                                                                            : sizeof(int);
                return copy_exact(c, op->ioctl_argument, &p->ioctl_buffer, p->ioctl_size);
        }
        return -EINVAL;
}

/* ----------------------------------------------------- the command's files -- */

int dsh_metadata_open_resolved(int directory_fd, const char *path, int flags, uint64_t resolve)
{
        struct open_how how = { .flags = (uint64_t) flags | O_CLOEXEC, .resolve = resolve };
        long fd = -1;

        for (int attempt = 0; attempt < RESOLVE_ATTEMPTS; attempt++) {
                fd = syscall(__NR_openat2, directory_fd, path, &how, sizeof(how));
                if (fd >= 0 || errno != EAGAIN)
                        break;
        }
        return fd < 0 ? -errno : (int) fd;
}

/* /proc/<tid>/<name> of the calling thread (its own cwd, root or descriptor), opened with `flags`. */
static int open_thread_entry(dsh_metadata_call *c, const char *name, int flags)
{
        char path[64];
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/%s", (int) c->tid, name);
        fd = open(path, flags | O_CLOEXEC);
        if (fd < 0 && (errno == EACCES || errno == EPERM))
                c->unreadable = true;
        return fd < 0 ? -errno : fd;
}

bool dsh_metadata_call_still_valid(const dsh_metadata_call *c)
{
        uint64_t id = c->id;

        return ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/*
 * A new pidfd for the calling thread: pidfd_open(PIDFD_THREAD) where the
 * kernel has it (6.9); before, pidfd_open() only takes a thread-group
 * leader, and another thread's descriptors are reached through
 * /proc/<tid>/fd.  -1 when there is none.
 */
static int open_thread_pidfd(dsh_metadata_call *c)
{
        dsh_metadata_tracee *tracee = c->tracee;
        long fd = -1;

        if (!tracee->no_thread_pidfds) {
                fd = syscall(__NR_pidfd_open, c->tid, PIDFD_THREAD);
                if (fd < 0 && errno == EINVAL)
                        tracee->no_thread_pidfds = true;
        }
        if (fd < 0 && tracee->no_thread_pidfds)
                fd = syscall(__NR_pidfd_open, c->tid, 0);
        return fd < 0 ? -1 : (int) fd;
}

/*
 * The calling thread's pidfd, from the cache or new.  A new one is checked
 * at once against the notification: valid, the thread is alive, so the tid
 * it was opened by is that thread's and not a later one's.  Returns false
 * when the call is no longer valid.
 */
bool dsh_metadata_find_thread_pidfd(dsh_metadata_call *c)
{
        dsh_metadata_tracee *tracee = c->tracee;
        struct dsh_metadata_cached_pidfd *slot;

        c->pidfd = -1;
        for (size_t i = 0; i < DSH_METADATA_PIDFD_CACHE_SIZE; i++)
                if (tracee->pidfds[i].fd >= 0 && tracee->pidfds[i].tid == c->tid) {
                        c->pidfd = tracee->pidfds[i].fd;
                        return true;
                }
        slot = &tracee->pidfds[tracee->next_pidfd];
        tracee->next_pidfd = (tracee->next_pidfd + 1) % DSH_METADATA_PIDFD_CACHE_SIZE;
        if (slot->fd >= 0)
                close(slot->fd);
        slot->tid = c->tid;
        slot->fd = open_thread_pidfd(c);
        c->pidfd = slot->fd;
        return dsh_metadata_call_still_valid(c);
}

/* The cached pidfd named a dead task with the caller's tid: open the caller's.  True when there is one. */
static bool refresh_thread_pidfd(dsh_metadata_call *c)
{
        dsh_metadata_tracee *tracee = c->tracee;

        for (size_t i = 0; i < DSH_METADATA_PIDFD_CACHE_SIZE; i++)
                if (tracee->pidfds[i].fd == c->pidfd && c->pidfd >= 0) {
                        close(tracee->pidfds[i].fd);
                        tracee->pidfds[i].fd = -1;
                }
        return dsh_metadata_find_thread_pidfd(c) && c->pidfd >= 0;
}

/*
 * The command's descriptor `command_fd` in its calling thread's own fd
 * table, as a descriptor of ours: pidfd_getfd() on the thread's pidfd (the
 * same open file), or where that is refused, /proc/<tid>/fd/N reopened
 * O_PATH — or, for `real_file`, read-only.  Returns the fd or a negative
 * errno (-EBADF: the command has no such descriptor).
 */
int dsh_metadata_acquire_descriptor(dsh_metadata_call *c, int command_fd, bool real_file)
{
        char name[32];
        long fd;

        c->reopened = false;
        if (command_fd < 0)
                return -EBADF;
        if (c->pidfd >= 0 && !c->tracee->descriptors_through_proc) {
                fd = syscall(__NR_pidfd_getfd, c->pidfd, command_fd, 0);
                if (fd < 0 && errno == ESRCH && refresh_thread_pidfd(c))
                        fd = syscall(__NR_pidfd_getfd, c->pidfd, command_fd, 0);
                if (fd >= 0)
                        return (int) fd;
                if (errno != EPERM && errno != ENOSYS)
                        return -errno;
                /* Refused (a container's seccomp profile): /proc/<tid>/fd needs only read access to the thread. */
                c->tracee->descriptors_through_proc = true;
        }
        snprintf(name, sizeof(name), "fd/%d", command_fd);
        fd = open_thread_entry(c, name, real_file ? O_RDONLY | O_NONBLOCK | O_NOCTTY : O_PATH);
        c->reopened = fd >= 0;
        return fd == -ENOENT ? -EBADF : (int) fd;
}

/*
 * Opens the call's target in `*fd`, O_PATH (or the command's own open file
 * for a descriptor form), without following a magic link anywhere: a path
 * is resolved as the kernel would for the calling thread — an absolute one
 * beneath the thread's root (RESOLVE_IN_ROOT), a relative one from its cwd
 * or from its dirfd — with the trailing symlink followed only when the call
 * follows it.  `*form` says how the target was named in the end.  Returns 0
 * or the negative errno to answer.
 */
int dsh_metadata_open_target(dsh_metadata_call *c, const dsh_metadata_request *op, dsh_metadata_target *form,
                             int *fd)
{
        char path[PATH_MAX];
        int result;

        *form = op->form;
        if (op->form == DSH_METADATA_TARGET_DESCRIPTOR) {
                *fd = dsh_metadata_acquire_descriptor(c, op->dirfd, op->kind == DSH_METADATA_IOCTL);
                /* Reopened O_PATH through /proc: not the command's open file, acted on as a path is. */
                if (*fd >= 0 && c->reopened && op->kind != DSH_METADATA_IOCTL)
                        *form = DSH_METADATA_TARGET_PATH;
                return *fd < 0 ? *fd : 0;
        }
        /* A NULL path with AT_EMPTY_PATH is an empty one where the kernel says so (getname_maybe_null()). */
        if (op->path == 0 && op->null_path_empty)
                path[0] = '\0';
        else if ((result = copy_string(c, op->path, path, sizeof(path), ENAMETOOLONG)) < 0)
                return result;
        if (path[0] == '\0') {
                if (!op->empty_path_allowed)
                        return -ENOENT;
                *form = DSH_METADATA_TARGET_EMPTY_PATH;
                *fd = op->dirfd == AT_FDCWD ? open_thread_entry(c, "cwd", O_PATH)
                                            : dsh_metadata_acquire_descriptor(c, op->dirfd, false);
                if (*fd >= 0 && op->dirfd != AT_FDCWD && c->reopened)
                        *form = DSH_METADATA_TARGET_PATH;  /* as above: no longer the command's own open file */
                return *fd < 0 ? *fd : 0;
        }
        /*
         * A following call on the thread's own /proc/self/fd/N is what the
         * kernel would do with it: its descriptor N (glibc's fchmodat() with
         * AT_SYMLINK_NOFOLLOW goes this way).  Any other magic link is refused.
         */
        return dsh_metadata_open_path(c, path, op->dirfd, op->follow, fd);
}

int dsh_metadata_open_path(dsh_metadata_call *c, const char *path, int dirfd, bool follow, int *fd)
{
        uint64_t resolve = RESOLVE_NO_MAGICLINKS;
        int base, own_fd;

        if (follow && dsh_metadata_own_descriptor_path(path, &own_fd)) {
                *fd = dsh_metadata_acquire_descriptor(c, own_fd, false);
                return *fd < 0 ? *fd : 0;
        }
        if (path[0] == '/') {
                base = open_thread_entry(c, "root", O_PATH | O_DIRECTORY);
                resolve |= RESOLVE_IN_ROOT;
        } else if (dirfd == AT_FDCWD) {
                base = open_thread_entry(c, "cwd", O_PATH | O_DIRECTORY);
        } else {
                base = dsh_metadata_acquire_descriptor(c, dirfd, false);
        }
        if (base < 0)
                return base;
        *fd = dsh_metadata_open_resolved(base, path, O_PATH | (follow ? 0 : O_NOFOLLOW), resolve);
        close(base);
        return *fd < 0 ? *fd : 0;
}

int dsh_metadata_copy_exact(dsh_metadata_call *c, uint64_t address, void *buffer, size_t size)
{
        return copy_exact(c, address, buffer, size);
}

int dsh_metadata_copy_path(dsh_metadata_call *c, uint64_t address, char *buffer, size_t capacity)
{
        return copy_string(c, address, buffer, capacity, ENAMETOOLONG);
}

int dsh_metadata_open_base(dsh_metadata_call *c, const char *path, int dirfd, uint64_t *resolve)
{
        *resolve = RESOLVE_NO_MAGICLINKS;
        if (path[0] == '/') {
                *resolve |= RESOLVE_IN_ROOT;
                return open_thread_entry(c, "root", O_PATH | O_DIRECTORY);
        }
        if (dirfd == AT_FDCWD)
                return open_thread_entry(c, "cwd", O_PATH | O_DIRECTORY);
        return dsh_metadata_acquire_descriptor(c, dirfd, false);
}

/*
 * The calling thread's umask, from the "Umask:" line of /proc/<tid>/status
 * (4.7): what the kernel would apply to a file the command creates.
 * Returns 0 with `*umask_out` set, or a negative errno.
 */
int dsh_metadata_command_umask(dsh_metadata_call *c, mode_t *umask_out)
{
        static const char key[] = "\nUmask:";
        char status[4096];
        const char *line;
        ssize_t length;
        int fd = open_thread_entry(c, "status", O_RDONLY);

        if (fd < 0)
                return fd;
        length = read(fd, status, sizeof(status) - 1);
        close(fd);
        if (length <= 0)
                return -EIO;
        status[length] = '\0';
        line = strstr(status, key);
        if (!line)
                return -EIO;
        *umask_out = (mode_t) (strtoul(line + sizeof(key) - 1, NULL, 8) & 0777);
        return 0;
}

/* Whether a supervisor could read the command at all, checked before anything runs (metadata-supervisor.h). */
int dsh_metadata_supervisor_check_host(const char **reason)
{
        char scope[16] = "";
        int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
        int source = 7, target = 0;
        struct iovec local = { &target, sizeof(target) }, remote = { &source, sizeof(source) };

        if (fd >= 0) {
                ssize_t length = read(fd, scope, sizeof(scope) - 1);

                close(fd);
                scope[length > 0 ? length : 0] = '\0';
                if (atoi(scope) >= 2) {
                        *reason = "Yama's ptrace_scope is 2 or more here: without CAP_SYS_PTRACE, which the metadata "
                                  "supervisor does not keep, it cannot read a command's arguments (process_vm_readv)";
                        return -EPERM;
                }
        }
        /* Reading one's own memory is always allowed: a failure here is a seccomp profile refusing the call. */
        if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t) sizeof(target) || target != source) {
                *reason = "process_vm_readv() is refused on this host (a seccomp profile): the metadata supervisor "
                          "cannot read a command's arguments";
                return errno ? -errno : -EPERM;
        }
        return 0;
}


int dsh_metadata_descriptor_name(int fd, char *name, size_t size)
{
        char link[64];
        ssize_t length;

        snprintf(link, sizeof(link), "/proc/thread-self/fd/%d", fd);
        length = readlink(link, name, size);
        if (length < 0)
                return -errno;
        if ((size_t) length >= size)
                return -ENAMETOOLONG;
        name[length] = '\0';
        return 0;
}


static void send_response(const dsh_metadata_call *c, int error, uint32_t flags)
{
        struct seccomp_notif_resp response = { .id = c->id, .val = 0, .error = error < 0 ? error : 0, .flags = flags };

        /* ENOENT: the caller is gone or was interrupted (by a fatal signal): nobody to answer. */
        while (ioctl(c->listener, SECCOMP_IOCTL_NOTIF_SEND, &response) < 0 && errno == EINTR)
                ;
}

void dsh_metadata_call_answer(const dsh_metadata_call *c, int error)
{
        send_response(c, error, 0);
}

void dsh_metadata_call_let_through(const dsh_metadata_call *c)
{
        send_response(c, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

int dsh_metadata_call_answer_with_fd(const dsh_metadata_call *c, int fd, bool close_on_exec)
{
        struct seccomp_notif_addfd addfd = { .id = c->id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (uint32_t) fd,
                                             .newfd = 0, .newfd_flags = close_on_exec ? O_CLOEXEC : 0 };
        int result;

        do
                result = ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
        while (result < 0 && errno == EINTR);
        /* ENOENT: the call is gone (its thread died or was interrupted): nobody to answer. */
        return result < 0 && errno != ENOENT ? -errno : 0;
}

long long dsh_metadata_monotonic_ms(void)
{
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (long long) now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

bool dsh_metadata_path_within(const char *path, const char *directory, size_t length)
{
        if (length == 1)
                return path[0] == '/';  /* "/" */
        return strncmp(path, directory, length) == 0 && (path[length] == '\0' || path[length] == '/');
}
