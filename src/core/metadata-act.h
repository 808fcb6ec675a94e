/* SPDX-License-Identifier: MIT */
/*
 * The metadata supervisor's acting half (metadata-supervisor.h holds the
 * security argument): once containment decided that the open target `fd`
 * may change, the change the call asked for is made on that very file —
 * the f* call for a descriptor, the *at call with AT_EMPTY_PATH for an
 * AT_EMPTY_PATH call, our own /proc/thread-self/fd/N for a path — never
 * through a name again.  libc only.
 */
#ifndef DSH_SANDBOX_METADATA_ACT_H
#define DSH_SANDBOX_METADATA_ACT_H

#include <sys/stat.h>

#include "core/metadata-call.h"
#include "core/metadata-tracee.h"

/* Performs `op` on `fd` (fstat in `target`; `p` its copied arguments): 0 or the negative errno to answer. */
int dsh_metadata_act(const dsh_metadata_tracee *tracee, int fd, dsh_metadata_target form,
                     const dsh_metadata_request *op, dsh_metadata_payload *p, const struct stat *target);

#endif
