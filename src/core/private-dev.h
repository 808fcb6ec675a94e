/* SPDX-License-Identifier: MIT */
/*
 * A /dev/shm and a /dev/pts of the command's own, for the Landlock backend
 * under workspace-write.  The host's hold everyone's: /dev/shm every other
 * process's POSIX shared memory and semaphores (sem_open(), shm_open(),
 * Python's multiprocessing), /dev/pts every terminal, the user's own
 * included; neither is ever granted.  Instead the spawning process makes a
 * fresh tmpfs and a fresh devpts instance, detached (reachable by no path),
 * the ruleset grants both, and the child moves them onto /dev/shm and
 * /dev/pts in a mount namespace of its own before it drops its
 * capabilities.  The command's ptys are then in its own devpts (/dev/ptmx
 * opens the devpts found at /dev/pts beside it), by name too, as expect
 * opens them; the host's terminals and shared memory are out of sight.
 * Where the caller cannot (no CAP_SYS_ADMIN over its mount namespace, a
 * kernel without the mount API) nothing changes: the host's /dev/shm and
 * /dev/pts stay read-only, and the metadata supervisor hands the command the
 * slaves of the ptys it makes (metadata-supervisor.c, "pty peers").
 * libc only; dsh_private_devices_enter() makes raw system calls alone.
 */
#ifndef DSH_SANDBOX_PRIVATE_DEV_H
#define DSH_SANDBOX_PRIVATE_DEV_H

#define DSH_PRIVATE_SHM_PATH "/dev/shm"
#define DSH_PRIVATE_PTS_PATH "/dev/pts"

typedef struct dsh_private_devices {
        int shm;        /* a detached tmpfs mount (O_CLOEXEC), or -1 */
        int pts;        /* a detached devpts instance, or -1 */
        dev_t host_shm_device;  /* what the two cover: the host's /dev/shm and /dev/pts file systems */
        dev_t host_pts_device;
} dsh_private_devices;

#define DSH_PRIVATE_DEVICES_INIT { -1, -1, 0, 0 }

/*
 * Both mounts, or neither: a tmpfs (mode 1777, nosuid, nodev) and a devpts
 * instance (ptmxmode 0666, mode 0620, nosuid, noexec), each an O_CLOEXEC
 * mount fd the caller owns.  Returns 0, or a negative errno with both -1
 * (-EPERM: the caller may not mount; -ENOTDIR: the host's /dev/shm or
 * /dev/pts is no directory to mount on, say a symlink).
 */
int dsh_private_devices_create(dsh_private_devices *devices);

/* Closes what `devices` holds (the mounts live on where they were moved). */
void dsh_private_devices_close(dsh_private_devices *devices);

/*
 * In the calling process (a child between fork and exec, still holding
 * CAP_SYS_ADMIN): a mount namespace of its own whose every mount is a slave
 * of the host's, so nothing mounted in it reaches the host; then both mounts
 * moved onto /dev/shm and /dev/pts.  Returns 0; 1 when no namespace could
 * be made (unshare(2) refused: a service's RestrictNamespaces, the
 * user.max_mnt_namespaces limit, which a process left behind by an earlier
 * call could exhaust), where nothing changed and the command runs with the
 * host's /dev/shm and /dev/pts, read-only — the detached mounts its ruleset
 * grants are reachable by no path, and their fds are closed before exec; or
 * a negative errno once the namespace exists (a half-made /dev: refuse).
 */
int dsh_private_devices_enter(const dsh_private_devices *devices);

#endif
