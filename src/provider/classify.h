/* SPDX-License-Identifier: MIT */
/* Classification internals for modules that read a command's stderr as a stream (the bash tool). */
#ifndef DSH_SANDBOX_CLASSIFY_H
#define DSH_SANDBOX_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

/*
 * The denial rule's text half (dsh_is_denial): one of `signatures` occurs,
 * case-insensitively, in the `length` bytes at `text` (NUL bytes included,
 * which no signature spans).
 */
DSH_INTERNAL bool dsh_text_has_signature(char *const *signatures, const char *text, size_t length);

/* The longest signature's length, 0 for none: how much of a stream's past a match can straddle. */
DSH_INTERNAL size_t dsh_signatures_longest(char *const *signatures);

#endif
