/* SPDX-License-Identifier: MIT */
/* The probe's confinement proof: a write that must fail, judged so that no other process can fake it. */
#ifndef DSH_SANDBOX_CONFINEMENT_PROOF_H
#define DSH_SANDBOX_CONFINEMENT_PROOF_H

#include "provider/backend.h"

/*
 * Proves that `backend`, which its probe found usable, confines: a
 * read-only confined shell tries to create a file outside its policy
 * (confinement-proof.c says where, and how it is judged).  Leaves `report`
 * usable when no such file appeared; otherwise makes it unusable with its
 * reason, `transient` unless two runs each proved the escape.  A usable
 * report whose proof was disturbed gets a note and `transient` (not
 * persisted).  Runs under the probe's deadline.
 */
DSH_INTERNAL void dsh_confinement_proof(dsh_provider *provider, const dsh_backend_ops *backend,
                                        dsh_backend_report *report);

#endif
