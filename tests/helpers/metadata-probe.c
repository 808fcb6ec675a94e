/* SPDX-License-Identifier: MIT */
/*
 * metadata-probe MODE ARG...: the metadata supervisor's hostile command.  It
 * runs confined and prints what each attempt returned, one "name=ERRNO"
 * line per attempt ("0" when it succeeded); the tests judge on disk.
 *
 *   flip N PATH_A PATH_B       one thread flips a path buffer between PATH_A and PATH_B (same
 *                              length) while this one chmods it N times
 *   swap N DIR LINK FILE       one thread exchanges DIR and LINK (a directory and a symlink) while
 *                              this one chmods DIR/FILE N times
 *   thread-cwd MAIN THREAD NAME MODE
 *                              cwd MAIN; a thread unshares its fs, moves to THREAD and chmods NAME
 *   thread-fd MAIN THREAD MODE fd 10 is MAIN (read-only); a thread unshares its fd table, makes
 *                              its fd 10 THREAD and fchmods it
 *   nested-listener            tries to install a seccomp filter with a listener of its own
 *   chmod-twice PATH           chmod 0600, then (after a line on stdin) chmod 0640
 *   non-dumpable PATH          makes itself non-dumpable, then chmods PATH 0600
 *   variants INSIDE OUTSIDE    every metadata system call form, on INSIDE/NAME and OUTSIDE/NAME
 *                              (NAME the variant's name; see `variants` below)
 *
 * Exit status: 0 once the attempts were made, 2 for bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_setxattrat
#define SYS_setxattrat 463
#endif
#ifndef SYS_removexattrat
#define SYS_removexattrat 466
#endif
#ifndef SYS_file_getattr
#define SYS_file_getattr 468
#endif
#ifndef SYS_file_setattr
#define SYS_file_setattr 469
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef FS_XFLAG_NODUMP
#define FS_XFLAG_NODUMP 0x00000080
#endif

/* The group the tests' command belongs to (the test joins it before starting the run). */
#define PROBE_GROUP 4242

static void report(const char *name, long result)
{
        printf("%s=%s\n", name, result < 0 ? strerrorname_np(errno) : "0");
        fflush(stdout);
}

/* ------------------------------------------------------------------ races -- */

static char race_path[4096];
static atomic_bool race_over;

static void *flip_path(void *data)
{
        const char **paths = data;
        size_t at = 0;
        volatile char *byte;

        /* The first byte where the two paths differ: flipping it flips the whole path. */
        while (paths[0][at] == paths[1][at])
                at++;
        byte = (volatile char *) &race_path[at];
        while (!atomic_load_explicit(&race_over, memory_order_relaxed)) {
                *byte = paths[0][at];
                *byte = paths[1][at];
        }
        return NULL;
}

static void *swap_entries(void *data)
{
        char **names = data;

        while (!atomic_load_explicit(&race_over, memory_order_relaxed))
                syscall(SYS_renameat2, AT_FDCWD, names[0], AT_FDCWD, names[1], RENAME_EXCHANGE);
        return NULL;
}

/* chmods `path` `count` times while `racer` runs, alternating two modes; prints the tally. */
static int chmod_during(long count, const char *path, void *(*racer)(void *), void *racer_data)
{
        long allowed = 0, refused = 0, other = 0;
        int last_other = 0;
        pthread_t thread;

        if (pthread_create(&thread, NULL, racer, racer_data) != 0)
                return 2;
        for (long i = 0; i < count; i++) {
                if (chmod(path, (i & 1) ? 0600 : 0640) == 0)
                        allowed++;
                else if (errno == EACCES)
                        refused++;
                else {
                        other++;
                        last_other = errno;
                }
        }
        atomic_store(&race_over, true);
        pthread_join(thread, NULL);
        printf("calls=%ld allowed=%ld refused=%ld other=%ld last_other=%s\n", count, allowed, refused, other,
               last_other ? strerrorname_np(last_other) : "none");
        return 0;
}

/* ------------------------------------------------------ per-thread tables -- */

struct thread_request {
        const char *directory;
        const char *name;
        const char *path;
        mode_t mode;
};

static void *chmod_from_own_cwd(void *data)
{
        struct thread_request *request = data;

        if (unshare(CLONE_FS) < 0 || chdir(request->directory) < 0) {
                report("setup", -1);
                return NULL;
        }
        report("chmod", chmod(request->name, request->mode));
        return NULL;
}

static void *fchmod_from_own_table(void *data)
{
        struct thread_request *request = data;
        int fd;

        if (unshare(CLONE_FILES) < 0) {
                report("setup", -1);
                return NULL;
        }
        fd = open(request->path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || dup2(fd, 10) < 0) {
                report("setup", -1);
                return NULL;
        }
        close(fd);
        report("fchmod", fchmod(10, request->mode));
        return NULL;
}

static int in_thread(void *(*body)(void *), struct thread_request *request)
{
        pthread_t thread;

        if (pthread_create(&thread, NULL, body, request) != 0)
                return 2;
        pthread_join(thread, NULL);
        return 0;
}

/* --------------------------------------------------------------- listener -- */

static int nested_listener(void)
{
        struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
        struct sock_fprog program = { 1, allow };

        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        report("listener", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &program));
        return 0;
}

/* --------------------------------------------------------------- variants -- */

struct xattr_args_v0 {
        uint64_t value;
        uint32_t size;
        uint32_t flags;
};

struct file_attr_v0 {
        uint64_t xflags;
        uint32_t extsize, nextents, projid, cowextsize;
};

/* `directory`/`name`, in a static buffer (one at a time). */
static const char *in(const char *directory, const char *name)
{
        static char path[4096];

        snprintf(path, sizeof(path), "%s/%s", directory, name);
        return path;
}

static long with_fd(const char *path, int flags, long (*call)(int fd))
{
        int fd = open(path, flags | O_CLOEXEC);
        long result;
        int saved;

        if (fd < 0)
                return -1;
        result = call(fd);
        saved = errno;
        close(fd);
        errno = saved;
        return result;
}

static long do_fchmod(int fd) { return fchmod(fd, 0600); }
static long do_fchmodat2_empty(int fd) { return syscall(SYS_fchmodat2, fd, "", 0600, AT_EMPTY_PATH); }
static long do_fchown(int fd) { return fchown(fd, (uid_t) -1, PROBE_GROUP); }
static long do_fchownat_empty(int fd) { return fchownat(fd, "", (uid_t) -1, PROBE_GROUP, AT_EMPTY_PATH); }
static long do_futimesat_fd(int fd)
{
        struct timeval times[2] = { { 1000004, 0 }, { 1000004, 0 } };

        return syscall(SYS_futimesat, fd, NULL, times);
}
static long do_futimens(int fd)
{
        struct timespec times[2] = { { 1000005, 0 }, { 1000005, 0 } };

        return futimens(fd, times);
}
static long do_utimensat_empty(int fd)
{
        struct timespec times[2] = { { 1000006, 0 }, { 1000006, 0 } };

        return utimensat(fd, "", times, AT_EMPTY_PATH);
}
static long do_fsetxattr(int fd) { return fsetxattr(fd, "user.variant", "x", 1, 0); }
static long do_fremovexattr(int fd) { return fremovexattr(fd, "user.existing"); }
static long do_setflags(int fd)
{
        int flags = 0;

        if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
                return -1;
        flags |= FS_NODUMP_FL;
        return ioctl(fd, FS_IOC_SETFLAGS, &flags);
}
static long do_fssetxattr(int fd)
{
        struct fsxattr attributes;

        if (ioctl(fd, FS_IOC_FSGETXATTR, &attributes) < 0)
                return -1;
        attributes.fsx_xflags |= FS_XFLAG_NODUMP;
        return ioctl(fd, FS_IOC_FSSETXATTR, &attributes);
}

/* One system call form on `directory`/NAME; NAME is the variant's name. */
static long variant(const char *name, const char *directory)
{
        const char *path = in(directory, name);
        struct xattr_args_v0 xattr = { (uint64_t) (uintptr_t) "x", 1, 0 };

        if (strcmp(name, "chmod") == 0)
                return chmod(path, 0600);
        if (strcmp(name, "fchmod") == 0)
                return with_fd(path, O_RDONLY, do_fchmod);
        if (strcmp(name, "fchmodat") == 0)
                return syscall(SYS_fchmodat, AT_FDCWD, path, 0600);
        if (strcmp(name, "fchmodat2") == 0)
                return syscall(SYS_fchmodat2, AT_FDCWD, path, 0600, 0);
        if (strcmp(name, "fchmodat2-empty-path") == 0)
                return with_fd(path, O_PATH, do_fchmodat2_empty);
        if (strcmp(name, "chown") == 0)
                return chown(path, (uid_t) -1, PROBE_GROUP);
        if (strcmp(name, "lchown") == 0)
                return lchown(path, (uid_t) -1, PROBE_GROUP);
        if (strcmp(name, "fchown") == 0)
                return with_fd(path, O_RDONLY, do_fchown);
        if (strcmp(name, "fchownat") == 0)
                return fchownat(AT_FDCWD, path, (uid_t) -1, PROBE_GROUP, 0);
        if (strcmp(name, "fchownat-empty-path") == 0)
                return with_fd(path, O_PATH, do_fchownat_empty);
        if (strcmp(name, "utime") == 0) {
                struct utimbuf times = { 1000001, 1000001 };

                return syscall(SYS_utime, path, &times);
        }
        if (strcmp(name, "utimes") == 0) {
                struct timeval times[2] = { { 1000002, 0 }, { 1000002, 0 } };

                return syscall(SYS_utimes, path, times);
        }
        if (strcmp(name, "futimesat") == 0) {
                struct timeval times[2] = { { 1000003, 0 }, { 1000003, 0 } };

                return syscall(SYS_futimesat, AT_FDCWD, path, times);
        }
        if (strcmp(name, "futimesat-descriptor") == 0)
                return with_fd(path, O_RDONLY, do_futimesat_fd);
        if (strcmp(name, "utimensat") == 0) {
                struct timespec times[2] = { { 1000007, 0 }, { 1000007, 0 } };

                return utimensat(AT_FDCWD, path, times, 0);
        }
        if (strcmp(name, "utimensat-empty-path") == 0)
                return with_fd(path, O_PATH, do_utimensat_empty);
        if (strcmp(name, "futimens") == 0)
                return with_fd(path, O_RDONLY, do_futimens);
        if (strcmp(name, "setxattr") == 0)
                return setxattr(path, "user.variant", "x", 1, 0);
        if (strcmp(name, "lsetxattr") == 0)
                return lsetxattr(path, "user.variant", "x", 1, 0);
        if (strcmp(name, "fsetxattr") == 0)
                return with_fd(path, O_RDONLY, do_fsetxattr);
        if (strcmp(name, "setxattrat") == 0)
                return syscall(SYS_setxattrat, AT_FDCWD, path, 0, "user.variant", &xattr, sizeof(xattr));
        if (strcmp(name, "removexattr") == 0)
                return removexattr(path, "user.existing");
        if (strcmp(name, "lremovexattr") == 0)
                return lremovexattr(path, "user.existing");
        if (strcmp(name, "fremovexattr") == 0)
                return with_fd(path, O_RDONLY, do_fremovexattr);
        if (strcmp(name, "removexattrat") == 0)
                return syscall(SYS_removexattrat, AT_FDCWD, path, 0, "user.existing");
        if (strcmp(name, "file_setattr") == 0) {
                struct file_attr_v0 attributes;

                memset(&attributes, 0, sizeof(attributes));
                if (syscall(SYS_file_getattr, AT_FDCWD, path, &attributes, sizeof(attributes), 0) < 0)
                        return -1;
                attributes.xflags |= FS_XFLAG_NODUMP;
                return syscall(SYS_file_setattr, AT_FDCWD, path, &attributes, sizeof(attributes), 0);
        }
        if (strcmp(name, "ioctl-setflags") == 0)
                return with_fd(path, O_RDONLY, do_setflags);
        if (strcmp(name, "ioctl-fssetxattr") == 0)
                return with_fd(path, O_RDONLY, do_fssetxattr);
        errno = EINVAL;
        return -1;
}

/* The forms `variants` runs, NULL-terminated; the tests prepare a file of each name in both directories. */
static const char *const variant_names[] = {
        "chmod", "fchmod", "fchmodat", "fchmodat2", "fchmodat2-empty-path", "chown", "lchown", "fchown", "fchownat",
        "fchownat-empty-path", "utime", "utimes", "futimesat", "futimesat-descriptor", "utimensat",
        "utimensat-empty-path", "futimens", "setxattr", "lsetxattr", "fsetxattr", "setxattrat", "removexattr",
        "lremovexattr", "fremovexattr", "removexattrat", "file_setattr", "ioctl-setflags", "ioctl-fssetxattr", NULL,
};

static int variants(const char *inside, const char *outside)
{
        for (const char *const *name = variant_names; *name; name++) {
                char label[128];

                snprintf(label, sizeof(label), "inside:%s", *name);
                report(label, variant(*name, inside));
                snprintf(label, sizeof(label), "outside:%s", *name);
                report(label, variant(*name, outside));
        }
        return 0;
}

int main(int argc, char **argv)
{
        const char *mode = argc > 1 ? argv[1] : "";

        if (strcmp(mode, "flip") == 0 && argc == 5 && strlen(argv[3]) == strlen(argv[4]) &&
            strcmp(argv[3], argv[4]) != 0 && strlen(argv[3]) < sizeof(race_path)) {
                const char *paths[] = { argv[3], argv[4] };

                strcpy(race_path, argv[3]);
                return chmod_during(atol(argv[2]), race_path, flip_path, paths);
        }
        if (strcmp(mode, "swap") == 0 && argc == 6) {
                char *names[] = { argv[3], argv[4] };
                static char target[4096];

                snprintf(target, sizeof(target), "%s/%s", argv[3], argv[5]);
                return chmod_during(atol(argv[2]), target, swap_entries, names);
        }
        if (strcmp(mode, "thread-cwd") == 0 && argc == 6) {
                struct thread_request request = { argv[3], argv[4], NULL, (mode_t) strtol(argv[5], NULL, 8) };

                if (chdir(argv[2]) < 0)
                        return 2;
                return in_thread(chmod_from_own_cwd, &request);
        }
        if (strcmp(mode, "thread-fd") == 0 && argc == 5) {
                struct thread_request request = { NULL, NULL, argv[3], (mode_t) strtol(argv[4], NULL, 8) };
                int fd = open(argv[2], O_RDONLY | O_CLOEXEC);

                if (fd < 0 || dup2(fd, 10) < 0)
                        return 2;
                return in_thread(fchmod_from_own_table, &request);
        }
        if (strcmp(mode, "nested-listener") == 0 && argc == 2)
                return nested_listener();
        if (strcmp(mode, "chmod-twice") == 0 && argc == 3) {
                char line[16];

                report("first", chmod(argv[2], 0600));
                if (!fgets(line, sizeof(line), stdin))
                        return 2;
                report("second", chmod(argv[2], 0640));
                return 0;
        }
        if (strcmp(mode, "non-dumpable") == 0 && argc == 3) {
                prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
                report("chmod", chmod(argv[2], 0600));
                return 0;
        }
        if (strcmp(mode, "variants") == 0 && argc == 4)
                return variants(argv[2], argv[3]);
        if (strcmp(mode, "names") == 0 && argc == 2) {
                for (const char *const *name = variant_names; *name; name++)
                        puts(*name);
                return 0;
        }
        fprintf(stderr, "usage: metadata-probe MODE ARG... (see the source)\n");
        return 2;
}
