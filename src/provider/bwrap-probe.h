/* SPDX-License-Identifier: MIT */
/* The bwrap backend's probe and its diagnosis (bwrap-probe.c). */
#ifndef DSH_SANDBOX_BWRAP_PROBE_H
#define DSH_SANDBOX_BWRAP_PROBE_H

#include "provider/backend.h"

/* How each of bwrap's own fatal stderr lines begins. */
#define DSH_BWRAP_FATAL_SIGNATURE "bwrap: "

/* The bwrap backend's functional probe into `report` (dsh_backend_ops.probe). */
DSH_INTERNAL void dsh_bwrap_probe(dsh_provider *provider, dsh_backend_report *report);

#endif
