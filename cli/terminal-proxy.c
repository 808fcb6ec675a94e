/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"
#include "terminal-proxy.h"

/* Bytes typed but not yet taken by the pty (it holds a few KiB): kept, never dropped, never blocked on. */
#define PENDING_CAPACITY 4096

static volatile sig_atomic_t window_changed;

/* The modes a stop puts back and a continue sets again (cli_terminal_proxy_suspend/resume), while raw. */
static struct termios user_modes, raw_modes;
static volatile sig_atomic_t modes_set;

static void note_window_change(int signal_number)
{
        (void) signal_number;
        window_changed = 1;
}

/* A person at a shell: stdin is our controlling terminal, and we are in its foreground. */
static bool typed_at_a_terminal(void)
{
        pid_t foreground = isatty(STDIN_FILENO) ? tcgetpgrp(STDIN_FILENO) : -1;

        return foreground > 0 && foreground == getpgrp();
}

static int enter_raw_mode(cli_terminal_proxy *proxy)
{
        struct termios raw = proxy->saved;

        cfmakeraw(&raw);
        user_modes = proxy->saved;
        raw_modes = raw;
        if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) < 0)
                return -errno;
        proxy->raw = true;
        modes_set = 1;
        return 0;
}

int cli_terminal_proxy_open(cli_terminal_proxy *proxy)
{
        struct winsize size;
        bool sized;
        int result;

        *proxy = (cli_terminal_proxy) CLI_TERMINAL_PROXY_INIT;
        if (!typed_at_a_terminal() || tcgetattr(STDIN_FILENO, &proxy->saved) < 0)
                return 0;
        sized = ioctl(STDIN_FILENO, TIOCGWINSZ, &size) == 0;
        if (openpty(&proxy->master, &proxy->slave, NULL, &proxy->saved, sized ? &size : NULL) < 0) {
                int saved_errno = errno;

                *proxy = (cli_terminal_proxy) CLI_TERMINAL_PROXY_INIT;
                return -saved_errno;
        }
        if (fcntl(proxy->master, F_SETFD, FD_CLOEXEC) < 0 || fcntl(proxy->slave, F_SETFD, FD_CLOEXEC) < 0 ||
            fcntl(proxy->master, F_SETFL, O_NONBLOCK) < 0) {
                int saved_errno = errno;

                cli_terminal_proxy_close(proxy);
                return -saved_errno;
        }
        /* The terminal itself (stdin's fd is read-write as a shell opens it) when the output is redirected. */
        proxy->terminal_out = isatty(STDOUT_FILENO) ? STDOUT_FILENO : isatty(STDERR_FILENO) ? STDERR_FILENO
                                                                                          : STDIN_FILENO;
        /*
         * Raw before the command exists: from here the terminal's keys are bytes for the pty, never a
         * SIGINT for this process that a command in a session of its own could not be handed.
         */
        result = enter_raw_mode(proxy);
        if (result < 0) {
                cli_terminal_proxy_close(proxy);
                return result;
        }
        return 1;
}

void cli_terminal_proxy_attach(const cli_terminal_proxy *proxy, dsh_spawn_options *options)
{
        if (proxy->slave < 0)
                return;
        options->stdin_fd = proxy->slave;
        if (isatty(STDOUT_FILENO))
                options->stdout_fd = proxy->slave;
        if (isatty(STDERR_FILENO))
                options->stderr_fd = proxy->slave;
        options->controlling_terminal = true;
}

/* What the command wrote to its terminal, to the user's; false once the pty has no writer left (EIO). */
static bool copy_output(const cli_terminal_proxy *proxy)
{
        char buffer[16384];

        for (;;) {
                ssize_t got = read(proxy->master, buffer, sizeof(buffer));

                if (got > 0) {
                        (void) cli_write_all(proxy->terminal_out, buffer, (size_t) got);
                        continue;
                }
                if (got < 0 && errno == EINTR)
                        continue;
                return got < 0 && errno == EAGAIN;
        }
}

static void pass_window_size(const cli_terminal_proxy *proxy)
{
        struct winsize size;

        window_changed = 0;
        if (ioctl(STDIN_FILENO, TIOCGWINSZ, &size) == 0)
                ioctl(proxy->master, TIOCSWINSZ, &size);
}

void cli_terminal_proxy_suspend(void)
{
        if (modes_set)
                tcsetattr(STDIN_FILENO, TCSADRAIN, &user_modes);
}

void cli_terminal_proxy_resume(void)
{
        if (modes_set)
                tcsetattr(STDIN_FILENO, TCSADRAIN, &raw_modes);
}

int cli_terminal_proxy_serve(cli_terminal_proxy *proxy, pid_t runner)
{
        struct sigaction action = { 0 }, previous;
        char pending[PENDING_CAPACITY];
        size_t pending_length = 0;
        bool input_open = true, output_open = true;
        int runner_fd, result;

        if (proxy->master < 0)
                return -EBADF;
        /* Only the command holds the slave now: its last close is the master's EIO. */
        close(proxy->slave);
        proxy->slave = -1;
        runner_fd = (int) syscall(SYS_pidfd_open, runner, 0);
        if (runner_fd < 0)
                return -errno;
        action.sa_handler = note_window_change;
        sigemptyset(&action.sa_mask);
        sigaction(SIGWINCH, &action, &previous);
        result = 0;
        while (result == 0 && output_open) {
                struct pollfd fds[3] = {
                        { input_open && pending_length < sizeof(pending) ? STDIN_FILENO : -1, POLLIN, 0 },
                        { proxy->master, (short) (POLLIN | (pending_length ? POLLOUT : 0)), 0 },
                        { runner_fd, POLLIN, 0 },
                };

                if (window_changed)
                        pass_window_size(proxy);
                if (poll(fds, 3, -1) < 0) {
                        if (errno != EINTR)
                                result = -errno;
                        continue;
                }
                if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
                        ssize_t got = read(STDIN_FILENO, pending + pending_length, sizeof(pending) - pending_length);

                        if (got > 0)
                                pending_length += (size_t) got;
                        else if (got == 0 || errno != EINTR)
                                input_open = false;
                }
                if (pending_length && (fds[1].revents & POLLOUT)) {
                        ssize_t written = write(proxy->master, pending, pending_length);

                        if (written > 0) {
                                memmove(pending, pending + written, pending_length - (size_t) written);
                                pending_length -= (size_t) written;
                        }
                }
                if (fds[1].revents & (POLLIN | POLLHUP | POLLERR))
                        output_open = copy_output(proxy);
                /* The runner is gone: what the command wrote last is still in the pty, then nothing more comes. */
                if (fds[2].revents & POLLIN) {
                        copy_output(proxy);
                        output_open = false;
                }
        }
        close(runner_fd);
        sigaction(SIGWINCH, &previous, NULL);
        cli_terminal_proxy_close(proxy);
        return result;
}

void cli_terminal_proxy_close(cli_terminal_proxy *proxy)
{
        modes_set = 0;
        if (proxy->raw)
                tcsetattr(STDIN_FILENO, TCSADRAIN, &proxy->saved);
        if (proxy->master >= 0)
                close(proxy->master);
        if (proxy->slave >= 0)
                close(proxy->slave);
        *proxy = (cli_terminal_proxy) CLI_TERMINAL_PROXY_INIT;
}
