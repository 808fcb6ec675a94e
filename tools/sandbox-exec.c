/* SPDX-License-Identifier: MIT */
/*
 * dsh-sandbox-exec: the last step inside the bwrap sandbox, between bwrap and
 * the command.
 *
 *   dsh-sandbox-exec [--status-fd N] [--listener-fd N] [--temp-root] [--controlling-terminal]
 *                    [--network on|off|allow-list] [--deny-env PATTERN]... [--allow-env NAME]...
 *                    -- PROGRAM [ARG...]
 *
 * bwrap sets up the mounts; three things are left that bwrap cannot do and
 * that must happen inside the sandbox, right before the command runs:
 *
 *  1. The caller's stdio is re-homed into the sandbox's view.  An fd keeps
 *     the mount it was opened through: stdin opened read-only on the host is
 *     a file on the host's *writable* mount, and open("/proc/self/fd/0",
 *     O_WRONLY) would reopen it for writing past every read-only bind (with a
 *     directory as stdin, "/proc/self/fd/0/../x" walks the host's tree).  So
 *     every stdio fd that names a file system object the command could reopen
 *     with more rights — a directory, a regular file or device opened
 *     read-only (terminals aside), an O_PATH fd — is replaced by the same object opened again
 *     through the sandbox's own (read-only where the policy says so) mounts,
 *     checked to be the same inode.  A regular file the sandbox cannot see
 *     (the host's /tmp behind the private one) is fed through a pipe by a
 *     non-dumpable child instead; anything else that cannot be re-homed ends
 *     the run, the command never started.  Fds the caller opened for writing
 *     are kept: writing them is what the caller granted.
 *  2. Capabilities and the terminal: bwrap leaves CAP_SETPCAP (asked for with --cap-add) so
 *     that this program can lock the securebits and empty every set; after
 *     that no exec can regain a capability; and the one seccomp filter of
 *     the Landlock path goes on (core/metadata-filter.h): terminal injection
 *     (TIOCSTI, TIOCLINUX) refused, set-id creation refused, and every
 *     metadata call (chmod, chown, utimes, xattrs, inode flags) refused
 *     (EPERM) or, with --listener-fd, sent to the metadata supervisor in
 *     the process that spawned bwrap (install_metadata_filter() says how),
 *     which performs every connect as well.  Then a Landlock domain of the
 *     command's own, so that bwrap's unfiltered pid 1 is out of its ptrace
 *     reach (enter_own_domain()).
 *     bwrap binds the host's /dev/null, /dev/zero, /dev/urandom and
 *     /dev/tty into its /dev: without this, a chmod of them inside would
 *     change the host's inodes.
 *     With --controlling-terminal (stdin is a pty the caller made for the
 *     command and serves: an interactive `dsh-sandbox run`), this process
 *     leaves the sandbox's session for one of its own and takes that pty
 *     as its controlling terminal, so the command has job control on it —
 *     and nothing of the user's own terminal, session or process groups.
 *  3. exec, with its failure reported out of band: on --status-fd the parent
 *     learns "the command could not be executed, errno N" (126/127 as env
 *     reports them), which no output of the command could fake, and which
 *     bwrap alone reports only as its own failure.
 *
 *  4. With `--mask PATH` and `--mask-closed DIR` (repeatable; after
 *     --controlling-terminal, before --network), the domain of step 2 also
 *     handles reading and grants it beneath "/" but the masks
 *     (core/read-mask.h), enumerated here, inside the sandbox's mount
 *     namespace once bwrap made every mount: what a mount cannot hide — a
 *     mask absent at the start, a wildcard's directory, where a name made
 *     later must stay unreadable — is held by Landlock instead.  A mask
 *     asked for and not enumerable is a failure (the command never runs);
 *     a kernel without such a domain is the backend's to report (bwrap
 *     passes no mask there: dsh_landlock_own_domain_available()).
 *
 * libc only, linked statically: it runs once per confined command.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/env-scrub.h"
#include "core/metadata-filter.h"
#include "core/landlock.h"
#include "core/own-domain.h"
#include "core/process-hardening.h"
#include "core/sandbox-exec-status.h"

#define HELPER_FAILURE 125

struct exec_request {
        int status_fd;
        int listener_fd;                /* --listener-fd: the socket the metadata listener goes out on, or -1 */
        dsh_read_mask read_mask;        /* --mask, --mask-closed: NULL-terminated, pointing into argv (owned vectors) */
        bool temp_root;                 /* --temp-root: read-only; /tmp, the sandbox's own tmpfs, is the one root */
        bool controlling_terminal;      /* --controlling-terminal: stdin becomes the command's own */
        dsh_network_filter network;     /* --network: the filter's network policy (the supervisor is outside) */
        dsh_env_rules environment;      /* --deny-env, --allow-env: NULL-terminated, pointing into argv */
        char **command;
};

static int status_fd = -1;

/*
 * Reports a failure of this helper (before the command ran) and returns the
 * exit status.  With a status fd the parent gets the record and words it;
 * without one (an argv a harness spawns itself) the line on stderr is the
 * report, with the "dsh-sandbox-exec: " prefix the bwrap dialect lists as a
 * runner failure.
 */
__attribute__((format(printf, 2, 3))) static int fail(int errno_value, const char *format, ...)
{
        char message[512];
        va_list arguments;

        va_start(arguments, format);
        vsnprintf(message, sizeof(message), format, arguments);
        va_end(arguments);
        if (status_fd >= 0)
                dsh_sandbox_exec_status_write(status_fd, DSH_SANDBOX_EXEC_STATUS_HELPER, errno_value, message);
        else
                fprintf(stderr, "dsh-sandbox-exec: %s\n", message);
        return HELPER_FAILURE;
}

/* `--OPTION N` at argv[*i]: an fd number above 2 into *fd, and *i past it.  Returns 0 or the failure status. */
static int parse_fd_option(int argc, char **argv, int *i, const char *option, int *fd)
{
        char *end = NULL;
        long value;

        if (*i + 1 >= argc || strcmp(argv[*i], option) != 0)
                return 0;
        value = strtol(argv[*i + 1], &end, 10);
        if (!end || *end || value < 3 || value > INT_MAX)
                return fail(EINVAL, "usage error: %s takes an fd number above 2", option);
        *fd = (int) value;
        *i += 2;
        return 0;
}

/*
 * `--network MODE`: what the filter sends the supervisor (core/network-gate.h).
 * The supervisor, in the process that spawned bwrap, is told the same policy by
 * the library; without --listener-fd nobody supervises, and `off` then makes no
 * inet socket at all (allow-list there is off too: the filter fails closed).
 */
static int parse_network(const char *value, dsh_network_filter *network)
{
        if (strcmp(value, "on") == 0)
                *network = DSH_NETWORK_FILTER_ON;
        else if (strcmp(value, "off") == 0)
                *network = DSH_NETWORK_FILTER_OFF;
        else if (strcmp(value, "allow-list") == 0)
                *network = DSH_NETWORK_FILTER_ALLOW_LIST;
        else
                return fail(EINVAL, "usage error: --network: expected on, off or allow-list, not %s", value);
        return 0;
}

/*
 * `--mask PATH` and `--mask-closed DIR` (repeatable, in any order): what
 * the read layer leaves out (step 4).  A path not canonical in form would
 * match no name and hold nothing: refused.
 */
static int parse_masks(int argc, char **argv, int *i, struct exec_request *request)
{
        char **masked = calloc((size_t) argc + 1, sizeof(char *));
        char **closed = calloc((size_t) argc + 1, sizeof(char *));
        size_t masked_count = 0, closed_count = 0;

        request->read_mask = (dsh_read_mask) { masked, closed, 0 };
        if (!masked || !closed)
                return fail(ENOMEM, "%s", strerror(ENOMEM));
        while (*i + 1 < argc && (strcmp(argv[*i], "--mask") == 0 || strcmp(argv[*i], "--mask-closed") == 0)) {
                if (!dsh_read_mask_path_well_formed(argv[*i + 1]))
                        return fail(EINVAL, "usage error: %s: not a canonical absolute path: %s", argv[*i],
                                    argv[*i + 1]);
                if (argv[*i][6] == '\0')
                        masked[masked_count++] = argv[*i + 1];
                else
                        closed[closed_count++] = argv[*i + 1];
                *i += 2;
        }
        return 0;
}

/*
 * `--deny-env PATTERN` and `--allow-env NAME` (repeatable, in any order):
 * the rules the command's environment is scrubbed by before exec
 * (scrub_environment()).  Each list is NULL-terminated, with room for
 * every word of argv.
 */
static int parse_environment_rules(int argc, char **argv, int *i, struct exec_request *request)
{
        char **deny = calloc((size_t) argc + 1, sizeof(char *));
        char **allow = calloc((size_t) argc + 1, sizeof(char *));
        size_t denied = 0, allowed = 0;

        request->environment = (dsh_env_rules) { deny, allow };
        if (!deny || !allow)
                return fail(ENOMEM, "%s", strerror(ENOMEM));
        while (*i + 1 < argc && (strcmp(argv[*i], "--deny-env") == 0 || strcmp(argv[*i], "--allow-env") == 0)) {
                bool wildcards = argv[*i][2] == 'd';

                if (!dsh_env_pattern_well_formed(argv[*i + 1], wildcards))
                        return fail(EINVAL, "usage error: %s: not a variable %s: %s", argv[*i],
                                    wildcards ? "pattern" : "name", argv[*i + 1]);
                if (wildcards)
                        deny[denied++] = argv[*i + 1];
                else
                        allow[allowed++] = argv[*i + 1];
                *i += 2;
        }
        return 0;
}

/* The vectors parse_arguments() made (their strings are argv's); what a refused command line leaves. */
static void free_request(struct exec_request *request)
{
        free((void *) request->read_mask.masked);
        free((void *) request->read_mask.closed);
        free((void *) request->environment.deny);
        free((void *) request->environment.allow);
}

static bool read_mask_given(const struct exec_request *request)
{
        return (request->read_mask.masked && request->read_mask.masked[0]) ||
               (request->read_mask.closed && request->read_mask.closed[0]);
}

static int parse_arguments(int argc, char **argv, struct exec_request *request)
{
        int i = 1, result;

        request->status_fd = -1;
        request->listener_fd = -1;
        result = parse_fd_option(argc, argv, &i, "--status-fd", &request->status_fd);
        if (result == 0)
                result = parse_fd_option(argc, argv, &i, "--listener-fd", &request->listener_fd);
        if (result != 0)
                return result;
        if (i < argc && strcmp(argv[i], "--temp-root") == 0) {
                request->temp_root = true;
                i++;
        }
        if (i < argc && strcmp(argv[i], "--controlling-terminal") == 0) {
                request->controlling_terminal = true;
                i++;
        }
        result = parse_masks(argc, argv, &i, request);
        if (result != 0)
                return result;
        if (i + 1 < argc && strcmp(argv[i], "--network") == 0) {
                result = parse_network(argv[i + 1], &request->network);
                if (result != 0)
                        return result;
                i += 2;
        }
        result = parse_environment_rules(argc, argv, &i, request);
        if (result != 0)
                return result;
        if (i >= argc || strcmp(argv[i], "--") != 0 || i + 1 >= argc)
                return fail(EINVAL, "usage error: expected [--status-fd N] [--listener-fd N] [--temp-root] "
                                    "[--controlling-terminal] [--mask PATH]... [--mask-closed DIR]... "
                                    "[--network on|off|allow-list] [--deny-env PATTERN]... "
                                    "[--allow-env NAME]... -- PROGRAM [ARG...]");
        request->command = &argv[i + 1];
        return 0;
}

/* True for an fd the command could reopen, through /proc/self/fd, with more than it was given. */
static bool needs_rehoming(int fd, const struct stat *status)
{
        int flags = fcntl(fd, F_GETFL);

        if (flags < 0)
                return false;
        if (flags & O_PATH)
                return true;
        if (S_ISDIR(status->st_mode))
                return true;
        if (S_ISREG(status->st_mode) || S_ISBLK(status->st_mode))
                return (flags & O_ACCMODE) == O_RDONLY;
        /*
         * A device read-only (/dev/kmsg, say) could be reopened for writing;
         * a terminal gives nothing new that way (TIOCSTI is refused by the
         * terminal filter below).  Pipes and sockets cannot
         * be reopened with more than they give.
         */
        if (S_ISCHR(status->st_mode))
                return (flags & O_ACCMODE) == O_RDONLY && !isatty(fd);
        return false;
}

/* Opens the object behind `fd` again by its path, as this (sandboxed) process sees it; -1 if not the same. */
static int reopen_in_sandbox(int fd, const struct stat *original)
{
        char link[64], path[PATH_MAX];
        struct stat reopened;
        ssize_t length;
        int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
        int copy;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        length = readlink(link, path, sizeof(path) - 1);
        if (length <= 0 || path[0] != '/')
                return -1;
        path[length] = '\0';
        if (S_ISDIR(original->st_mode))
                flags |= O_DIRECTORY;
        copy = open(path, flags);
        if (copy < 0)
                return -1;
        if (fstat(copy, &reopened) < 0 || reopened.st_dev != original->st_dev || reopened.st_ino != original->st_ino) {
                close(copy);
                return -1;
        }
        /* Clear O_NONBLOCK again (it only kept a FIFO swapped in by name from blocking the open). */
        fcntl(copy, F_SETFL, 0);
        if (S_ISREG(original->st_mode)) {
                off_t offset = lseek(fd, 0, SEEK_CUR);

                if (offset > 0)
                        lseek(copy, offset, SEEK_SET);
        }
        return copy;
}

/*
 * A regular file the sandbox's mounts do not show: a non-dumpable child
 * copies it into a pipe and the command reads the pipe.  Non-dumpable, the
 * child's memory and fds are out of the command's reach (ptrace and
 * /proc/PID/fd need CAP_SYS_PTRACE against it, and the command has no
 * capability).  Returns the pipe's read end, or -1.
 */
static int feed_through_pipe(int fd)
{
        int ends[2];
        pid_t pid;

        if (pipe2(ends, O_CLOEXEC) < 0)
                return -1;
        pid = fork();
        if (pid < 0) {
                close(ends[0]);
                close(ends[1]);
                return -1;
        }
        if (pid == 0) {
                char buffer[65536];
                ssize_t length;

                prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
                /* It holds nothing the command may have either: no capability, like the command itself. */
                if (dsh_drop_capabilities() < 0)
                        _exit(1);
                signal(SIGPIPE, SIG_DFL);
                close(ends[0]);
                while ((length = read(fd, buffer, sizeof(buffer))) > 0 || (length < 0 && errno == EINTR)) {
                        for (ssize_t written = 0, step; length > 0 && written < length; written += step) {
                                step = write(ends[1], buffer + written, (size_t) (length - written));
                                if (step < 0 && errno == EINTR)
                                        step = 0;
                                else if (step < 0)
                                        _exit(0);
                        }
                }
                _exit(0);
        }
        close(ends[1]);
        return ends[0];
}

static int rehome_stdio(void)
{
        for (int fd = 0; fd <= 2; fd++) {
                struct stat status;
                int replacement;

                if (fstat(fd, &status) < 0 || !needs_rehoming(fd, &status))
                        continue;
                replacement = reopen_in_sandbox(fd, &status);
                if (replacement < 0 && S_ISREG(status.st_mode))
                        replacement = feed_through_pipe(fd);
                if (replacement < 0)
                        return fail(EPERM,
                                    "cannot hand fd %d to the command: the %s it names is not visible inside the "
                                    "sandbox, and the command could reopen it through /proc with more rights",
                                    fd, S_ISDIR(status.st_mode) ? "directory" : S_ISREG(status.st_mode) ? "file" : "device");
                if (dup2(replacement, fd) < 0) {
                        int saved_errno = errno;

                        close(replacement);
                        return fail(saved_errno, "cannot hand fd %d to the command: %s", fd, strerror(saved_errno));
                }
                close(replacement);
        }
        return 0;
}

/*
 * The metadata filter, with the terminal rule in the same program.
 *
 * Without --listener-fd (an argv a harness spawns itself, which nobody
 * outside supervises): every metadata call fails with EPERM and every
 * connect with EACCES, decided by the kernel alone; no listener is asked
 * for, so this holds in a process an ancestor's supervisor already watches
 * too.
 *
 * With --listener-fd N (spawned by the library, both modes): the
 * filter asks for a listener and sends it over N (SCM_RIGHTS; under
 * --network off or allow-list it is offered and taken by the supervisor,
 * core/metadata-filter.h, since a sendmsg would then be the listener's
 * own to answer) to the
 * supervisor thread in the process that spawned bwrap, which stays as
 * bwrap's parent (an ancestor of the command, as Yama's ptrace_scope 1
 * wants).  The command is exec'd only once the supervisor has answered with
 * one byte: it holds the listener and serves.  End of file instead (the
 * supervisor could not drop its capabilities, or is gone) is a refusal:
 * the command never runs with a filter nobody answers.  Where a listener
 * cannot be had (EBUSY: an ancestor is watched by a listener already, a
 * sandbox in a sandbox, WSL2) that is a refusal too, with its reason,
 * never a fallback to an unsupervised run.  N is closed before exec: the
 * command never holds the socket, nor its listener.  The copy of N that
 * bwrap's own processes still hold leads nowhere once the supervisor has
 * answered: it closes its end, and the listener was only ever here.
 */
/*
 * --temp-root (read-only): the sandbox's /tmp is a tmpfs bwrap made for this
 * call alone, which no host path names, so the supervisor cannot open it
 * itself; its fd goes before the listener, opened here before the command
 * exists (nothing of the command's can have been mounted or swapped there
 * yet).  It is the one root of a read-only call: `chmod +x /tmp/app` works,
 * every other metadata change is refused (core/metadata-supervisor.h,
 * dsh_metadata_supervisor_expect_root()).
 */
static int send_temp_root(int listener_socket)
{
        int fd = open("/tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int result;

        if (fd < 0)
                return -errno;
        result = dsh_send_fd(listener_socket, fd);
        close(fd);
        return result;
}

static int install_metadata_filter(int listener_socket, bool temp_root, dsh_network_filter network)
{
        char answer = 0;
        ssize_t length;
        int result = dsh_set_no_new_privs();

        /* The root goes before the filter exists: after it, a sendmsg would be the listener's to answer. */
        if (result == 0 && temp_root && listener_socket >= 0)
                result = send_temp_root(listener_socket);
        if (result == 0)
                result = dsh_install_metadata_filter(listener_socket < 0 ? DSH_METADATA_UNSUPERVISED
                                                                         : DSH_METADATA_SUPERVISE,
                                                     network, listener_socket, true);
        if (result == -EBUSY)
                return fail(EBUSY, "%s", DSH_METADATA_NESTED_LISTENER_REASON);
        if (result < 0)
                return fail(-result, "cannot install the metadata filter: %s", strerror(-result));
        if (listener_socket < 0)
                return 0;
        /* Under a network policy the install waited for the answer itself (the listener was offered). */
        length = 1;
        while (network == DSH_NETWORK_FILTER_ON && (length = recv(listener_socket, &answer, 1, 0)) < 0 && errno == EINTR)
                ;
        close(listener_socket);
        if (length != 1)
                return fail(length < 0 ? errno : EPIPE,
                            "the metadata supervisor did not take the listener (%s): refusing to run the command "
                            "with its metadata calls unanswered",
                            length < 0 ? strerror(errno) : "it closed the socket");
        return 0;
}

/*
 * bwrap's pid 1 inside the sandbox (its init, the command's parent) runs
 * without this filter and still holds the caller's stdio: a command that
 * could ptrace it (where Yama allows an attach to a parent) would make every
 * system call the filter refuses through it, and one that could open
 * /proc/1/fd/0 (ptrace read access, which Yama never restricts) would write
 * a stdin the caller opened read-only.  A Landlock domain of the command's
 * own (core/own-domain.h) ends both: ptrace and those /proc entries reach only
 * processes of the same domain.  A kernel without Landlock cannot give it:
 * the command runs, and the backend reports the call partial, saying why
 * (DSH_BWRAP_NO_DOMAIN_REASON).
 */
static int enter_own_domain(const struct exec_request *request)
{
        const char *failed_path = NULL;
        bool masked = read_mask_given(request);
        int result = dsh_landlock_enter_own_domain(masked ? &request->read_mask : NULL, &failed_path);

        /* A mask asked for is held or the command does not run: the backend passes none where no domain exists. */
        if (masked && result < 0)
                return fail(-result, "cannot hold the masks: %s%s%s", strerror(-result),
                            failed_path ? " at " : "", failed_path ? failed_path : "");
        if (result == -ENOSYS || result == -EOPNOTSUPP)
                return 0;
        if (result < 0)
                return fail(-result, "cannot enter a Landlock domain of the command's own: %s", strerror(-result));
        return 0;
}

/*
 * The command's environment without the variables the rules deny
 * (core/env-scrub.h): under confine, whatever the harness spawned bwrap
 * with; under spawn a second pass over what the library already scrubbed,
 * with the call's own variables (bwrap's --setenv) named by --allow-env.
 * This process's /proc/PID/environ is replaced by the exec; bwrap's pid 1
 * keeps the one it was exec'd with, out of the command's reach through the
 * domain of enter_own_domain() (provider/call-environment.h).
 */
static void scrub_environment(const dsh_env_rules *rules)
{
        dsh_env_scrub(environ, rules);
}

static int exec_confined(struct exec_request *request);

int main(int argc, char **argv)
{
        struct exec_request request = { .status_fd = -1 };
        int result = parse_arguments(argc, argv, &request);

        /* exec_confined() returns only when the command was not executed: the vectors are ours to free then. */
        if (result == 0)
                result = exec_confined(&request);
        free_request(&request);
        return result;
}

/* Everything between a parsed command line and the command's exec (which does not return). */
static int exec_confined(struct exec_request *request)
{
        int result;

        status_fd = request->status_fd;
        if (status_fd >= 0 && fcntl(status_fd, F_SETFD, FD_CLOEXEC) < 0)
                return fail(errno, "usage error: --status-fd %d is not open", status_fd);
        if (request->listener_fd >= 0 && fcntl(request->listener_fd, F_SETFD, FD_CLOEXEC) < 0)
                return fail(errno, "usage error: --listener-fd %d is not open", request->listener_fd);
        /*
         * Nothing but stdio and the status fd reaches the command (the
         * listener socket is closed before exec): an fd bwrap
         * was handed to bind from (--bind-fd) or any other it passed through
         * was opened on the host's mounts, where a read-only bind does not
         * hold — openat() relative to it would write past the policy.
         */
        result = dsh_close_inherited_fds(status_fd, request->listener_fd);
        if (result < 0)
                return fail(-result, "cannot close the inherited descriptors: %s", strerror(-result));
        result = rehome_stdio();
        if (result != 0)
                return result;
        result = dsh_drop_capabilities();
        if (result < 0)
                return fail(-result, "cannot drop the capabilities: %s", strerror(-result));
        /* A session of its own, whose controlling terminal is the pty on stdin (not a session bwrap's init leads). */
        if (request->controlling_terminal && (setsid() < 0 || ioctl(STDIN_FILENO, TIOCSCTTY, 0) < 0))
                return fail(errno, "cannot take the terminal on stdin as the command's own: %s", strerror(errno));
        /*
         * --new-session leaves the command no controlling terminal, but as a
         * session leader it could take one that is nobody's (a pty a harness
         * opened without making it its own) and push keystrokes into it for
         * whatever reads that terminal next: TIOCSTI, TIOCLINUX and TIOCSETD
         * fail here as under Landlock, on the pty an interactive `run` made
         * for the command too.
         */
        result = install_metadata_filter(request->listener_fd, request->temp_root, request->network);
        if (result != 0)
                return result;
        result = enter_own_domain(request);
        if (result != 0)
                return result;
        scrub_environment(&request->environment);
        execvp(request->command[0], request->command);
        result = errno;
        if (status_fd >= 0) {
                dsh_sandbox_exec_status_write(status_fd, DSH_SANDBOX_EXEC_STATUS_EXEC, result, request->command[0]);
                return result == ENOENT ? 127 : 126;
        }
        /* As a shell words it, without this helper's prefix: this is the command's failure, not the sandbox's. */
        fprintf(stderr, "%s: %s\n", request->command[0], strerror(result));
        return result == ENOENT ? 127 : 126;
}
