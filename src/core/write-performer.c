/* SPDX-License-Identifier: MIT */
/* The Landlock-restricted thread that performs the command's writes: see write-performer.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/landlock.h"
#include "core/write-performer.h"

/* Its frames hold no buffer: what it performs points into the serving thread's. */
#define PERFORMER_STACK_SIZE (64 * 1024)

struct dsh_write_performer {
        pthread_t thread;
        int ruleset_fd;
        sem_t asked;            /* the serving thread posted a call (or the end: call NULL) */
        sem_t answered;         /* the thread posted its result (or, first, its readiness) */
        const dsh_performed_call *call;
        long result;
        bool ready;             /* restricted and waiting for calls */
        bool confirmed;         /* its readiness answer was taken (ready says what it was) */
};

static long performed(long value)
{
        return value < 0 ? -errno : value;
}

/* The umask this thread set last (-1: none yet): set again only when it differs. */
static _Thread_local int thread_umask = -1;

long dsh_write_perform_now(const dsh_performed_call *call)
{
        if (call->creates && thread_umask != (int) call->umask) {
                umask(call->umask);
                thread_umask = (int) call->umask;
        }
        switch (call->kind) {
        case DSH_PERFORM_OPENAT:
                return performed(openat(call->dirfd, call->name, call->flags, call->mode));
        case DSH_PERFORM_MKDIRAT:
                return performed(mkdirat(call->dirfd, call->name, call->mode));
        case DSH_PERFORM_MKNODAT:
                return performed(mknodat(call->dirfd, call->name, call->mode, call->device));
        case DSH_PERFORM_SYMLINKAT:
                return performed(symlinkat(call->text, call->dirfd, call->name));
        case DSH_PERFORM_UNLINKAT:
                return performed(unlinkat(call->dirfd, call->name, call->flags));
        case DSH_PERFORM_RENAMEAT2:
                return performed(syscall(__NR_renameat2, call->dirfd, call->name, call->new_dirfd, call->new_name,
                                         (unsigned int) call->flags));
        case DSH_PERFORM_LINKAT:
                return performed(linkat(call->dirfd, call->name, call->new_dirfd, call->new_name, call->flags));
        case DSH_PERFORM_TRUNCATE:
                return performed(truncate(call->name, (off_t) call->length));
        }
        return -EINVAL;
}

/*
 * The restriction, in the thread itself (Landlock restricts the calling
 * thread alone): no_new_privs is per thread too.  Its own fs_struct
 * (CLONE_FS) so that its umask is its own; its cwd and root stay the
 * process's, never used (every call is relative to an fd, or to
 * /proc/thread-self).
 */
static bool restrict_thread(int ruleset_fd)
{
        if (unshare(CLONE_FS) < 0)
                return false;
        return dsh_landlock_enforce(ruleset_fd) == 0;
}

static void *performer_thread(void *data)
{
        dsh_write_performer *performer = data;

        performer->ready = restrict_thread(performer->ruleset_fd);
        sem_post(&performer->answered);
        if (!performer->ready)
                return NULL;
        for (;;) {
                while (sem_wait(&performer->asked) < 0)
                        ;
                if (!performer->call)
                        return NULL;
                performer->result = dsh_write_perform_now(performer->call);
                sem_post(&performer->answered);
        }
}

static void wait_answer(dsh_write_performer *performer)
{
        while (sem_wait(&performer->answered) < 0)
                ;
}

dsh_write_performer *dsh_write_performer_launch(int ruleset_fd)
{
        dsh_write_performer *performer = calloc(1, sizeof(*performer));
        pthread_attr_t attributes;
        int result;

        if (!performer)
                return NULL;
        performer->ruleset_fd = ruleset_fd;
        sem_init(&performer->asked, 0, 0);
        sem_init(&performer->answered, 0, 0);
        result = pthread_attr_init(&attributes);
        if (result == 0) {
                pthread_attr_setstacksize(&attributes, PERFORMER_STACK_SIZE);
                result = pthread_create(&performer->thread, &attributes, performer_thread, performer);
                pthread_attr_destroy(&attributes);
        }
        if (result != 0) {
                free(performer);
                return NULL;
        }
        return performer;
}

bool dsh_write_performer_confirm(dsh_write_performer *performer)
{
        if (!performer->confirmed) {
                wait_answer(performer);
                performer->confirmed = true;
        }
        return performer->ready;
}

long dsh_write_performer_perform(dsh_write_performer *performer, const dsh_performed_call *call)
{
        performer->call = call;
        sem_post(&performer->asked);
        wait_answer(performer);
        return performer->result;
}

void dsh_write_performer_stop(dsh_write_performer *performer)
{
        if (!performer)
                return;
        /* Restricted (and waiting to be asked) or ended: never told to end mid-restriction. */
        (void) dsh_write_performer_confirm(performer);
        performer->call = NULL;
        sem_post(&performer->asked);
        pthread_join(performer->thread, NULL);
        sem_destroy(&performer->asked);
        sem_destroy(&performer->answered);
        free(performer);
}
