/* SPDX-License-Identifier: MIT */
/* Internal helpers shared by the library's modules: cleanup attributes and fd ownership. */
#ifndef DSH_SANDBOX_UTIL_H
#define DSH_SANDBOX_UTIL_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define DSH_INTERNAL __attribute__((visibility("hidden")))

static inline void dsh_free_pointer(void *pointer)
{
        free(*(void **) pointer);
}

static inline void dsh_close_fd_pointer(int *fd)
{
        if (*fd >= 0) {
                int saved_errno = errno;
                close(*fd);
                errno = saved_errno;
        }
}

#define dsh_autofree __attribute__((cleanup(dsh_free_pointer)))
#define dsh_autoclose __attribute__((cleanup(dsh_close_fd_pointer)))

/* Takes ownership out of a cleanup-managed local: returns the value and resets the source. */
#define dsh_steal_pointer(pointer_address)                                     \
        ({                                                                     \
                __typeof__(*(pointer_address)) stolen_ = *(pointer_address);   \
                *(pointer_address) = NULL;                                     \
                stolen_;                                                       \
        })

#define dsh_take_fd(fd_address)                                                \
        ({                                                                     \
                int taken_ = *(fd_address);                                    \
                *(fd_address) = -1;                                            \
                taken_;                                                        \
        })

#endif
