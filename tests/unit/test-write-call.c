/* SPDX-License-Identifier: MIT */
/*
 * The write-intent decoder (src/core/write-call.h): every call the filter
 * sends, decoded from raw registers — which name from which dirfd, the
 * second name, the flags and the mode as the kernel keeps them — and every
 * flag rule the kernel applies before it looks at a path, table by table.
 * High register bits a hostile command sets where the kernel reads an int,
 * a umode_t or an unsigned int change nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <cmocka.h>

#include "core/write-call.h"

#define HIGH 0xdead000000000000ULL      /* garbage in the upper half of an int's register */
#define PATH_A 0x7f0000001000ULL        /* command addresses: only passed through */
#define PATH_B 0x7f0000002000ULL
#define TEXT 0x7f0000003000ULL
#define FDCWD_REGISTER ((uint64_t) (uint32_t) AT_FDCWD)  /* AT_FDCWD with its upper half clear */
#define KERNEL_O_TMPFILE 020000000

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1U << 0)
#define RENAME_EXCHANGE (1U << 1)
#define RENAME_WHITEOUT (1U << 2)
#endif

static dsh_write_request decoded(int nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
        const uint64_t args[6] = { a0, a1, a2, a3, a4, 0xffffffffffffffffULL };
        dsh_write_request request;
        int result = dsh_write_request_decode(nr, args, &request);

        if (result != 0)
                fail_msg("system call %d was refused (%d), not decoded", nr, result);
        return request;
}

static int refusal(int nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
        const uint64_t args[6] = { a0, a1, a2, a3, a4, 0 };
        dsh_write_request request;

        return dsh_write_request_decode(nr, args, &request);
}

/* Every call the filter sends is ours; openat2 (refused by the filter), reads and metadata calls are not. */
static void test_which_calls_are_ours(void **state)
{
        static const int ours[] = {
#ifdef __NR_open
                __NR_open,   __NR_creat,  __NR_mkdir,  __NR_mknod, __NR_unlink, __NR_rmdir,
                __NR_rename, __NR_renameat, __NR_link, __NR_symlink,
#endif
                __NR_openat, __NR_mkdirat, __NR_mknodat, __NR_unlinkat, __NR_renameat2, __NR_linkat,
                __NR_symlinkat, __NR_truncate,
        };
        static const int not_ours[] = { __NR_openat2, __NR_read, __NR_write, __NR_ftruncate, __NR_fchmodat,
                                        __NR_connect, __NR_close, __NR_getdents64, -1, 100000 };

        (void) state;
        for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
                dsh_write_request request;
                const uint64_t args[6] = { 0 };

                if (!dsh_write_call_is_ours(ours[i]))
                        fail_msg("system call %d is a write-intent call, yet not ours", ours[i]);
                /* Each one decodes: zero flags and a zero length are valid everywhere. */
                assert_int_equal(dsh_write_request_decode(ours[i], args, &request), 0);
        }
        for (size_t i = 0; i < sizeof(not_ours) / sizeof(not_ours[0]); i++) {
                dsh_write_request request = { .op = DSH_WRITE_TRUNCATE };
                const uint64_t args[6] = { 0 };

                if (dsh_write_call_is_ours(not_ours[i]))
                        fail_msg("system call %d is not a write-intent call, yet ours", not_ours[i]);
                /* What cannot be decided is refused. */
                assert_int_equal(dsh_write_request_decode(not_ours[i], args, &request), -EACCES);
        }
}

/* open, openat, creat: the name, the dirfd as an int, the flags and the mode as the kernel keeps them. */
static void test_opens(void **state)
{
        dsh_write_request r;

        (void) state;
        r = decoded(__NR_openat, HIGH | 7, PATH_A, HIGH | O_WRONLY | O_CREAT | O_CLOEXEC, HIGH | 0x10000 | 0644, 0);
        assert_int_equal(r.op, DSH_WRITE_OPEN);
        assert_int_equal(r.dirfd, 7);
        assert_true(r.path == PATH_A);
        assert_int_equal(r.open_flags, O_WRONLY | O_CREAT | O_CLOEXEC);
        assert_int_equal(r.mode, 0644);  /* a umode_t: the low 16 bits */
        assert_true(r.follow);
        /* AT_FDCWD in either spelling of the upper half. */
        r = decoded(__NR_openat, (uint64_t) (int64_t) AT_FDCWD, PATH_A, O_RDWR, 0, 0);
        assert_int_equal(r.dirfd, AT_FDCWD);
        r = decoded(__NR_openat, FDCWD_REGISTER, PATH_A, O_RDWR | O_NOFOLLOW, 0, 0);
        assert_int_equal(r.dirfd, AT_FDCWD);
        assert_false(r.follow);
        /* The mode of an open that does not create is never used: 0 (openat2 refuses any other). */
        r = decoded(__NR_openat, 3, PATH_A, O_WRONLY | O_TRUNC, 04755, 0);
        assert_int_equal(r.open_flags, O_WRONLY | O_TRUNC);
        assert_int_equal(r.mode, 0);
        /* A mode keeps its permission, set-id and sticky bits, no file type. */
        r = decoded(__NR_openat, 3, PATH_A, O_CREAT | O_EXCL | O_RDWR, S_IFCHR | 01777, 0);
        assert_int_equal(r.mode, 01777);
        /* O_TMPFILE creates: its mode is kept. */
        r = decoded(__NR_openat, 3, PATH_A, O_TMPFILE | O_RDWR, 0600, 0);
        assert_int_equal(r.open_flags, O_TMPFILE | O_RDWR);
        assert_int_equal(r.mode, 0600);
        /* Unknown bits dropped, as open and openat drop them (openat2 would refuse them). */
        r = decoded(__NR_openat, 3, PATH_A, O_WRONLY | 020000000000U | 010000000000U, 0, 0);
        assert_int_equal(r.open_flags, O_WRONLY);
        /* O_PATH beats everything but O_DIRECTORY, O_NOFOLLOW and O_CLOEXEC: nothing is created or written. */
        r = decoded(__NR_openat, 3, PATH_A, O_PATH | O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0755, 0);
        assert_int_equal(r.open_flags, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        assert_int_equal(r.mode, 0);
        assert_false(r.follow);
#ifdef __NR_open
        r = decoded(__NR_open, PATH_B, HIGH | O_WRONLY | O_APPEND, 0, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_OPEN);
        assert_int_equal(r.dirfd, AT_FDCWD);
        assert_true(r.path == PATH_B);
        assert_int_equal(r.open_flags, O_WRONLY | O_APPEND);
        r = decoded(__NR_open, PATH_B, O_CREAT | O_WRONLY, 0640, 0, 0);
        assert_int_equal(r.mode, 0640);
        /* creat(path, mode) is open(path, O_CREAT | O_WRONLY | O_TRUNC, mode). */
        r = decoded(__NR_creat, PATH_A, HIGH | 0755, 0, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_OPEN);
        assert_int_equal(r.dirfd, AT_FDCWD);
        assert_true(r.path == PATH_A);
        assert_int_equal(r.open_flags, O_CREAT | O_WRONLY | O_TRUNC);
        assert_int_equal(r.mode, 0755);
        assert_true(r.follow);
#endif
}

/* The open flags the kernel refuses before any lookup (build_open_flags()): EINVAL. */
static void test_open_flag_rules(void **state)
{
        static const uint64_t refused[] = {
                O_CREAT | O_DIRECTORY | O_RDONLY,
                O_CREAT | O_DIRECTORY | O_WRONLY,
                O_TMPFILE | O_RDONLY,                   /* no writing access mode */
                O_TMPFILE | O_CREAT | O_WRONLY,         /* O_TMPFILE with O_CREAT */
                KERNEL_O_TMPFILE | O_WRONLY,            /* the kernel's bit without O_DIRECTORY */
                HIGH | O_TMPFILE | O_RDONLY,
        };
        static const uint64_t accepted[] = {
                O_TMPFILE | O_WRONLY, O_TMPFILE | O_RDWR | O_EXCL, O_DIRECTORY | O_RDONLY | O_TRUNC,
                O_ACCMODE,              /* access mode 3: the kernel takes it (ioctl-only opens) */
                O_PATH | O_CREAT | O_DIRECTORY,         /* O_PATH drops O_CREAT first */
        };

        (void) state;
        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
                if (refusal(__NR_openat, 3, PATH_A, refused[i], 0600, 0) != -EINVAL)
                        fail_msg("openat with flags %#llo is not refused", (unsigned long long) refused[i]);
#ifdef __NR_open
                assert_int_equal(refusal(__NR_open, PATH_A, refused[i], 0600, 0, 0), -EINVAL);
#endif
        }
        for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
                if (refusal(__NR_openat, 3, PATH_A, accepted[i], 0600, 0) != 0)
                        fail_msg("openat with flags %#llo is refused", (unsigned long long) accepted[i]);
}

/* mkdir, mkdirat, mknod, mknodat: the name and the mode as given (low 16 bits), mknod's device (low 32). */
static void test_creations(void **state)
{
        dsh_write_request r;

        (void) state;
        r = decoded(__NR_mkdirat, HIGH | 5, PATH_A, HIGH | 01755, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_MKDIR);
        assert_int_equal(r.dirfd, 5);
        assert_true(r.path == PATH_A);
        assert_int_equal(r.mode, 01755);
        r = decoded(__NR_mknodat, FDCWD_REGISTER, PATH_B, S_IFIFO | 0600, HIGH | 0x0801, 0);
        assert_int_equal(r.op, DSH_WRITE_MKNOD);
        assert_int_equal(r.dirfd, AT_FDCWD);
        assert_true(r.path == PATH_B);
        assert_int_equal(r.mode, S_IFIFO | 0600);  /* the file type is part of mknod's mode */
        assert_true(r.device == 0x0801);
#ifdef __NR_mkdir
        r = decoded(__NR_mkdir, PATH_A, 0700, 0, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_MKDIR);
        assert_int_equal(r.dirfd, AT_FDCWD);
        assert_true(r.path == PATH_A);
        assert_int_equal(r.mode, 0700);
        r = decoded(__NR_mknod, PATH_B, S_IFREG | 0644, 0x0103, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_MKNOD);
        assert_int_equal(r.dirfd, AT_FDCWD);
        assert_int_equal(r.mode, S_IFREG | 0644);
        assert_true(r.device == 0x0103);
#endif
}

/* unlink, rmdir, unlinkat: AT_REMOVEDIR makes it rmdir, any other flag is EINVAL. */
static void test_removals(void **state)
{
        static const uint64_t refused_flags[] = { 1, AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH, AT_REMOVEDIR | 1,
                                                  AT_REMOVEDIR | AT_SYMLINK_NOFOLLOW, 0x80000000U };
        dsh_write_request r;

        (void) state;
        r = decoded(__NR_unlinkat, HIGH | 4, PATH_A, 0, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_UNLINK);
        assert_int_equal(r.dirfd, 4);
        assert_true(r.path == PATH_A);
        r = decoded(__NR_unlinkat, FDCWD_REGISTER, PATH_B, AT_REMOVEDIR, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_RMDIR);
        assert_int_equal(r.dirfd, AT_FDCWD);
        assert_true(r.path == PATH_B);
        /* The kernel reads the flags as an int: the upper half changes nothing. */
        r = decoded(__NR_unlinkat, 4, PATH_B, HIGH | AT_REMOVEDIR, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_RMDIR);
        for (size_t i = 0; i < sizeof(refused_flags) / sizeof(refused_flags[0]); i++)
                assert_int_equal(refusal(__NR_unlinkat, 4, PATH_A, refused_flags[i], 0, 0), -EINVAL);
#ifdef __NR_unlink
        r = decoded(__NR_unlink, PATH_A, 0, 0, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_UNLINK);
        assert_int_equal(r.dirfd, AT_FDCWD);
        assert_true(r.path == PATH_A);
        r = decoded(__NR_rmdir, PATH_B, 0, 0, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_RMDIR);
        assert_int_equal(r.dirfd, AT_FDCWD);
        assert_true(r.path == PATH_B);
#endif
}

/* rename, renameat, renameat2: both names with their dirfds; renameat2's flag rules (do_renameat2()). */
static void test_renames(void **state)
{
        static const uint64_t accepted_flags[] = { 0, RENAME_NOREPLACE, RENAME_EXCHANGE, RENAME_WHITEOUT,
                                                   RENAME_NOREPLACE | RENAME_WHITEOUT, HIGH | RENAME_EXCHANGE };
        static const uint64_t refused_flags[] = { RENAME_EXCHANGE | RENAME_NOREPLACE, RENAME_EXCHANGE | RENAME_WHITEOUT,
                                                  RENAME_EXCHANGE | RENAME_NOREPLACE | RENAME_WHITEOUT, 1U << 3,
                                                  RENAME_NOREPLACE | (1U << 31) };
        dsh_write_request r;

        (void) state;
        r = decoded(__NR_renameat2, HIGH | 3, PATH_A, FDCWD_REGISTER, PATH_B, RENAME_NOREPLACE);
        assert_int_equal(r.op, DSH_WRITE_RENAME);
        assert_int_equal(r.dirfd, 3);
        assert_true(r.path == PATH_A);
        assert_int_equal(r.new_dirfd, AT_FDCWD);
        assert_true(r.new_path == PATH_B);
        assert_int_equal(r.rename_flags, RENAME_NOREPLACE);
        for (size_t i = 0; i < sizeof(accepted_flags) / sizeof(accepted_flags[0]); i++) {
                r = decoded(__NR_renameat2, 3, PATH_A, 4, PATH_B, accepted_flags[i]);
                assert_int_equal(r.rename_flags, (unsigned int) accepted_flags[i]);
        }
        for (size_t i = 0; i < sizeof(refused_flags) / sizeof(refused_flags[0]); i++)
                if (refusal(__NR_renameat2, 3, PATH_A, 4, PATH_B, refused_flags[i]) != -EINVAL)
                        fail_msg("renameat2 with flags %#llx is not refused", (unsigned long long) refused_flags[i]);
#ifdef __NR_renameat
        /* renameat has no flags: whatever the fifth register holds is not read. */
        r = decoded(__NR_renameat, 3, PATH_A, HIGH | 4, PATH_B, RENAME_EXCHANGE | RENAME_NOREPLACE);
        assert_int_equal(r.op, DSH_WRITE_RENAME);
        assert_int_equal(r.dirfd, 3);
        assert_int_equal(r.new_dirfd, 4);
        assert_true(r.new_path == PATH_B);
        assert_int_equal(r.rename_flags, 0);
#endif
#ifdef __NR_rename
        r = decoded(__NR_rename, PATH_A, PATH_B, 0, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_RENAME);
        assert_int_equal(r.dirfd, AT_FDCWD);
        assert_true(r.path == PATH_A);
        assert_int_equal(r.new_dirfd, AT_FDCWD);
        assert_true(r.new_path == PATH_B);
        assert_int_equal(r.rename_flags, 0);
#endif
}

/* link, linkat: both names; AT_SYMLINK_FOLLOW follows the source, AT_EMPTY_PATH makes it the dirfd; nothing else. */
static void test_links(void **state)
{
        static const uint64_t refused_flags[] = { AT_SYMLINK_NOFOLLOW, AT_REMOVEDIR, AT_SYMLINK_FOLLOW | 1,
                                                  AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, 0x80000000U };
        dsh_write_request r;

        (void) state;
        r = decoded(__NR_linkat, 3, PATH_A, HIGH | 4, PATH_B, 0);
        assert_int_equal(r.op, DSH_WRITE_LINK);
        assert_int_equal(r.dirfd, 3);
        assert_true(r.path == PATH_A);
        assert_int_equal(r.new_dirfd, 4);
        assert_true(r.new_path == PATH_B);
        assert_false(r.follow);
        assert_false(r.empty_path);
        r = decoded(__NR_linkat, 3, PATH_A, 4, PATH_B, HIGH | AT_SYMLINK_FOLLOW);
        assert_true(r.follow);
        assert_false(r.empty_path);
        r = decoded(__NR_linkat, 3, PATH_A, 4, PATH_B, AT_EMPTY_PATH);
        assert_false(r.follow);
        assert_true(r.empty_path);
        r = decoded(__NR_linkat, 3, PATH_A, 4, PATH_B, AT_EMPTY_PATH | AT_SYMLINK_FOLLOW);
        assert_true(r.follow);
        assert_true(r.empty_path);
        for (size_t i = 0; i < sizeof(refused_flags) / sizeof(refused_flags[0]); i++)
                assert_int_equal(refusal(__NR_linkat, 3, PATH_A, 4, PATH_B, refused_flags[i]), -EINVAL);
#ifdef __NR_link
        /* link(2) follows no symlink. */
        r = decoded(__NR_link, PATH_A, PATH_B, 0, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_LINK);
        assert_int_equal(r.dirfd, AT_FDCWD);
        assert_true(r.path == PATH_A);
        assert_int_equal(r.new_dirfd, AT_FDCWD);
        assert_true(r.new_path == PATH_B);
        assert_false(r.follow);
        assert_false(r.empty_path);
#endif
}

/* symlink, symlinkat: the link made is the name (from the dirfd), the text is only an address. */
static void test_symlinks(void **state)
{
        dsh_write_request r;

        (void) state;
        r = decoded(__NR_symlinkat, TEXT, HIGH | 6, PATH_A, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_SYMLINK);
        assert_true(r.symlink_target == TEXT);
        assert_int_equal(r.dirfd, 6);
        assert_true(r.path == PATH_A);
#ifdef __NR_symlink
        r = decoded(__NR_symlink, TEXT, PATH_B, 0, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_SYMLINK);
        assert_true(r.symlink_target == TEXT);
        assert_int_equal(r.dirfd, AT_FDCWD);
        assert_true(r.path == PATH_B);
#endif
}

/* truncate(path, length): the whole register is the length (a long); a negative one is EINVAL. */
static void test_truncate(void **state)
{
        dsh_write_request r;

        (void) state;
        r = decoded(__NR_truncate, PATH_A, 0x100000000ULL, 0, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_TRUNCATE);
        assert_int_equal(r.dirfd, AT_FDCWD);
        assert_true(r.path == PATH_A);
        assert_true(r.length == 0x100000000LL);
        assert_true(r.follow);
        r = decoded(__NR_truncate, PATH_A, 0, 0, 0, 0);
        assert_true(r.length == 0);
        assert_int_equal(refusal(__NR_truncate, PATH_A, (uint64_t) -1, 0, 0, 0), -EINVAL);
        assert_int_equal(refusal(__NR_truncate, PATH_A, 0x8000000000000000ULL, 0, 0, 0), -EINVAL);
}

/* umask(mask): no write, the mask the supervisor creates with next; only its permission bits count, as in the kernel. */
static void test_umask(void **state)
{
        dsh_write_request r;

        (void) state;
        assert_true(dsh_write_call_is_ours(__NR_umask));
        r = decoded(__NR_umask, 0022, 0, 0, 0, 0);
        assert_int_equal(r.op, DSH_WRITE_UMASK);
        assert_int_equal(r.mode, 0022);
        r = decoded(__NR_umask, 0xffffffff, 0, 0, 0, 0);
        assert_int_equal(r.mode, 0777);
}

static void test_op_names(void **state)
{
        static const struct {
                dsh_write_op op;
                const char *name;
        } names[] = {
                { DSH_WRITE_OPEN, "open" },     { DSH_WRITE_MKDIR, "mkdir" },       { DSH_WRITE_MKNOD, "mknod" },
                { DSH_WRITE_UNLINK, "unlink" }, { DSH_WRITE_RMDIR, "rmdir" },       { DSH_WRITE_RENAME, "rename" },
                { DSH_WRITE_LINK, "link" },     { DSH_WRITE_SYMLINK, "symlink" }, { DSH_WRITE_TRUNCATE, "truncate" },
                { DSH_WRITE_UMASK, "umask" },
        };

        (void) state;
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                assert_string_equal(dsh_write_op_name(names[i].op), names[i].name);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_which_calls_are_ours), cmocka_unit_test(test_opens),
                cmocka_unit_test(test_open_flag_rules),      cmocka_unit_test(test_creations),
                cmocka_unit_test(test_removals),             cmocka_unit_test(test_renames),
                cmocka_unit_test(test_links),                cmocka_unit_test(test_symlinks),
                cmocka_unit_test(test_truncate),             cmocka_unit_test(test_umask),
                cmocka_unit_test(test_op_names),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
