/* SPDX-License-Identifier: MIT */
/* The remote provider's transport: the ssh command line, the control directory, starting and reaping ssh. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "provider/process.h"
#include "remote/remote-registry.h"
#include "remote/remote-ssh.h"
#include "provider/spawn.h"
#include "base/xdg.h"

/* How long an idle shared connection stays up after the last call (ControlPersist). */
#define CONTROL_PERSIST "ControlPersist=600"
/* How long `ssh -G` may take to print the effective config. */
#define SSH_CONFIG_QUERY_MS 5000
/*
 * A unix socket path holds 107 bytes; ssh names the socket <directory>/%C
 * (40 hex digits) and first binds it under a temporary name 17 bytes longer.
 */
#define CONTROL_DIRECTORY_MAX 48

char *dsh_remote_default_control_directory(void)
{
        dsh_autofree char *base = dsh_xdg_directory(NULL, "XDG_RUNTIME_DIR", ".cache");
        char *directory = NULL;

        if (!base || asprintf(&directory, "%s/ssh", base) < 0)
                return NULL;
        return directory;
}

/*
 * $HOME/.cache/dsh-sandbox/ssh, whatever XDG_RUNTIME_DIR says now.  The
 * runtime protects this one too: a call made where XDG_RUNTIME_DIR is set
 * would otherwise leave it writable to a command confined to $HOME, which
 * could create it (its own uid, mode 0700: every check passes) and keep a
 * listener of its own there for the next `--remote` call made without
 * XDG_RUNTIME_DIR (sudo, cron, another terminal) — that call's "remote"
 * would be the command.
 */
char *dsh_remote_home_control_directory(void)
{
        const char *home = getenv("HOME");
        char *directory = NULL;

        if (!home || home[0] != '/' || asprintf(&directory, "%s/.cache/dsh-sandbox/ssh", home) < 0)
                return NULL;
        return directory;
}

/*
 * The user's ~/.ssh: where ssh reads its config (the passwd entry's home,
 * whatever $HOME says), or, with `from_environment`, $HOME's, which other
 * programs of the user take for it.  NULL when there is none that is
 * absolute.  Caller frees.
 */
char *dsh_remote_user_ssh_directory(bool from_environment)
{
        dsh_autofree char *listed = from_environment ? NULL : dsh_passwd_home();
        const char *home = from_environment ? getenv("HOME") : listed;
        char *directory = NULL;

        if (!home || home[0] != '/' || asprintf(&directory, "%s/.ssh", home) < 0)
                return NULL;
        return directory;
}

/* The directory above ours: a system one or the user's, which nobody else may rename things in. */
static bool is_safe_parent(int fd)
{
        struct stat status;

        return fstat(fd, &status) == 0 && S_ISDIR(status.st_mode) &&
               (status.st_uid == geteuid() || status.st_uid == 0) &&
               (!(status.st_mode & (S_IWGRP | S_IWOTH)) || (status.st_mode & S_ISVTX));
}

/* Ours alone: owned by this user and closed to everybody else. */
static bool is_private(int fd, mode_t closed_bits)
{
        struct stat status;

        return fstat(fd, &status) == 0 && S_ISDIR(status.st_mode) && status.st_uid == geteuid() &&
               !(status.st_mode & closed_bits);
}

/* `name` beneath `parent_fd`, created 0700 when missing, opened without following a symlink. */
static int open_own_directory(int parent_fd, const char *name)
{
        if (mkdirat(parent_fd, name, 0700) < 0 && errno != EEXIST)
                return -1;
        return openat(parent_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * Why the directory is checked: whoever can put a socket at the control
 * path gets our next call — their "remote" would answer with facts and
 * exit statuses of its choosing.  So every directory from the XDG base
 * down must be one nobody else can write or rename in: the base's parent
 * ($XDG_RUNTIME_DIR, ~/.cache) the user's or root's and not writable by
 * others (or sticky), dsh-sandbox/ the user's and not writable by others,
 * ssh/ the user's with mode 0700.  A directory another user created first
 * fails the check, and the call runs without a shared connection rather
 * than trust it.  Never a name in /tmp, which anyone can take first.  A
 * confined command of this user is kept out by the runtime, which protects
 * this directory like the sandbox's other state (runtime.c).
 */
static char *prepare_control_directory(size_t longest, bool make_parent)
{
        dsh_autofree char *directory = dsh_remote_default_control_directory();
        dsh_autofree char *base = NULL, *parent = NULL;
        dsh_autoclose int parent_fd = -1, base_fd = -1, own_fd = -1;
        const char *above;

        /*
         * ssh expands %-tokens and ${VARIABLE} in ControlPath: a directory
         * holding either would be checked here under one name and used by
         * ssh under another, unchecked.  Quotes and spaces split its config
         * words.
         */
        if (!directory || strlen(directory) > longest || strpbrk(directory, " \t\n\"'%\\$"))
                return NULL;
        base = strdup(directory);
        parent = base ? strdup(dirname(base)) : NULL;   /* .../dsh-sandbox, then its parent */
        if (!parent)
                return NULL;
        above = dirname(parent);
        /* A fresh home has no ~/.cache yet: the service makes it (0700), as any XDG program would. */
        if (make_parent)
                mkdir(above, 0700);
        /* Followed if a symlink (a ~/.cache kept elsewhere): the directory it leads to is the one checked. */
        parent_fd = open(above, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (parent_fd < 0 || !is_safe_parent(parent_fd))
                return NULL;
        base_fd = open_own_directory(parent_fd, "dsh-sandbox");
        if (base_fd < 0 || !is_private(base_fd, S_IWGRP | S_IWOTH))
                return NULL;
        own_fd = open_own_directory(base_fd, "ssh");
        if (own_fd < 0 || !is_private(own_fd, S_IRWXG | S_IRWXO))
                return NULL;
        /* Recorded before anything is made in it, so that every runtime protects it (remote-registry.c). */
        if (dsh_remote_registry_add(directory) < 0)
                return NULL;
        return dsh_steal_pointer(&directory);
}

char *dsh_remote_control_directory_prepare(void)
{
        return prepare_control_directory(CONTROL_DIRECTORY_MAX, false);
}

/* The remote service's socket is <directory>/service-<pid>: 19 bytes at most after the directory. */
char *dsh_remote_service_directory_prepare(void)
{
        return prepare_control_directory(107 - 19, true);
}

/* The ssh command prefix the target names, or {"ssh"}. */
static const char *const *ssh_prefix(const dsh_remote_target *target)
{
        static const char *const default_command[] = { "ssh", NULL };

        if (target->ssh_command && target->ssh_command[0])
                return (const char *const *) target->ssh_command;
        return default_command;
}

/* Appends every word of `words`; 0 or -ENOMEM. */
static int append_words(char ***argv, const char *const *words)
{
        for (size_t i = 0; words[i]; i++)
                if (dsh_strv_append(argv, words[i]) < 0)
                        return -ENOMEM;
        return 0;
}

/* What `ssh -G` prints for `command` (an ssh argv prefix) and the destination, or NULL.  Caller frees. */
static char *effective_config(char *const *command, const char *destination)
{
        char *text = NULL;
        char **query = NULL;
        const char *const tail[] = { "-G", "--", destination, NULL };
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_spawn_failure failure = { DSH_SPAWN_STAGE_NONE, 0 };
        int fds[2] = { -1, -1 }, null_fd, wait_status = 0;
        pid_t pid = -1;

        if (append_words(&query, (const char *const *) command) == 0 && append_words(&query, tail) == 0 &&
            dsh_pipe_above_stdio(fds) == 0) {
                dsh_exec_plan plan = DSH_EXEC_PLAN_INIT(query);

                null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
                options.stdin_fd = null_fd;
                options.stdout_fd = fds[1];
                options.stderr_fd = null_fd;
                pid = dsh_spawn_exec_plan(&plan, &options, &failure);
                close(fds[1]);
                if (null_fd >= 0)
                        close(null_fd);
        }
        if (pid > 0 && (dsh_collect_bounded(pid, false, fds[0], dsh_monotonic_ms() + SSH_CONFIG_QUERY_MS, &text,
                                            &wait_status) < 0 ||
                        !WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0)) {
                free(text);
                text = NULL;
        } else if (fds[0] >= 0 && pid <= 0)
                close(fds[0]);
        dsh_strv_free(query);
        return text;
}

/*
 * True when the user's own ssh config (as `ssh -G` prints it for this
 * destination) sets up multiplexing: then theirs is used, untouched.
 */
bool dsh_remote_user_multiplexes(const dsh_remote_target *target)
{
        dsh_autofree char *text = effective_config((char *const *) ssh_prefix(target), target->destination);

        return text && (!strstr(text, "\ncontrolmaster false\n") || strstr(text, "\ncontrolpath "));
}

bool dsh_remote_shared_connection_applies(const dsh_remote_target *target, const char *directory)
{
        dsh_autofree char *text = NULL;
        dsh_autofree char *ours = NULL;
        char **command = NULL;

        if (dsh_remote_ssh_shared_argv(target, directory, &command) == 0 &&
            asprintf(&ours, "\ncontrolpath %s/", directory) >= 0)
                text = effective_config(command, target->destination);
        dsh_strv_free(command);
        return text && ours && strstr(text, ours) && strstr(text, "\ncontrolmaster auto\n");
}

/* The remote shell runs the command line ssh sends: the program is one word there, whatever it holds. */
char *dsh_remote_shell_quoted(const char *word)
{
        size_t length = 2;
        char *quoted, *out;

        for (const char *c = word; *c; c++)
                length += *c == '\'' ? 4 : 1;
        quoted = malloc(length + 1);
        if (!quoted)
                return NULL;
        out = quoted;
        *out++ = '\'';
        for (const char *c = word; *c; c++) {
                if (*c == '\'') {
                        memcpy(out, "'\\''", 4);
                        out += 4;
                } else {
                        *out++ = *c;
                }
        }
        *out++ = '\'';
        *out = '\0';
        return quoted;
}

/* Our shared connection through `directory` (checked): ControlMaster=auto, ControlPersist, ControlPath. */
static int shared_connection_options(char ***argv, const char *directory)
{
        dsh_autofree char *path_option = NULL;

        if (asprintf(&path_option, "ControlPath=%s/%%C", directory) < 0)
                return -ENOMEM;
        return append_words(argv, (const char *const[]) { "-o", "ControlMaster=auto", "-o", CONTROL_PERSIST, "-o",
                                                    path_option, NULL });
}

int dsh_remote_ssh_shared_argv(const dsh_remote_target *target, const char *directory, char ***argv_out)
{
        char **argv = NULL;
        int result = append_words(&argv, ssh_prefix(target));

        if (result == 0)
                result = append_words(&argv, (const char *const[]) { "-T", "-o", "BatchMode=yes", NULL });
        if (result == 0)
                result = shared_connection_options(&argv, directory);
        if (result < 0) {
                dsh_strv_free(argv);
                return result;
        }
        *argv_out = argv;
        return 0;
}

static int multiplexing_options(char ***argv)
{
        dsh_autofree char *directory = dsh_remote_control_directory_prepare();

        if (!directory)
                return append_words(argv, (const char *const[]) { "-o", "ControlMaster=no", "-o", "ControlPath=none", NULL });
        return shared_connection_options(argv, directory);
}

const char *dsh_remote_program(const dsh_remote_target *target)
{
        return target->remote_program ? target->remote_program : "dsh-sandbox";
}

int dsh_remote_ssh_argv(const dsh_remote_target *target, char ***argv_out, dsh_error *error)
{
        const char *program = dsh_remote_program(target);
        dsh_autofree char *quoted_program = NULL;
        char **argv = NULL;
        int result;

        if (!target->destination || !target->destination[0])
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "remote: the destination is empty");
        if (!program[0])
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "remote: remoteProgram is empty");
        quoted_program = dsh_remote_shell_quoted(program);
        /*
         * -T: no terminal, so every byte on the channel is the helper's frame.
         * BatchMode: a password or host-key question fails at once instead of
         * waiting on a harness that cannot answer.  `--` before the
         * destination: a destination starting with "-" stays a destination
         * (never an option such as -oProxyCommand=...).
         */
        result = quoted_program ? append_words(&argv, ssh_prefix(target)) : -ENOMEM;
        if (result == 0)
                result = append_words(&argv, (const char *const[]) { "-T", "-o", "BatchMode=yes", NULL });
        if (result == 0 && !dsh_remote_user_multiplexes(target))
                result = multiplexing_options(&argv);
        if (result == 0)
                result = append_words(&argv, (const char *const[]) { "--", target->destination, quoted_program,
                                                               "remote-helper", NULL });
        if (result < 0) {
                dsh_strv_free(argv);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        *argv_out = argv;
        return 0;
}

static void close_if_open(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

int dsh_remote_ssh_start(const dsh_remote_target *target, dsh_remote_connection *connection, dsh_error *error)
{
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_spawn_failure failure = { DSH_SPAWN_STAGE_NONE, 0 };
        int to_remote[2] = { -1, -1 }, from_remote[2] = { -1, -1 }, diagnostics[2] = { -1, -1 };
        char **argv = NULL;
        int result = dsh_remote_ssh_argv(target, &argv, error);
        pid_t pid = -1;

        if (result < 0)
                return result;
        if (dsh_pipe_above_stdio(to_remote) == 0 && dsh_pipe_above_stdio(from_remote) == 0 &&
            dsh_pipe_above_stdio(diagnostics) == 0) {
                dsh_exec_plan plan = DSH_EXEC_PLAN_INIT(argv);

                options.stdin_fd = to_remote[0];
                options.stdout_fd = from_remote[1];
                options.stderr_fd = diagnostics[1];
                /* The terminal's Ctrl-C is the front end's to pass on as a frame; it must not kill the transport. */
                options.new_process_group = true;
                options.die_with_parent = true;
                pid = dsh_spawn_exec_plan(&plan, &options, &failure);
        }
        close_if_open(&to_remote[0]);
        close_if_open(&from_remote[1]);
        close_if_open(&diagnostics[1]);
        if (pid < 0) {
                close_if_open(&to_remote[1]);
                close_if_open(&from_remote[0]);
                close_if_open(&diagnostics[0]);
                result = dsh_error_set(error, DSH_ERROR_SANDBOX_UNAVAILABLE,
                                       failure.errno_value ? failure.errno_value : -(int) pid,
                                       "remote \"%s\": cannot start %s: %s", target->destination, argv[0],
                                       strerror(failure.errno_value ? failure.errno_value : -(int) pid));
                dsh_strv_free(argv);
                return result;
        }
        dsh_strv_free(argv);
        fcntl(to_remote[1], F_SETFL, O_NONBLOCK);
        fcntl(diagnostics[0], F_SETFL, O_NONBLOCK);
        *connection = (dsh_remote_connection) { pid, to_remote[1], from_remote[0], diagnostics[0] };
        return 0;
}

void dsh_remote_ssh_finish(dsh_remote_connection *connection, int *wait_status)
{
        close_if_open(&connection->to_remote);
        close_if_open(&connection->from_remote);
        *wait_status = 0;
        while (connection->pid > 0 && waitpid(connection->pid, wait_status, 0) < 0 && errno == EINTR)
                ;
        connection->pid = -1;
}

bool dsh_remote_peer_is_this_user(int fd)
{
        struct ucred peer;
        socklen_t length = sizeof(peer);

        return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) == 0 && peer.uid == geteuid();
}
