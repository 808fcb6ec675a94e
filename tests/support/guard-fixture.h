/* SPDX-License-Identifier: MIT */
/*
 * The file guard's tests share this: a scratch tree with a workspace, a
 * directory outside every root and an extra writable root; a runtime whose
 * own files lie outside all three; guards for each mode; and snapshots of a
 * directory tree (every entry, its type, mode and content) to prove on disk
 * that nothing changed.
 */
#ifndef DSH_SANDBOX_GUARD_FIXTURE_H
#define DSH_SANDBOX_GUARD_FIXTURE_H

#include "dsh-sandbox/file-guard.h"
#include "dsh-sandbox/runtime.h"

typedef struct guard_fixture {
        char *scratch;          /* holds everything below, and HOME and the XDG directories */
        char *workspace;        /* the workspace root: holds "file" ("old\n") and "tree/a/b" */
        char *outside;          /* outside every root: holds "secret" ("original\n") */
        char *extra;            /* an additional writable root */
        char *launchers;        /* this build's landlock-run and dsh-sandbox-exec */
        dsh_runtime *runtime;
} guard_fixture;

/* Makes the tree, sets HOME and XDG_* beneath the scratch (for this process and the programs it runs), the runtime. */
void guard_fixture_setup(guard_fixture *fixture);
void guard_fixture_teardown(guard_fixture *fixture);

/* A runtime with `backend` (NULL: the chain) and the session store in `state_directory` (NULL: the scratch's). */
dsh_runtime *guard_fixture_runtime(const guard_fixture *fixture, const char *backend, const char *state_directory);

/* The policy `mode` resolves to with the workspace and the extra root, through `runtime`; caller clears it. */
void guard_fixture_policy(const guard_fixture *fixture, dsh_runtime *runtime, dsh_mode mode, dsh_policy *policy);

/* A guard for `mode` over the fixture's runtime and roots; the test fails when it cannot be made. */
dsh_file_guard *guard_fixture_guard(const guard_fixture *fixture, dsh_mode mode);

/* "<directory>/<name>", caller frees. */
char *guard_fixture_path(const char *directory, const char *name);

/*
 * Every entry beneath `directory` (itself included), sorted: its path
 * relative to `directory`, type, permission bits, and for a file its
 * content, for a symlink its target.  Caller frees.
 */
char *guard_fixture_snapshot(const char *directory);

/* Fails the test unless `result` is -EACCES with FS_SANDBOX_DENIED and the exact text for `path` and `mode`. */
void guard_fixture_expect_denied(int result, dsh_error *error, const char *path, dsh_mode mode);

/* Fails the test unless `result` failed with `code`; returns nothing, clears `error`. */
void guard_fixture_expect_code(int result, dsh_error *error, dsh_error_code code);

#endif
