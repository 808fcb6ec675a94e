/* SPDX-License-Identifier: MIT */
/* Whole writes to an fd: the one copy of the loop every writer of the library needs. */
#ifndef DSH_SANDBOX_FD_IO_H
#define DSH_SANDBOX_FD_IO_H

#include <stddef.h>

#include "base/util.h"

/*
 * Writes all `length` bytes to `fd`, again after EINTR and after a short
 * write.  Returns 0, or a negative errno (-EIO for a write that took
 * nothing, so a broken fd cannot spin the loop).
 */
DSH_INTERNAL int dsh_write_all(int fd, const void *bytes, size_t length);

#endif
