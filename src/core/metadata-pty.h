/* SPDX-License-Identifier: MIT */
/*
 * TIOCGPTPEER for a command whose Landlock domain does not grant /dev/pts
 * (workspace-write): the supervisor opens the slave of the command's own
 * pty master and hands it over (metadata-pty.c says why that gives the
 * command nothing it did not have).  Split from metadata-supervisor.c, whose
 * serving loop sends it here.  libc only.
 */
#ifndef DSH_SANDBOX_METADATA_PTY_H
#define DSH_SANDBOX_METADATA_PTY_H

#include "core/metadata-call.h"
#include "core/metadata-tracee.h"

/* Answers one TIOCGPTPEER notification (`op` decoded): the slave as a new fd of the command, or an errno. */
void dsh_metadata_pty_peer_handle(dsh_metadata_call *c, const dsh_metadata_request *op);

#endif
