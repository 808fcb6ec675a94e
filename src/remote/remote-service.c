/* SPDX-License-Identifier: MIT */
/*
 * The remote provider's persistent remote side (`dsh-sandbox
 * remote-service`, docs/remote.md "The remote service"): one process per
 * destination, started once over the shared connection, that serves many
 * calls without a remote login shell each.
 *
 * It listens on a unix socket in this host's own ssh control directory
 * (remote-ssh.c: $XDG_RUNTIME_DIR/dsh-sandbox/ssh or
 * ~/.cache/dsh-sandbox/ssh, 0700, checked on an fd), prints `ready PATH`
 * on its stdout — the ssh session that started it — and accepts.  Each
 * connection (the local side's forward, through sshd) is served in a
 * forked child, in a process group of its own, by the very helper a
 * per-call session runs (dsh_remote_serve on the socket): the same hello,
 * the same request, this host's own runtime and policy resolution per
 * call, the same frames and final record.
 *
 * Why a confined command cannot use it — it would get an unconfined
 * command:
 *  - on this host, the socket lives in the control directory, registered
 *    when prepared (remote-registry.c), which every runtime of this host
 *    protects like its other own state, whatever its environment
 *    (runtime.c): bwrap
 *    hides it behind an empty tmpfs in every sandbox, and Landlock's
 *    supervisor refuses a connect into it;
 *  - other users: the directory is 0700 and the user's, the socket is
 *    bound 0600, and every accepted peer's uid is checked on the fd
 *    (SO_PEERCRED) — sshd's session process runs as this user.
 *
 * It dies with its connection: its stdout is the ssh session's channel, so
 * when the master goes (killed, `-O exit`, the network gone) sshd closes it
 * and poll() reports an error or hang-up there; the service then kills
 * every call's process group (each helper would see its own socket end
 * anyway, and kill its command: remote-helper.c) and exits.  Idle for
 * SERVICE_IDLE_MS with no call running (SERVICE_FIRST_CALL_MS before the
 * first), it exits too, so that the master can persist out as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dsh-sandbox/remote.h"
#include "provider/process.h"
#include "remote/remote-ssh.h"

/* How long the service waits, no call running, before it exits (as ControlPersist=600). */
#define SERVICE_IDLE_MS (600 * 1000)
/* How long it waits for its first call: a local side whose forward failed never sends one. */
#define SERVICE_FIRST_CALL_MS (60 * 1000)
#define SERVICE_BACKLOG 16

typedef struct service {
        int listen_fd, session_fd, child_signals;
        pid_t *calls;           /* each call's helper, leading its own process group */
        size_t call_count, call_capacity;
        long long idle_since_ms;
        bool served;            /* a call came: from now on the idle time is SERVICE_IDLE_MS */
} service;

/* Binds the socket 0600 (umask) in the private directory and listens.  Returns the fd or -1. */
static int listen_at(const char *path)
{
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        mode_t previous;
        int bound;

        if (fd < 0 || strlen(path) >= sizeof(address.sun_path)) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        memcpy(address.sun_path, path, strlen(path) + 1);
        previous = umask(0177);
        bound = bind(fd, (struct sockaddr *) &address, sizeof(address));
        umask(previous);
        if (bound < 0 || listen(fd, SERVICE_BACKLOG) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

/* In the forked child: the helper on the socket, its stdio away from the session's channel. */
static __attribute__((noreturn)) void serve_connection(service *self, const dsh_runtime_options *options, int fd,
                                                       const sigset_t *original_mask)
{
        int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);

        setpgid(0, 0);
        sigprocmask(SIG_SETMASK, original_mask, NULL);
        /* The session's channel stays the service's alone: its end is the service's signal to leave. */
        if (null_fd >= 0) {
                dup2(null_fd, STDIN_FILENO);
                dup2(null_fd, STDOUT_FILENO);
                dup2(null_fd, STDERR_FILENO);
        }
        close(self->listen_fd);
        close(self->child_signals);
        _exit(dsh_remote_serve(options, fd, fd) < 0 ? 1 : 0);
}

static int make_room(service *self)
{
        size_t capacity = self->call_capacity ? self->call_capacity * 2 : 8;
        pid_t *calls;

        if (self->call_count < self->call_capacity)
                return 0;
        calls = realloc(self->calls, capacity * sizeof(*calls));
        if (!calls)
                return -ENOMEM;
        self->calls = calls;
        self->call_capacity = capacity;
        return 0;
}

static int accept_call(service *self, const dsh_runtime_options *options, const sigset_t *original_mask)
{
        int fd = accept4(self->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        pid_t pid;

        if (fd < 0)
                return errno == EINTR || errno == EAGAIN || errno == ECONNABORTED ? 0 : -errno;
        if (!dsh_remote_peer_is_this_user(fd) || make_room(self) < 0) {
                close(fd);
                return 0;
        }
        pid = fork();
        if (pid == 0)
                serve_connection(self, options, fd, original_mask);
        close(fd);
        if (pid > 0) {
                setpgid(pid, pid);   /* also here: no window where a kill of its group misses it */
                self->calls[self->call_count++] = pid;
                self->served = true;
        }
        return 0;
}

/* Reaps the calls that ended; the idle clock starts when the last one did. */
static void reap_calls(service *self)
{
        struct signalfd_siginfo info;
        pid_t pid;

        while (read(self->child_signals, &info, sizeof(info)) == (ssize_t) sizeof(info))
                ;
        while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
                for (size_t i = 0; i < self->call_count; i++)
                        if (self->calls[i] == pid)
                                self->calls[i] = self->calls[--self->call_count];
        }
        if (self->call_count == 0)
                self->idle_since_ms = dsh_monotonic_ms();
}

/* The session ended (or the service idled out): every call still running ends with it. */
static void end_calls(service *self)
{
        for (size_t i = 0; i < self->call_count; i++)
                kill(-self->calls[i], SIGKILL);
        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
                ;
        self->call_count = 0;
}

enum { POLL_LISTEN, POLL_SESSION, POLL_CHILDREN, POLL_COUNT };

static void serve_until_the_session_ends(service *self, const dsh_runtime_options *options,
                                         const sigset_t *original_mask)
{
        struct pollfd fds[POLL_COUNT];

        for (;;) {
                long long idle_ms = self->served ? SERVICE_IDLE_MS : SERVICE_FIRST_CALL_MS;
                long long idle_left = self->idle_since_ms + idle_ms - dsh_monotonic_ms();
                int timeout = self->call_count > 0 ? -1 : idle_left > 0 ? (int) idle_left : 0;

                fds[POLL_LISTEN] = (struct pollfd) { self->listen_fd, POLLIN, 0 };
                /* No events asked: poll reports the error or hang-up of the channel's far end. */
                fds[POLL_SESSION] = (struct pollfd) { self->session_fd, 0, 0 };
                fds[POLL_CHILDREN] = (struct pollfd) { self->child_signals, POLLIN, 0 };
                if (poll(fds, POLL_COUNT, timeout) < 0) {
                        if (errno == EINTR)
                                continue;
                        return;
                }
                if (fds[POLL_SESSION].revents)
                        return;
                if (fds[POLL_CHILDREN].revents)
                        reap_calls(self);
                if (fds[POLL_LISTEN].revents && accept_call(self, options, original_mask) < 0)
                        return;
                if (self->call_count == 0 && dsh_monotonic_ms() - self->idle_since_ms >= idle_ms)
                        return;
        }
}

int dsh_remote_service(const dsh_runtime_options *options, int session_fd)
{
        dsh_autofree char *directory = dsh_remote_service_directory_prepare();
        dsh_autofree char *path = NULL;
        service self = { -1, session_fd, -1, NULL, 0, 0, dsh_monotonic_ms(), false };
        sigset_t children, original_mask;

        /* No private directory that is safe: no service; the caller falls back to a session per call. */
        if (!directory || asprintf(&path, "%s/service-%ld", directory, (long) getpid()) < 0)
                return -ENOENT;
        sigemptyset(&children);
        sigaddset(&children, SIGCHLD);
        sigprocmask(SIG_BLOCK, &children, &original_mask);
        self.child_signals = signalfd(-1, &children, SFD_CLOEXEC | SFD_NONBLOCK);
        unlink(path);   /* a socket an earlier service of this pid left behind; the directory is ours alone */
        self.listen_fd = self.child_signals >= 0 ? listen_at(path) : -1;
        if (self.listen_fd < 0 || dprintf(session_fd, "ready %s\n", path) < 0) {
                if (self.listen_fd >= 0)
                        unlink(path);
                return -EIO;
        }
        serve_until_the_session_ends(&self, options, &original_mask);
        unlink(path);
        close(self.listen_fd);
        end_calls(&self);
        close(self.child_signals);
        free(self.calls);
        return 0;
}
