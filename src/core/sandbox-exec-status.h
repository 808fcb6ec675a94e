/* SPDX-License-Identifier: MIT */
/*
 * The record dsh-sandbox-exec writes on its status fd when the command could
 * not be started inside the bwrap sandbox.  One line, written with a single
 * write(2) before the helper exits:  "<kind> <errno> <text>\n".  Nothing is
 * written when the exec succeeds (the fd is close-on-exec), so the command
 * never holds the channel and cannot forge a record.  libc only.
 */
#ifndef DSH_SANDBOX_CORE_SANDBOX_EXEC_STATUS_H
#define DSH_SANDBOX_CORE_SANDBOX_EXEC_STATUS_H

#include <stddef.h>

typedef enum dsh_sandbox_exec_status_kind {
        DSH_SANDBOX_EXEC_STATUS_NONE = 0,
        DSH_SANDBOX_EXEC_STATUS_EXEC,     /* execvp() failed: the command could not be executed */
        DSH_SANDBOX_EXEC_STATUS_HELPER,   /* the helper could not prepare the command: a runner failure */
} dsh_sandbox_exec_status_kind;

/* Writes one record; best effort (the parent reads a missing record as "exec'd"). */
void dsh_sandbox_exec_status_write(int fd, dsh_sandbox_exec_status_kind kind, int errno_value, const char *text);

/*
 * Parses what was read from the status fd (NUL-terminated).  Returns the
 * kind (NONE for empty or malformed input), with the errno and the text
 * (at most `text_size` - 1 bytes, NUL-terminated) filled in.
 */
dsh_sandbox_exec_status_kind dsh_sandbox_exec_status_parse(const char *record, int *errno_value, char *text,
                                                           size_t text_size);

#endif
