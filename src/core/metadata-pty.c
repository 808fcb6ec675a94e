/* SPDX-License-Identifier: MIT */
/*
 * The metadata supervisor's pty peers: TIOCGPTPEER answered with the slave
 * it opens (metadata-pty.h; the security argument is below, above the code
 * it protects).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/metadata-filter.h"
#include "core/metadata-pty.h"

/* /dev/ptmx (and devpts' own ptmx): TTYAUX_MAJOR, minor 2.  Every open of it is a new pty's master. */
#define PTMX_MAJOR 5
#define PTMX_MINOR 2
/* A Unix98 pty's slave (UNIX98_PTY_SLAVE_MAJOR, 8 majors): TIOCGPTPEER on one is the kernel's EIO. */
#define PTY_SLAVE_FIRST_MAJOR 136
#define PTY_SLAVE_LAST_MAJOR 143

/*
 * A pty's slave, for the command that holds its master.  Landlock grants
 * /dev/ptmx under workspace-write, so the command can make a pty, but not
 * /dev/pts: granting it would hand the command every terminal of the host,
 * the user's own included.  The slave of a new pty lies there too, and
 * TIOCGPTPEER opens it like a path open (Landlock refuses it: EACCES), so
 * the filter sends TIOCGPTPEER here and the supervisor opens the slave and
 * hands it to the command (SECCOMP_IOCTL_NOTIF_ADDFD).  Why that gives the
 * command nothing it did not have:
 *  - the master is the command's own open file (pidfd_getfd), never a
 *    reopening through /proc/<tid>/fd: reopening /dev/ptmx makes a new pty,
 *    and a reopened name could be anything;
 *  - it must be a pty master (the ptmx device, 5:2; anything else gets
 *    the kernel's answer, EIO or ENOTTY, and is never asked), and whoever
 *    holds a master already controls that terminal: it types its input and
 *    reads its output.  The command's masters are the ptys it made: the
 *    fds it inherits are 0, 1 and 2 only, and a caller that hands it a
 *    master there hands it that terminal;
 *  - the slave is opened O_NOCTTY and O_CLOEXEC here, so it becomes no
 *    controlling terminal of this process nor leaks into its other children,
 *    and it is closed once sent;
 *  - no other terminal is reached: the command still opens no /dev/pts/N by
 *    name for writing, and the terminal rule refuses TIOCSTI and TIOCLINUX
 *    on every descriptor, this slave included.
 * The command's slave is not its controlling terminal (O_NOCTTY whatever it
 * asked): glibc's openpty() asks so anyway, and login_tty() sets it with
 * TIOCSCTTY.  Returns the slave (ours) or a negative errno to answer.
 */
static int open_pty_peer(dsh_metadata_call *c, const dsh_metadata_request *op)
{
        const int peer_flags = (op->pty_peer_flags & (O_ACCMODE | O_NONBLOCK)) | O_NOCTTY | O_CLOEXEC;
        struct stat status;
        int master = dsh_metadata_acquire_descriptor(c, op->dirfd, false), peer;

        if (master < 0)
                return master;
        if (c->reopened) {
                close(master);
                return -EACCES;
        }
        if (fstat(master, &status) < 0 || !S_ISCHR(status.st_mode) || major(status.st_rdev) != PTMX_MAJOR ||
            minor(status.st_rdev) != PTMX_MINOR) {
                bool slave = S_ISCHR(status.st_mode) && major(status.st_rdev) >= PTY_SLAVE_FIRST_MAJOR &&
                             major(status.st_rdev) <= PTY_SLAVE_LAST_MAJOR;

                close(master);
                return slave ? -EIO : -ENOTTY;  /* the kernel's answers; nothing is asked of the device */
        }
        peer = ioctl(master, DSH_TIOCGPTPEER, peer_flags);
        peer = peer < 0 ? -errno : peer;
        close(master);
        return peer;
}

void dsh_metadata_pty_peer_handle(dsh_metadata_call *c, const dsh_metadata_request *op)
{
        int peer = open_pty_peer(c, op), result = peer < 0 ? peer : 0;

        if (result == 0 && dsh_metadata_monotonic_ms() > c->deadline_ms)
                result = -EACCES;
        if (result == 0) {
                result = dsh_metadata_call_answer_with_fd(c, peer, (op->pty_peer_flags & O_CLOEXEC) != 0);
        }
        if (peer >= 0)
                close(peer);
        /* Any other failure is answered: a call left unanswered would hold the command's thread for good. */
        if (result < 0)
                dsh_metadata_call_answer(c, result);
}
