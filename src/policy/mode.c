/* SPDX-License-Identifier: MIT */
/* Modes and enforcement: parsing, names and the escalation order. */
#include <errno.h>
#include <string.h>

#include "dsh-sandbox/sandbox.h"

const char *const dsh_sandbox_modes[DSH_MODE_COUNT + 1] = {
        [DSH_MODE_READ_ONLY] = "read-only",
        [DSH_MODE_WORKSPACE_WRITE] = "workspace-write",
        [DSH_MODE_DANGER_FULL_ACCESS] = "danger-full-access",
        [DSH_MODE_COUNT] = NULL,
};

int dsh_mode_parse(const char *name, dsh_mode *mode_out)
{
        if (!name)
                return -EINVAL;
        for (int mode = 0; mode < DSH_MODE_COUNT; mode++) {
                if (strcmp(name, dsh_sandbox_modes[mode]) == 0) {
                        *mode_out = (dsh_mode) mode;
                        return 0;
                }
        }
        return -EINVAL;
}

const char *dsh_mode_name(dsh_mode mode)
{
        if ((unsigned) mode >= DSH_MODE_COUNT)
                return "invalid";
        return dsh_sandbox_modes[mode];
}

bool dsh_mode_is_confined(dsh_mode mode)
{
        return mode == DSH_MODE_READ_ONLY || mode == DSH_MODE_WORKSPACE_WRITE;
}

/* The enum is declared in widening order, so "strictly wider" is "greater". */
bool dsh_mode_is_wider(dsh_mode wider, dsh_mode narrower)
{
        return (unsigned) wider < DSH_MODE_COUNT && (unsigned) narrower < DSH_MODE_COUNT && wider > narrower;
}

const char *dsh_enforcement_name(dsh_enforcement enforcement)
{
        return enforcement == DSH_ENFORCEMENT_FULL ? "full" : "partial";
}
