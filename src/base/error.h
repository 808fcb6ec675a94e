/* SPDX-License-Identifier: MIT */
/* Internal constructors for dsh_error: every coded message in the library is built here. */
#ifndef DSH_SANDBOX_ERROR_H
#define DSH_SANDBOX_ERROR_H

#include <stdarg.h>

#include "dsh-sandbox/sandbox.h"
#include "base/util.h"

/* The enum's last code: a loop over every code ends here. */
#define DSH_ERROR_CODE_LAST DSH_ERROR_FS_TOO_LARGE

/*
 * Sets `error` (when not NULL) to `code` with a formatted message and returns
 * -errno_value (or -EINVAL when errno_value is 0), so a failure path reads
 * `return dsh_error_set(error, ...);`.  An earlier message is replaced.
 */
DSH_INTERNAL int dsh_error_set(dsh_error *error, dsh_error_code code, int errno_value, const char *format, ...)
        __attribute__((format(printf, 4, 5)));

/*
 * dsh_error_set() with the message "<prefix><formatted>", for modules that
 * name where an error was found (a config key, a log line) in front of what.
 * `prefix` may be NULL.
 */
DSH_INTERNAL int dsh_error_vset(dsh_error *error, dsh_error_code code, int errno_value, const char *prefix,
                                const char *format, va_list arguments) __attribute__((format(printf, 5, 0)));

/*
 * A copy of `text`, input that a message quotes (a parser's complaint that
 * cites the bytes it choked on), with each C0 control character written as
 * \xNN: the message stays one line and no escape sequence reaches a
 * terminal.  Returns a new string (caller frees), or NULL when out of memory.
 */
DSH_INTERNAL char *dsh_error_printable_text(const char *text);

/*
 * The code's name in a JSON error object: the spec's code where it has one
 * (dsh_error_code_name: "SANDBOX_UNAVAILABLE", ...), else the enum's own
 * name without its prefix ("INVALID_INPUT", "INVARIANT", "SYSTEM",
 * "EXEC_FAILED"), so that every code survives a process boundary.  NULL for
 * DSH_ERROR_NONE.  A static string.
 */
DSH_INTERNAL const char *dsh_error_code_wire_name(dsh_error_code code);

/* The inverse, exact and case-sensitive: 0, or -EINVAL for a name no code has (DSH_ERROR_NONE has none). */
DSH_INTERNAL int dsh_error_code_from_wire_name(const char *name, dsh_error_code *code_out);

/*
 * SANDBOX_UNAVAILABLE with the spec's exact message for `mode`; a non-NULL
 * `detail` appends " Runner failure: <detail>".  Returns -ENOSYS.
 */
DSH_INTERNAL int dsh_error_set_unavailable(dsh_error *error, dsh_mode mode, const char *detail);

#endif
