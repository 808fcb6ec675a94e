/* SPDX-License-Identifier: MIT */
/*
 * escape-op OPERATION ARG...: attempts exactly one file effect and prints
 * "errno=NAME" ("errno=0" when it succeeded).  The escape matrix runs it
 * confined, so that each case is one system call with an errno of its own,
 * free of any shell's quoting, redirection order or error wording.  Where an
 * effect needs two calls (open, then write) the errno is that of the first
 * one that failed.  Exit status: 0 once the attempt was made, 2 for bad usage.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <linux/io_uring.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static const char payload[] = "escaped\n";

/* 0 or the errno of a failed call. */
static int status_of(long result)
{
        return result < 0 ? errno : 0;
}

/* Opens `path` with `flags` and writes the payload: the write is the effect the matrix looks for on disk. */
static int open_and_write(const char *path, int flags)
{
        int fd = open(path, flags | O_CLOEXEC, 0644);
        int result;

        if (fd < 0)
                return errno;
        result = status_of(write(fd, payload, sizeof(payload) - 1));
        close(fd);
        return result;
}

/* Writes back exactly what the file holds: proves write access without changing the host. */
static int rewrite_unchanged(const char *path)
{
        char value[4096];
        ssize_t length;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        int result;

        if (fd < 0)
                return errno;
        length = read(fd, value, sizeof(value));
        result = status_of(length);
        close(fd);
        if (result != 0)
                return result;
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return errno;
        result = status_of(write(fd, value, (size_t) length));
        close(fd);
        return result;
}

static int bind_socket(const char *path)
{
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        int fd, result;

        if (strlen(path) >= sizeof(address.sun_path))
                return ENAMETOOLONG;
        strcpy(address.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return errno;
        result = status_of(bind(fd, (struct sockaddr *) &address, sizeof(address)));
        close(fd);
        return result;
}

/* connect() to a unix stream socket at `name` (abstract when `abstract`): 0 or the errno. */
static int connect_unix(const char *name, bool abstract)
{
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        size_t offset = abstract ? 1 : 0;
        socklen_t length = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + offset + strlen(name));
        int fd, result;

        if (strlen(name) + offset >= sizeof(address.sun_path))
                return ENAMETOOLONG;
        memcpy(address.sun_path + offset, name, strlen(name));
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return errno;
        result = status_of(connect(fd, (struct sockaddr *) &address, abstract ? length : sizeof(address)));
        close(fd);
        return result;
}

static int set_times(const char *path, const char *epoch_seconds, int flags)
{
        struct timespec times[2];

        times[0].tv_sec = times[1].tv_sec = strtol(epoch_seconds, NULL, 10);
        times[0].tv_nsec = times[1].tv_nsec = 0;
        return status_of(utimensat(AT_FDCWD, path, times, flags));
}

/* futimens() on `path` opened read-only: a descriptor that grants no write at all. */
static int set_times_through_descriptor(const char *path, const char *epoch_seconds)
{
        struct timespec times[2];
        int fd = open(path, O_RDONLY | O_CLOEXEC), result;

        if (fd < 0)
                return errno;
        times[0].tv_sec = times[1].tv_sec = strtol(epoch_seconds, NULL, 10);
        times[0].tv_nsec = times[1].tv_nsec = 0;
        result = status_of(futimens(fd, times));
        close(fd);
        return result;
}

/* fchmod() on `path` opened read-only. */
static int change_mode_through_descriptor(const char *path, const char *mode)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC), result;

        if (fd < 0)
                return errno;
        result = status_of(fchmod(fd, (mode_t) strtol(mode, NULL, 8)));
        close(fd);
        return result;
}

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/*
 * A POSIX access ACL (system.posix_acl_access, version 2): the owner rw,
 * user 4242 rwx, the group r, mask rwx, others r.  It changes the file's
 * group bits (to the mask) and adds the attribute.
 */
static int set_access_acl(const char *path)
{
        struct {
                uint32_t version;
                struct {
                        uint16_t tag;
                        uint16_t permissions;
                        uint32_t id;
                } entries[5];
        } __attribute__((packed)) acl = { 2, { { 0x01, 6, UINT32_MAX }, { 0x02, 7, 4242 }, { 0x04, 4, UINT32_MAX },
                                               { 0x10, 7, UINT32_MAX }, { 0x20, 4, UINT32_MAX } } };

        return status_of(setxattr(path, "system.posix_acl_access", &acl, sizeof(acl), 0));
}

/* The capability sets as /proc/self/status shows them, one "CapXxx=hex" per line. */
/*
 * PATH opened read-only, then one IORING_OP_FSETXATTR through a ring of one
 * entry, by raw system calls (no liburing on the build machine): the
 * extended attribute changes inside the kernel, with no system call of its
 * own for a seccomp filter to see.  The errno of io_uring_setup when the
 * ring is refused, else the operation's.
 */
static int set_xattr_through_io_uring(const char *path, const char *name, const char *value)
{
        struct io_uring_params parameters = { 0 };
        struct io_uring_sqe *entries;
        struct io_uring_cqe *completions;
        unsigned *sq_tail, *sq_array, *cq_head;
        size_t sq_size, cq_size;
        char *sq_ring, *cq_ring;
        int ring, fd, result;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno;
        ring = (int) syscall(__NR_io_uring_setup, 1, &parameters);
        if (ring < 0) {
                result = errno;
                close(fd);
                return result;
        }
        sq_size = parameters.sq_off.array + parameters.sq_entries * sizeof(unsigned);
        cq_size = parameters.cq_off.cqes + parameters.cq_entries * sizeof(struct io_uring_cqe);
        sq_ring = mmap(NULL, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQ_RING);
        cq_ring = mmap(NULL, cq_size, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_CQ_RING);
        entries = mmap(NULL, sizeof(*entries), PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQES);
        if (sq_ring == MAP_FAILED || cq_ring == MAP_FAILED || entries == MAP_FAILED) {
                close(ring);
                close(fd);
                return EIO;
        }
        memset(entries, 0, sizeof(*entries));
        entries->opcode = IORING_OP_FSETXATTR;
        entries->fd = fd;
        entries->addr = (uint64_t) (uintptr_t) name;
        entries->addr2 = (uint64_t) (uintptr_t) value;
        entries->len = (uint32_t) strlen(value);
        sq_tail = (unsigned *) (sq_ring + parameters.sq_off.tail);
        sq_array = (unsigned *) (sq_ring + parameters.sq_off.array);
        sq_array[0] = 0;
        __atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
        if (syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
                result = errno;
        } else {
                cq_head = (unsigned *) (cq_ring + parameters.cq_off.head);
                completions = (struct io_uring_cqe *) (cq_ring + parameters.cq_off.cqes);
                result = completions[*cq_head & *(unsigned *) (cq_ring + parameters.cq_off.ring_mask)].res;
                result = result < 0 ? -result : 0;
        }
        close(ring);
        close(fd);
        return result;
}

/* PATH opened read-only, then ext4's EXT4_IOC_SETVERSION: the inode generation, owner checked only. */
static int set_generation_through_descriptor(const char *path)
{
        long generation = 12345;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        int result;

        if (fd < 0)
                return errno;
        result = status_of(ioctl(fd, _IOW('f', 4, long), &generation));
        close(fd);
        return result;
}

static int print_capabilities(void)
{
        FILE *status = fopen("/proc/self/status", "re");
        char line[256];

        if (!status)
                return errno;
        while (fgets(line, sizeof(line), status)) {
                char name[32], value[32];

                if (strncmp(line, "Cap", 3) == 0 && sscanf(line, "%31[^:]:%31s", name, value) == 2)
                        printf("%s=%s\n", name, value);
        }
        fclose(status);
        return 0;
}

static int attempt(const char *operation, char **arguments, int count);

/* Runs the operation two processes down, so that a grandchild's confinement is what is tested. */
static int attempt_in_grandchild(char **arguments, int count)
{
        int wait_status = 0;
        pid_t pid = fork();

        if (pid < 0)
                return errno;
        if (pid == 0) {
                pid_t grandchild = fork();

                if (grandchild < 0)
                        _exit(errno);
                if (grandchild == 0)
                        _exit(attempt(arguments[0], arguments + 1, count - 1));
                if (waitpid(grandchild, &wait_status, 0) < 0 || !WIFEXITED(wait_status))
                        _exit(ECHILD);
                _exit(WEXITSTATUS(wait_status));
        }
        if (waitpid(pid, &wait_status, 0) < 0 || !WIFEXITED(wait_status))
                return ECHILD;
        return WEXITSTATUS(wait_status);
}

/* Returns the operation's errno (0: it succeeded), or -1 for an unknown operation or argument count. */
static int attempt(const char *operation, char **arguments, int count)
{
#define WANTS(n) if (count != (n)) return -1
        if (strcmp(operation, "create") == 0) {
                WANTS(1);
                return open_and_write(arguments[0], O_WRONLY | O_CREAT | O_EXCL);
        }
        if (strcmp(operation, "write") == 0) {
                WANTS(1);
                return open_and_write(arguments[0], O_WRONLY);
        }
        if (strcmp(operation, "append") == 0) {
                WANTS(1);
                return open_and_write(arguments[0], O_WRONLY | O_APPEND);
        }
        if (strcmp(operation, "open-truncate") == 0) {
                int fd;

                WANTS(1);
                fd = open(arguments[0], O_WRONLY | O_TRUNC | O_CLOEXEC);
                if (fd < 0)
                        return errno;
                close(fd);
                return 0;
        }
        if (strcmp(operation, "truncate") == 0) {
                WANTS(1);
                return status_of(truncate(arguments[0], 0));
        }
        if (strcmp(operation, "rename") == 0) {
                WANTS(2);
                return status_of(rename(arguments[0], arguments[1]));
        }
        if (strcmp(operation, "exchange") == 0) {
                WANTS(2);
                return status_of(syscall(SYS_renameat2, AT_FDCWD, arguments[0], AT_FDCWD, arguments[1],
                                         RENAME_EXCHANGE));
        }
        if (strcmp(operation, "link") == 0) {
                WANTS(2);
                return status_of(link(arguments[0], arguments[1]));
        }
        if (strcmp(operation, "unlink") == 0) {
                WANTS(1);
                return status_of(unlink(arguments[0]));
        }
        if (strcmp(operation, "rmdir") == 0) {
                WANTS(1);
                return status_of(rmdir(arguments[0]));
        }
        if (strcmp(operation, "mkdir") == 0) {
                WANTS(1);
                return status_of(mkdir(arguments[0], 0755));
        }
        if (strcmp(operation, "mkfifo") == 0) {
                WANTS(1);
                return status_of(mkfifo(arguments[0], 0644));
        }
        if (strcmp(operation, "bind-socket") == 0) {
                WANTS(1);
                return bind_socket(arguments[0]);
        }
        if (strcmp(operation, "connect-unix") == 0 || strcmp(operation, "connect-abstract") == 0) {
                WANTS(1);
                return connect_unix(arguments[0], strcmp(operation, "connect-abstract") == 0);
        }
        if (strcmp(operation, "socket-dgram") == 0) {
                int fd;

                WANTS(0);
                fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        return errno;
                close(fd);
                return 0;
        }
        if (strcmp(operation, "symlink") == 0) {
                WANTS(2);
                return status_of(symlink(arguments[0], arguments[1]));
        }
        if (strcmp(operation, "mknod-char") == 0) {
                WANTS(1);
                /* 1:3 is /dev/null's number: harmless if it ever appeared, and still a device node. */
                return status_of(mknod(arguments[0], S_IFCHR | 0600, makedev(1, 3)));
        }
        if (strcmp(operation, "create-mode") == 0) {
                int fd;

                WANTS(2);
                fd = open(arguments[0], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t) strtol(arguments[1], NULL, 8));
                if (fd < 0)
                        return errno;
                close(fd);
                return 0;
        }
        if (strcmp(operation, "chmod") == 0) {
                WANTS(2);
                return status_of(chmod(arguments[0], (mode_t) strtol(arguments[1], NULL, 8)));
        }
        if (strcmp(operation, "fchmod") == 0) {
                WANTS(2);
                return change_mode_through_descriptor(arguments[0], arguments[1]);
        }
        if (strcmp(operation, "fchmodat2") == 0) {
                WANTS(2);
                return status_of(syscall(SYS_fchmodat2, AT_FDCWD, arguments[0], (mode_t) strtol(arguments[1], NULL, 8),
                                         0));
        }
        if (strcmp(operation, "chown") == 0 || strcmp(operation, "lchown") == 0) {
                uid_t uid;
                gid_t gid;

                WANTS(3);
                uid = (uid_t) strtol(arguments[1], NULL, 10);
                gid = (gid_t) strtol(arguments[2], NULL, 10);
                return status_of(operation[0] == 'l' ? lchown(arguments[0], uid, gid) : chown(arguments[0], uid, gid));
        }
        if (strcmp(operation, "utimes") == 0 || strcmp(operation, "touch-h") == 0) {
                WANTS(2);
                return set_times(arguments[0], arguments[1], AT_SYMLINK_NOFOLLOW);
        }
        if (strcmp(operation, "touch-d") == 0) {
                WANTS(2);
                return set_times(arguments[0], arguments[1], 0);
        }
        if (strcmp(operation, "futimens") == 0) {
                WANTS(2);
                return set_times_through_descriptor(arguments[0], arguments[1]);
        }
        if (strcmp(operation, "setxattr") == 0) {
                WANTS(3);
                return status_of(setxattr(arguments[0], arguments[1], arguments[2], strlen(arguments[2]), 0));
        }
        if (strcmp(operation, "io-uring-fsetxattr") == 0) {
                WANTS(3);
                return set_xattr_through_io_uring(arguments[0], arguments[1], arguments[2]);
        }
        if (strcmp(operation, "ext4-setversion") == 0) {
                WANTS(1);
                return set_generation_through_descriptor(arguments[0]);
        }
        if (strcmp(operation, "removexattr") == 0) {
                WANTS(2);
                return status_of(removexattr(arguments[0], arguments[1]));
        }
        if (strcmp(operation, "posix-acl") == 0) {
                WANTS(1);
                return set_access_acl(arguments[0]);
        }
        if (strcmp(operation, "via-proc-fd") == 0) {
                /* OPERATION PATH ARG...: PATH opened read-only, then the operation on /proc/self/fd/N. */
                char proc_path[64];
                int fd, result;

                if (count < 2)
                        return -1;
                fd = open(arguments[1], O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return errno;
                snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fd);
                arguments[1] = proc_path;
                result = attempt(arguments[0], arguments + 1, count - 1);
                close(fd);
                return result;
        }
        if (strcmp(operation, "write-fd") == 0) {
                WANTS(1);
                return status_of(write(atoi(arguments[0]), payload, sizeof(payload) - 1));
        }
        if (strcmp(operation, "rewrite-unchanged") == 0) {
                WANTS(1);
                return rewrite_unchanged(arguments[0]);
        }
        if (strcmp(operation, "capabilities") == 0) {
                WANTS(0);
                return print_capabilities();
        }
        if (strcmp(operation, "in-grandchild") == 0) {
                if (count < 1)
                        return -1;
                return attempt_in_grandchild(arguments, count);
        }
        return -1;
#undef WANTS
}

int main(int argc, char **argv)
{
        int result;

        if (argc < 2) {
                fprintf(stderr, "usage: escape-op OPERATION ARG...\n");
                return 2;
        }
        result = attempt(argv[1], argv + 2, argc - 2);
        if (result < 0) {
                fprintf(stderr, "escape-op: unknown operation or wrong argument count: %s\n", argv[1]);
                return 2;
        }
        printf("errno=%s\n", result == 0 ? "0" : strerrorname_np(result) ? strerrorname_np(result) : "?");
        return 0;
}
