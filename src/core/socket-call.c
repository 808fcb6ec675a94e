/* SPDX-License-Identifier: MIT */
/*
 * connect(), decoded, decided and performed for the command (socket-call.h
 * holds the security argument; docs/supervisor.md, "Sockets").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/kernel-abi.h"
#include "core/call-workers.h"
#include "core/inet-call.h"
#include "core/socket-call.h"

struct allowed_socket {
        int fd;         /* O_PATH, held: while it is, dev and ino name no other inode */
        dev_t dev;
        ino_t ino;
};

/* One connect to perform: everything copied or taken, nothing of the command's left to read. */
struct connect_job {
        int listener;
        uint64_t id;
        int socket_fd;                  /* the command's socket (pidfd_getfd: the same open file) */
        int target_fd;                  /* a unix socket's O_PATH fd, or -1 */
        struct sockaddr_storage address;
        socklen_t length;
        dsh_inet_attachment attachment; /* a redirect to the proxy: forgotten if the connect fails */
};

struct dsh_socket_calls {
        struct allowed_socket *allowed;
        size_t allowed_count;
        dsh_inet_calls *inet;           /* the network policy's decisions, or NULL (ON: inet passes) */
        dsh_call_workers *workers;      /* the calls that may block (call-workers.h) */
};

/* ----------------------------------------------------------- configuration -- */

dsh_socket_calls *dsh_socket_calls_new(void)
{
        dsh_socket_calls *calls = calloc(1, sizeof(*calls));

        if (!calls)
                return NULL;
        calls->workers = dsh_call_workers_new();
        if (!calls->workers) {
                free(calls);
                return NULL;
        }
        return calls;
}

void dsh_socket_calls_free(dsh_socket_calls *calls)
{
        if (!calls)
                return;
        for (size_t i = 0; i < calls->allowed_count; i++)
                close(calls->allowed[i].fd);
        free(calls->allowed);
        dsh_call_workers_free(calls->workers);
        free(calls);
}

int dsh_socket_calls_allow(dsh_socket_calls *calls, const char *path)
{
        struct allowed_socket *allowed;
        struct stat status;
        int fd;

        if (path[0] != '/')
                return -EINVAL;
        fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &status) < 0 || !S_ISSOCK(status.st_mode)) {
                close(fd);
                return -ENOTSOCK;
        }
        allowed = realloc(calls->allowed, (calls->allowed_count + 1) * sizeof(*allowed));
        if (!allowed) {
                close(fd);
                return -ENOMEM;
        }
        calls->allowed = allowed;
        allowed[calls->allowed_count++] = (struct allowed_socket) { fd, status.st_dev, status.st_ino };
        return 0;
}

static bool allow_listed(const dsh_socket_calls *calls, const struct stat *target)
{
        for (size_t i = 0; i < calls->allowed_count; i++)
                if (calls->allowed[i].dev == target->st_dev && calls->allowed[i].ino == target->st_ino)
                        return true;
        return false;
}

bool dsh_socket_call_is_ours(int nr)
{
        return nr == __NR_connect;
}

int dsh_socket_call_check_host(const char **reason)
{
        long pidfd = syscall(__NR_pidfd_open, getpid(), 0);
        long fd;

        if (pidfd < 0) {
                *reason = "pidfd_open() is refused on this host: the supervisor cannot take a confined command's "
                          "socket, so every connect of a confined command is refused (EACCES)";
                return -errno;
        }
        /* Taking one of our own descriptors is always allowed: a failure is a seccomp profile refusing the call. */
        fd = syscall(__NR_pidfd_getfd, (int) pidfd, (int) pidfd, 0);
        close((int) pidfd);
        if (fd < 0) {
                *reason = "pidfd_getfd() is refused on this host (a seccomp profile): the supervisor cannot take a "
                          "confined command's socket, so every connect of a confined command is refused (EACCES)";
                return -EPERM;
        }
        close((int) fd);
        return 0;
}

/* ------------------------------------------------------------------ answers -- */

void dsh_socket_calls_set_inet(dsh_socket_calls *calls, dsh_inet_calls *inet)
{
        calls->inet = inet;
}

static void job_close(struct connect_job *job)
{
        if (job->socket_fd >= 0)
                close(job->socket_fd);
        if (job->target_fd >= 0)
                close(job->target_fd);
        job->socket_fd = job->target_fd = -1;
}

/* --------------------------------------------------------------- deciding -- */

/*
 * The refused socket `target_fd` written down by the name its open file has
 * in the command's view (the path as the supervisor resolved it: a symlink
 * on the way is followed, as connect follows it), or counted unnamed.
 */
static void record_unix_path(const dsh_socket_scope *scope, int target_fd)
{
        char name[PATH_MAX];

        if (dsh_metadata_descriptor_name(target_fd, name, sizeof(name)) < 0 || name[0] != '/')
                scope->record(scope->data, NULL, DSH_REFUSAL_UNIX_SOCKET);
        else
                scope->record(scope->data, name, DSH_REFUSAL_UNIX_SOCKET);
}

/*
 * An abstract (or unnamed) address written down as "@name": the name's
 * bytes after the leading NUL, up to the address's end, each NUL among them
 * written \x00 (a C string cannot carry it; the other bytes stay as they
 * are and are escaped where the record is shown, as every path is).
 */
static void record_abstract(const dsh_socket_scope *scope, const struct connect_job *job)
{
        const struct sockaddr_un *asked = (const struct sockaddr_un *) &job->address;
        size_t start = offsetof(struct sockaddr_un, sun_path);
        size_t length = job->length > start ? (size_t) job->length - start : 0;
        char name[1 + 4 * sizeof(asked->sun_path) + 1];
        size_t at = 0;

        name[at++] = '@';
        for (size_t i = 1; i < length; i++) {
                if (asked->sun_path[i] != '\0') {
                        name[at++] = asked->sun_path[i];
                        continue;
                }
                memcpy(name + at, "\\x00", 4);
                at += 4;
        }
        name[at] = '\0';
        scope->record(scope->data, name, DSH_REFUSAL_ABSTRACT_SOCKET);
}

/*
 * A pathname unix socket: resolved in the command's view, and reached only
 * when it is an allow-listed socket or lies in one of its own writable roots
 * (socket-call.h says why).  On success the job's address names our O_PATH
 * fd of it, through /proc/thread-self/fd: the kernel looks the socket up by
 * that inode, so what was checked is what is reached.  Returns 0 or the
 * errno to answer.
 */
static int decide_unix_path(dsh_socket_calls *calls, dsh_metadata_call *c, struct connect_job *job,
                            const dsh_socket_scope *scope)
{
        const struct sockaddr_un *asked = (const struct sockaddr_un *) &job->address;
        size_t path_length = (size_t) job->length - offsetof(struct sockaddr_un, sun_path);
        char path[sizeof(asked->sun_path) + 1];
        struct sockaddr_un rewritten = { .sun_family = AF_UNIX };
        struct stat status;
        int result, written;

        /* The kernel ends the name at the address's end or its first NUL, whichever comes first. */
        memcpy(path, asked->sun_path, path_length);
        path[path_length] = '\0';
        result = dsh_metadata_open_path(c, path, AT_FDCWD, true, &job->target_fd);
        if (result < 0)
                return result == -ELOOP ? -EACCES : result;  /* a magic link (but the thread's own fd): refused */
        if (fstat(job->target_fd, &status) < 0)
                return -EACCES;
        if (!S_ISSOCK(status.st_mode))
                return -ECONNREFUSED;  /* the kernel's answer for a name that is no socket */
        if (!allow_listed(calls, &status) && scope->contained(scope->data, job->target_fd, &status) < 0) {
                record_unix_path(scope, job->target_fd);
                return -EACCES;
        }
        written = snprintf(rewritten.sun_path, sizeof(rewritten.sun_path), "/proc/thread-self/fd/%d",
                           job->target_fd);
        if (written < 0 || (size_t) written >= sizeof(rewritten.sun_path))
                return -EACCES;
        memset(&job->address, 0, sizeof(job->address));
        memcpy(&job->address, &rewritten, sizeof(rewritten));
        job->length = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + (size_t) written + 1);
        return 0;
}

/*
 * A unix socket's connect.  Only a pathname reaches anything: an abstract
 * name (sun_path[0] == 0) or no name at all is refused, since the
 * supervisor, outside every Landlock domain, would reach every abstract
 * socket of its network namespace (and written down).  AF_UNSPEC (a
 * datagram socket's disconnect) reaches nothing and is performed; another
 * family is the kernel's EINVAL.
 */
static int decide_unix(dsh_socket_calls *calls, dsh_metadata_call *c, struct connect_job *job,
                       const dsh_socket_scope *scope)
{
        const struct sockaddr_un *asked = (const struct sockaddr_un *) &job->address;

        if (job->length < sizeof(sa_family_t))
                return -EINVAL;
        if (asked->sun_family == AF_UNSPEC)
                return 0;
        /* unix_validate_addr()'s bounds: no longer than a sockaddr_un, whose sun_path the copy below fills. */
        if (asked->sun_family != AF_UNIX || job->length > sizeof(struct sockaddr_un))
                return -EINVAL;
        if (job->length <= offsetof(struct sockaddr_un, sun_path) || asked->sun_path[0] == '\0') {
                record_abstract(scope, job);
                return -EACCES;
        }
        return decide_unix_path(calls, c, job, scope);
}

/*
 * The decision for one connect of a socket of `family`: 0 to perform the
 * job (its address possibly rewritten), or the errno to answer.  An inet
 * socket's is the network policy's (inet-call.h): under ON, or with no
 * policy given, it passes as asked.
 */
static int decide_connect(dsh_socket_calls *calls, dsh_metadata_call *c, int family, struct connect_job *job,
                          const dsh_socket_scope *scope)
{
        if (family == AF_UNIX)
                return decide_unix(calls, c, job, scope);
        if ((family == AF_INET || family == AF_INET6) && calls->inet)
                return dsh_inet_decide_connect(calls->inet, job->socket_fd, &job->address, &job->length,
                                               &job->attachment);
        return 0;
}

/* ------------------------------------------------------------- performing -- */

static long perform_connect(void *data)
{
        struct connect_job *job = data;
        const struct sockaddr *address = job->length > 0 ? (const struct sockaddr *) &job->address : NULL;
        int result = connect(job->socket_fd, address, job->length) < 0 ? -errno : 0;

        if (result < 0 && result != -EINPROGRESS)
                dsh_inet_attachment_forget(&job->attachment);
        return result;
}

static void release_connect(void *data)
{
        job_close(data);
        free(data);
}

/* Hands `job` (taken) to a new worker.  0, or the errno to answer (then the job is closed). */
static int start_worker(dsh_socket_calls *calls, struct connect_job *job)
{
        struct connect_job *taken = malloc(sizeof(*taken));
        dsh_call_work work = { perform_connect, release_connect, taken };

        if (!taken) {
                dsh_inet_attachment_forget(&job->attachment);
                job_close(job);
                return -ENOMEM;
        }
        *taken = *job;
        return dsh_call_workers_run(calls->workers, job->listener, job->id, &work);
}

/* ---------------------------------------------------------------- handling -- */

/*
 * The command's socket and address, taken once: the socket through
 * pidfd_getfd() only (a reopening through /proc is no socket), the address
 * bounded as the kernel bounds it.  0 or the errno to answer.
 */
static int take_call(dsh_metadata_call *c, const struct seccomp_notif *request, struct connect_job *job)
{
        int64_t length = (int32_t) request->data.args[2];

        job->socket_fd = dsh_metadata_acquire_descriptor(c, (int) request->data.args[0], false);
        if (job->socket_fd >= 0 && c->reopened) {
                c->unreadable = true;  /* pidfd_getfd() refused: no way to the command's socket */
                return -EACCES;
        }
        if (job->socket_fd < 0)
                return job->socket_fd;
        if (length < 0 || length > (int64_t) sizeof(job->address))
                return -EINVAL;
        job->length = (socklen_t) length;
        return length > 0 ? dsh_metadata_copy_exact(c, request->data.args[1], &job->address, (size_t) length) : 0;
}

bool dsh_socket_call_handle(dsh_socket_calls *calls, dsh_metadata_call *c, const struct seccomp_notif *request,
                            const dsh_socket_scope *scope)
{
        struct connect_job job = { c->listener, c->id, -1, -1, { 0 }, 0, { 0 } };
        int family = 0, result;
        socklen_t size = sizeof(family);

        if (!dsh_metadata_find_thread_pidfd(c))
                return false;  /* the thread is gone: the tid may already name another */
        if (c->pidfd < 0)
                c->unreadable = true;
        result = c->pidfd < 0 ? -EACCES : take_call(c, request, &job);
        if (result == 0 && getsockopt(job.socket_fd, SOL_SOCKET, SO_DOMAIN, &family, &size) < 0)
                result = -errno;  /* ENOTSOCK: the kernel's answer */
        if (result == 0)
                result = decide_connect(calls, c, family, &job, scope);
        if (result == 0 && !dsh_metadata_call_still_valid(c)) {
                dsh_inet_attachment_forget(&job.attachment);
                job_close(&job);
                return false;
        }
        if (c->unreadable && result < 0)
                result = -EACCES;
        if (result < 0) {
                job_close(&job);
                dsh_call_answer(c->listener, c->id, result);
                return c->unreadable;
        }
        /*
         * Every connect is performed by a worker, never on the supervisor's
         * own thread, not even on a socket that looks non-blocking:
         * O_NONBLOCK is the open file's, shared with the command, and a
         * thread of it that clears the flag between a check here and the
         * connect would make the connect wait — with the supervisor holding
         * the socket (its pidfd_getfd copy), a connect to a full backlog the
         * command controls never returns.  A worker is cancelled when the
         * listener hangs up (dsh_socket_calls_stop()), so such a connect
         * ends with its command.
         */
        result = start_worker(calls, &job);
        if (result < 0)
                dsh_call_answer(c->listener, c->id, result);
        return false;
}

dsh_call_workers *dsh_socket_calls_workers(dsh_socket_calls *calls)
{
        return calls->workers;
}

void dsh_socket_calls_stop(dsh_socket_calls *calls)
{
        if (calls)
                dsh_call_workers_stop(calls->workers);
}
