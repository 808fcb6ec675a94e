/* SPDX-License-Identifier: MIT */
/*
 * The remote service's local side (docs/remote.md "The remote service"):
 * finding the destination's service, or starting it once, and connecting.
 *
 * The endpoint is a unix socket the ssh master listens on, forwarded to the
 * remote service's socket (`ssh -O forward -L LOCAL:REMOTE`): a call is
 * then a connect() here and a channel on the shared connection there — no
 * ssh exec, no `ssh -G`, no remote login shell.  It lives in the private
 * control directory, next to the master's own socket, named by a digest of
 * what names the destination (the ssh command, the destination, the remote
 * program, the identity of the ssh config files: digest_ssh_config), with
 * `.service`; its start is serialized by a flock on `.lock` beside it, so
 * that two callers starting at once end with one service.
 *
 * Why a hostile confined command cannot use or forge it:
 *  - it cannot reach the directory: the runtime protects every control
 *    directory any call of this user registered, whatever the environment
 *    that made it (remote-registry.c, runtime.c) — read-only, and both
 *    backends' supervisors refuse a connect into them and every write;
 *    bwrap also hides the environment's own two behind an empty tmpfs in
 *    every mode — so it can neither connect to the
 *    endpoint (it would get an unconfined command on the remote) nor plant
 *    a socket or a symlink for a later call to trust;
 *  - the directory itself is checked on an fd each call (0700, the user's:
 *    dsh_remote_control_directory_prepare); the endpoint must be a socket
 *    (lstat: a symlink is not followed into anything), the user's, closed
 *    to others, and the peer that accepted must be this user's (the master,
 *    SO_PEERCRED) — anything else is not trusted, and the call starts a
 *    service of its own or runs a session of its own;
 *  - before any request is sent, the peer must greet with the helper's
 *    hello of this protocol: an endpoint that is stale (the master gone:
 *    ECONNREFUSED) or forwards to nothing (streamlocal forwarding refused
 *    by the server, the service gone) is found out while nothing has been
 *    asked, and the call falls back to a session of its own (fail closed:
 *    nothing has run, and the per-call session keeps every check).
 *  - what it remembers is only the endpoint itself (the forward holds the
 *    remote path); nothing is written outside the control directory.
 *
 * The endpoint is used without `ssh -G`: the call that started it decided
 * that our multiplexing applies (the user configured none for the
 * destination).  A ControlMaster the user adds to ~/.ssh/config later is
 * seen once this endpoint is gone (the master's ControlPersist).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "provider/process.h"
#include "provider/spawn.h"
#include "remote/remote-endpoint.h"
#include "remote/remote-frame.h"
#include "remote/remote-protocol.h"
#include "remote/remote-ssh.h"

/* How long the service may take to start (a first call also opens the connection), and a forward to be set. */
#define SERVICE_START_MS 30000
/* How long a connected endpoint may take to greet. */
#define HELLO_WAIT_MS 15000
#define READY_LINE_MAX 256
/* How long a failed start (no service there, forwarding refused) keeps later calls from trying again. */
#define NO_SERVICE_SECONDS 600
/* How often a taken start lock is tried again. */
#define LOCK_RETRY_NS (20 * 1000 * 1000)

/*
 * Two 64-bit FNV-1a digests of every word, each ended by a NUL: the
 * endpoint's name.  Not a security boundary (the directory is the user's
 * alone); it keeps the user's own destinations apart.
 */
static void digest_words(uint64_t digest[2], const char *const *words)
{
        for (size_t i = 0; words[i]; i++)
                for (const unsigned char *c = (const unsigned char *) words[i];; c++) {
                        digest[0] = (digest[0] ^ *c) * 0x100000001b3ULL;
                        digest[1] = (digest[1] ^ *c) * 0x100000001b3ULL;
                        if (!*c)
                                break;
                }
}

static void digest_bytes(uint64_t digest[2], const void *bytes, size_t length)
{
        for (size_t i = 0; i < length; i++) {
                digest[0] = (digest[0] ^ ((const unsigned char *) bytes)[i]) * 0x100000001b3ULL;
                digest[1] = (digest[1] ^ ((const unsigned char *) bytes)[i]) * 0x100000001b3ULL;
        }
}

/*
 * The identity of one file ssh reads its config from: device, inode, type,
 * and for a file or directory its size and both times — any edit, replace
 * or rename over it changes one of them.  One that cannot be stat'ed
 * counts as "absent" (ENOENT and the like alike).
 */
static void digest_file_identity(uint64_t digest[2], const char *path)
{
        struct stat status;
        long long facts[9] = { 0 };

        digest_words(digest, (const char *const[]) { path, NULL });
        if (stat(path, &status) < 0) {
                digest_words(digest, (const char *const[]) { "absent", NULL });
                return;
        }
        facts[0] = (long long) status.st_dev;
        facts[1] = (long long) status.st_ino;
        facts[2] = (long long) status.st_mode;
        facts[3] = (long long) status.st_rdev;
        if (S_ISREG(status.st_mode) || S_ISDIR(status.st_mode)) {
                facts[4] = (long long) status.st_size;
                facts[5] = (long long) status.st_mtim.tv_sec;
                facts[6] = (long long) status.st_mtim.tv_nsec;
                facts[7] = (long long) status.st_ctim.tv_sec;
                facts[8] = (long long) status.st_ctim.tv_nsec;
        }
        digest_bytes(digest, facts, sizeof(facts));
}

/* The `-F FILE` (or `-FFILE`) of the ssh command, or NULL: ssh then reads the user's and the system's config. */
static const char *config_file_named(const char *const *command)
{
        const char *named = NULL;

        for (size_t i = 1; command[i]; i++) {
                if (strcmp(command[i], "-F") == 0 && command[i + 1])
                        named = command[++i];
                else if (strncmp(command[i], "-F", 2) == 0 && command[i][2])
                        named = command[i] + 2;
        }
        return named;
}

/*
 * What ssh resolves the destination with (HostName, Port, User, a
 * ProxyJump...) can change only through its config: the files it reads
 * are in the digest, so that an edit of any of them names another
 * endpoint, and the call starts (or finds) the service of where the name
 * points now, through ssh's own resolution (`ssh -G`, the master's %C).
 * Not seen: a file an Include names outside these, an edit inside
 * /etc/ssh/ssh_config.d that adds or removes no file (its directory's
 * times are seen, not each file's), a DNS change — for those the old
 * endpoint serves until the service idles out (docs/remote.md).
 */
static void digest_ssh_config(uint64_t digest[2], const char *const *command)
{
        const char *named = config_file_named(command);
        dsh_autofree char *ssh_directory = NULL, *user_config = NULL;

        if (named) {
                digest_file_identity(digest, named);
                return;
        }
        ssh_directory = dsh_remote_user_ssh_directory(false);
        if (ssh_directory && asprintf(&user_config, "%s/config", ssh_directory) >= 0)
                digest_file_identity(digest, user_config);
        digest_file_identity(digest, "/etc/ssh/ssh_config");
        digest_file_identity(digest, "/etc/ssh/ssh_config.d");
}

static char *endpoint_name(const dsh_remote_target *target, const char *suffix)
{
        static const char *const default_command[] = { "ssh", NULL };
        const char *const *command = target->ssh_command && target->ssh_command[0]
                                             ? (const char *const *) target->ssh_command
                                             : default_command;
        const char *const tail[] = { "--", target->destination, dsh_remote_program(target), NULL };
        uint64_t digest[2] = { 0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL };
        char *name = NULL;

        digest_words(digest, command);
        digest_words(digest, tail);
        digest_ssh_config(digest, command);
        if (asprintf(&name, "%016llx%016llx.%s", (unsigned long long) digest[0], (unsigned long long) digest[1],
                     suffix) < 0)
                return NULL;
        return name;
}

/* Ours alone: a socket (never followed if a symlink), the user's, closed to everybody else. */
static bool endpoint_is_private(int directory_fd, const char *name)
{
        struct stat status;

        return fstatat(directory_fd, name, &status, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(status.st_mode) &&
               status.st_uid == geteuid() && !(status.st_mode & (S_IRWXG | S_IRWXO));
}

/* Waits for the first frame: true when it is the helper's hello of this protocol. */
static bool greets_as_the_helper(int fd)
{
        dsh_frame_reader frames = DSH_FRAME_READER_INIT;
        long long deadline = dsh_monotonic_ms() + HELLO_WAIT_MS;
        const unsigned char *payload;
        size_t length;
        char type;
        int next = 0;
        bool greeted = false;

        while (next == 0) {
                struct pollfd readable = { fd, POLLIN, 0 };
                int timeout = dsh_poll_timeout_ms(deadline);

                if (timeout == 0 || poll(&readable, 1, timeout) <= 0 || dsh_frame_reader_fill(&frames, fd) <= 0)
                        break;
                next = dsh_frame_reader_next(&frames, &type, &payload, &length);
        }
        if (next > 0 && type == DSH_FRAME_HELLO) {
                dsh_error reason = DSH_ERROR_INIT;

                greeted = dsh_remote_hello_check(payload, length, &reason) == 0;
                dsh_error_clear(&reason);
        }
        /* A hello is one frame, and nothing follows it until the request: nothing is left in the reader. */
        greeted = greeted && frames.used == frames.consumed;
        dsh_frame_reader_clear(&frames);
        return greeted;
}

/*
 * The endpoint, connected and greeted: the fd (blocking), or -1.  The
 * connect goes through the very directory that was checked on its fd
 * (/proc/self/fd/N/NAME), not through its path again: whatever its
 * parents' names lead to by now, the socket is the one endpoint_is_private()
 * looked at in the 0700 directory of this user's.
 */
static int connect_endpoint(int directory_fd, const char *name)
{
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        int fd;

        if (!endpoint_is_private(directory_fd, name) ||
            snprintf(address.sun_path, sizeof(address.sun_path), "/proc/self/fd/%d/%s", directory_fd, name) >=
                    (int) sizeof(address.sun_path))
                return -1;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -1;
        if (connect(fd, (struct sockaddr *) &address, sizeof(address)) < 0 || !dsh_remote_peer_is_this_user(fd) ||
            !greets_as_the_helper(fd)) {
                close(fd);
                return -1;
        }
        return fd;
}

/* Spawns `argv` with stdin and stderr on /dev/null, stdout on `stdout_fd`, in a session of its own. */
static pid_t spawn_quiet(char **argv, int stdout_fd)
{
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_spawn_failure failure = { DSH_SPAWN_STAGE_NONE, 0 };
        dsh_exec_plan plan = DSH_EXEC_PLAN_INIT(argv);
        int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        pid_t pid;

        if (null_fd < 0)
                return -1;
        options.stdin_fd = null_fd;
        options.stdout_fd = stdout_fd >= 0 ? stdout_fd : null_fd;
        options.stderr_fd = null_fd;
        /* Not the caller's terminal's, nor killed with the caller: the service outlives this call. */
        options.new_session = true;
        pid = dsh_spawn_exec_plan(&plan, &options, &failure);
        close(null_fd);
        return pid;
}

/* One line from `fd` before `deadline`: "ready PATH" with an absolute PATH ssh can forward to.  Caller frees. */
static char *read_ready_path(int fd, long long deadline)
{
        char line[READY_LINE_MAX];
        size_t used = 0;

        while (used < sizeof(line) - 1 && !memchr(line, '\n', used)) {
                struct pollfd readable = { fd, POLLIN, 0 };
                int timeout = dsh_poll_timeout_ms(deadline);
                ssize_t got;

                if (timeout == 0 || poll(&readable, 1, timeout) <= 0)
                        return NULL;
                got = read(fd, line + used, sizeof(line) - 1 - used);
                if (got <= 0)
                        return NULL;
                used += (size_t) got;
        }
        line[used] = '\0';
        if (strncmp(line, "ready /", 7) != 0 || !strchr(line, '\n'))
                return NULL;
        *strchr(line, '\n') = '\0';
        /* ssh's -L splits at ':'; a path with spaces or control characters is not one we pass on. */
        for (const char *c = line + 6; *c; c++)
                if (*c == ':' || *c <= ' ' || *c == 0x7f)
                        return NULL;
        return strlen(line + 6) < sizeof(((struct sockaddr_un *) 0)->sun_path) ? strdup(line + 6) : NULL;
}

/*
 * `ssh ... -- DEST PROGRAM remote-service`, in the background of a
 * /bin/sh that exits at once (reaped here): ssh, reparented away from this
 * process and in a session of its own, holds the session whose end is the
 * service's, and no zombie of it is left in a long-lived caller.  (ssh's
 * own -f does not carry a mux session's output.)  Returns the remote
 * socket's path from the service's ready line, or NULL.
 */
static char *start_service(const dsh_remote_target *target, const char *directory, long long deadline)
{
        dsh_autofree char *program = dsh_remote_shell_quoted(dsh_remote_program(target));
        char **argv = NULL, **shared = NULL;
        int ready[2] = { -1, -1 }, wait_status;
        char *remote_path = NULL;
        pid_t pid = -1;

        if (program && dsh_strv_append(&argv, "/bin/sh") == 0 && dsh_strv_append(&argv, "-c") == 0 &&
            dsh_strv_append(&argv, "\"$@\" &") == 0 && dsh_strv_append(&argv, "sh") == 0 &&
            dsh_remote_ssh_shared_argv(target, directory, &shared) == 0) {
                bool built = true;

                for (size_t i = 0; shared[i] && built; i++)
                        built = dsh_strv_append(&argv, shared[i]) == 0;
                if (built && dsh_strv_append(&argv, "--") == 0 && dsh_strv_append(&argv, target->destination) == 0 &&
                    dsh_strv_append(&argv, program) == 0 && dsh_strv_append(&argv, "remote-service") == 0 &&
                    dsh_pipe_above_stdio(ready) == 0) {
                        pid = spawn_quiet(argv, ready[1]);
                        close(ready[1]);
                }
        }
        if (pid > 0) {
                while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR)
                        ;
                remote_path = read_ready_path(ready[0], deadline);
        }
        if (ready[0] >= 0)
                close(ready[0]);
        dsh_strv_free(shared);
        dsh_strv_free(argv);
        return remote_path;
}

/* `ssh ... -O forward -L LOCAL:REMOTE -- DEST`: the master listens on LOCAL.  True when it said yes. */
static bool forward_endpoint(const dsh_remote_target *target, const char *directory, const char *local,
                             const char *remote_path, long long deadline)
{
        dsh_autofree char *forward = NULL;
        dsh_autofree char *said = NULL;
        char **argv = NULL;
        int output[2] = { -1, -1 }, wait_status = -1;
        pid_t pid = -1;

        if (asprintf(&forward, "%s/%s:%s", directory, local, remote_path) >= 0 &&
            dsh_remote_ssh_shared_argv(target, directory, &argv) == 0 && dsh_strv_append(&argv, "-O") == 0 &&
            dsh_strv_append(&argv, "forward") == 0 && dsh_strv_append(&argv, "-L") == 0 &&
            dsh_strv_append(&argv, forward) == 0 && dsh_strv_append(&argv, "--") == 0 &&
            dsh_strv_append(&argv, target->destination) == 0 && dsh_pipe_above_stdio(output) == 0) {
                pid = spawn_quiet(argv, output[1]);
                close(output[1]);
                if (pid < 0)
                        close(output[0]);
        }
        dsh_strv_free(argv);
        return pid > 0 && dsh_collect_bounded(pid, 0, output[0], deadline, &said, &wait_status) == 0 &&
               WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

/*
 * `<digest>.none`, fresh: a start failed lately, and the call goes straight
 * to a session of its own.  Forging or keeping it (only this user's
 * unconfined processes can: the directory is protected) only ever sends
 * calls down that path, which keeps every check.
 */
static bool start_failed_lately(int directory_fd, const char *marker)
{
        struct stat status;

        return fstatat(directory_fd, marker, &status, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(status.st_mode) &&
               status.st_uid == geteuid() && time(NULL) - status.st_mtime < NO_SERVICE_SECONDS &&
               time(NULL) >= status.st_mtime;
}

static void remember_failed_start(int directory_fd, const char *marker)
{
        int fd = openat(directory_fd, marker, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

        if (fd >= 0) {
                futimens(fd, NULL);
                close(fd);
        }
}

/* Under the lock: the endpoint another caller just made, or a service started and forwarded now. */
static int start_and_connect(const dsh_remote_target *target, const char *directory, int directory_fd,
                             const char *name, const char *marker)
{
        long long deadline = dsh_monotonic_ms() + SERVICE_START_MS;
        dsh_autofree char *remote_path = NULL;
        int fd = connect_endpoint(directory_fd, name);

        if (fd >= 0)
                return fd;
        remote_path = start_service(target, directory, deadline);
        /* A stale endpoint (its master gone) is in the way of the forward; the directory is ours alone. */
        if (remote_path)
                unlinkat(directory_fd, name, 0);
        if (remote_path && forward_endpoint(target, directory, name, remote_path, deadline))
                fd = connect_endpoint(directory_fd, name);
        if (fd < 0)
                remember_failed_start(directory_fd, marker);
        return fd;
}

/*
 * The start lock, tried (LOCK_NB) until the start deadline: a holder that
 * never lets go (a first caller stopped mid-start with Ctrl-Z, SIGSTOP, a
 * debugger) must not hang every later call.  False when it stays taken:
 * the call then runs a session of its own (every check kept).
 */
static bool lock_before_the_start_deadline(int lock_fd)
{
        long long deadline = dsh_monotonic_ms() + SERVICE_START_MS;
        const struct timespec pause = { 0, LOCK_RETRY_NS };

        for (;;) {
                if (flock(lock_fd, LOCK_EX | LOCK_NB) == 0)
                        return true;
                if ((errno != EWOULDBLOCK && errno != EINTR) || dsh_monotonic_ms() >= deadline)
                        return false;
                nanosleep(&pause, NULL);
        }
}

/* True when the control directory exists: only then can an endpoint be there (nothing is created to look). */
static bool control_directory_exists(void)
{
        dsh_autofree char *directory = dsh_remote_default_control_directory();
        struct stat status;

        return directory && lstat(directory, &status) == 0 && S_ISDIR(status.st_mode);
}

int dsh_remote_service_connect(const dsh_remote_target *target)
{
        dsh_autofree char *directory = NULL, *name = NULL, *lock_name = NULL, *marker = NULL;
        dsh_autoclose int directory_fd = -1, lock_fd = -1;
        bool looked = false;
        int fd;

        if (!target->destination || !target->destination[0])
                return -1;
        name = endpoint_name(target, "service");
        lock_name = endpoint_name(target, "lock");
        marker = endpoint_name(target, "none");
        if (!name || !lock_name || !marker)
                return -1;
        /* An endpoint already there (the call that made it decided our multiplexing applies): no ssh -G. */
        if (control_directory_exists()) {
                directory = dsh_remote_control_directory_prepare();
                directory_fd = directory ? open(directory, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
                fd = directory_fd >= 0 ? connect_endpoint(directory_fd, name) : -1;
                if (fd >= 0 || !directory || start_failed_lately(directory_fd, marker))
                        return fd;
                looked = true;
        }
        /* None yet: one is started only where our own multiplexing applies (the user configured none, nor turned it off). */
        if (dsh_remote_user_multiplexes(target))
                return -1;
        if (!looked) {
                directory = dsh_remote_control_directory_prepare();
                directory_fd = directory ? open(directory, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        }
        if (directory_fd < 0 || strchr(directory, ':') || !dsh_remote_shared_connection_applies(target, directory))
                return -1;
        lock_fd = openat(directory_fd, lock_name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (lock_fd < 0 || !lock_before_the_start_deadline(lock_fd) || start_failed_lately(directory_fd, marker))
                return -1;
        return start_and_connect(target, directory, directory_fd, name, marker);
}
