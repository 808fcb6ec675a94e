/* SPDX-License-Identifier: MIT */
/*
 * The command's own Landlock domain, entered by dsh-sandbox-exec inside
 * bwrap's sandbox: for the domain itself (out of reach of bwrap's init),
 * and, given a read mask, as bwrap's inner read layer (core/read-mask.h).
 * libc only, like the rest of core/.
 */
#ifndef DSH_SANDBOX_OWN_DOMAIN_H
#define DSH_SANDBOX_OWN_DOMAIN_H

#include <stdbool.h>

#include "core/read-mask.h"

/*
 * Puts the calling thread in a Landlock domain of its own that takes away
 * no file right it uses (it handles only the making of block devices, which
 * it grants nowhere, and renaming across directories, which it grants
 * everywhere), with every scope the ABI has.  What it is for is the
 * domain itself: a process in a domain can ptrace, and open the /proc
 * entries that need ptrace access (fd/, mem, root, environ), only of
 * processes in the same domain or one nested in it, and (ABI 6) signal only
 * those.  Under bwrap this keeps the sandbox's init — bwrap's pid 1, which
 * no seccomp filter governs and which holds the caller's stdio — out of the
 * command's reach.
 *
 * With `mask` (NULL: none), the domain also handles READ_FILE and READ_DIR
 * and grants them beneath "/" through dsh_read_mask_grant(), the masks left
 * out: what bwrap's mounts cannot hide (a mask absent at the start, a
 * wildcard's directory) stays unreadable.  Enumerated here, so inside
 * whatever mount namespace the caller is in (bwrap's, after its mounts).  A
 * failure of the enumeration enters no domain: -E2BIG or another errno,
 * with *failed_path (may be NULL) naming where.
 *
 * Returns 0 or a negative errno (-ENOSYS, -EOPNOTSUPP: no Landlock on this
 * kernel, or only ABI 1, whose domains refuse every rename across
 * directories).
 */
int dsh_landlock_enter_own_domain(const dsh_read_mask *mask, const char **failed_path);

/*
 * Whether this kernel can enter such a domain at all (ABI 2 and up): below
 * it, dsh_landlock_enter_own_domain() enters none, and a read mask asked of
 * it is not held (the bwrap backend reports it).
 */
bool dsh_landlock_own_domain_available(void);

#endif
