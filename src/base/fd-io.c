/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <unistd.h>

#include "base/fd-io.h"

int dsh_write_all(int fd, const void *bytes, size_t length)
{
        const char *cursor = bytes;

        while (length > 0) {
                ssize_t written = write(fd, cursor, length);

                if (written < 0 && errno == EINTR)
                        continue;
                if (written <= 0)
                        return written < 0 ? -errno : -EIO;
                cursor += written;
                length -= (size_t) written;
        }
        return 0;
}
