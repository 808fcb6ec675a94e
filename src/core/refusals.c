/* SPDX-License-Identifier: MIT */
/* The per-call record of refused writes: see refusals.h. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/refusals.h"

static char *copy_path(const char *path)
{
        size_t length = strnlen(path, PATH_MAX);
        char *copy = malloc(length + 1);

        if (!copy)
                return NULL;
        memcpy(copy, path, length);
        copy[length] = '\0';
        return copy;
}

static int same_as_last(const dsh_refusals *refusals, const char *op, const char *path, dsh_refusal_rule rule)
{
        const dsh_refusal *last;

        if (refusals->count == 0)
                return 0;
        last = &refusals->items[refusals->count - 1];
        return last->rule == rule && strcmp(last->op, op) == 0 && strncmp(last->path, path, PATH_MAX) == 0;
}

void dsh_refusals_add(dsh_refusals *refusals, const char *op, const char *path, dsh_refusal_rule rule)
{
        char *copy;

        if (same_as_last(refusals, op, path, rule))
                return;
        if (refusals->count == DSH_REFUSALS_MAX) {
                refusals->dropped++;
                return;
        }
        copy = copy_path(path);
        if (!copy) {
                refusals->dropped++;
                return;
        }
        refusals->items[refusals->count++] = (dsh_refusal) { op, copy, rule };
}

void dsh_refusals_move(dsh_refusals *to, dsh_refusals *from)
{
        for (size_t i = 0; i < from->count; i++) {
                if (to->count < DSH_REFUSALS_MAX) {
                        to->items[to->count++] = from->items[i];
                } else {
                        free(from->items[i].path);
                        to->dropped++;
                }
        }
        to->dropped += from->dropped;
        from->count = 0;
        from->dropped = 0;
}

void dsh_refusals_clear(dsh_refusals *refusals)
{
        for (size_t i = 0; i < refusals->count; i++)
                free(refusals->items[i].path);
        refusals->count = 0;
        refusals->dropped = 0;
}

const char *dsh_refusal_rule_name(dsh_refusal_rule rule)
{
        switch (rule) {
        case DSH_REFUSAL_OUTSIDE_ROOTS:
                return "outside-roots";
        case DSH_REFUSAL_PROTECTED_SUBPATH:
                return "protected-subpath";
        case DSH_REFUSAL_OWN_FILE:
                return "own-file";
        case DSH_REFUSAL_MASKED_PATH:
                return "masked-path";
        case DSH_REFUSAL_UNIX_SOCKET:
                return "unix-socket";
        case DSH_REFUSAL_ABSTRACT_SOCKET:
                return "abstract-socket";
        }
        return "outside-roots";
}
