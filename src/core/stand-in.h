/* SPDX-License-Identifier: MIT */
/*
 * A process that stands in for a command it runs as its child (`dsh-sandbox
 * run` and `landlock-run` under workspace-write, where the metadata
 * supervisor needs a process that stays): its caller must see the command's
 * own end, as if the command had been exec'd in its place.  libc only.
 */
#ifndef DSH_SANDBOX_STAND_IN_H
#define DSH_SANDBOX_STAND_IN_H

/*
 * Ends like the child whose waitpid() status is `wait_status`: returns its
 * exit code for a normal exit; for a death by signal N, dies of N itself
 * (the disposition reset to the default and N unblocked first, and without
 * a core dump of its own: the command's core, if any, is the command's), so
 * that a shell sees "killed by N", not an exit status.  A signal whose
 * default is not to end the process cannot: then returns 128+N.
 */
int dsh_stand_in_end_like(int wait_status);

#endif
