/* SPDX-License-Identifier: MIT */
/*
 * Write intent, decided and performed (write-supervisor.h; docs/supervisor.md,
 * "Write intent").
 *
 * Why the supervisor performs writes under Landlock.  Landlock grants a root
 * whole: beneath a writable root it can hold nothing back, and the command
 * could plant `.git/hooks/pre-commit`, give `.git/config` a core.hooksPath
 * or rewrite the agent's `.mcp.json` — code that runs unconfined at the
 * user's next commit or agent start.  Which name a call reaches depends on
 * a path behind a pointer, and SECCOMP_USER_NOTIF_FLAG_CONTINUE would let
 * the kernel read that pointer again after the decision (another thread of
 * the command rewrites it in between).  So the decision and the effect are
 * both made here, on what was copied once:
 *
 *   - the path is copied out of the command once (bounded) and resolved here
 *     as the calling thread would resolve it: from its cwd, its descriptor
 *     or its root (metadata-tracee.h), every component but the last by the
 *     kernel (openat2, no magic link), the last one by this code (a symlink
 *     there is read and followed, up to the kernel's 40, when the call
 *     follows it), so what is decided is one open parent directory and one
 *     name in it;
 *   - the name the command reaches is the parent's own name (a directory
 *     has exactly one: no hard link to a directory, and Landlock forbids
 *     mounts) joined with the last component; it is refused when it lies in
 *     a held-back path (a protected subpath, the sandbox's own files), or,
 *     for a rename, a removal of a directory or an exchange, when it holds
 *     one (moving `.git` away and back would take its hooks along).  An
 *     existing target is refused too when its inode is a held-back one (a
 *     hard link made before the call reaches it by another name); no new
 *     name can be given to one during the call, because link and rename
 *     from a held-back path are refused here;
 *   - nothing can change between the decision and the effect: every call
 *     that changes a name (the list in write-call.h) is sent here and
 *     served by this one thread, one at a time, and io_uring and openat2 are
 *     refused by the filter.  The effect is made on the very parent fd that
 *     was decided on, with O_NOFOLLOW for the last component (its symlinks
 *     were followed above), so the name cannot be swapped for a symlink
 *     either;
 *   - the effect is made by a thread of the supervisor's own that is
 *     restricted with the command's own Landlock ruleset
 *     (write-performer.h): whatever lies outside the roots is refused by the
 *     kernel exactly as it would be for the command, so a mistake here can
 *     at worst let the command write what Landlock lets it write anyway.
 *     The supervisor decides only what Landlock cannot express.  Where
 *     Landlock's verdict is known without asking it, the serving thread
 *     makes the effect itself and spares the round trip between threads:
 *     in a directory proven beneath a writable root (its inode reached
 *     again beneath the root's own fd, as for metadata), where the ruleset
 *     grants every right but making devices, which needs CAP_MKNOD, which no
 *     thread here holds; and on /dev/null, granted in every mode.  A rename
 *     or a link always goes to the performer: Landlock's REFER right also
 *     judges where the file comes from (a hard link of a file outside the
 *     roots into one would be a door to it);
 *   - an opened file is handed to the command with SECCOMP_IOCTL_NOTIF_ADDFD
 *     (SEND: installed and answered at once, the command's close-on-exec
 *     flag as it asked); the file is opened O_NOCTTY, so it never becomes
 *     the supervisor's controlling terminal;
 *   - what is not a path: /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N
 *     and /proc/self/fd/N name the command's own descriptor N, which is
 *     taken (pidfd_getfd) and reopened through the performer's
 *     /proc/thread-self/fd, so Landlock judges the file itself; any other
 *     write beneath /proc (where "self" would be the supervisor) is refused;
 *   - fail closed: a call that cannot be read, resolved or decided in time
 *     is refused (EACCES), a performer that cannot be restricted performs
 *     nothing, and once the listener is gone the kernel fails every further
 *     call with ENOSYS.
 *
 * Why letting a call through is safe under bwrap.  There the mounts decide
 * every write: each writable root is a bind, everything else read-only, and
 * each existing held-back path a read-only bind of its own.  Whatever path
 * the kernel reads again after CONTINUE, it resolves it in the command's
 * mount namespace, whose mounts do not depend on anything decided here.  So
 * under bwrap this code only writes down the refusal the mounts will make
 * (a read-only mount beneath the name), and refuses outright a name that is
 * held back but missing (a bind cannot cover a missing file; the audit after
 * the call remains what guarantees it, since a refusal here can be raced).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "core/kernel-abi.h"
#include "core/landlock.h"
#include "core/write-call.h"
#include "core/write-location.h"
#include "core/write-performer.h"
#include "core/write-supervisor.h"

/* __O_TMPFILE without O_DIRECTORY: the kernel's own bit. */
#define KERNEL_O_TMPFILE_BIT 020000000

/*
 * The command's umask, per thread lately seen: /proc/<tid>/status costs
 * about 20 µs to read, more than the rest of a creation.  An entry holds
 * the thread's pidfd and counts only while that thread lives (a tid reused
 * by a new task is another entry); every umask() of the command empties
 * the cache (the filter sends it: threads sharing a umask need no other
 * bookkeeping, and it is rare).
 */
#define UMASK_CACHE_SIZE 8

struct umask_entry {
        pid_t tid;
        int pidfd;                      /* -1: empty */
        mode_t mask;
};

struct dsh_write_supervisor {
        struct umask_entry umasks[UMASK_CACHE_SIZE];
        size_t next_umask;
        int ruleset_fd;                 /* Landlock's ruleset, ours; -1: watch only (bwrap) */
        dsh_write_performer *performer; /* started as serving begins, or at the first performed call */
        bool performer_failed;          /* it could not be restricted: nothing is performed */
        char path[PATH_MAX];            /* the call's paths, copied once */
        char new_path[PATH_MAX];
        char text[PATH_MAX];            /* a symlink's text */
};

static void forget_umasks(dsh_write_supervisor *supervisor)
{
        for (size_t i = 0; i < UMASK_CACHE_SIZE; i++) {
                if (supervisor->umasks[i].pidfd >= 0)
                        close(supervisor->umasks[i].pidfd);
                supervisor->umasks[i].pidfd = -1;
        }
}

/* Whether the task of `pidfd` still lives (its pidfd is not yet readable). */
static bool task_alive(int pidfd)
{
        struct pollfd event = { pidfd, POLLIN, 0 };

        return poll(&event, 1, 0) == 0;
}

/* The calling thread's umask: from the cache, or read and kept (with its pidfd, when there is one). */
static int command_umask(dsh_write_supervisor *supervisor, dsh_metadata_call *c, mode_t *mask)
{
        struct umask_entry *slot;
        int result;

        for (size_t i = 0; i < UMASK_CACHE_SIZE; i++) {
                slot = &supervisor->umasks[i];
                if (slot->pidfd >= 0 && slot->tid == c->tid && task_alive(slot->pidfd)) {
                        *mask = slot->mask;
                        return 0;
                }
        }
        result = dsh_metadata_command_umask(c, mask);
        if (result < 0 || c->pidfd < 0)
                return result;
        slot = &supervisor->umasks[supervisor->next_umask];
        supervisor->next_umask = (supervisor->next_umask + 1) % UMASK_CACHE_SIZE;
        if (slot->pidfd >= 0)
                close(slot->pidfd);
        *slot = (struct umask_entry) { c->tid, fcntl(c->pidfd, F_DUPFD_CLOEXEC, 3), *mask };
        return 0;
}

dsh_write_supervisor *dsh_write_supervisor_new(int ruleset_fd)
{
        dsh_write_supervisor *supervisor = calloc(1, sizeof(*supervisor));

        if (!supervisor)
                return NULL;
        supervisor->ruleset_fd = -1;
        for (size_t i = 0; i < UMASK_CACHE_SIZE; i++)
                supervisor->umasks[i].pidfd = -1;
        if (ruleset_fd >= 0) {
                supervisor->ruleset_fd = fcntl(ruleset_fd, F_DUPFD_CLOEXEC, 3);
                if (supervisor->ruleset_fd < 0) {
                        free(supervisor);
                        return NULL;
                }
        }
        return supervisor;
}

int dsh_write_supervisor_ruleset_fd(const dsh_write_supervisor *supervisor)
{
        return supervisor->ruleset_fd;
}

void dsh_write_supervisor_free(dsh_write_supervisor *supervisor)
{
        if (!supervisor)
                return;
        dsh_write_performer_stop(supervisor->performer);
        forget_umasks(supervisor);
        if (supervisor->ruleset_fd >= 0)
                close(supervisor->ruleset_fd);
        free(supervisor);
}

/* ---------------------------------------------------------------- held back -- */


const dsh_held_back *dsh_write_held_back_at(const dsh_write_scope *scope, const char *path, bool or_above)
{
        for (size_t i = 0; i < scope->held_back_count; i++) {
                const dsh_held_back *held = &scope->held_back[i];

                if (dsh_metadata_path_within(path, held->path, held->length) || (or_above && dsh_metadata_path_within(held->path, path,
                                                                                               strlen(path))))
                        return held;
        }
        return NULL;
}

/* The held-back path whose inode (as the call began) `status` is, or NULL. */
static const dsh_held_back *held_back_inode(const dsh_write_scope *scope, const struct stat *status)
{
        for (size_t i = 0; i < scope->held_back_count; i++) {
                const dsh_held_back *held = &scope->held_back[i];

                if (held->exists && held->dev == status->st_dev && held->ino == status->st_ino)
                        return held;
        }
        return NULL;
}

/* What holds `where` back: its name, or (when it exists) its inode; NULL when nothing does. */
static const dsh_held_back *holding(const dsh_write_scope *scope, const dsh_write_location *where, bool or_above)
{
        const dsh_held_back *held = dsh_write_held_back_at(scope, where->name, or_above);

        if (!held && where->exists)
                held = held_back_inode(scope, &where->status);
        /* A held-back directory reached by another name (a mount the user made of it): its parent inode says so. */
        if (!held && where->parent >= 0)
                held = held_back_inode(scope, &where->parent_status);
        return held;
}

/* ---------------------------------------------------------------- answering -- */




/* ------------------------------------------------------------------ a call -- */

/* One write-intent call being decided: the request, what it reaches, and the decision so far. */
struct write_call {
        dsh_write_supervisor *supervisor;
        dsh_metadata_call *c;
        const dsh_write_scope *scope;
        dsh_write_request op;
        bool watching;                  /* bwrap: record, then let through */
        bool refused;                   /* refuse() decided: answered EACCES, never let through */
};

/* Refuses the call for `rule` at `name`: written down, answered EACCES. */
static int refuse(struct write_call *call, const char *name, dsh_refusal_rule rule)
{
        call->refused = true;
        call->scope->record(call->scope->data, dsh_write_op_name(call->op.op), name, rule);
        return -EACCES;
}

/* Refused when `where` is held back (by name, or, with `or_above`, because it holds a held-back path). */
static int check_held_back(struct write_call *call, const dsh_write_location *where, bool or_above)
{
        const dsh_held_back *held = holding(call->scope, where, or_above);

        if (!held)
                return 0;
        /* Under bwrap an existing held-back path is a read-only bind: the mount refuses it, write it down only. */
        if (call->watching && held->exists) {
                call->scope->record(call->scope->data, dsh_write_op_name(call->op.op), where->name, held->rule);
                return 0;
        }
        return refuse(call, where->name, held->rule);
}

/*
 * Under bwrap: the refusal a read-only mount will make, written down (the
 * target's mount when it exists, else its parent's).  Nothing is decided.
 */
static void note_read_only_mount(struct write_call *call, const dsh_write_location *where)
{
        struct statvfs status;
        int fd = where->exists ? openat(where->parent, where->last, O_PATH | O_NOFOLLOW | O_CLOEXEC) : -1;
        int probed = fstatvfs(fd >= 0 ? fd : where->parent, &status);

        if (fd >= 0)
                close(fd);
        if (probed == 0 && (status.f_flag & ST_RDONLY) && !holding(call->scope, where, false))
                call->scope->record(call->scope->data, dsh_write_op_name(call->op.op), where->name,
                                    DSH_REFUSAL_OUTSIDE_ROOTS);
}

/*
 * Landlock refused what was performed: written down when the parent lies
 * beneath no root.  A device node is no file the command changes: opening
 * one the policy does not grant (bash opens /dev/tty as it starts, for job
 * control) is refused without a record, or every call would carry one.
 */
static void note_landlock_refusal(struct write_call *call, const dsh_write_location *where, long result)
{
        struct stat status;

        if (result != -EACCES && result != -EPERM && result != -EXDEV && result != -EROFS)
                return;
        if (where->exists && (S_ISCHR(where->status.st_mode) || S_ISBLK(where->status.st_mode)))
                return;
        if (fstat(where->parent, &status) == 0 && call->scope->in_root(call->scope->data, where->parent, &status) < 0)
                call->scope->record(call->scope->data, dsh_write_op_name(call->op.op), where->name,
                                    DSH_REFUSAL_OUTSIDE_ROOTS);
}

static dsh_write_performer *performer_of(dsh_write_supervisor *supervisor)
{
        if (!supervisor->performer && !supervisor->performer_failed)
                supervisor->performer = dsh_write_performer_launch(supervisor->ruleset_fd);
        if (supervisor->performer && !dsh_write_performer_confirm(supervisor->performer)) {
                dsh_write_performer_stop(supervisor->performer);
                supervisor->performer = NULL;
        }
        supervisor->performer_failed = !supervisor->performer;
        return supervisor->performer;
}

/*
 * The same thread, restricted by the same complete ruleset (every rule is
 * added before the command is spawned), as performer_of() would start at
 * the first call: starting it earlier changes what it is allowed nothing.
 * Not waited for here: performer_of() waits until it is restricted before
 * it is asked anything, and takes a thread that could not be as failed.
 */
void dsh_write_supervisor_prepare(dsh_write_supervisor *supervisor)
{
        if (supervisor && supervisor->ruleset_fd >= 0 && !supervisor->performer && !supervisor->performer_failed) {
                supervisor->performer = dsh_write_performer_launch(supervisor->ruleset_fd);
                supervisor->performer_failed = !supervisor->performer;
        }
}

/*
 * Performs `performed` on the restricted thread, once the call is known to
 * be still pending (its thread alive: every /proc/<tid> entry opened for it
 * was that thread's) and within its deadline.  The result, or -EACCES.
 */
/*
 * Whether the call may be performed by the serving thread itself rather
 * than handed to the performer (a round trip between two threads, most of
 * what a write-intent call costs).  Only where Landlock grants every right
 * the call needs, so that its verdict is known without asking it: a
 * directory proven beneath a writable root (every right but making
 * devices, which needs CAP_MKNOD, which no thread here has), or /dev/null,
 * granted in every mode.  Never a rename or a link: Landlock's REFER right
 * also judges where the file comes from (a hard link of a file outside the
 * roots), so those always go to the performer.
 */
static bool performs_here(const struct write_call *call, const dsh_write_location *where)
{
        char parent_name[PATH_MAX];

        if (!call->scope->own_umask)
                return false;
        if (where->exists && S_ISCHR(where->status.st_mode) && where->status.st_rdev == makedev(1, 3))
                return true;
        memcpy(parent_name, where->name, where->parent_length);
        parent_name[where->parent_length] = '\0';
        return call->scope->directory_in_root(call->scope->data, where->parent, &where->parent_status,
                                              parent_name) >= 0;
}

/* The root `where`'s directory is proven in (directory_in_root()), or -1. */
static int root_of(const struct write_call *call, const dsh_write_location *where)
{
        char parent_name[PATH_MAX];
        int root;

        memcpy(parent_name, where->name, where->parent_length);
        parent_name[where->parent_length] = '\0';
        root = call->scope->directory_in_root(call->scope->data, where->parent, &where->parent_status, parent_name);
        return root < 0 ? -1 : root;
}

/*
 * A rename or a link between two directories of one writable root that
 * Landlock grants REFER (every root but the host's shared /tmp): both ends
 * lie where the same rights are granted, so its verdict is known, and the
 * file cannot come from outside the roots.  Anything else goes to the
 * performer, Landlock's to judge.
 */
static bool performs_pair_here(const struct write_call *call, const dsh_write_location *from,
                               const dsh_write_location *to)
{
        int root;

        if (!call->scope->own_umask || from->parent < 0 || to->parent < 0)
                return false;
        root = root_of(call, from);
        return root >= 0 && root_of(call, to) == root && !call->scope->root_is_shared(call->scope->data, root);
}

/*
 * Performs `performed` — on the restricted performer, or, `here`, on this
 * thread (performs_here()) — once the call is known to be still pending
 * (its thread alive: every /proc/<tid> entry opened for it was that
 * thread's) and within its deadline.  The result, or -EACCES.
 */
static long perform(struct write_call *call, dsh_performed_call *performed, bool here)
{
        dsh_write_performer *performer = here ? NULL : performer_of(call->supervisor);

        if ((!here && !performer) || dsh_metadata_monotonic_ms() > call->c->deadline_ms || !dsh_metadata_call_still_valid(call->c))
                return -EACCES;
        if (performed->creates && command_umask(call->supervisor, call->c, &performed->umask) < 0)
                return -EACCES;
        return here ? dsh_write_perform_now(performed) : dsh_write_performer_perform(performer, performed);
}

static bool open_creates(int flags)
{
        return (flags & O_CREAT) || (flags & KERNEL_O_TMPFILE_BIT);
}

/* The flags the performer opens with: its symlinks followed already, never a controlling terminal, ours cloexec. */
static int performer_open_flags(int flags)
{
        return flags | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
}

/* Answers an open with the file the performer opened (or its errno); a held-back inode reached by a race is closed. */
static int answer_open(struct write_call *call, long opened)
{
        struct stat status;
        int result;

        if (opened < 0)
                return (int) opened;
        if (fstat((int) opened, &status) == 0 && held_back_inode(call->scope, &status)) {
                close((int) opened);
                return -EACCES;
        }
        result = dsh_metadata_call_answer_with_fd(call->c, (int) opened, (call->op.open_flags & O_CLOEXEC) != 0);
        close((int) opened);
        return result < 0 ? result : 1;
}

/*
 * The command's own file reopened for writing (an O_PATH descriptor of a
 * file outside the roots, opened again through /proc/self/fd/N) and
 * refused — by bwrap's read-only mount (`watching`: probed here, nothing is
 * decided) or by Landlock (`result`): written down by the file's name, as
 * an open of that name is.  A pipe, a socket or a device is no file the
 * command changes, and a file beneath a root refused for another reason is
 * not the policy's refusal.
 */
static void note_reopen_refusal(struct write_call *call, int fd, const struct stat *status, const char *name,
                                long result)
{
        struct statvfs filesystem;
        bool refused;

        if (!S_ISREG(status->st_mode) && !S_ISDIR(status->st_mode))
                return;
        if (call->watching)
                refused = fstatvfs(fd, &filesystem) == 0 && (filesystem.f_flag & ST_RDONLY);
        else
                refused = (result == -EACCES || result == -EPERM || result == -EROFS) &&
                          call->scope->in_root(call->scope->data, fd, status) < 0;
        if (refused)
                call->scope->record(call->scope->data, dsh_write_op_name(call->op.op), name,
                                    DSH_REFUSAL_OUTSIDE_ROOTS);
}

/* Under bwrap: the reopen is let through (the mount decides); its refusal is only written down. */
static int watch_own_descriptor(struct write_call *call, int command_fd)
{
        char name[PATH_MAX];
        struct stat status;
        int fd = dsh_metadata_acquire_descriptor(call->c, command_fd, false);

        if (fd < 0)
                return 0;
        if (fstat(fd, &status) == 0 && dsh_write_descriptor_name(fd, name, sizeof(name)) == 0)
                note_reopen_refusal(call, fd, &status, name, 0);
        close(fd);
        return 0;
}

/* An open of the command's own descriptor N (dsh_write_own_descriptor()): that file reopened by the performer. */
static int open_own_descriptor(struct write_call *call, int command_fd)
{
        char reopen[64], name[PATH_MAX];
        const dsh_held_back *held;
        struct stat status;
        int fd = dsh_metadata_acquire_descriptor(call->c, command_fd, false), result = 0;
        dsh_performed_call performed = { .kind = DSH_PERFORM_OPENAT, .dirfd = AT_FDCWD, .name = reopen };

        if (fd < 0)
                return fd;
        if (fstat(fd, &status) < 0)
                result = -errno;
        if (dsh_write_descriptor_name(fd, name, sizeof(name)) < 0)
                strcpy(name, "/");  /* no path (a pipe, a socket): nothing held back by name */
        held = result == 0 ? held_back_inode(call->scope, &status) : NULL;
        if (result == 0 && !held)
                held = dsh_write_held_back_at(call->scope, name, false);
        if (held)
                result = refuse(call, strcmp(name, "/") == 0 ? held->path : name, held->rule);
        if (result == 0) {
                snprintf(reopen, sizeof(reopen), "/proc/thread-self/fd/%d", fd);
                performed.flags = (call->op.open_flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | KERNEL_O_TMPFILE_BIT)) |
                                  O_NOCTTY | O_CLOEXEC;
                result = (int) perform(call, &performed, false);
                if (result < 0 && strcmp(name, "/") != 0)
                        note_reopen_refusal(call, fd, &status, name, result);
                result = answer_open(call, result);
        }
        close(fd);
        return result;
}

/*
 * A FIFO opened for writing alone waits in the kernel until a reader opens
 * it, and the reader may well need the supervisor first (a shell that
 * writes a log before it reads the FIFO): waiting here would stop every
 * other call of the command.  So such an open is tried without waiting
 * (O_NONBLOCK: ENXIO while no reader is there), and, failing that, left to
 * a worker thread of its own that tries again until a reader comes or the
 * call is gone.  The worker is restricted with the same ruleset as the
 * performer before it opens anything: Landlock still decides whether the
 * command may write to that FIFO at all.  What it opens is the FIFO
 * decided on (an O_PATH fd of it, reopened through /proc/thread-self/fd),
 * never a name again.
 */
#define FIFO_WORKER_LIMIT 16
#define FIFO_RETRY_NS (5 * 1000 * 1000)

static atomic_int fifo_workers;

struct fifo_job {
        int listener;                   /* a duplicate: the call is answered on it */
        uint64_t id;
        int fifo;                       /* O_PATH */
        int ruleset_fd;
        int flags;
        bool close_on_exec;
};

static bool waits_for_reader(const dsh_write_location *where, int flags)
{
        return where->exists && S_ISFIFO(where->status.st_mode) && (flags & O_ACCMODE) == O_WRONLY &&
               !(flags & O_NONBLOCK);
}

/*
 * A FIFO opened for reading alone with write intent (O_TRUNC or O_CREAT,
 * which change nothing of a FIFO) would wait in the kernel for a writer:
 * opened without waiting instead (a read then ends at once while no writer
 * ever came), since nothing here may wait on the command.
 */
static bool waits_for_writer(const dsh_write_location *where, int flags)
{
        return where->exists && S_ISFIFO(where->status.st_mode) && (flags & O_ACCMODE) == O_RDONLY &&
               !(flags & O_NONBLOCK);
}

static void fifo_job_free(struct fifo_job *job)
{
        close(job->listener);
        close(job->fifo);
        close(job->ruleset_fd);
        free(job);
        atomic_fetch_sub(&fifo_workers, 1);
}

static bool fifo_call_pending(const struct fifo_job *job)
{
        uint64_t id = job->id;

        return ioctl(job->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static void *fifo_worker(void *data)
{
        struct fifo_job *job = data;
        dsh_metadata_call answer = { .listener = job->listener, .id = job->id };
        struct timespec pause = { 0, FIFO_RETRY_NS };
        char reopen[64];
        int fd = -ENXIO;

        snprintf(reopen, sizeof(reopen), "/proc/thread-self/fd/%d", job->fifo);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || dsh_landlock_enforce(job->ruleset_fd) < 0)
                fd = -EACCES;
        while (fd == -ENXIO && fifo_call_pending(job)) {
                fd = open(reopen, job->flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                fd = fd < 0 ? -errno : fd;
                if (fd == -ENXIO)
                        nanosleep(&pause, NULL);
        }
        if (fd >= 0 && fcntl(fd, F_SETFL, job->flags) < 0) {
                close(fd);
                fd = -errno;
        }
        if (fd >= 0) {
                (void) dsh_metadata_call_answer_with_fd(&answer, fd, job->close_on_exec);
                close(fd);
        } else if (fd != -ENXIO) {
                dsh_metadata_call_answer(&answer, fd);
        }
        fifo_job_free(job);
        return NULL;
}

/* Hands the open of the FIFO at `where` to a worker (fifo_worker()).  1: it will answer; else the errno. */
static int open_fifo_later(struct write_call *call, const dsh_write_location *where)
{
        struct fifo_job *job = calloc(1, sizeof(*job));
        pthread_attr_t attributes;
        pthread_t thread;
        int result = job ? 0 : -ENOMEM;

        if (result == 0 && atomic_fetch_add(&fifo_workers, 1) >= FIFO_WORKER_LIMIT) {
                atomic_fetch_sub(&fifo_workers, 1);
                free(job);
                return -EAGAIN;
        }
        if (result < 0)
                return result;
        *job = (struct fifo_job) { fcntl(call->c->listener, F_DUPFD_CLOEXEC, 3), call->c->id,
                                   openat(where->parent, where->last, O_PATH | O_NOFOLLOW | O_CLOEXEC),
                                   fcntl(call->supervisor->ruleset_fd, F_DUPFD_CLOEXEC, 3),
                                   call->op.open_flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC),
                                   (call->op.open_flags & O_CLOEXEC) != 0 };
        if (job->listener < 0 || job->fifo < 0 || job->ruleset_fd < 0) {
                result = -EACCES;
        } else if (pthread_attr_init(&attributes) == 0) {
                pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
                pthread_attr_setstacksize(&attributes, 64 * 1024);
                result = -pthread_create(&thread, &attributes, fifo_worker, job);
                pthread_attr_destroy(&attributes);
        } else {
                result = -ENOMEM;
        }
        if (result == 0)
                return 1;
        if (job->listener >= 0)
                close(job->listener);
        if (job->fifo >= 0)
                close(job->fifo);
        if (job->ruleset_fd >= 0)
                close(job->ruleset_fd);
        free(job);
        atomic_fetch_sub(&fifo_workers, 1);
        return result;
}

/*
 * Opens `where` for the command and answers with the file (1), or returns
 * the errno to answer.  A FIFO is opened without waiting (the cases above):
 * with no reader yet, a worker waits for one.
 */
static int open_at(struct write_call *call, const dsh_write_location *where, dsh_performed_call *performed)
{
        const int flags = call->op.open_flags;
        bool for_a_reader = waits_for_reader(where, flags);
        bool fifo = for_a_reader || waits_for_writer(where, flags);
        long opened;

        performed->dirfd = where->parent;
        performed->name = where->last;
        if (fifo)
                performed->flags |= O_NONBLOCK;
        opened = perform(call, performed, performs_here(call, where));
        if (opened == -ENXIO && for_a_reader)
                return open_fifo_later(call, where);
        if (opened < 0) {
                note_landlock_refusal(call, where, opened);
                return (int) opened;
        }
        /* Opened at once: from here the command's reads and writes wait as it asked. */
        if (fifo && fcntl((int) opened, F_SETFL, flags) < 0) {
                close((int) opened);
                return -EACCES;
        }
        return answer_open(call, opened);
}

/*
 * open, openat, creat with write intent.  O_TMPFILE names a directory,
 * where a nameless file is made (giving it a name later is a linkat,
 * decided then); O_CREAT|O_EXCL never follows a symlink, as in the kernel.
 */
static int handle_open(struct write_call *call)
{
        dsh_write_location where = DSH_WRITE_LOCATION_INIT;
        const int flags = call->op.open_flags;
        bool tmpfile = (flags & KERNEL_O_TMPFILE_BIT) != 0;
        bool follow = call->op.follow && !((flags & O_CREAT) && (flags & O_EXCL));
        dsh_performed_call performed = { .kind = DSH_PERFORM_OPENAT, .flags = performer_open_flags(flags),
                                         .mode = call->op.mode, .creates = open_creates(flags) };
        char *path = call->supervisor->path;
        int command_fd, result = 0;

        if (!tmpfile && dsh_write_own_descriptor(path, &command_fd))
                return call->watching ? watch_own_descriptor(call, command_fd)
                                      : open_own_descriptor(call, command_fd);
        /* O_TMPFILE: the directory itself is where the file goes ("DIR/." resolves it whole). */
        if (tmpfile && strlen(path) + 3 > sizeof(call->supervisor->path))
                result = -ENAMETOOLONG;
        else if (tmpfile)
                strcat(path, "/.");
        if (result == 0)
                result = dsh_write_locate(call->c, call->op.dirfd, path, follow, &where);
        /* "NEW/" names a directory: no file is made there (the kernel's EISDIR). */
        if (result == 0 && (flags & O_CREAT) && !where.exists && dsh_write_trailing_slash(path))
                result = -EISDIR;
        if (result == 0)
                result = check_held_back(call, &where, false);
        if (result == 0 && call->watching)
                note_read_only_mount(call, &where);
        if (result == 0 && !call->watching)
                result = open_at(call, &where, &performed);
        dsh_write_location_clear(&where);
        return result;
}

/* mkdir, mknod, symlink: a new name, refused in a held-back path. */
static int handle_make(struct write_call *call)
{
        dsh_write_location where = DSH_WRITE_LOCATION_INIT;
        dsh_performed_call performed = { .mode = call->op.mode, .device = call->op.device, .creates = true };
        int result = dsh_write_locate(call->c, call->op.dirfd, call->supervisor->path, false, &where);

        if (result == 0 && call->op.op == DSH_WRITE_SYMLINK)
                result = dsh_metadata_copy_path(call->c, call->op.symlink_target, call->supervisor->text,
                                                sizeof(call->supervisor->text));
        if (result == 0)
                result = check_held_back(call, &where, false);
        if (result == 0 && call->watching)
                note_read_only_mount(call, &where);
        if (result == 0 && !call->watching) {
                performed.kind = call->op.op == DSH_WRITE_MKDIR ? DSH_PERFORM_MKDIRAT
                                 : call->op.op == DSH_WRITE_MKNOD ? DSH_PERFORM_MKNODAT
                                                                  : DSH_PERFORM_SYMLINKAT;
                performed.dirfd = where.parent;
                performed.name = where.last;
                performed.text = call->supervisor->text;
                performed.creates = call->op.op != DSH_WRITE_SYMLINK;
                /* A device node is Landlock's to refuse (it grants no MAKE_CHAR or MAKE_BLOCK): its answer, EACCES. */
                result = (int) perform(call, &performed,
                                       performs_here(call, &where) &&
                                               !(call->op.op == DSH_WRITE_MKNOD &&
                                                 (S_ISCHR(call->op.mode) || S_ISBLK(call->op.mode))));
                if (result < 0)
                        note_landlock_refusal(call, &where, result);
        }
        dsh_write_location_clear(&where);
        return result;
}

/* unlink, rmdir: a directory removed may not hold a held-back path either. */
static int handle_remove(struct write_call *call)
{
        dsh_write_location where = DSH_WRITE_LOCATION_INIT;
        bool directory = call->op.op == DSH_WRITE_RMDIR;
        dsh_performed_call performed = { .kind = DSH_PERFORM_UNLINKAT, .flags = directory ? AT_REMOVEDIR : 0 };
        int result = dsh_write_locate(call->c, call->op.dirfd, call->supervisor->path, false, &where);

        if (result == 0)
                result = check_held_back(call, &where, directory);
        if (result == 0 && call->watching)
                note_read_only_mount(call, &where);
        if (result == 0 && !call->watching) {
                performed.dirfd = where.parent;
                performed.name = where.last;
                result = (int) perform(call, &performed, performs_here(call, &where));
                if (result < 0)
                        note_landlock_refusal(call, &where, result);
        }
        dsh_write_location_clear(&where);
        return result;
}

/* rename, renameat, renameat2: neither name may be, or hold, a held-back path. */
static int handle_rename(struct write_call *call)
{
        dsh_write_location from = DSH_WRITE_LOCATION_INIT, to = DSH_WRITE_LOCATION_INIT;
        dsh_performed_call performed = { .kind = DSH_PERFORM_RENAMEAT2, .flags = (int) call->op.rename_flags };
        int result = dsh_metadata_copy_path(call->c, call->op.new_path, call->supervisor->new_path,
                                            sizeof(call->supervisor->new_path));

        if (result == 0)
                result = dsh_write_locate(call->c, call->op.dirfd, call->supervisor->path, false, &from);
        if (result == 0)
                result = dsh_write_locate(call->c, call->op.new_dirfd, call->supervisor->new_path, false, &to);
        if (result == 0)
                result = check_held_back(call, &from, true);
        if (result == 0)
                result = check_held_back(call, &to, true);
        if (result == 0 && call->watching)
                note_read_only_mount(call, &from);
        if (result == 0 && !call->watching) {
                performed.dirfd = from.parent;
                performed.name = from.last;
                performed.new_dirfd = to.parent;
                performed.new_name = to.last;
                result = (int) perform(call, &performed, performs_pair_here(call, &from, &to));
                if (result < 0) {
                        note_landlock_refusal(call, &from, result);
                        note_landlock_refusal(call, &to, result);
                }
        }
        dsh_write_location_clear(&from);
        dsh_write_location_clear(&to);
        return result;
}

/*
 * link, linkat: the new name may not lie in a held-back path, and the file
 * linked may not be one (a second name for a hook would take writes past
 * every check on its first).  A source given by descriptor (AT_EMPTY_PATH)
 * or reached through a symlink (AT_SYMLINK_FOLLOW) is linked through the
 * performer's /proc/thread-self/fd, the unprivileged way to link an open
 * file.
 */
static int handle_link(struct write_call *call)
{
        dsh_write_location from = DSH_WRITE_LOCATION_INIT, to = DSH_WRITE_LOCATION_INIT;
        dsh_performed_call performed = { .kind = DSH_PERFORM_LINKAT };
        char source[64];
        int command_fd = call->op.dirfd;
        /* linkat(AT_FDCWD, "/proc/self/fd/N", ..., AT_SYMLINK_FOLLOW), open(2)'s way to name an O_TMPFILE: descriptor N. */
        bool by_descriptor = call->op.empty_path ||
                             (call->op.follow && dsh_write_own_descriptor(call->supervisor->path, &command_fd));
        int source_fd = -1, result = dsh_metadata_copy_path(call->c, call->op.new_path, call->supervisor->new_path,
                                                            sizeof(call->supervisor->new_path));

        if (result == 0 && by_descriptor) {
                source_fd = dsh_metadata_acquire_descriptor(call->c, command_fd, false);
                result = source_fd < 0 ? source_fd : 0;
                if (result == 0 && (fstat(source_fd, &from.status) < 0 || dsh_write_descriptor_name(source_fd, from.name,
                                                                                          sizeof(from.name)) < 0))
                        strcpy(from.name, "/");  /* a nameless file (O_TMPFILE): nothing held back by name */
                from.exists = true;
        } else if (result == 0) {
                result = dsh_write_locate(call->c, call->op.dirfd, call->supervisor->path, call->op.follow, &from);
                if (result == 0 && !from.exists)
                        result = -ENOENT;
                if (result == 0 && call->op.follow) {
                        source_fd = openat(from.parent, from.last, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                        result = source_fd < 0 ? -errno : 0;
                }
        }
        if (result == 0)
                result = dsh_write_locate(call->c, call->op.new_dirfd, call->supervisor->new_path, false, &to);
        if (result == 0)
                result = check_held_back(call, &from, false);
        if (result == 0)
                result = check_held_back(call, &to, false);
        if (result == 0 && call->watching)
                note_read_only_mount(call, &to);
        if (result == 0 && !call->watching) {
                if (source_fd >= 0) {
                        snprintf(source, sizeof(source), "/proc/thread-self/fd/%d", source_fd);
                        performed.dirfd = AT_FDCWD;
                        performed.name = source;
                        performed.flags = AT_SYMLINK_FOLLOW;
                } else {
                        performed.dirfd = from.parent;
                        performed.name = from.last;
                }
                performed.new_dirfd = to.parent;
                performed.new_name = to.last;
                result = (int) perform(call, &performed, performs_pair_here(call, &from, &to));
                if (result < 0)
                        note_landlock_refusal(call, &to, result);
        }
        if (source_fd >= 0)
                close(source_fd);
        dsh_write_location_clear(&from);
        dsh_write_location_clear(&to);
        return result;
}

/* truncate: the file a path leads to (symlinks followed), truncated through the performer's /proc. */
static int handle_truncate(struct write_call *call)
{
        dsh_write_location where = DSH_WRITE_LOCATION_INIT;
        dsh_performed_call performed = { .kind = DSH_PERFORM_TRUNCATE, .length = call->op.length };
        char target[64];
        int fd = -1, result = dsh_write_locate(call->c, call->op.dirfd, call->supervisor->path, true, &where);

        if (result == 0 && !where.exists)
                result = -ENOENT;
        if (result == 0)
                result = check_held_back(call, &where, false);
        if (result == 0 && call->watching)
                note_read_only_mount(call, &where);
        if (result == 0 && !call->watching) {
                fd = openat(where.parent, where.last, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                result = fd < 0 ? -errno : 0;
        }
        if (result == 0 && !call->watching) {
                snprintf(target, sizeof(target), "/proc/thread-self/fd/%d", fd);
                performed.name = target;
                result = (int) perform(call, &performed, performs_here(call, &where));
                if (result < 0)
                        note_landlock_refusal(call, &where, result);
        }
        if (fd >= 0)
                close(fd);
        dsh_write_location_clear(&where);
        return result;
}

/* Decides the call: 1 when it was answered already (an fd handed over), else 0 or the errno to answer. */
static int decide(struct write_call *call)
{
        switch (call->op.op) {
        case DSH_WRITE_OPEN:
                return handle_open(call);
        case DSH_WRITE_MKDIR:
        case DSH_WRITE_MKNOD:
        case DSH_WRITE_SYMLINK:
                return handle_make(call);
        case DSH_WRITE_UNLINK:
        case DSH_WRITE_RMDIR:
                return handle_remove(call);
        case DSH_WRITE_RENAME:
                return handle_rename(call);
        case DSH_WRITE_LINK:
                return handle_link(call);
        case DSH_WRITE_TRUNCATE:
                return handle_truncate(call);
        case DSH_WRITE_UMASK:
                break;  /* answered by dsh_write_call_handle(), never decided */
        }
        return -EACCES;
}

bool dsh_write_call_handle(dsh_write_supervisor *supervisor, dsh_metadata_call *c,
                           const struct seccomp_notif *request, const dsh_write_scope *scope)
{
        struct write_call call = { supervisor, c, scope, { 0 }, supervisor->ruleset_fd < 0, false };
        uint64_t args[6];
        int result;

        for (int i = 0; i < 6; i++)
                args[i] = request->data.args[i];
        result = dsh_write_request_decode(request->data.nr, args, &call.op);
        /*
         * umask() changes no file: its one argument is a register, nothing
         * is decided on it, so the kernel may well apply it (CONTINUE reads
         * no pointer).  What the supervisor knew of the command's umask is
         * forgotten: the next creation reads it again.
         */
        if (result == 0 && call.op.op == DSH_WRITE_UMASK) {
                forget_umasks(supervisor);
                dsh_metadata_call_let_through(c);
                return false;
        }
        if (result == 0 && !dsh_metadata_find_thread_pidfd(c))
                return false;  /* the thread is gone: the tid may already name another */
        if (result == 0 && !(call.op.op == DSH_WRITE_LINK && call.op.empty_path))
                result = dsh_metadata_copy_path(c, call.op.path, supervisor->path, sizeof(supervisor->path));
        if (result == 0)
                result = decide(&call);
        if (result == 1)
                return false;
        /* Watching, only a refusal of ours is answered: anything else (our own reading failed too) the mounts decide. */
        if (call.watching && call.refused)
                dsh_metadata_call_answer(c, -EACCES);
        else if (call.watching)
                dsh_metadata_call_let_through(c);
        else
                dsh_metadata_call_answer(c, c->unreadable && result < 0 ? -EACCES : result);
        return !call.watching && c->unreadable && result < 0;
}
