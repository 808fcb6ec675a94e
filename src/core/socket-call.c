/* SPDX-License-Identifier: MIT */
/*
 * connect(), decoded, decided and performed for the command (socket-call.h
 * holds the security argument; docs/supervisor.md, "Sockets").
 */
#include <errno.h>
#include <fcntl.h>
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
#include "core/inet-call.h"
#include "core/socket-call.h"

/*
 * Connects in flight at once.  One more is answered EAGAIN (what a
 * full unix backlog answers a non-blocking connect): a command cannot make
 * the supervisor start threads without bound.
 */
#define WORKER_LIMIT 32
/* A worker's frames hold one address and a few fds. */
#define WORKER_STACK_SIZE (64 * 1024)

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

struct worker {
        pthread_t thread;
        bool used;
        atomic_bool done;
};

struct dsh_socket_calls {
        struct allowed_socket *allowed;
        size_t allowed_count;
        dsh_inet_calls *inet;           /* the network policy's decisions, or NULL (ON: inet passes) */
        pthread_mutex_t lock;
        struct worker workers[WORKER_LIMIT];
};

/* ----------------------------------------------------------- configuration -- */

dsh_socket_calls *dsh_socket_calls_new(void)
{
        dsh_socket_calls *calls = calloc(1, sizeof(*calls));

        if (!calls)
                return NULL;
        pthread_mutex_init(&calls->lock, NULL);
        for (size_t i = 0; i < WORKER_LIMIT; i++)
                atomic_init(&calls->workers[i].done, false);
        return calls;
}

void dsh_socket_calls_free(dsh_socket_calls *calls)
{
        if (!calls)
                return;
        for (size_t i = 0; i < calls->allowed_count; i++)
                close(calls->allowed[i].fd);
        free(calls->allowed);
        pthread_mutex_destroy(&calls->lock);
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

/* A negative `result` is the errno to answer, any other the call's value (a send's byte count). */
static void answer(int listener, uint64_t id, long result)
{
        struct seccomp_notif_resp response = { .id = id, .val = result > 0 ? result : 0,
                                               .error = result < 0 ? (int) result : 0, .flags = 0 };

        /* ENOENT: the caller is gone (killed): nobody to answer. */
        while (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &response) < 0 && errno == EINTR)
                ;
}

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
 * A pathname unix socket: resolved in the command's view, and reached only
 * when it is an allow-listed socket or lies in one of its own writable roots
 * (socket-call.h says why).  On success the job's address names our O_PATH
 * fd of it, through /proc/thread-self/fd: the kernel looks the socket up by
 * that inode, so what was checked is what is reached.  Returns 0 or the
 * errno to answer.
 */
static int decide_unix_path(dsh_socket_calls *calls, dsh_metadata_call *c, struct connect_job *job,
                            dsh_socket_containment_fn contained, void *containment_data)
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
        if (!allow_listed(calls, &status) && contained(containment_data, job->target_fd, &status) < 0)
                return -EACCES;
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
 * socket of its network namespace.  AF_UNSPEC (a datagram socket's
 * disconnect) reaches nothing and is performed; another family is the
 * kernel's EINVAL.
 */
static int decide_unix(dsh_socket_calls *calls, dsh_metadata_call *c, struct connect_job *job,
                       dsh_socket_containment_fn contained, void *containment_data)
{
        const struct sockaddr_un *asked = (const struct sockaddr_un *) &job->address;

        if (job->length < sizeof(sa_family_t))
                return -EINVAL;
        if (asked->sun_family == AF_UNSPEC)
                return 0;
        /* unix_validate_addr()'s bounds: no longer than a sockaddr_un, whose sun_path the copy below fills. */
        if (asked->sun_family != AF_UNIX || job->length > sizeof(struct sockaddr_un))
                return -EINVAL;
        if (job->length <= offsetof(struct sockaddr_un, sun_path) || asked->sun_path[0] == '\0')
                return -EACCES;
        return decide_unix_path(calls, c, job, contained, containment_data);
}

/*
 * The decision for one connect of a socket of `family`: 0 to perform the
 * job (its address possibly rewritten), or the errno to answer.  An inet
 * socket's is the network policy's (inet-call.h): under ON, or with no
 * policy given, it passes as asked.
 */
static int decide_connect(dsh_socket_calls *calls, dsh_metadata_call *c, int family,
                                     struct connect_job *job, dsh_socket_containment_fn contained,
                                     void *containment_data)
{
        if (family == AF_UNIX)
                return decide_unix(calls, c, job, contained, containment_data);
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

/* A thread made by the capability-less supervisor thread has none (credentials are copied): checked anyway. */
static bool thread_holds_no_capability(void)
{
        struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
        struct __user_cap_data_struct data[2];

        if (syscall(__NR_capget, &header, data) < 0)
                return false;
        for (int i = 0; i < 2; i++)
                if (data[i].effective || data[i].permitted)
                        return false;
        return true;
}

struct worker_start {
        dsh_socket_work work;
        int listener;
        uint64_t id;
        struct worker *worker;
};

static void worker_cleanup(void *data)
{
        struct worker_start *start = data;

        start->work.release(start->work.data);
        atomic_store(&start->worker->done, true);
        free(start);
}

/*
 * A call that may block, performed and answered here.  Cancellation (the
 * supervisor stopping) is allowed only while it waits: the cleanup
 * releases the work (closing our fds), and the listener, closed after every
 * worker is joined, then fails the command's call with ENOSYS.
 */
static void *call_worker(void *data)
{
        struct worker_start *start = data;
        long result;

        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
        pthread_cleanup_push(worker_cleanup, start);
        if (!thread_holds_no_capability()) {
                result = -EACCES;
        } else {
                pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
                result = start->work.perform(start->work.data);
                pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
        }
        answer(start->listener, start->id, result);
        pthread_cleanup_pop(1);
        return NULL;
}

/* Joins the workers that are done; the caller holds the lock.  A free slot, or NULL. */
static struct worker *free_worker(dsh_socket_calls *calls)
{
        struct worker *slot = NULL;

        for (size_t i = 0; i < WORKER_LIMIT; i++) {
                struct worker *worker = &calls->workers[i];

                if (worker->used && atomic_load(&worker->done)) {
                        pthread_join(worker->thread, NULL);
                        worker->used = false;
                }
                if (!worker->used && !slot)
                        slot = worker;
        }
        return slot;
}

int dsh_socket_calls_run(dsh_socket_calls *calls, int listener, uint64_t id, const dsh_socket_work *work)
{
        struct worker_start *start = malloc(sizeof(*start));
        pthread_attr_t attributes;
        sigset_t all, previous;
        struct worker *worker;
        int result;

        if (!start) {
                work->release(work->data);
                return -ENOMEM;
        }
        pthread_mutex_lock(&calls->lock);
        worker = free_worker(calls);
        result = worker ? -pthread_attr_init(&attributes) : -EAGAIN;
        if (result == 0) {
                *start = (struct worker_start) { *work, listener, id, worker };
                atomic_store(&worker->done, false);
                (void) pthread_attr_setstacksize(&attributes, WORKER_STACK_SIZE);
                /* Every signal blocked on it: none of the caller's is ever handled there (glibc keeps its own). */
                sigfillset(&all);
                pthread_sigmask(SIG_BLOCK, &all, &previous);
                result = -pthread_create(&worker->thread, &attributes, call_worker, start);
                pthread_sigmask(SIG_SETMASK, &previous, NULL);
                pthread_attr_destroy(&attributes);
                worker->used = result == 0;
        }
        pthread_mutex_unlock(&calls->lock);
        if (result < 0) {
                free(start);
                work->release(work->data);
        }
        return result;
}

/* Hands `job` (taken) to a new worker.  0, or the errno to answer (then the job is closed). */
static int start_worker(dsh_socket_calls *calls, struct connect_job *job)
{
        struct connect_job *taken = malloc(sizeof(*taken));
        dsh_socket_work work = { perform_connect, release_connect, taken };

        if (!taken) {
                dsh_inet_attachment_forget(&job->attachment);
                job_close(job);
                return -ENOMEM;
        }
        *taken = *job;
        return dsh_socket_calls_run(calls, job->listener, job->id, &work);
}

void dsh_socket_calls_stop(dsh_socket_calls *calls)
{
        if (!calls)
                return;
        pthread_mutex_lock(&calls->lock);
        for (size_t i = 0; i < WORKER_LIMIT; i++)
                if (calls->workers[i].used && !atomic_load(&calls->workers[i].done))
                        pthread_cancel(calls->workers[i].thread);
        for (size_t i = 0; i < WORKER_LIMIT; i++)
                if (calls->workers[i].used) {
                        pthread_join(calls->workers[i].thread, NULL);
                        calls->workers[i].used = false;
                }
        pthread_mutex_unlock(&calls->lock);
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
                            dsh_socket_containment_fn contained, void *containment_data)
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
                result = decide_connect(calls, c, family, &job, contained, containment_data);
        if (result == 0 && !dsh_metadata_call_still_valid(c)) {
                dsh_inet_attachment_forget(&job.attachment);
                job_close(&job);
                return false;
        }
        if (c->unreadable && result < 0)
                result = -EACCES;
        if (result < 0) {
                job_close(&job);
                answer(c->listener, c->id, result);
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
                answer(c->listener, c->id, result);
        return false;
}

void dsh_socket_call_answer(int listener, uint64_t id, long result)
{
        answer(listener, id, result);
}
