/* SPDX-License-Identifier: MIT */
/* The command's own Landlock domain (core/own-domain.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/own-domain.h"

bool dsh_landlock_own_domain_available(void)
{
        return dsh_landlock_abi() >= 2;
}

/* REFER beneath "/" in `ruleset`.  Returns 0 or a negative errno. */
static int grant_refer_everywhere(dsh_landlock_ruleset *ruleset)
{
        int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        int result;

        if (root < 0)
                return -errno;
        result = dsh_landlock_ruleset_add_rule(ruleset, root, DSH_LANDLOCK_ACCESS_FS_REFER, true);
        close(root);
        return result;
}

int dsh_landlock_enter_own_domain(const dsh_read_mask *mask, const char **failed_path)
{
        struct dsh_landlock_ruleset_attr attr = { 0 };
        dsh_landlock_ruleset ruleset = DSH_LANDLOCK_RULESET_INIT;
        int abi = dsh_landlock_abi();
        long fd;
        int result;

        if (abi < 0)
                return abi;
        /*
         * A domain that does not handle REFER refuses every rename and link
         * across directories (EXDEV), as ABI 1 did, so REFER is handled and
         * granted beneath "/": nothing moves that the mounts would not let
         * move.  Below ABI 2 that cannot be said, and no domain is entered.
         */
        if (abi < 2)
                return -EOPNOTSUPP;
        /* Block devices are never made by a capability-less process anyway: this handles a right nobody has. */
        attr.handled_access_fs = DSH_LANDLOCK_ACCESS_FS_MAKE_BLOCK | DSH_LANDLOCK_ACCESS_FS_REFER;
        /*
         * Reading is handled only to hold a mask: then what the mounts show
         * is readable except the masks (core/read-mask.h).  EXECUTE stays
         * unhandled, and an exec needs READ_FILE anyway, so a masked file
         * cannot be run to read it either.
         */
        if (mask)
                attr.handled_access_fs |= DSH_LANDLOCK_ACCESS_FS_READ_FILE | DSH_LANDLOCK_ACCESS_FS_READ_DIR;
        attr.scoped = dsh_landlock_scopes(abi);
        fd = syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
        if (fd < 0)
                return -errno;
        ruleset.fd = (int) fd;
        ruleset.abi = abi;
        ruleset.handled_access = attr.handled_access_fs;
        ruleset.scoped = attr.scoped;
        result = grant_refer_everywhere(&ruleset);
        if (result == 0 && mask) {
                result = dsh_read_mask_grant(&ruleset,
                                             DSH_LANDLOCK_ACCESS_FS_READ_FILE | DSH_LANDLOCK_ACCESS_FS_READ_DIR, mask,
                                             failed_path);
                result = result < 0 ? result : 0;
        }
        if (result == 0)
                result = dsh_landlock_enforce(ruleset.fd);
        dsh_landlock_ruleset_close(&ruleset);
        return result;
}
