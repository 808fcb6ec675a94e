/* SPDX-License-Identifier: MIT */
/*
 * The held-back watch (held-back-watch.h): one inotify fd, one watch per
 * directory that holds a held-back file, armed by the backend before the
 * command starts and read by the bash tool while it runs.
 *
 * Why the evidence holds against a hostile command (see also the header):
 *  - the watch is armed in the unconfined parent before the runner is
 *    spawned, so no creation the command makes comes before it;
 *  - an inotify event is queued at the creation itself: deleting the lock
 *    at once, or renaming it away, does not take the IN_CREATE back;
 *  - the watched directory is pinned by the backend (a mount point cannot
 *    be renamed or removed), so the command cannot move it aside and
 *    create the lock in a look-alike the watch does not see;
 *  - a full queue (IN_Q_OVERFLOW, which only a command flooding the
 *    directory can cause) is said, never read as "nothing happened";
 *  - the path is resolved with IN_DONT_FOLLOW | IN_ONLYDIR before the
 *    command exists: nothing confined can have swapped it yet.
 * Faking the evidence (creating NAME.lock, printing an EBUSY line) only
 * makes the faker's own call read as denied.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "provider/classify.h"
#include "provider/held-back-watch.h"

#define LOCK_SUFFIX ".lock"

/* One held-back file or directory. */
struct held_back_entry {
        char *path;             /* canonical, absolute */
        const char *name;       /* its last component, inside `path` */
        char *short_form;       /* its last two components (".git/config"), as tools name it relative to a root */
        int descriptor;         /* the inotify watch on its directory */
        unsigned long locks;    /* how often NAME.lock appeared next to it */
        unsigned long replaced; /* how often NAME.lock was then renamed over NAME: a writer outside the sandbox */
        uint32_t lock_cookie;   /* the rename of NAME.lock away last seen, to pair with its arrival; 0: none */
        bool named;             /* a failure line named it */
};

struct dsh_held_back_watch {
        int fd;
        struct held_back_entry *entries;
        size_t count;
        bool overflowed;
};

/* strerror(EBUSY) and strerror(EROFS), as tools print them: what a refused replacement of a mount point says. */
static char *const refusal_words[] = { (char *) "device or resource busy", (char *) "read-only file system", NULL };

/* Every fd above 2 except `keep_a` and `keep_b` (keep_a < keep_b), and 0-2 too: the releaser holds nothing else. */
static void close_all_but(int keep_a, int keep_b)
{
        if (keep_a > 0)
                syscall(SYS_close_range, 0U, (unsigned int) keep_a - 1, 0U);
        if (keep_b > keep_a + 1)
                syscall(SYS_close_range, (unsigned int) keep_a + 1, (unsigned int) keep_b - 1, 0U);
        syscall(SYS_close_range, (unsigned int) keep_b + 1, ~0U, 0U);
}

/*
 * Closes an inotify fd without waiting for it.  The last close of an
 * inotify instance that had watches waits for the kernel's fsnotify SRCU
 * grace period (5 to 20 ms on the 2-core development VM, more than the
 * whole of a `bash -c true` call): the call would pay that on every run.
 * Instead a detached grandchild (double fork: nobody has to reap it; the
 * middle child is reaped at once) takes the last reference, after this
 * process has dropped its own (the pipe's EOF says so), and pays the wait
 * where nobody waits for it.  It holds nothing else (every other fd closed:
 * no pipe of the caller's stays open behind it; its cwd is "/"; its command
 * line is the caller's for those few milliseconds) and runs only
 * async-signal-safe calls, as a child of a threaded process must.  Where a
 * fork fails, the fd is simply closed here.
 */
static void close_in_background(int fd)
{
        int gate[2];
        pid_t middle;

        if (pipe2(gate, O_CLOEXEC) < 0) {
                close(fd);
                return;
        }
        middle = fork();
        if (middle == 0) {
                char byte;

                if (fork() != 0)
                        _exit(0);
                close(gate[1]);
                /* No directory of the caller's held either (an unmount of it would see EBUSY). */
                if (chdir("/") < 0)
                        _exit(0);   /* then the caller's own close pays the wait */
                close_all_but(fd < gate[0] ? fd : gate[0], fd < gate[0] ? gate[0] : fd);
                while (read(gate[0], &byte, 1) < 0 && errno == EINTR)
                        ;
                close(fd);
                _exit(0);
        }
        if (middle > 0)
                while (waitpid(middle, NULL, 0) < 0 && errno == EINTR)
                        ;
        close(fd);
        close(gate[0]);
        close(gate[1]);
}

void dsh_held_back_watch_free(dsh_held_back_watch *watch)
{
        if (!watch)
                return;
        if (watch->fd >= 0)
                close_in_background(watch->fd);
        for (size_t i = 0; i < watch->count; i++) {
                free(watch->entries[i].path);
                free(watch->entries[i].short_form);
        }
        free(watch->entries);
        free(watch);
}

/* "/a/b/.git/config" -> ".git/config"; a path with one component is its own short form. */
static char *short_form_of(const char *path)
{
        const char *last = strrchr(path, '/');
        const char *start = path;

        for (const char *cursor = path; last && cursor < last; cursor++)
                if (*cursor == '/')
                        start = cursor + 1;
        return strdup(start);
}

/* Fills `entry` for `path` and arms the watch on its directory.  Returns 0 or a negative errno. */
static int entry_start(int fd, const char *path, struct held_back_entry *entry)
{
        char directory[PATH_MAX];
        const char *slash = strrchr(path, '/');
        size_t directory_length;

        if (path[0] != '/' || !slash || slash[1] == '\0' || (size_t) (slash - path) >= sizeof(directory))
                return -EINVAL;
        directory_length = slash == path ? 1 : (size_t) (slash - path);
        memcpy(directory, path, directory_length);
        directory[directory_length] = '\0';
        entry->path = strdup(path);
        entry->short_form = short_form_of(path);
        if (!entry->path || !entry->short_form)
                return -ENOMEM;
        entry->name = entry->path + (slash - path) + 1;
        entry->descriptor = inotify_add_watch(fd, directory,
                                              IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_ONLYDIR | IN_DONT_FOLLOW);
        return entry->descriptor < 0 ? -errno : 0;
}

int dsh_held_back_watch_start(char *const *held_back, dsh_held_back_watch **watch_out)
{
        dsh_held_back_watch *watch = calloc(1, sizeof(*watch));
        size_t count = dsh_strv_length(held_back);
        int result = 0;

        *watch_out = NULL;
        if (!watch)
                return -ENOMEM;
        watch->entries = calloc(count ? count : 1, sizeof(*watch->entries));
        watch->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (!watch->entries)
                result = -ENOMEM;
        else if (watch->fd < 0)
                result = -errno;
        for (size_t i = 0; result == 0 && i < count; i++) {
                result = entry_start(watch->fd, held_back[i], &watch->entries[i]);
                watch->count = i + 1;
        }
        if (result < 0) {
                dsh_held_back_watch_free(watch);
                return result;
        }
        *watch_out = watch;
        return 0;
}

int dsh_held_back_watch_fd(const dsh_held_back_watch *watch)
{
        return watch ? watch->fd : -1;
}

/* NAME.lock next to NAME: the lock file git (and others) write before renaming it over NAME. */
static bool is_lock_of(const char *created, const char *name)
{
        size_t name_length = strlen(name);

        return strncmp(created, name, name_length) == 0 && strcmp(created + name_length, LOCK_SUFFIX) == 0;
}

/*
 * One event in the directory of `entry`.  NAME.lock appearing is an
 * attempt to replace NAME; NAME.lock renamed over NAME (the two halves of
 * one rename, paired by cookie) is a replacement that succeeded, which no
 * process inside the sandbox can make (NAME is a mount point there): the
 * user's own git, or an IDE's, at the same moment.  Only the attempts it
 * does not account for are refusals.  A confined command cannot forge the
 * pair to hide one: the rename onto NAME fails for it.
 */
static void note_entry_event(struct held_back_entry *entry, const struct inotify_event *event)
{
        if ((event->mask & (IN_CREATE | IN_MOVED_TO)) && is_lock_of(event->name, entry->name))
                entry->locks++;
        if ((event->mask & IN_MOVED_FROM) && is_lock_of(event->name, entry->name))
                entry->lock_cookie = event->cookie;
        if ((event->mask & IN_MOVED_TO) && event->cookie && event->cookie == entry->lock_cookie &&
            strcmp(event->name, entry->name) == 0) {
                entry->replaced++;
                entry->lock_cookie = 0;
        }
}

static void note_event(dsh_held_back_watch *watch, const struct inotify_event *event)
{
        if (event->mask & IN_Q_OVERFLOW) {
                watch->overflowed = true;
                return;
        }
        if (event->len == 0)
                return;
        for (size_t i = 0; i < watch->count; i++)
                if (watch->entries[i].descriptor == event->wd)
                        note_entry_event(&watch->entries[i], event);
}

/* NAME.lock appeared more often than it replaced NAME from outside: some attempt was refused. */
static bool entry_refused(const struct held_back_entry *entry)
{
        return entry->locks > entry->replaced;
}

void dsh_held_back_watch_read(dsh_held_back_watch *watch)
{
        char buffer[16 * (sizeof(struct inotify_event) + NAME_MAX + 1)]
                __attribute__((aligned(__alignof__(struct inotify_event))));
        ssize_t length;

        if (!watch)
                return;
        while ((length = read(watch->fd, buffer, sizeof(buffer))) > 0 || (length < 0 && errno == EINTR))
                for (ssize_t offset = 0; length > 0 && offset < length;) {
                        /* The kernel pads each record to the struct's alignment, and the buffer is aligned. */
                        const struct inotify_event *event = (const void *) (buffer + offset);

                        note_event(watch, event);
                        offset += (ssize_t) (sizeof(struct inotify_event) + event->len);
                }
}

/* memmem within one line: `needle` occurs in [line, line + length). */
static bool line_names(const char *line, size_t length, const char *needle)
{
        return memmem(line, length, needle, strlen(needle)) != NULL;
}

void dsh_held_back_watch_match_text(dsh_held_back_watch *watch, const char *text, size_t length)
{
        const char *end_of_text = text + length;

        if (!watch || !text)
                return;
        for (const char *line = text; line < end_of_text;) {
                const char *end = memchr(line, '\n', (size_t) (end_of_text - line));
                size_t line_length = end ? (size_t) (end - line) : (size_t) (end_of_text - line);

                if (dsh_text_has_signature(refusal_words, line, line_length))
                        for (size_t i = 0; i < watch->count; i++)
                                if (line_names(line, line_length, watch->entries[i].path) ||
                                    line_names(line, line_length, watch->entries[i].short_form))
                                        watch->entries[i].named = true;
                line = end ? end + 1 : end_of_text;
        }
}

bool dsh_held_back_watch_saw_attempt(const dsh_held_back_watch *watch)
{
        for (size_t i = 0; watch && i < watch->count; i++)
                if (entry_refused(&watch->entries[i]))
                        return true;
        return false;
}

bool dsh_held_back_watch_named(const dsh_held_back_watch *watch)
{
        for (size_t i = 0; watch && i < watch->count; i++)
                if (watch->entries[i].named)
                        return true;
        return false;
}

char *dsh_held_back_watch_refused_paths(const dsh_held_back_watch *watch)
{
        char *joined = NULL;
        size_t size = 0;
        FILE *out;
        bool first = true;

        if (!watch)
                return NULL;
        out = open_memstream(&joined, &size);
        if (!out)
                return NULL;
        for (size_t i = 0; i < watch->count; i++)
                if (entry_refused(&watch->entries[i]) || watch->entries[i].named) {
                        fprintf(out, "%s\"%s\"", first ? "" : ", ", watch->entries[i].path);
                        first = false;
                }
        if (fclose(out) != 0 || first) {
                free(joined);
                return NULL;
        }
        return joined;
}

bool dsh_held_back_watch_overflowed(const dsh_held_back_watch *watch)
{
        return watch && watch->overflowed;
}
