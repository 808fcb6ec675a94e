/* SPDX-License-Identifier: MIT */
/* The config loader's entry for text already in memory: the fuzz target's way in. */
#ifndef DSH_SANDBOX_CONFIG_INTERNAL_H
#define DSH_SANDBOX_CONFIG_INTERNAL_H

#include <stddef.h>

#include "dsh-sandbox/config.h"
#include "base/util.h"

/*
 * dsh_config_load_file() over the `length` bytes at `text` instead of a
 * file's contents, through the same parse and the same checks; `name` stands
 * for the path in error messages.  On failure `config` is unchanged.
 */
DSH_INTERNAL int dsh_config_load_buffer(dsh_config *config, const char *name, const char *text, size_t length,
                                        dsh_error *error);

#endif
