/* SPDX-License-Identifier: MIT */
/*
 * The metadata supervisor: containment and acting.  Its security argument
 * opens metadata-supervisor.h; the tracee's memory and files are
 * metadata-tracee.c's; docs/supervisor.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "core/kernel-abi.h"
#include "core/metadata-act.h"
#include "core/metadata-call.h"
#include "core/metadata-filter.h"
#include "core/metadata-pty.h"
#include "core/metadata-supervisor.h"
#include "core/metadata-tracee.h"
#include "core/inet-call.h"
#include "core/socket-call.h"
#include "core/write-call.h"
#include "core/write-supervisor.h"

/*
 * A call must be decided within this bound, measured from its receipt; one
 * that is not (a path walk stuck on a slow filesystem) is refused rather
 * than performed late.  A generous bound: it is a fence, not a schedule.
 */
#define CALL_DEADLINE_MS 2000
/* How long dsh_metadata_supervisor_stop() waits for the thread before leaving it to end alone. */
#define STOP_WAIT_MS 5000

struct supervised_root {
        int fd;
        char path[PATH_MAX];      /* as the command sees it; refreshed from the fd when renamed (host view only) */
        size_t length;
        bool contents_only;
        bool command_view;        /* path is the command's own mount point (bwrap): never learned from the fd */
        bool shared;              /* world-writable and sticky (the host's /tmp): every user's, not the command's */
        dev_t dev;                /* the directory's, held open by `fd`: its number names no other */
        ino_t ino;
};

/*
 * The inodes found in a writable root lately (and outside every protected
 * path), each with an O_PATH reference held: while it is held the inode
 * cannot be freed, so its device and number name no other file.  Such an
 * inode stays in the roots whatever the command does — leaving them would
 * take a rename or a link outside, which Landlock refuses, and a mount,
 * which it refuses too — so a second change to it (tar sets a file's
 * times, owner and mode one after the other) needs no second walk.  Moving
 * it into a protected path changes nothing either: the command could as
 * well have changed it first and moved it after.
 */
#define ALLOWED_CACHE_SIZE 64

struct allowed_inode {
        int fd;                         /* O_PATH, or -1: empty */
        dev_t dev;
        ino_t ino;
        int root;                       /* the index of the root it was found in */
};

struct dsh_metadata_supervisor {
        dsh_metadata_tracee tracee;     /* how the command's threads are reached, kept across calls */
        struct allowed_inode allowed[ALLOWED_CACHE_SIZE];
        size_t next_allowed;
        struct supervised_root *roots;
        size_t root_count;
        dsh_held_back *held_back;       /* protected paths, the sandbox's own files: held back inside the roots */
        size_t held_back_count;
        dsh_socket_calls *sockets;      /* connect: the allow-list and the workers (socket-call.h) */
        dsh_inet_calls *inet;           /* the network policy: bind, listen, the sends, inet connects (inet-call.h) */
        void (*network_release)(void *data);    /* the settings' release: once the last thread is done */
        void *network_release_data;
        dsh_write_supervisor *writes;   /* write intent performed (Landlock) or watched (bwrap); NULL: unseen */
        pthread_mutex_t records_lock;   /* the refusals: written by the thread, taken by the stopper */
        dsh_refusals refusals;
        atomic_ulong write_calls;
        bool metadata_performed;        /* dsh_metadata_supervisor_perform_metadata(): else every change refused */
        bool own_umask;                 /* the serving thread unshared CLONE_FS: its umask is its own */
        int socket_fd;                  /* start(): where the listener arrives */
        char *arriving_root;            /* a root whose fd follows the listener on that socket, at this path; or NULL */
        int stop_fd;                    /* start(): an eventfd the stopper writes */
        pthread_t thread;
        bool started;
        atomic_bool capabilities_kept;  /* the thread could not drop its capabilities: it served nothing */
        atomic_int references;
        atomic_ulong unreadable_calls;
};

/* ----------------------------------------------------------- configuration -- */

dsh_metadata_supervisor *dsh_metadata_supervisor_new(void)
{
        dsh_metadata_supervisor *supervisor = calloc(1, sizeof(*supervisor));

        if (!supervisor)
                return NULL;
        supervisor->sockets = dsh_socket_calls_new();
        supervisor->inet = dsh_inet_calls_new();
        if (!supervisor->sockets || !supervisor->inet || dsh_metadata_tracee_init(&supervisor->tracee) < 0) {
                dsh_socket_calls_free(supervisor->sockets);
                dsh_inet_calls_free(supervisor->inet);
                free(supervisor);
                return NULL;
        }
        supervisor->socket_fd = -1;
        supervisor->stop_fd = -1;
        for (size_t i = 0; i < ALLOWED_CACHE_SIZE; i++)
                supervisor->allowed[i].fd = -1;
        pthread_mutex_init(&supervisor->records_lock, NULL);
        atomic_init(&supervisor->write_calls, 0);
        atomic_init(&supervisor->references, 1);
        atomic_init(&supervisor->unreadable_calls, 0);
        atomic_init(&supervisor->capabilities_kept, false);
        return supervisor;
}

static int add_root(dsh_metadata_supervisor *supervisor, int directory_fd, const char *path, bool contents_only,
                    bool command_view)
{
        struct supervised_root *roots;
        struct supervised_root *root;
        struct stat status;
        size_t length = strlen(path);
        bool shared;
        int fd;

        if (path[0] != '/' || length >= PATH_MAX || (length > 1 && path[length - 1] == '/'))
                return -EINVAL;
        roots = realloc(supervisor->roots, (supervisor->root_count + 1) * sizeof(*roots));
        if (!roots)
                return -ENOMEM;
        supervisor->roots = roots;
        if (fstat(directory_fd, &status) < 0)
                return -errno;
        if (!S_ISDIR(status.st_mode))
                return -ENOTDIR;
        /* A directory every user of the machine shares (world-writable and sticky, like /tmp) is not the command's. */
        shared = (status.st_mode & S_ISVTX) && (status.st_mode & S_IWOTH);
        if (shared)
                contents_only = true;
        fd = fcntl(directory_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        root = &roots[supervisor->root_count++];
        root->fd = fd;
        memcpy(root->path, path, length + 1);
        root->length = length;
        root->contents_only = contents_only;
        root->command_view = command_view;
        root->shared = shared;
        root->dev = status.st_dev;
        root->ino = status.st_ino;
        return 0;
}

int dsh_metadata_supervisor_add_root(dsh_metadata_supervisor *supervisor, int directory_fd, const char *path,
                                     bool contents_only)
{
        return add_root(supervisor, directory_fd, path, contents_only, false);
}

int dsh_metadata_supervisor_add_root_seen_at(dsh_metadata_supervisor *supervisor, int directory_fd,
                                             const char *command_path, bool contents_only)
{
        return add_root(supervisor, directory_fd, command_path, contents_only, true);
}

int dsh_metadata_supervisor_expect_root(dsh_metadata_supervisor *supervisor, const char *command_path)
{
        size_t length = strlen(command_path);

        if (command_path[0] != '/' || length >= PATH_MAX || supervisor->arriving_root)
                return -EINVAL;
        supervisor->arriving_root = strdup(command_path);
        return supervisor->arriving_root ? 0 : -ENOMEM;
}

int dsh_metadata_supervisor_add_root_path(dsh_metadata_supervisor *supervisor, const char *path, bool contents_only)
{
        int fd = dsh_metadata_open_resolved(AT_FDCWD, path, O_PATH | O_DIRECTORY,
                                            RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        int result;

        if (fd < 0)
                return fd;
        result = dsh_metadata_supervisor_add_root(supervisor, fd, path, contents_only);
        close(fd);
        return result;
}

int dsh_metadata_supervisor_hold_back(dsh_metadata_supervisor *supervisor, const char *path, dsh_refusal_rule rule)
{
        dsh_held_back *held;
        struct stat status;
        size_t length = strlen(path);
        char *copy;

        if (path[0] != '/' || length >= PATH_MAX)
                return -EINVAL;
        held = realloc(supervisor->held_back, (supervisor->held_back_count + 1) * sizeof(*held));
        if (!held)
                return -ENOMEM;
        supervisor->held_back = held;
        copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        /* Its inode as the call begins: a hard link made to it before would reach it under another name. */
        held = &supervisor->held_back[supervisor->held_back_count++];
        *held = (dsh_held_back) { copy, length, rule, lstat(path, &status) == 0, 0, 0 };
        if (held->exists) {
                held->dev = status.st_dev;
                held->ino = status.st_ino;
        }
        return 0;
}

int dsh_metadata_supervisor_add_protected(dsh_metadata_supervisor *supervisor, const char *path)
{
        return dsh_metadata_supervisor_hold_back(supervisor, path, DSH_REFUSAL_PROTECTED_SUBPATH);
}

void dsh_metadata_supervisor_perform_metadata(dsh_metadata_supervisor *supervisor)
{
        supervisor->metadata_performed = true;
}

int dsh_metadata_supervisor_perform_writes(dsh_metadata_supervisor *supervisor, int ruleset_fd)
{
        if (ruleset_fd < 0 || supervisor->writes)
                return -EINVAL;
        supervisor->writes = dsh_write_supervisor_new(ruleset_fd);
        return supervisor->writes ? 0 : -ENOMEM;
}

int dsh_metadata_supervisor_ruleset_fd(const dsh_metadata_supervisor *supervisor)
{
        return supervisor && supervisor->writes ? dsh_write_supervisor_ruleset_fd(supervisor->writes) : -1;
}

void dsh_metadata_supervisor_watch_writes(dsh_metadata_supervisor *supervisor)
{
        if (!supervisor->writes)
                supervisor->writes = dsh_write_supervisor_new(-1);
}

int dsh_metadata_supervisor_allow_unix_sockets(dsh_metadata_supervisor *supervisor, char *const *paths)
{
        for (char *const *path = paths; path && *path; path++) {
                int result = dsh_socket_calls_allow(supervisor->sockets, *path);

                if (result < 0)
                        return result;
        }
        return 0;
}

int dsh_metadata_supervisor_set_network(dsh_metadata_supervisor *supervisor, const dsh_network_settings *settings)
{
        int result = dsh_inet_calls_configure(supervisor->inet, settings);

        if (result == 0) {
                dsh_socket_calls_set_inet(supervisor->sockets, supervisor->inet);
                supervisor->network_release = settings->release;
                supervisor->network_release_data = settings->release_data;
        }
        return result;
}

static void supervisor_destroy(dsh_metadata_supervisor *supervisor)
{
        dsh_socket_calls_free(supervisor->sockets);
        dsh_inet_calls_free(supervisor->inet);
        dsh_write_supervisor_free(supervisor->writes);
        dsh_metadata_tracee_clear(&supervisor->tracee);
        dsh_refusals_clear(&supervisor->refusals);
        pthread_mutex_destroy(&supervisor->records_lock);
        for (size_t i = 0; i < ALLOWED_CACHE_SIZE; i++)
                if (supervisor->allowed[i].fd >= 0)
                        close(supervisor->allowed[i].fd);
        for (size_t i = 0; i < supervisor->root_count; i++)
                close(supervisor->roots[i].fd);
        for (size_t i = 0; i < supervisor->held_back_count; i++)
                free(supervisor->held_back[i].path);
        if (supervisor->socket_fd >= 0)
                close(supervisor->socket_fd);
        if (supervisor->stop_fd >= 0)
                close(supervisor->stop_fd);
        free(supervisor->roots);
        free(supervisor->held_back);
        free(supervisor->arriving_root);
        /* Last: nothing of this supervisor can ask the gate or add a network record any more. */
        if (supervisor->network_release)
                supervisor->network_release(supervisor->network_release_data);
        free(supervisor);
}

/* Drops one of the (at most two: the thread's and the stopper's) references; the last one frees. */
static void supervisor_release(dsh_metadata_supervisor *supervisor)
{
        if (atomic_fetch_sub(&supervisor->references, 1) == 1)
                supervisor_destroy(supervisor);
}

void dsh_metadata_supervisor_free(dsh_metadata_supervisor *supervisor)
{
        if (supervisor)
                supervisor_release(supervisor);
}

unsigned long dsh_metadata_supervisor_unreadable_calls(const dsh_metadata_supervisor *supervisor)
{
        return atomic_load(&supervisor->unreadable_calls);
}


/* ------------------------------------------------------------- containment -- */


/*
 * `name` (the target's current name) reopened beneath `root`, when that is
 * the target itself: the reopened O_PATH fd, else -1.
 */
static int reached_beneath(const struct supervised_root *root, const char *name, const struct stat *target)
{
        const char *relative = name + (root->length == 1 ? 1 : root->length);
        struct stat found;
        int fd;

        while (*relative == '/')
                relative++;
        fd = dsh_metadata_open_resolved(root->fd, relative[0] ? relative : ".", O_PATH | O_NOFOLLOW,
                                        RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        if (fd < 0)
                return -1;
        if (fstat(fd, &found) == 0 && found.st_dev == target->st_dev && found.st_ino == target->st_ino)
                return fd;
        close(fd);
        return -1;
}

/* The target reopened beneath the writable root whose tree holds `name`, when it truly is there; else -1. */
static int reopen_in_root(dsh_metadata_supervisor *supervisor, const char *name, const struct stat *target,
                          bool own_roots_only, int *root_out)
{
        for (size_t i = 0; i < supervisor->root_count; i++) {
                const struct supervised_root *root = &supervisor->roots[i];
                int fd;

                if ((own_roots_only && root->shared) || !dsh_metadata_path_within(name, root->path, root->length))
                        continue;
                if (root->contents_only && name[root->length == 1 ? 1 : root->length] == '\0')
                        continue;
                fd = reached_beneath(root, name, target);
                if (fd >= 0) {
                        *root_out = (int) i;
                        return fd;
                }
        }
        return -1;
}

/* A root renamed since it was granted keeps its grant (Landlock's is on the inode): learn its name again. */
static bool refresh_root_names(dsh_metadata_supervisor *supervisor)
{
        bool changed = false;

        for (size_t i = 0; i < supervisor->root_count; i++) {
                struct supervised_root *root = &supervisor->roots[i];
                char name[PATH_MAX];

                /* A mount point in the command's own namespace: a rename on the host does not move it. */
                if (root->command_view)
                        continue;
                if (dsh_metadata_descriptor_name(root->fd, name, sizeof(name)) < 0 || name[0] != '/' ||
                    strcmp(name, root->path) == 0)
                        continue;
                memcpy(root->path, name, strlen(name) + 1);
                root->length = strlen(name);
                changed = true;
        }
        return changed;
}

/* The root an inode was found in lately (the cache), or -1. */
static int allowed_before(const dsh_metadata_supervisor *supervisor, const struct stat *target)
{
        for (size_t i = 0; i < ALLOWED_CACHE_SIZE; i++)
                if (supervisor->allowed[i].fd >= 0 && supervisor->allowed[i].dev == target->st_dev &&
                    supervisor->allowed[i].ino == target->st_ino)
                        return supervisor->allowed[i].root;
        return -1;
}

/* Keeps `fd` (an O_PATH reference to an allowed inode, found in root `root`; taken) in the cache, dropping the oldest. */
static void remember_allowed(dsh_metadata_supervisor *supervisor, int fd, const struct stat *target, int root)
{
        struct allowed_inode *slot = &supervisor->allowed[supervisor->next_allowed];

        supervisor->next_allowed = (supervisor->next_allowed + 1) % ALLOWED_CACHE_SIZE;
        if (slot->fd >= 0)
                close(slot->fd);
        *slot = (struct allowed_inode) { fd, target->st_dev, target->st_ino, root };
}

/*
 * `name` reopened beneath a root (only the command's own with
 * `own_roots_only`), the roots' names learned again if it is not found,
 * and outside every protected path: the reopened fd, else -1.
 */
static int reopen_contained(dsh_metadata_supervisor *supervisor, const char *name, const struct stat *target,
                            bool own_roots_only, int *root_out)
{
        int reopened = reopen_in_root(supervisor, name, target, own_roots_only, root_out);

        if (reopened < 0 && refresh_root_names(supervisor))
                reopened = reopen_in_root(supervisor, name, target, own_roots_only, root_out);
        if (reopened < 0)
                return -1;
        for (size_t i = 0; i < supervisor->held_back_count; i++)
                if (dsh_metadata_path_within(name, supervisor->held_back[i].path, supervisor->held_back[i].length)) {
                        close(reopened);
                        return -1;
                }
        return reopened;
}

/*
 * Which view the name below is in.  The target was opened through
 * /proc/<tid>/root, so its mount is one of the command's mount namespace;
 * readlink() of our /proc/thread-self/fd/N gives d_path(), which walks up
 * from the file to its namespace's root mount, and for a mount that is not
 * in ours it stops there: the path is the one the command sees (checked:
 * a file of bwrap's --bind SCRATCH /tmp reads "/tmp/x", not SCRATCH/x).
 * Under Landlock that is the host's view (the same namespace, or the copy a
 * private /dev makes, whose root is the host's); under bwrap it is the
 * sandbox's.  So each root is given by the path at which the command sees
 * it (dsh_metadata_supervisor_add_root_seen_at() for bwrap's binds, whose
 * host path may differ, as the session's scratch on /tmp), with the host
 * directory's fd.  The name is only a hint of which root to try: what
 * decides is the inode reached beneath that root's own fd, so a name that
 * lies (a mount the command made in a namespace of its own) can at worst
 * pick a root in which its inode is not found, and is refused.
 *
 * Decides whether the open target `fd` (its fstat() in `target`) may
 * change: it must lie in a writable root and outside every protected path.
 * Its current name is what the kernel gives for the open file, and it
 * counts only once reopened beneath the root's own fd, with no symlink on
 * the way, it leads to the very same inode: a name swapped, a directory
 * replaced by a symlink, anything renamed since the target was opened fails
 * that test.  A file with no name left anywhere (an unlinked temporary
 * file) may change: nothing on disk can reach it.  Returns 0 (allowed),
 * -EACCES, or another negative errno.
 */
static int check_target(dsh_metadata_supervisor *supervisor, int fd, const struct stat *target)
{
        static const char deleted[] = " (deleted)";
        char name[PATH_MAX];
        size_t length;
        int reopened, root;

        if (allowed_before(supervisor, target) >= 0)
                return 0;
        if (dsh_metadata_descriptor_name(fd, name, sizeof(name)) < 0)
                return -EACCES;
        length = strlen(name);
        if (target->st_nlink == 0 && length > sizeof(deleted) - 1 &&
            strcmp(name + length - (sizeof(deleted) - 1), deleted) == 0)
                return 0;
        if (name[0] != '/')
                return -EACCES;  /* a pipe, a socket, an anonymous inode: no file of any root */
        reopened = reopen_contained(supervisor, name, target, false, &root);
        if (reopened < 0)
                return -EACCES;
        remember_allowed(supervisor, reopened, target, root);
        return 0;
}

/*
 * For a connect (socket-call.h): the socket file `fd` lies in one of the
 * command's own writable roots — never the host's shared /tmp, where other
 * users' and daemons' sockets are (tmux's, X11's, an ssh-agent's), and
 * which the command did not get for itself — and outside every protected
 * path, by the same test as check_target() on that open file, without its
 * cache (a metadata change in /tmp says nothing about a socket there).
 */
static int check_socket_target(void *data, int fd, const struct stat *target)
{
        dsh_metadata_supervisor *supervisor = data;
        char name[PATH_MAX];
        int reopened, root;

        if (dsh_metadata_descriptor_name(fd, name, sizeof(name)) < 0 || name[0] != '/')
                return -EACCES;
        reopened = reopen_contained(supervisor, name, target, true, &root);
        if (reopened < 0)
                return -EACCES;
        close(reopened);
        return 0;
}

/* ----------------------------------------------------------------- records -- */

static void record_refusal(void *data, const char *op, const char *path, dsh_refusal_rule rule)
{
        dsh_metadata_supervisor *supervisor = data;

        pthread_mutex_lock(&supervisor->records_lock);
        dsh_refusals_add(&supervisor->refusals, op, path, rule);
        pthread_mutex_unlock(&supervisor->records_lock);
}

/* The write supervisor's containment test: the metadata one, on a directory or a file it opened. */
static int target_in_root(void *data, int fd, const struct stat *target)
{
        return check_target(data, fd, target);
}

/*
 * The write supervisor's test for a directory it makes something in: a
 * writable root itself (a contents-only one too: /tmp's own directory is
 * where its contents are made) or a directory beneath one, by the same
 * reopening beneath the root's fd.  A directory found strictly beneath a
 * root and outside every held-back path goes to the cache, as in
 * check_target(); a root's own directory does not (its metadata is not the
 * command's to change).
 */
static int directory_in_root(void *data, int fd, const struct stat *directory, const char *name)
{
        dsh_metadata_supervisor *supervisor = data;
        int reopened, root;

        (void) fd;
        /* A root's own directory is known by its inode, held by the root's fd (no name to trust). */
        for (size_t i = 0; i < supervisor->root_count; i++)
                if (supervisor->roots[i].dev == directory->st_dev && supervisor->roots[i].ino == directory->st_ino)
                        return (int) i;
        root = allowed_before(supervisor, directory);
        if (root >= 0)
                return root;
        /* The name is the directory's own, just read (d_path): it only picks the root; the inode decides. */
        if (name[0] != '/')
                return -EACCES;
        reopened = reopen_contained(supervisor, name, directory, false, &root);
        if (reopened < 0)
                return -EACCES;
        remember_allowed(supervisor, reopened, directory, root);
        return root;
}

/* Whether root `index` is one every user shares (the host's /tmp: granted without REFER under Landlock). */
static bool root_is_shared(void *data, int index)
{
        const dsh_metadata_supervisor *supervisor = data;

        return index < 0 || (size_t) index >= supervisor->root_count || supervisor->roots[index].shared;
}

static dsh_write_scope write_scope(dsh_metadata_supervisor *supervisor)
{
        return (dsh_write_scope) { supervisor->held_back, supervisor->held_back_count, target_in_root,
                                   directory_in_root, root_is_shared, supervisor->own_umask, record_refusal,
                                   supervisor };
}

/* A metadata change refused by containment: written down under the rule that refused it. */
static void record_metadata_refusal(dsh_metadata_supervisor *supervisor, dsh_metadata_change kind, int target)
{
        dsh_write_scope scope = write_scope(supervisor);
        const dsh_held_back *held;
        char name[PATH_MAX];

        if (dsh_metadata_descriptor_name(target, name, sizeof(name)) < 0 || name[0] != '/')
                return;
        held = dsh_write_held_back_at(&scope, name, false);
        record_refusal(supervisor, dsh_metadata_change_name(kind), name, held ? held->rule : DSH_REFUSAL_OUTSIDE_ROOTS);
}

/*
 * A connect to a unix socket the command may not reach (socket-call.h):
 * op "connect"; unnamed, only counted.  A socket among the sandbox's own
 * files or a masked path keeps that rule: its grant is none, where
 * "unix-socket" would suggest allow-listing it (a session's own socket
 * reached from inside would be a way out).
 */
static void record_socket_refusal(void *data, const char *path, dsh_refusal_rule rule)
{
        dsh_metadata_supervisor *supervisor = data;
        dsh_write_scope scope = write_scope(supervisor);
        const dsh_held_back *held = path ? dsh_write_held_back_at(&scope, path, false) : NULL;

        if (held && (held->rule == DSH_REFUSAL_OWN_FILE || held->rule == DSH_REFUSAL_MASKED_PATH))
                rule = held->rule;
        if (path) {
                record_refusal(supervisor, "connect", path, rule);
                return;
        }
        pthread_mutex_lock(&supervisor->records_lock);
        supervisor->refusals.dropped++;
        pthread_mutex_unlock(&supervisor->records_lock);
}

/* ------------------------------------------------------------------ serving -- */

/*
 * The one answer the supervisor gives: a result it produced itself (the
 * call performed, or refused), never SECCOMP_USER_NOTIF_FLAG_CONTINUE
 * (flags are 0).  CONTINUE would have the kernel re-read the arguments
 * from the command's memory after the decision, and every decision here
 * depends on a pointer argument (a path, an xattr name, a struct) except
 * the set-id refusal, which is an answer too.  No exception exists where
 * the kernel would enforce the same decision anyway: none is needed.
 */
static void respond(const dsh_metadata_call *c, int error)
{
        dsh_metadata_call_answer(c, error);
}

/*
 * A metadata change where none is performed (Landlock read-only): refused
 * with EPERM — the answer the filter gave by itself before, so the command
 * sees what it saw then — and written down when its target can be named.
 * The target is opened only to name it and never acted on: nothing here
 * depends on the name being true (the answer is EPERM whatever it is), the
 * record says only what the command asked for.  No record for a call that
 * does not decode (`op` NULL), memory that cannot be read, a target that
 * does not exist, or a file with no name left (an unlinked or memfd file:
 * nothing on disk the user could grant); the answer is EPERM all the same.
 * A thread already gone is not answered (its tid may name another).
 */
static void refuse_unperformed(dsh_metadata_supervisor *supervisor, dsh_metadata_call *c, dsh_metadata_request *op)
{
        dsh_metadata_payload p;
        dsh_metadata_target form;
        struct stat status;
        int target = -1;

        if (!dsh_metadata_find_thread_pidfd(c))
                return;  /* the thread is gone: the tid may already name another */
        if (op && op->kind != DSH_METADATA_PTY_PEER && dsh_metadata_copy_payload(c, op, &p) == 0 &&
            dsh_metadata_open_target(c, op, &form, &target) == 0 && fstat(target, &status) == 0 &&
            status.st_nlink > 0)
                record_metadata_refusal(supervisor, op->kind, target);
        if (target >= 0)
                close(target);
        respond(c, -EPERM);
}

/*
 * Decides one call and answers it.  Every step either refuses (an errno to
 * answer) or narrows what is acted on; nothing is performed unless the
 * notification is still valid right before (its thread alive, so every
 * /proc/<tid> entry and pidfd opened above was that thread's).
 */
static int handle_call(dsh_metadata_supervisor *supervisor, dsh_metadata_call *c,
                       const struct seccomp_notif *request)
{
        dsh_metadata_request op;
        dsh_metadata_payload p;
        dsh_metadata_target form;
        struct stat status;
        uint64_t args[6];
        int target = -1, result;

        for (int i = 0; i < 6; i++)
                args[i] = request->data.args[i];
        result = dsh_metadata_request_decode(request->data.nr, args, &op);
        if (!supervisor->metadata_performed) {
                refuse_unperformed(supervisor, c, result == 0 ? &op : NULL);
                return 0;
        }
        /*
         * Never a set-user-ID or set-group-ID bit (the file guard's rule): a
         * confined root could plant a set-user-ID-root shell for whoever runs
         * it later.  Decided on the mode, a register argument the kernel
         * passed by value: no pointer, nothing the command can rewrite, so
         * it is answered at once (never CONTINUE either way).
         */
        if (result == 0 && op.kind == DSH_METADATA_CHMOD && (op.mode & (S_ISUID | S_ISGID)))
                result = -EPERM;
        else if (result == 0) {
                if (!dsh_metadata_find_thread_pidfd(c))
                        return 0;  /* the thread is gone: the tid may already name another */
                if (op.kind == DSH_METADATA_PTY_PEER) {
                        dsh_metadata_pty_peer_handle(c, &op);
                        return 0;
                }
                result = dsh_metadata_copy_payload(c, &op, &p);
        }
        if (result == 0)
                result = dsh_metadata_open_target(c, &op, &form, &target);
        if (result == 0) {
                result = fstat(target, &status) < 0 ? -errno : check_target(supervisor, target, &status);
                if (result == -EACCES)
                        record_metadata_refusal(supervisor, op.kind, target);
        }
        if (result == 0 && dsh_metadata_monotonic_ms() > c->deadline_ms)
                result = -EACCES;
        if (result == 0 && !dsh_metadata_call_still_valid(c))
                goto out;
        if (result == 0)
                result = dsh_metadata_act(&supervisor->tracee, target, form, &op, &p, &status);
        if (c->unreadable && result < 0) {
                atomic_fetch_add(&supervisor->unreadable_calls, 1);
                result = -EACCES;
        }
        respond(c, result);
out:
        if (target >= 0)
                close(target);
        return 0;
}

/* Receives one notification and handles it.  Returns 0, or a negative errno when the listener is unusable. */
static int serve_one(dsh_metadata_supervisor *supervisor, int listener)
{
        struct seccomp_notif request;
        dsh_metadata_call c;

        memset(&request, 0, sizeof(request));  /* NOTIF_RECV refuses a buffer that is not zeroed */
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &request) < 0)
                return errno == EINTR || errno == ENOENT ? 0 : -errno;
        c = (dsh_metadata_call) { &supervisor->tracee, listener, request.id, (pid_t) request.pid, -1,
                                  dsh_metadata_monotonic_ms() + CALL_DEADLINE_MS, false, false };
        if (supervisor->writes && dsh_write_call_is_ours(request.data.nr)) {
                dsh_write_scope scope = write_scope(supervisor);

                atomic_fetch_add(&supervisor->write_calls, 1);
                if (dsh_write_call_handle(supervisor->writes, &c, &request, &scope))
                        atomic_fetch_add(&supervisor->unreadable_calls, 1);
                return 0;
        }
        if (dsh_socket_call_is_ours(request.data.nr)) {
                const dsh_socket_scope scope = { check_socket_target, record_socket_refusal, supervisor };

                if (dsh_socket_call_handle(supervisor->sockets, &c, &request, &scope))
                        atomic_fetch_add(&supervisor->unreadable_calls, 1);
                return 0;
        }
        if (dsh_inet_calls_enforce(supervisor->inet) && dsh_inet_call_is_ours(request.data.nr)) {
                if (dsh_inet_call_handle(supervisor->inet, dsh_socket_calls_workers(supervisor->sockets), &c, &request))
                        atomic_fetch_add(&supervisor->unreadable_calls, 1);
                return 0;
        }
        return handle_call(supervisor, &c, &request);
}

void dsh_metadata_supervisor_serve(dsh_metadata_supervisor *supervisor, int listener_fd, int stop_fd)
{
        uint64_t flag = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;

        /* The command waits for each answer: wake us on its CPU rather than through the scheduler (6.6). */
        (void) ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flag);
        dsh_write_supervisor_prepare(supervisor->writes);
        for (;;) {
                struct pollfd events[2] = { { listener_fd, POLLIN, 0 }, { stop_fd, POLLIN, 0 } };
                int ready = poll(events, stop_fd >= 0 ? 2 : 1, -1);

                if (ready < 0 && errno == EINTR)
                        continue;
                if (ready < 0 || (stop_fd >= 0 && events[1].revents))
                        break;
                if (events[0].revents & POLLIN) {
                        if (serve_one(supervisor, listener_fd) < 0)
                                break;
                } else if (events[0].revents) {
                        break;  /* POLLHUP: no process of the filter is left */
                }
        }
        /* A worker still connecting answers on the listener: each is stopped first. */
        dsh_socket_calls_stop(supervisor->sockets);
        /* From here every metadata call of whatever is left of the command fails with ENOSYS. */
        close(listener_fd);
}

/*
 * Empties the calling thread's capability sets (they are per thread: the
 * caller's other threads keep theirs).  The effective, permitted and
 * inheritable sets are all a thread that never execs acts with; the
 * bounding set and the securebits only matter at exec.  Read back.
 */
static int drop_thread_capabilities(void)
{
        struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
        struct __user_cap_data_struct data[2];

        memset(data, 0, sizeof(data));
        if (syscall(__NR_capset, &header, data) < 0 || syscall(__NR_capget, &header, data) < 0)
                return -errno;
        for (int i = 0; i < 2; i++)
                if (data[i].effective || data[i].permitted || data[i].inheritable)
                        return -EPERM;
        return 0;
}

/*
 * One byte back on the socket the listener came by: "the supervisor holds
 * it and serves".  dsh-sandbox-exec, inside bwrap, execs the command only
 * once it has read it; the library's own spawn path does not wait for it
 * (its child has sent the listener before the spawn returns, and may be
 * gone already: MSG_NOSIGNAL, and a failure is nobody's business).
 */
static void acknowledge_listener(int socket_fd)
{
        char byte = 'A';

        while (send(socket_fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EINTR)
                ;
}

/*
 * The root that comes before the listener (dsh_metadata_supervisor_expect_root()):
 * received and added before anything is served, by this thread, which alone
 * reads the roots from here on.  Without it nothing is served: the sender
 * gets no answer and never execs the command.
 */
static int receive_arriving_root(dsh_metadata_supervisor *supervisor)
{
        int fd = dsh_receive_fd(supervisor->socket_fd);
        int result;

        if (fd < 0)
                return fd;
        result = add_root(supervisor, fd, supervisor->arriving_root, true, true);
        close(fd);
        return result;
}

static void *supervisor_thread(void *data)
{
        dsh_metadata_supervisor *supervisor = data;
        int dropped = drop_thread_capabilities();

        /* A umask of its own: it creates files for the command with the command's (write-supervisor.c). */
        supervisor->own_umask = unshare(CLONE_FS) == 0;
        /* The root comes first: it is sent before the filter exists (dsh-sandbox-exec), the listener after. */
        int listener = supervisor->arriving_root && receive_arriving_root(supervisor) < 0
                               ? -1
                               : dsh_receive_fd(supervisor->socket_fd);

        /*
         * A supervisor that kept a capability could do what the command
         * cannot (chown to anyone, set security.* attributes): it serves
         * nothing then, and closing the listener fails every metadata call
         * of the command with ENOSYS.
         */
        if (listener >= 0 && dropped == 0) {
                acknowledge_listener(supervisor->socket_fd);
                close(supervisor->socket_fd);
                supervisor->socket_fd = -1;
                dsh_metadata_supervisor_serve(supervisor, listener, supervisor->stop_fd);
        } else if (listener >= 0) {
                close(listener);
        }
        /* Closed without an answer: a sender that waits for one (dsh-sandbox-exec) never execs the command. */
        if (supervisor->socket_fd >= 0) {
                close(supervisor->socket_fd);
                supervisor->socket_fd = -1;
        }
        if (dropped < 0)
                atomic_store(&supervisor->capabilities_kept, true);
        supervisor_release(supervisor);
        return NULL;
}

/* The supervisor's stack: its frames hold a few PATH_MAX buffers, nothing deep. */
#define THREAD_STACK_SIZE (256 * 1024)

int dsh_metadata_supervisor_start(dsh_metadata_supervisor *supervisor, int socket_fd)
{
        sigset_t all, previous;
        pthread_attr_t attributes;
        int result;

        /* Before the spawn: a listener offered under a network policy comes with its sender's pid. */
        result = dsh_prepare_fd_receiver(socket_fd);
        if (result < 0)
                return result;
        supervisor->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (supervisor->stop_fd < 0)
                return -errno;
        result = -pthread_attr_init(&attributes);
        if (result < 0)
                return result;
        result = -pthread_attr_setstacksize(&attributes, THREAD_STACK_SIZE);
        supervisor->started = true;
        supervisor->socket_fd = socket_fd;
        atomic_fetch_add(&supervisor->references, 1);
        /* The thread inherits this mask: no signal of the caller's is ever handled on it. */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &previous);
        if (result == 0)
                result = -pthread_create(&supervisor->thread, &attributes, supervisor_thread, supervisor);
        pthread_sigmask(SIG_SETMASK, &previous, NULL);
        pthread_attr_destroy(&attributes);
        if (result < 0) {
                atomic_fetch_sub(&supervisor->references, 1);
                supervisor->socket_fd = -1;  /* the caller's again */
                supervisor->started = false;
        }
        return result;
}

void dsh_metadata_supervisor_stop_reporting(dsh_metadata_supervisor *supervisor, dsh_supervisor_report *report)
{
        uint64_t one = 1;
        struct timespec deadline;

        if (report)
                *report = (dsh_supervisor_report) { 0, false, 0, DSH_REFUSALS_INIT };
        if (!supervisor)
                return;
        if (supervisor->started) {
                (void) !write(supervisor->stop_fd, &one, sizeof(one));
                clock_gettime(CLOCK_REALTIME, &deadline);
                deadline.tv_sec += STOP_WAIT_MS / 1000;
                if (pthread_timedjoin_np(supervisor->thread, NULL, &deadline) != 0)
                        pthread_detach(supervisor->thread);  /* stuck in a call: it releases its half when it returns */
        }
        if (report) {
                report->unreadable_calls = atomic_load(&supervisor->unreadable_calls);
                report->served_nothing = atomic_load(&supervisor->capabilities_kept);
                report->write_calls = atomic_load(&supervisor->write_calls);
                pthread_mutex_lock(&supervisor->records_lock);
                dsh_refusals_move(&report->refusals, &supervisor->refusals);
                pthread_mutex_unlock(&supervisor->records_lock);
        }
        supervisor_release(supervisor);
}

unsigned long dsh_metadata_supervisor_stop(dsh_metadata_supervisor *supervisor, bool *served_nothing)
{
        dsh_supervisor_report report;

        dsh_metadata_supervisor_stop_reporting(supervisor, &report);
        dsh_refusals_clear(&report.refusals);
        if (served_nothing)
                *served_nothing = report.served_nothing;
        return report.unreadable_calls;
}
