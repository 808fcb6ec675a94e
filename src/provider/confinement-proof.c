/* SPDX-License-Identifier: MIT */
/*
 * The confinement proof: a probe must prove that a backend confines, not
 * only that a command starts under it (bwrap run by root without dropping
 * capabilities starts fine and confines nothing).  A confined shell tries to
 * create a file outside its read-only policy; the backend stays usable only
 * if the file did not appear.  The verdict that follows selects the backend
 * for every later call (and is persisted: verdict-cache.h), so the proof is
 * built so that no other process can make it say "escaped" or "confines":
 *
 *  - where: a fresh directory (mkdtemp, 0700) in the sandbox's own cache
 *    directory, the verdict cache's (own_cache_directory()).  The runtime
 *    lists it among the sandbox's own files (runtime.c, protect_own_files()):
 *    bwrap binds it read-only, Landlock refuses a writable root containing
 *    it, the file guard refuses writes to it.  So no confined command of an
 *    earlier call, nor one it left running, can create anything there —
 *    unlike the shared /tmp, where any leftover could.  Only without a
 *    cache directory (no absolute XDG_CACHE_HOME or HOME) does it fall back
 *    to /var/tmp or /tmp, and says so in a note; what follows still holds.
 *  - what: the command is told a secret (16 bytes of getrandom(), in hex) on
 *    its stdin, a pipe it reads once, never in its argv, which
 *    /proc/PID/cmdline shows to every process; and it creates, exclusively
 *    (`set -C`), a file named by the secret and holding it.  A process that
 *    watches the directory learns its name, never the file's: it cannot
 *    plant the one name that counts.  (Reading the pipe or the command's
 *    memory needs ptrace rights over the probe, which Landlock denies a
 *    confined process and bwrap's pid namespace hides.)
 *  - judged: on the directory's own fd (a rename of it changes nothing), the
 *    secret's file read back with O_NOFOLLOW, never access():
 *      absent                     the write failed: confines, once the
 *                                 command said on stderr that it read the
 *                                 secret (a runner that does not hand stdin
 *                                 on would otherwise pass).  Any other
 *                                 entry there means something else writes
 *                                 the sandbox's cache: a note, and the
 *                                 verdict is used but not persisted;
 *      a regular file, the secret the command wrote it: escaped;
 *      anything else at that name someone who learned the secret raced the
 *                                 proof: nothing can be concluded.
 *  - verdict: "escaped" is a fact (persistable: report->transient false)
 *    only when a second run, with its own directory and secret, escaped
 *    too.  One escape the second run does not confirm, or a raced run, makes
 *    the backend unusable for this provider only (transient: never
 *    persisted), with the reason: fail closed now, decide again next time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/path.h"
#include "dsh-sandbox/provider.h"
#include "provider/confinement-proof.h"

#define SECRET_BYTES 16
#define SECRET_LENGTH (2 * SECRET_BYTES)

/*
 * Reads the secret and says so on stderr, then creates the file it names,
 * holding it, and never one that exists (set -C).  Without that word on
 * stderr a missing file proves nothing: a runner that does not hand stdin
 * on (a passthrough with </dev/null) would otherwise pass for one that
 * confines.
 */
#define SECRET_READ "dsh-sandbox-proof: secret read"
#define PROOF_SCRIPT                                                                                              \
        "IFS= read -r name || exit 0; echo '" SECRET_READ "' >&2; set -C; printf '%s\\n' \"$name\" > \"$1/$name\"; " \
        "exit 0"

enum proof_outcome {
        PROOF_NOT_RUN,   /* no directory, no secret, out of time: `reason` says why */
        PROOF_CONFINED,
        PROOF_ESCAPED,
        PROOF_RACED,
};

struct proof_run {
        enum proof_outcome outcome;
        bool disturbed;         /* entries the probe did not make were in its directory */
        char *reason;           /* PROOF_NOT_RUN: why, in words; may be NULL (out of memory) */
        const char *location;   /* the fallback parent used, when not the sandbox's cache; static */
};

#define PROOF_RUN_INIT { PROOF_NOT_RUN, false, NULL, NULL }

/* The sandbox's cache (the verdict cache's directory), created 0700 and with no symlink on the way; or NULL. */
static char *own_cache_directory(const dsh_provider *provider)
{
        dsh_autofree char *directory = provider->verdict_cache_dir ? strdup(provider->verdict_cache_dir)
                                                                    : dsh_provider_default_verdict_cache_dir();

        if (!directory || dsh_path_make_directories(directory, 0700) < 0 || !dsh_path_has_no_symlinks(directory))
                return NULL;
        return dsh_steal_pointer(&directory);
}

/*
 * A fresh directory for one run, its path in `path`, opened by fd (-1 when
 * none could be made).  In the sandbox's cache, else in a shared temp
 * directory, named in `run->location`.
 */
static int make_proof_directory(const dsh_provider *provider, char *path, size_t size, struct proof_run *run)
{
        dsh_autofree char *cache = own_cache_directory(provider);
        const char *const parents[] = { cache, "/var/tmp", "/tmp" };
        int fd;

        for (size_t i = 0; i < sizeof(parents) / sizeof(parents[0]); i++) {
                if (!parents[i] || snprintf(path, size, "%s/probe-XXXXXX", parents[i]) >= (int) size ||
                    !mkdtemp(path))
                        continue;
                fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd >= 0) {
                        run->location = i == 0 ? NULL : parents[i];
                        return fd;
                }
                rmdir(path);
        }
        return -1;
}

static bool make_secret(char secret[SECRET_LENGTH + 1])
{
        unsigned char bytes[SECRET_BYTES];

        if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t) sizeof(bytes))
                return false;
        for (size_t i = 0; i < sizeof(bytes); i++)
                snprintf(secret + 2 * i, 3, "%02x", bytes[i]);
        return true;
}

/* A pipe's read end holding "SECRET\n" and nothing more (the write end closed), or -1. */
static int secret_pipe(const char *secret)
{
        char line[SECRET_LENGTH + 2];
        int ends[2];
        ssize_t written;

        if (pipe2(ends, O_CLOEXEC) < 0)
                return -1;
        snprintf(line, sizeof(line), "%s\n", secret);
        written = write(ends[1], line, strlen(line));   /* a few bytes into an empty pipe: never short */
        close(ends[1]);
        if (written != (ssize_t) strlen(line)) {
                close(ends[0]);
                return -1;
        }
        return ends[0];
}

/* Whether the directory holds anything but the secret's file. */
static bool has_strangers(int directory_fd, const char *secret)
{
        int fd = openat(directory_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *directory = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *entry;
        bool strangers = false;

        if (!directory) {
                if (fd >= 0)
                        close(fd);
                return true;   /* it cannot be read back: count it as disturbed */
        }
        while (!strangers && (entry = readdir(directory)))
                strangers = strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0 &&
                            strcmp(entry->d_name, secret) != 0;
        closedir(directory);
        return strangers;
}

/* What the secret's name holds: nothing (confines), the secret (escaped), or anything else (raced). */
static enum proof_outcome judge_proof(int directory_fd, const char *secret)
{
        char expected[SECRET_LENGTH + 2], found[sizeof(expected) + 1];
        dsh_autoclose int fd =
                openat(directory_fd, secret, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        struct stat status;
        ssize_t length;

        if (fd < 0)
                return errno == ENOENT ? PROOF_CONFINED : PROOF_RACED;
        if (fstat(fd, &status) < 0 || !S_ISREG(status.st_mode))
                return PROOF_RACED;
        snprintf(expected, sizeof(expected), "%s\n", secret);
        length = read(fd, found, sizeof(found));
        if (length != (ssize_t) strlen(expected) || memcmp(found, expected, (size_t) length) != 0)
                return PROOF_RACED;
        return PROOF_ESCAPED;
}

/* Removes what the directory holds (one level: whatever a stranger nested deeper stays), then the directory. */
static void remove_proof_directory(int directory_fd, const char *path)
{
        int fd = openat(directory_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *directory = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *entry;

        if (!directory && fd >= 0)
                close(fd);
        while (directory && (entry = readdir(directory)))
                if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0 &&
                    unlinkat(directory_fd, entry->d_name, 0) < 0 && errno == EISDIR)
                        (void) unlinkat(directory_fd, entry->d_name, AT_REMOVEDIR);
        if (directory)
                closedir(directory);
        (void) rmdir(path);
}



/* A new string, or NULL when out of memory. */
static __attribute__((format(printf, 1, 2))) char *sentence(const char *format, ...)
{
        char *text = NULL;
        va_list arguments;
        int length;

        va_start(arguments, format);
        length = vasprintf(&text, format, arguments);
        va_end(arguments);
        return length < 0 ? NULL : text;
}

/* Why a run said nothing: out of time (no `error`), or the backend could not run it (`error` says why). */
static void set_not_run(struct proof_run *run, const dsh_provider *provider, const dsh_backend_ops *backend,
                        const dsh_error *error)
{
        run->outcome = PROOF_NOT_RUN;
        if (!error)
                run->reason = dsh_probe_timeout_reason(provider, backend);
        else
                run->reason = sentence("the confinement check could not run under this backend: %s",
                                       error->message ? error->message : "no reason given");
}

/* No file, but the command never read its secret: nothing was tried, so nothing is proved. */
static void set_unread(struct proof_run *run, const dsh_backend_ops *backend)
{
        run->outcome = PROOF_NOT_RUN;
        run->reason = sentence("the confinement check's command under %s never read its secret on stdin: "
                               "its write proves nothing", backend->name);
}

/* One run: a fresh directory and secret, the confined write, the judgement. */
static void run_proof(dsh_provider *provider, const dsh_backend_ops *backend, struct proof_run *run)
{
        char directory[PATH_MAX], secret[SECRET_LENGTH + 1];
        char *argv[] = { (char *) "sh", (char *) "-c", (char *) PROOF_SCRIPT, (char *) "sh", directory, NULL };
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_autofree char *stderr_text = NULL;
        dsh_autoclose int directory_fd = -1;
        dsh_autoclose int input = -1;
        int exit_code = 0, result;

        policy.mode = DSH_MODE_READ_ONLY;
        policy.workspace_root = (char *) "/";
        directory_fd = make_proof_directory(provider, directory, sizeof(directory), run);
        if (directory_fd < 0) {
                run->reason = strdup("the confinement check found no directory to run in");
                return;
        }
        input = make_secret(secret) ? secret_pipe(secret) : -1;
        if (input < 0) {
                run->reason = strdup("the confinement check could not make its secret");
                remove_proof_directory(directory_fd, directory);
                return;
        }
        result = dsh_provider_run_bounded_with_input(provider, backend, argv, &policy, input, &exit_code,
                                                     &stderr_text, &error);
        /* Judged whatever the run's own outcome: a command that escaped and then stalled escaped all the same. */
        run->outcome = judge_proof(directory_fd, secret);
        run->disturbed = has_strangers(directory_fd, secret);
        remove_proof_directory(directory_fd, directory);
        if (run->outcome == PROOF_CONFINED && (result < 0 || exit_code < 0))
                set_not_run(run, provider, backend, result < 0 ? &error : NULL);
        else if (run->outcome == PROOF_CONFINED && !(stderr_text && strstr(stderr_text, SECRET_READ)))
                set_unread(run, backend);
        dsh_error_clear(&error);
}

/* Replaces the report's reason with `reason` (owned) and makes it unusable. */
static void refuse(dsh_backend_report *report, char *reason, bool transient)
{
        report->usable = false;
        report->transient = transient;
        free(report->reason);
        report->reason = reason;
}

/* The verdict of one or two runs into `report` (the rules are at the top of this file). */
static void settle(dsh_backend_report *report, const dsh_backend_ops *backend, struct proof_run *first,
                   const struct proof_run *second)
{
        if (first->location) {
                dsh_autofree char *note = NULL;

                if (asprintf(&note, "the confinement proof ran in %s: the sandbox has no cache directory here",
                             first->location) >= 0)
                        (void) dsh_strv_append(&report->notes, note);
        }
        if (first->outcome == PROOF_NOT_RUN) {
                refuse(report, dsh_steal_pointer(&first->reason), true);   /* it proves nothing either way */
        } else if (first->outcome == PROOF_CONFINED) {
                if (!first->disturbed)
                        return;
                report->transient = true;
                (void) dsh_strv_append(&report->notes, "the confinement proof found entries it did not make in "
                                                       "its directory: another process writes the sandbox's "
                                                       "cache; this verdict is not persisted");
        } else if (first->outcome == PROOF_ESCAPED && second->outcome == PROOF_ESCAPED) {
                /* Two escapes, each with its own secret: a fact about the runner, not a bad moment. */
                refuse(report, sentence("a command confined by %s could still write outside its policy on this "
                                        "host (proved twice): it does not confine here", backend->name),
                       false);
        } else if (first->outcome == PROOF_RACED || second->outcome == PROOF_RACED) {
                refuse(report, sentence("the confinement proof under %s was raced: the file only the probe's "
                                        "command could name was written by another process; nothing is "
                                        "concluded or cached, the backend is passed over for now", backend->name),
                       true);
        } else {
                refuse(report, sentence("a command confined by %s wrote outside its policy once but not on a "
                                        "second run: not confirmed, so nothing is cached; the backend is passed "
                                        "over for now", backend->name),
                       true);
        }
}

void dsh_confinement_proof(dsh_provider *provider, const dsh_backend_ops *backend, dsh_backend_report *report)
{
        struct proof_run first = PROOF_RUN_INIT, second = PROOF_RUN_INIT;

        run_proof(provider, backend, &first);
        if (first.outcome == PROOF_ESCAPED || first.outcome == PROOF_RACED)
                run_proof(provider, backend, &second);
        settle(report, backend, &first, &second);
        free(first.reason);
        free(second.reason);
}
