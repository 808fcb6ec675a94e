/* SPDX-License-Identifier: MIT */
/* The typed error: spec codes and their exact messages. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

const char *dsh_error_code_name(dsh_error_code code)
{
        switch (code) {
        case DSH_ERROR_SANDBOX_UNAVAILABLE:
                return "SANDBOX_UNAVAILABLE";
        case DSH_ERROR_SANDBOX_PREPARATION_FAILED:
                return "SANDBOX_PREPARATION_FAILED";
        case DSH_ERROR_SANDBOX_INVALID_TEMP_ROOT:
                return "SANDBOX_INVALID_TEMP_ROOT";
        case DSH_ERROR_SANDBOX_INVALID_ROOT:
                return "SANDBOX_INVALID_ROOT";
        case DSH_ERROR_FS_SANDBOX_DENIED:
                return "FS_SANDBOX_DENIED";
        case DSH_ERROR_FS_NOT_FOUND:
                return "FS_NOT_FOUND";
        case DSH_ERROR_FS_NOT_A_DIRECTORY:
                return "FS_NOT_A_DIRECTORY";
        case DSH_ERROR_FS_IS_A_DIRECTORY:
                return "FS_IS_A_DIRECTORY";
        case DSH_ERROR_FS_ALREADY_EXISTS:
                return "FS_ALREADY_EXISTS";
        case DSH_ERROR_FS_NOT_EMPTY:
                return "FS_NOT_EMPTY";
        case DSH_ERROR_FS_TEXT_NOT_FOUND:
                return "FS_TEXT_NOT_FOUND";
        case DSH_ERROR_FS_TEXT_NOT_UNIQUE:
                return "FS_TEXT_NOT_UNIQUE";
        case DSH_ERROR_FS_TOO_LARGE:
                return "FS_TOO_LARGE";
        case DSH_ERROR_NONE:
        case DSH_ERROR_INVARIANT:
        case DSH_ERROR_INVALID_INPUT:
        case DSH_ERROR_SYSTEM:
        case DSH_ERROR_EXEC_FAILED:
                break;
        }
        return NULL;
}

const char *dsh_error_code_wire_name(dsh_error_code code)
{
        switch (code) {
        case DSH_ERROR_INVARIANT:
                return "INVARIANT";
        case DSH_ERROR_INVALID_INPUT:
                return "INVALID_INPUT";
        case DSH_ERROR_SYSTEM:
                return "SYSTEM";
        case DSH_ERROR_EXEC_FAILED:
                return "EXEC_FAILED";
        case DSH_ERROR_NONE:
        case DSH_ERROR_SANDBOX_UNAVAILABLE:
        case DSH_ERROR_SANDBOX_PREPARATION_FAILED:
        case DSH_ERROR_SANDBOX_INVALID_TEMP_ROOT:
        case DSH_ERROR_SANDBOX_INVALID_ROOT:
        case DSH_ERROR_FS_SANDBOX_DENIED:
        case DSH_ERROR_FS_NOT_FOUND:
        case DSH_ERROR_FS_NOT_A_DIRECTORY:
        case DSH_ERROR_FS_IS_A_DIRECTORY:
        case DSH_ERROR_FS_ALREADY_EXISTS:
        case DSH_ERROR_FS_NOT_EMPTY:
        case DSH_ERROR_FS_TEXT_NOT_FOUND:
        case DSH_ERROR_FS_TEXT_NOT_UNIQUE:
        case DSH_ERROR_FS_TOO_LARGE:
                break;
        }
        return dsh_error_code_name(code);
}

int dsh_error_code_from_wire_name(const char *name, dsh_error_code *code_out)
{
        /* Every code but NONE, which no error object carries. */
        for (dsh_error_code code = DSH_ERROR_SANDBOX_UNAVAILABLE; code <= DSH_ERROR_CODE_LAST; code++)
                if (name && strcmp(name, dsh_error_code_wire_name(code)) == 0) {
                        *code_out = code;
                        return 0;
                }
        return -EINVAL;
}

void dsh_error_clear(dsh_error *error)
{
        if (!error)
                return;
        free(error->message);
        *error = (dsh_error) DSH_ERROR_INIT;
}

int dsh_error_vset(dsh_error *error, dsh_error_code code, int errno_value, const char *prefix,
                   const char *format, va_list arguments)
{
        int result = errno_value > 0 ? -errno_value : -EINVAL;
        char *reason = NULL, *message = NULL;

        if (!error)
                return result;
        if (vasprintf(&reason, format, arguments) < 0)
                reason = NULL;
        if (reason && prefix && asprintf(&message, "%s%s", prefix, reason) < 0)
                message = NULL;
        free(error->message);
        error->code = code;
        error->errno_value = errno_value;
        /* NULL only when out of memory; callers print the code then */
        error->message = prefix ? message : reason;
        if (prefix)
                free(reason);
        return result;
}

char *dsh_error_printable_text(const char *text)
{
        size_t length = 0;
        char *printable;

        for (const unsigned char *byte = (const unsigned char *) text; *byte; byte++)
                length += *byte < 0x20 ? 4 : 1;
        printable = malloc(length + 1);
        if (!printable)
                return NULL;
        length = 0;
        for (const unsigned char *byte = (const unsigned char *) text; *byte; byte++) {
                if (*byte < 0x20)
                        length += (size_t) snprintf(printable + length, 5, "\\x%02x", *byte);
                else
                        printable[length++] = (char) *byte;
        }
        printable[length] = '\0';
        return printable;
}

int dsh_error_set(dsh_error *error, dsh_error_code code, int errno_value, const char *format, ...)
{
        va_list arguments;
        int result;

        va_start(arguments, format);
        result = dsh_error_vset(error, code, errno_value, NULL, format, arguments);
        va_end(arguments);
        return result;
}

int dsh_error_set_unavailable(dsh_error *error, dsh_mode mode, const char *detail)
{
#define UNAVAILABLE_TEMPLATE                                                                    \
                "sandbox mode \"%s\" is requested but no sandbox backend is usable on this host; "          \
                "refusing to run the command unconfined. Install bubblewrap or run a Landlock-enforcing "   \
                "kernel (Linux), ensure sandbox-exec is usable (macOS), or ensure the ACL "               \
                "restricted-token runner can start (Windows) \xe2\x80\x94 otherwise switch the consumer "    \
                "to danger-full-access.%s%s"

        dsh_error_set(error, DSH_ERROR_SANDBOX_UNAVAILABLE, ENOSYS, UNAVAILABLE_TEMPLATE, dsh_mode_name(mode),
                      detail ? " Runner failure: " : "", detail ? detail : "");
        return -ENOSYS;
}
