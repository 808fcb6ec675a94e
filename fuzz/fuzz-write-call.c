/* SPDX-License-Identifier: MIT */
/*
 * The write supervisor's decoding of a hostile command's write-intent call
 * (src/core/write-call.h) over arbitrary input: the first 4 bytes are the
 * system call number (its low 9 bits, so that most inputs land near the
 * write-intent calls), the next 48 the six raw arguments.  Beyond memory
 * errors and UB it checks what the supervisor relies on: a call is decoded
 * exactly when it is ours, a refusal is -EINVAL (a flag the kernel refuses)
 * or -EACCES (not ours); a decoded open carries only flags the kernel keeps
 * and a mode only when it creates; a decoded rename, link or truncate obeys
 * the kernel's flag rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "core/write-call.h"
#include "fuzz-support.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1U << 0)
#define RENAME_EXCHANGE (1U << 1)
#define RENAME_WHITEOUT (1U << 2)
#endif
#define KERNEL_O_TMPFILE_BIT 020000000

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void) argc;
        (void) argv;
        return 0;
}

static void check_open(const dsh_write_request *request)
{
        const int flags = request->open_flags;
        const int creates = flags & (O_CREAT | KERNEL_O_TMPFILE_BIT);

        FUZZ_CHECK((flags & ~(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_SYNC |
                              O_ASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC |
                              O_PATH | KERNEL_O_TMPFILE_BIT)) == 0);
        if (flags & O_PATH)
                FUZZ_CHECK((flags & ~(O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == 0);
        FUZZ_CHECK(!((flags & O_CREAT) && (flags & O_DIRECTORY)));
        if (flags & KERNEL_O_TMPFILE_BIT)
                FUZZ_CHECK((flags & O_DIRECTORY) && !(flags & O_CREAT) && (flags & O_ACCMODE) != O_RDONLY);
        FUZZ_CHECK((request->mode & ~07777U) == 0);
        if (!creates)
                FUZZ_CHECK(request->mode == 0);
        FUZZ_CHECK(request->follow == !(flags & O_NOFOLLOW));
}

static void check_request(int nr, int result, const dsh_write_request *request)
{
        FUZZ_CHECK(result == 0 || result == -EINVAL || result == -EACCES);
        /* What is not ours is refused, and only that is refused with EACCES. */
        FUZZ_CHECK((result == -EACCES) == !dsh_write_call_is_ours(nr));
        if (result < 0)
                return;
        FUZZ_CHECK(request->op >= DSH_WRITE_OPEN && request->op <= DSH_WRITE_UMASK);
        FUZZ_CHECK(dsh_write_op_name(request->op)[0] != '\0');
        switch (request->op) {
        case DSH_WRITE_OPEN:
                check_open(request);
                break;
        case DSH_WRITE_RENAME:
                FUZZ_CHECK((request->rename_flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)) == 0);
                if (request->rename_flags & RENAME_EXCHANGE)
                        FUZZ_CHECK(request->rename_flags == RENAME_EXCHANGE);
                break;
        case DSH_WRITE_TRUNCATE:
                FUZZ_CHECK(request->length >= 0);
                break;
        case DSH_WRITE_MKDIR:
        case DSH_WRITE_MKNOD:
                FUZZ_CHECK(request->mode <= 0xffff);
                break;
        case DSH_WRITE_UMASK:
                FUZZ_CHECK((request->mode & ~0777U) == 0);
                break;
        case DSH_WRITE_UNLINK:
        case DSH_WRITE_RMDIR:
        case DSH_WRITE_LINK:
        case DSH_WRITE_SYMLINK:
                break;
        }
        /* Only a link may name its source by the dirfd alone. */
        if (request->op != DSH_WRITE_LINK)
                FUZZ_CHECK(!request->empty_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        dsh_write_request request;
        uint64_t args[6] = { 0 };
        uint32_t number = 0;
        int nr;

        if (size < sizeof(number) + sizeof(args))
                return 0;
        memcpy(&number, data, sizeof(number));
        memcpy(args, data + sizeof(number), sizeof(args));
        nr = (int) (number & 511);
        check_request(nr, dsh_write_request_decode(nr, args, &request), &request);
        return 0;
}
