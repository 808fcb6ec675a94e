/* SPDX-License-Identifier: MIT */
/* The supervisor's worker threads (call-workers.h). */
#include <errno.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/call-workers.h"

#define WORKER_LIMIT DSH_CALL_WORKER_LIMIT
/* A worker's frames hold one address and a few fds. */
#define WORKER_STACK_SIZE (64 * 1024)

struct worker {
        pthread_t thread;
        bool used;
        atomic_bool done;
};

struct dsh_call_workers {
        pthread_mutex_t lock;
        struct worker workers[WORKER_LIMIT];
};

dsh_call_workers *dsh_call_workers_new(void)
{
        dsh_call_workers *workers = calloc(1, sizeof(*workers));

        if (!workers)
                return NULL;
        pthread_mutex_init(&workers->lock, NULL);
        for (size_t i = 0; i < WORKER_LIMIT; i++)
                atomic_init(&workers->workers[i].done, false);
        return workers;
}

void dsh_call_workers_free(dsh_call_workers *workers)
{
        if (!workers)
                return;
        pthread_mutex_destroy(&workers->lock);
        free(workers);
}

/* A negative `result` is the errno to answer, any other the call's value (a send's byte count). */
static void answer(int listener, uint64_t id, long result)
{
        struct seccomp_notif_resp response = { .id = id, .val = result > 0 ? result : 0,
                                               .error = result < 0 ? (int) result : 0, .flags = 0 };

        /* ENOENT: the caller is gone (killed): nobody to answer. */
        while (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &response) < 0 && errno == EINTR)
                ;
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
        dsh_call_work work;
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
static struct worker *free_worker(dsh_call_workers *calls)
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

int dsh_call_workers_run(dsh_call_workers *calls, int listener, uint64_t id, const dsh_call_work *work)
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

void dsh_call_workers_stop(dsh_call_workers *calls)
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

void dsh_call_answer(int listener, uint64_t id, long result)
{
        answer(listener, id, result);
}
