/* SPDX-License-Identifier: MIT */
/*
 * A /dev/shm of the command's own, for the Landlock backend under
 * workspace-write: POSIX shared memory and semaphores (sem_open(),
 * shm_open(), Python's multiprocessing) live as files in /dev/shm, and the
 * host's holds every other process's, so it is never granted.  Instead the
 * spawning process makes a fresh tmpfs, detached (reachable by no path), the
 * ruleset grants it, and the child moves it onto /dev/shm in a mount
 * namespace of its own before it drops its capabilities.  Where the caller
 * cannot (no CAP_SYS_ADMIN over its mount namespace, a kernel without the
 * mount API) nothing changes: the host's /dev/shm stays read-only.
 * libc only; dsh_private_shm_enter() makes raw system calls alone.
 */
#ifndef DSH_SANDBOX_PRIVATE_SHM_H
#define DSH_SANDBOX_PRIVATE_SHM_H

#define DSH_PRIVATE_SHM_PATH "/dev/shm"

/*
 * A new tmpfs (mode 1777, nosuid, nodev), detached: an O_CLOEXEC mount fd
 * the caller owns, or a negative errno (-EPERM: the caller may not mount;
 * -ENOTDIR: the host's /dev/shm is no directory to mount on, say a symlink).
 */
int dsh_private_shm_create(void);

/*
 * In the calling process (a child between fork and exec, still holding
 * CAP_SYS_ADMIN): a mount namespace of its own whose every mount is a slave
 * of the host's, so nothing mounted in it reaches the host; then the tmpfs
 * `mount_fd` moved onto /dev/shm.  Returns 0 or a negative errno.
 */
int dsh_private_shm_enter(int mount_fd);

#endif
