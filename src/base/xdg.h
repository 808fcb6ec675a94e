/* SPDX-License-Identifier: MIT */
/* Where dsh-sandbox keeps its files: one rule for config, state and cache directories. */
#ifndef DSH_SANDBOX_XDG_H
#define DSH_SANDBOX_XDG_H

#include "base/util.h"

/*
 * "$<override_variable>" when set and non-empty, else
 * "$<xdg_variable>/dsh-sandbox", else "$HOME/<home_fallback>/dsh-sandbox".
 * An XDG variable or HOME that is not absolute is ignored, as the XDG base
 * directory specification requires.  `override_variable` may be NULL.
 * Returns a new string (caller frees), or NULL when nothing applies or out of memory.
 */
DSH_INTERNAL char *dsh_xdg_directory(const char *override_variable, const char *xdg_variable,
                                     const char *home_fallback);

/*
 * This user's (the effective uid's) home in /etc/passwd, read with
 * fgetpwent (the CLI is linked statically, where getpwuid's NSS modules are
 * not to be relied on); NULL when the user is not listed there (a directory
 * service) or out of memory.  Caller frees.
 */
DSH_INTERNAL char *dsh_passwd_home(void);

#endif
