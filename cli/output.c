/* SPDX-License-Identifier: MIT */
/* Error and usage output: one line on stderr, in the shape of docs/cli.md. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

void cli_print_error(const dsh_error *error)
{
        const char *code = dsh_error_code_name(error->code);
        const char *message = error->message ? error->message : strerror(error->errno_value ? error->errno_value : EINVAL);

        if (code)
                fprintf(stderr, "dsh-sandbox: %s: %s\n", code, message);
        else
                fprintf(stderr, "dsh-sandbox: %s\n", message);
}

int cli_write_all(int fd, const void *bytes, size_t length)
{
        const char *cursor = bytes;

        while (length > 0) {
                ssize_t written = write(fd, cursor, length);

                if (written < 0 && errno == EINTR)
                        continue;
                if (written <= 0)
                        return written < 0 ? -errno : -EIO;
                cursor += written;
                length -= (size_t) written;
        }
        return 0;
}

void cli_print_message(const char *format, ...)
{
        va_list arguments;

        fputs("dsh-sandbox: ", stderr);
        va_start(arguments, format);
        vfprintf(stderr, format, arguments);
        va_end(arguments);
        fputc('\n', stderr);
}

int cli_usage_error(const char *format, ...)
{
        va_list arguments;

        fputs("dsh-sandbox: usage error: ", stderr);
        va_start(arguments, format);
        vfprintf(stderr, format, arguments);
        va_end(arguments);
        fputs(" (see --help)\n", stderr);
        return CLI_EXIT_USAGE;
}

int cli_require_utf8(const char *text, const char *what_format, ...)
{
        size_t invalid_offset = 0;
        char what[512];
        va_list arguments;

        if (dsh_text_is_utf8(text, strlen(text), &invalid_offset))
                return 0;
        va_start(arguments, what_format);
        vsnprintf(what, sizeof(what), what_format, arguments);
        va_end(arguments);
        return cli_usage_error("%s is not valid UTF-8 (byte 0x%02x at offset %zu), and a JSON string cannot carry it",
                               what, (unsigned char) text[invalid_offset], invalid_offset);
}

int cli_print_json(int encoded, char *text, dsh_error *error, int failure_status)
{
        int status = CLI_EXIT_SUCCESS;

        if (encoded < 0 && error->code == DSH_ERROR_INVALID_INPUT && error->message)
                status = cli_usage_error("%s", error->message);
        else if (encoded < 0)
                status = (cli_print_error(error), failure_status);
        else if (fputs(text, stdout) < 0 || fputc('\n', stdout) < 0 || fflush(stdout) != 0)
                status = CLI_EXIT_FAILURE;
        free(text);
        dsh_error_clear(error);
        return status;
}

int cli_exit_status_for_error(const dsh_error *error)
{
        switch (error->code) {
        case DSH_ERROR_EXEC_FAILED:
                return error->errno_value == ENOENT ? CLI_EXIT_NOT_FOUND : CLI_EXIT_CANNOT_EXECUTE;
        case DSH_ERROR_INVALID_INPUT:
                return CLI_EXIT_USAGE;
        case DSH_ERROR_SANDBOX_UNAVAILABLE:
        case DSH_ERROR_SANDBOX_PREPARATION_FAILED:
        case DSH_ERROR_SANDBOX_INVALID_TEMP_ROOT:
        case DSH_ERROR_SANDBOX_INVALID_ROOT:
        case DSH_ERROR_NONE:
        case DSH_ERROR_SYSTEM:
                return CLI_EXIT_SANDBOX;
        case DSH_ERROR_FS_SANDBOX_DENIED:
        case DSH_ERROR_FS_NOT_FOUND:
        case DSH_ERROR_FS_NOT_A_DIRECTORY:
        case DSH_ERROR_FS_IS_A_DIRECTORY:
        case DSH_ERROR_FS_ALREADY_EXISTS:
        case DSH_ERROR_FS_NOT_EMPTY:
        case DSH_ERROR_FS_TEXT_NOT_FOUND:
        case DSH_ERROR_FS_TEXT_NOT_UNIQUE:
        case DSH_ERROR_FS_TOO_LARGE:
        case DSH_ERROR_INVARIANT:
                return CLI_EXIT_FAILURE;
        }
        return CLI_EXIT_FAILURE;
}

int cli_library_error(dsh_error *error, int failure_status)
{
        int status = error->code == DSH_ERROR_INVALID_INPUT ? CLI_EXIT_USAGE : failure_status;

        cli_print_error(error);
        dsh_error_clear(error);
        return status;
}
