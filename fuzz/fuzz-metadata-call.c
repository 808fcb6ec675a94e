/* SPDX-License-Identifier: MIT */
/*
 * The metadata supervisor's decoding of a hostile command's call
 * (src/core/metadata-call.h) over arbitrary input: the first 4 bytes are the
 * system call number (its low 10 bits, so that most inputs land near the
 * metadata calls), the next 48 the six raw arguments, the rest a path that
 * may name the thread's own descriptor.  Beyond memory errors and UB it
 * checks what the supervisor relies on: a decoded call is one of the kinds
 * with a known target form; a refusal is a negative errno; a descriptor
 * path is parsed only when it reads back as itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/metadata-call.h"
#include "fuzz-support.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void) argc;
        (void) argv;
        return 0;
}

static void check_request(int result, const dsh_metadata_request *request)
{
        if (result < 0) {
                FUZZ_CHECK(result == -EINVAL || result == -E2BIG || result == -EACCES);
                return;
        }
        FUZZ_CHECK(result == 0);
        FUZZ_CHECK(request->kind >= DSH_METADATA_CHMOD && request->kind <= DSH_METADATA_PTY_PEER);
        FUZZ_CHECK(request->form == DSH_METADATA_TARGET_PATH || request->form == DSH_METADATA_TARGET_DESCRIPTOR);
        /* A descriptor form names a descriptor, or nothing that can be one (-1: EBADF when it is used). */
        if (request->form == DSH_METADATA_TARGET_DESCRIPTOR)
                FUZZ_CHECK(request->dirfd >= -1);
        if (request->kind == DSH_METADATA_IOCTL || request->kind == DSH_METADATA_PTY_PEER)
                FUZZ_CHECK(request->form == DSH_METADATA_TARGET_DESCRIPTOR);
        if (request->kind == DSH_METADATA_PTY_PEER)
                FUZZ_CHECK((request->pty_peer_flags & ~(O_ACCMODE | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)) == 0);
        if (request->kind == DSH_METADATA_FILE_SETATTR)
                FUZZ_CHECK(request->struct_size >= 24 && request->struct_size <= 4096);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        dsh_metadata_request request;
        uint64_t args[6] = { 0 };
        uint32_t number = 0;
        char *path;
        int fd = -1;

        if (size < sizeof(number) + sizeof(args))
                return 0;
        memcpy(&number, data, sizeof(number));
        memcpy(args, data + sizeof(number), sizeof(args));
        check_request(dsh_metadata_request_decode((int) (number & 1023), args, &request), &request);
        path = strndup((const char *) data + sizeof(number) + sizeof(args), size - sizeof(number) - sizeof(args));
        FUZZ_CHECK(path != NULL);
        if (dsh_metadata_own_descriptor_path(path, &fd)) {
                char again[64];

                FUZZ_CHECK(fd >= 0);
                snprintf(again, sizeof(again), strncmp(path, "/proc/self/", 11) == 0 ? "/proc/self/fd/%d"
                                                                                      : "/proc/thread-self/fd/%d", fd);
                FUZZ_CHECK(strcmp(again, path) == 0);
        }
        free(path);
        return 0;
}
