/* SPDX-License-Identifier: MIT */
/*
 * The supervisor (docs/supervisor.md), one for both backends, of metadata,
 * write intent and connect.  Metadata first:
 * neither Landlock nor bwrap's mounts govern metadata everywhere — chmod,
 * chown, utimes, extended attributes and inode flags (Landlock not at all;
 * bwrap's writable binds and the host's device nodes its /dev binds in, not
 * beyond what the mode allows).  Under workspace-write the metadata filter
 * (metadata-filter.c) sends each such call of the command here, through a
 * seccomp user-notification listener, and the supervisor *performs* it on
 * the command's behalf when its target lies in a writable root, answering
 * with the real result; anything else is answered EACCES and nothing
 * changes.
 *
 * The security argument, in one place, the same on both backends:
 *   - where it runs: a thread of the process that spawned the sandbox,
 *     which stays as its parent (an ancestor of the command: Yama's scope 1
 *     lets it read the command), outside the Landlock domain or bwrap's
 *     namespaces, with no capability.  The listener is made in the
 *     sandbox's last step before exec (the Landlock child; dsh-sandbox-exec
 *     inside bwrap, which execs only once this thread acknowledged it holds
 *     the listener) and never held by the command;
 *   - what it decides: whether this call's target — one open file, not a
 *     name — lies beneath a writable root and outside every protected path
 *     (containment, metadata-supervisor.c), and then it makes the change on
 *     that same open file itself (acting, metadata-supervisor.c).  A root is
 *     a host directory's fd with the path at which the command sees it
 *     (under bwrap a bind's mount point: the scratch is /tmp); the target's
 *     name is the command's view too (d_path in its mount namespace), and
 *     only picks which root to try: the inode reached beneath the root's fd
 *     decides.  A set-user-ID or set-group-ID mode is refused (EPERM) on its
 *     register value alone.  A supervisor that was not asked to perform
 *     metadata changes (dsh_metadata_supervisor_perform_metadata(): Landlock
 *     read-only) performs none: each is refused (EPERM, what the filter
 *     answered by itself before) and written down, its target opened only
 *     to name it;
 *   - never CONTINUE: SECCOMP_USER_NOTIF_FLAG_CONTINUE lets the kernel
 *     re-read the arguments from the command's memory after the decision,
 *     and another of its threads can rewrite a path between the two reads
 *     (the kernel's own header says CONTINUE cannot implement a security
 *     policy).  Every decision here depends on a pointer, so every call is
 *     either performed by the supervisor or refused, never handed back.
 *     Two calls are let through, and neither is a decision: under bwrap a
 *     write-intent call, which the mounts decide whatever path the kernel
 *     reads (the supervisor only writes down their refusal), and umask(),
 *     whose one argument is a register (write-supervisor.c says why);
 *   - write intent (write-supervisor.h): under Landlock every write-intent
 *     call is decided here — a held-back path refused by name and by
 *     inode — and performed on what was decided, by a thread restricted
 *     with the command's own ruleset where Landlock's verdict is not known
 *     beforehand, so that Landlock stays the boundary outside the roots;
 *   - time of check, time of use: the arguments are copied once out of the
 *     command (process_vm_readv, bounded) and only the copy is used; the
 *     target is opened O_PATH relative to the calling thread's own cwd,
 *     root or descriptor (a thread that unshared its fs or its fd table is
 *     resolved against its own), never through a magic link
 *     (metadata-tracee.c); containment is judged on that open file (its
 *     name reopened beneath a writable root's fd with RESOLVE_BENEATH and
 *     compared by device and inode), and the change is made through that
 *     fd.  A rename, a symlink swapped in, a rewrite of the command's memory
 *     after the copy changes nothing about which file is acted on.  Every
 *     /proc/<tid> entry and pidfd is trusted only once
 *     SECCOMP_IOCTL_NOTIF_ID_VALID says the calling thread still waits, and
 *     is checked again right before acting: a dead thread's tid reused by
 *     another task is never read;
 *   - its own power: it runs outside the sandbox, but its thread empties its
 *     capability sets before it serves (one that cannot, serves nothing), so
 *     it can do nothing the command could not do by itself but for Landlock;
 *     every argument is hostile (bounded reads, no string trusted, a
 *     deadline per call, EACCES when it cannot decide, when the command's
 *     memory or descriptors cannot be read);
 *   - connect, under both confined modes: performed here on the command's
 *     own socket, never CONTINUE'd; a unix socket reached only in one of
 *     the command's own roots or on the allow-list (socket-call.h);
 *   - the network policy (OFF, ALLOW_LIST): bind, listen and every send to
 *     an address performed here too, inet sockets bound on loopback only,
 *     destinations judged or asked of the gate (inet-call.h);
 *   - when it dies: it serves until the command is gone (its listener hangs
 *     up) or it is stopped; once its listener is closed — stopped, or its
 *     process killed — the kernel fails the command's further metadata calls
 *     with ENOSYS.  A supervisor gone never lets a call through.
 *
 * libc (and pthread) only, shared by the library's spawn path and the
 * landlock-run launcher.
 */
#ifndef DSH_SANDBOX_METADATA_SUPERVISOR_H
#define DSH_SANDBOX_METADATA_SUPERVISOR_H

#include <stdbool.h>
#include <stddef.h>

#include "core/metadata-tracee.h"
#include "core/network-gate.h"
#include "core/refusals.h"

typedef struct dsh_metadata_supervisor dsh_metadata_supervisor;

/*
 * A new supervisor with no root (everything refused) that performs no
 * metadata change (each refused EPERM, with a record); NULL when out of
 * memory.
 */
dsh_metadata_supervisor *dsh_metadata_supervisor_new(void);

/*
 * Metadata changes whose target lies in a root are performed (the others
 * answered EACCES, with a record).  Without it none is: the default fails
 * closed, so a supervisor set up for read-only (no root, or only a temp
 * area it must not change) can never act on a metadata call — not even on
 * an unlinked file, which check_target() would let change.
 */
void dsh_metadata_supervisor_perform_metadata(dsh_metadata_supervisor *supervisor);

/*
 * A writable root: `directory_fd` (any open fd of the directory; duplicated
 * here) and its canonical `path`.  `contents_only`: changes beneath it are
 * allowed but not to the directory itself — always so for a directory that
 * every user of the machine shares (world-writable and sticky: the host's
 * /tmp), which is not the command's.  Only directories are roots (-ENOTDIR):
 * a writable file (the /dev/null sink) takes writes, never a change of its
 * metadata.  Returns 0 or a negative errno.
 */
int dsh_metadata_supervisor_add_root(dsh_metadata_supervisor *supervisor, int directory_fd, const char *path,
                                     bool contents_only);

/*
 * The same for a root the command sees at another path than the host does,
 * or in a mount namespace of its own (bwrap's binds): `command_path` is
 * where the command sees the directory, `directory_fd` the host's
 * directory.  That path is never learned again from the fd: a rename on the
 * host does not move a mount point.  Returns 0 or a negative errno.
 */
int dsh_metadata_supervisor_add_root_seen_at(dsh_metadata_supervisor *supervisor, int directory_fd,
                                             const char *command_path, bool contents_only);

/*
 * A root the supervisor learns only once the command's sandbox exists: its
 * directory fd follows the listener on the start socket (dsh_send_fd()), and
 * the command sees it at `command_path`.  Its contents only: bwrap's
 * read-only mode gives its private /tmp (a tmpfs of the sandbox's own, which
 * no host path names) this way.  The thread serves nothing until it has it.
 * Returns 0 or a negative errno.
 */
int dsh_metadata_supervisor_expect_root(dsh_metadata_supervisor *supervisor, const char *command_path);

/* The same, opening canonical `path` itself (O_PATH, no symlink followed).  Returns 0 or a negative errno. */
int dsh_metadata_supervisor_add_root_path(dsh_metadata_supervisor *supervisor, const char *path, bool contents_only);

/*
 * Lets the command connect to each unix socket of `paths` (absolute,
 * NULL-terminated; NULL: none), wherever it lies (socket-call.h): each
 * opened now, compared by device and inode.  Every backend that starts a
 * supervisor gives it the policy's allowed_unix_sockets here.  Returns 0,
 * or -EINVAL, -ENOTSOCK, -ENOMEM or open()'s errno for the first that fails.
 */
int dsh_metadata_supervisor_allow_unix_sockets(dsh_metadata_supervisor *supervisor, char *const *paths);

/*
 * The call's network policy (network-gate.h, inet-call.h): copied, but for
 * its pointers (the allowed ports, the gate, the refusal list), which must
 * stay valid until the settings' release is called (when the supervisor is
 * freed: a thread stuck past its stop is detached and may still use them).  Without it (or with
 * DSH_NETWORK_FILTER_ON) an inet connect is performed as asked, as before.
 * The filter must have been installed with the same `filter`: the
 * supervisor decides what it is sent.  Returns 0, or -EINVAL for settings
 * that cannot be held (ALLOW_LIST without a gate, OFF or ALLOW_LIST without
 * a refusal list).
 */
int dsh_metadata_supervisor_set_network(dsh_metadata_supervisor *supervisor, const dsh_network_settings *settings);

/* A canonical path whose metadata (and everything beneath it) stays unchanged even inside a root. */
int dsh_metadata_supervisor_add_protected(dsh_metadata_supervisor *supervisor, const char *path);

/*
 * A canonical path held back inside the roots, for `rule`: nothing beneath
 * it changes, nothing is made, renamed or linked there, it is renamed or
 * removed with nothing of it, whether it exists now or not (a missing
 * `.mcp.json` stays missing).  DSH_REFUSAL_PROTECTED_SUBPATH is what
 * dsh_metadata_supervisor_add_protected() adds; DSH_REFUSAL_OWN_FILE names
 * the sandbox's own files.  Write intent is decided only where the
 * supervisor performs or watches writes (below).  Returns 0 or a negative
 * errno.
 */
int dsh_metadata_supervisor_hold_back(dsh_metadata_supervisor *supervisor, const char *path, dsh_refusal_rule rule);

/*
 * Under Landlock: every write-intent call (write-call.h) is decided here —
 * a held-back path refused — and performed by a thread of the supervisor's
 * own that is restricted with `ruleset_fd` (duplicated), the command's own
 * ruleset, so that Landlock stays the boundary for everything outside the
 * roots (write-supervisor.c says why).  Returns 0 or a negative errno.
 */
int dsh_metadata_supervisor_perform_writes(dsh_metadata_supervisor *supervisor, int ruleset_fd);

/*
 * Under bwrap, whose mounts decide every write: write-intent calls are only
 * recorded (a refusal the mounts will make is written down) and then let
 * through to the kernel; a missing held-back path is refused here besides
 * (write-supervisor.c says why letting them through is safe there).
 */
void dsh_metadata_supervisor_watch_writes(dsh_metadata_supervisor *supervisor);

/*
 * The supervisor's own copy of the ruleset given to
 * dsh_metadata_supervisor_perform_writes(), open while the supervisor
 * lives (a spawn may hand it to its child instead of its own), or -1.
 */
int dsh_metadata_supervisor_ruleset_fd(const dsh_metadata_supervisor *supervisor);

/* dsh_metadata_supervisor_check_host(): in metadata-tracee.h, beside what it checks. */

/*
 * Serves `listener_fd` in the calling thread until the listener hangs up
 * (no process of the filter is left), `stop_fd` (-1: none) becomes
 * readable, or a call to the listener fails; then closes the listener.  The
 * calling thread's capabilities must already be dropped.
 */
void dsh_metadata_supervisor_serve(dsh_metadata_supervisor *supervisor, int listener_fd, int stop_fd);

/*
 * Starts a thread (every signal blocked) that empties its own capability
 * sets, receives the listener on `socket_fd` (dsh_receive_fd; the supervisor
 * takes the socket), answers one byte on the socket once it holds the
 * listener with no capability (the sender inside bwrap waits for it before
 * exec; none is sent when it serves nothing), and serves it — or, if a capability could not be
 * dropped, closes the listener at once and serves nothing (every metadata
 * call of the command then fails with ENOSYS).  It does not wait for the
 * thread: the spawn proceeds meanwhile.  From here the supervisor belongs to
 * the thread and to dsh_metadata_supervisor_stop() together.  Returns 0 or a
 * negative errno (then the caller still owns both).
 */
int dsh_metadata_supervisor_start(dsh_metadata_supervisor *supervisor, int socket_fd);

/*
 * Stops a started supervisor (or frees one that never started) and waits a
 * bounded time for its thread; a thread stuck in a call that does not return
 * is left to end on its own (it frees its half then).  Returns the number of
 * the command's calls refused because their arguments or descriptors could
 * not be read (the command is not dumpable, or the host forbids it);
 * `*served_nothing` (may be NULL) tells that the thread kept a capability
 * and so served no call at all.
 */
unsigned long dsh_metadata_supervisor_stop(dsh_metadata_supervisor *supervisor, bool *served_nothing);

/* What a stopped supervisor saw of its call. */
typedef struct dsh_supervisor_report {
        unsigned long unreadable_calls;         /* refused because the command could not be read */
        bool served_nothing;                    /* the thread kept a capability and served no call */
        unsigned long write_calls;              /* write-intent notifications received */
        dsh_refusals refusals;                  /* every write refused (the caller's to clear) */
} dsh_supervisor_report;

/*
 * dsh_metadata_supervisor_stop() that also hands over the refusal records
 * and the counts in `*report` (may be NULL).  A thread left stuck keeps
 * its records: only those made by then are handed over.
 */
void dsh_metadata_supervisor_stop_reporting(dsh_metadata_supervisor *supervisor, dsh_supervisor_report *report);

/* The number of calls refused so far for that reason (for a serving loop run by the caller). */
unsigned long dsh_metadata_supervisor_unreadable_calls(const dsh_metadata_supervisor *supervisor);

/* Frees a supervisor that was never started. */
void dsh_metadata_supervisor_free(dsh_metadata_supervisor *supervisor);

#endif
