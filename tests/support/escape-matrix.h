/* SPDX-License-Identifier: MIT */
/*
 * The escape matrix: one table of hostile file effects, each with the outcome
 * it must have per backend and mode, shared by every backend the sandbox
 * offers.  A case is one operation on one target, run by the `escape-op`
 * helper (one system call) in its own forked process, confined by one backend
 * under one mode, and judged on disk: the watched paths are compared before
 * and after, and the call's errno is checked against the backend's dialect.
 *
 * Backends: bwrap and in-process Landlock through dsh_provider_spawn() with a
 * sole backend, `dsh-sandbox run --backend landlock` (which execs in place
 * under read-only, and stands in for the command under workspace-write, where
 * the metadata supervisor runs in it), and the `landlock-run` launcher
 * invoked directly with the contract's grants.
 * Modes: read-only and workspace-write.  Targets: the workspace, a directory
 * outside every root, the temp area /tmp and /dev/shm.
 */
#ifndef DSH_SANDBOX_ESCAPE_MATRIX_H
#define DSH_SANDBOX_ESCAPE_MATRIX_H

/* The operations of the table, NULL-terminated, each once, in table order. */
const char *const *escape_matrix_operations(void);

/*
 * Runs every case of `operation`: each of its targets × both confined modes ×
 * every backend this host can run (a missing backend or filesystem feature is
 * skipped with a printed reason).  Every case that does not hold is printed
 * (operation, mode, backend, target, expected, observed on disk) and the
 * current cmocka test fails once all of them have run.
 */
void escape_matrix_check_operation(const char *operation);

/*
 * The same cases through `dsh-sandbox why` (docs/denials.md): for each case
 * of `operation` the why questions it asks (each target of its call, as a
 * write, a metadata change or a connect) are put to the CLI, with the
 * case's backend, mode and workspace, before the case runs; then the case
 * runs, and why's answer must be what the backend did on disk — allowed
 * where the change landed, denied where it was refused.  Run by bwrap and
 * in-process Landlock (the policy's two backends).  A row whose refusal is
 * no policy question (a device node, a set-user-ID bit, an io_uring, an
 * inherited fd...) is left out with the reason printed, and so is a case
 * that landed in a private area (nothing on the host to compare).
 */
void escape_matrix_check_why(const char *operation);

/*
 * One cmocka test per operation, named after it, each calling `check`
 * (escape_matrix_check_operation or escape_matrix_check_why) with it, as
 * the group `group`.  Returns cmocka's count of failed tests (1 when out of
 * memory): the test program's exit status.
 */
int escape_matrix_run_group(const char *group, void (*check)(const char *operation));

#endif
