/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sanitizer/common_interface_defs.h>

#include "fuzz-support.h"

char **fuzz_argv_new(const char *program, const uint8_t *data, size_t size, int *argc_out)
{
        size_t count = 1, start = 0;
        char **argv;
        int argc = 0;

        for (size_t i = 0; i < size; i++)
                count += data[i] == '\0';
        argv = calloc(count + 2, sizeof(char *));
        FUZZ_CHECK(argv != NULL);
        argv[argc++] = strdup(program);
        for (size_t i = 0; i <= size; i++) {
                if (i < size && data[i] != '\0')
                        continue;
                if (i == size && i == start)
                        break;  /* no bytes after the last NUL: no trailing argument */
                argv[argc] = malloc(i - start + 1);
                FUZZ_CHECK(argv[argc] != NULL);
                memcpy(argv[argc], data + start, i - start);
                argv[argc++][i - start] = '\0';
                start = i + 1;
        }
        argv[argc] = NULL;
        *argc_out = argc;
        return argv;
}

void fuzz_argv_free(char **argv)
{
        for (char **argument = argv; *argument; argument++)
                free(*argument);
        free(argv);
}

int fuzz_argv_contains(char *const *argv, const char *pointer)
{
        for (; *argv; argv++)
                if (pointer >= *argv && pointer <= *argv + strlen(*argv))
                        return 1;
        return 0;
}

void fuzz_check_one_printable_line(const char *message)
{
        char shown[400] = "";
        size_t length = 0;
        int printable = 1;

        for (const unsigned char *byte = (const unsigned char *) message; *byte; byte++) {
                printable &= *byte >= 0x20;
                if (length + 5 < sizeof(shown))
                        length += (size_t) snprintf(shown + length, sizeof(shown) - length,
                                                    *byte < 0x20 ? "\\x%02x" : "%c", *byte);
        }
        if (!printable) {
                char summary[512];

                snprintf(summary, sizeof(summary), "error message is not one printable line: %s", shown);
                __sanitizer_report_error_summary(summary);
                abort();
        }
}

void fuzz_check_failed(const char *condition, const char *file, int line)
{
        char summary[512];

        /* The report goes where the sanitizers write, which stays open under -close_fd_mask. */
        snprintf(summary, sizeof(summary), "invariant failed: %s (%s:%d)", condition, file, line);
        __sanitizer_report_error_summary(summary);
        abort();
}
