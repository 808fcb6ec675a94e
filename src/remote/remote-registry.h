/* SPDX-License-Identifier: MIT */
/*
 * The per-user registry of ssh control directories (docs/remote.md "The
 * control directory"): every directory a call of this user made to hold
 * a master, an endpoint or the remote service's socket, whatever
 * XDG_RUNTIME_DIR or HOME that call had, so that every runtime protects
 * them all, not only the one its own environment names.
 */
#ifndef DSH_REMOTE_REGISTRY_H
#define DSH_REMOTE_REGISTRY_H

#include <stdbool.h>

#include "base/util.h"

/* <passwd home>/.cache/dsh-sandbox/registry: the registry's own directory, protected and hidden.  Caller frees. */
DSH_INTERNAL char *dsh_remote_registry_directory(void);

/*
 * Records `directory` (an existing directory; its canonical path is
 * recorded).  0, or a negative errno: the caller then does not use the
 * directory (a control directory no runtime would protect).
 */
DSH_INTERNAL int dsh_remote_registry_add(const char *directory);

/*
 * The registered directories that exist now (a NULL-ended list, or NULL
 * when there are none) in *directories.  0; or a negative errno when the registry is
 * there but not trusted (a symlink, not a regular file, not this user's,
 * writable by others, too large): the caller refuses to build a sandbox.
 */
DSH_INTERNAL int dsh_remote_registry_list(char ***directories);

#endif
