/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sandbox-exec-status.h"

void dsh_sandbox_exec_status_write(int fd, dsh_sandbox_exec_status_kind kind, int errno_value, const char *text)
{
        char record[600];
        int length = snprintf(record, sizeof(record), "%d %d %.500s\n", (int) kind, errno_value, text ? text : "");

        if (length > 0)
                (void) !write(fd, record, (size_t) length < sizeof(record) ? (size_t) length : sizeof(record) - 1);
}

dsh_sandbox_exec_status_kind dsh_sandbox_exec_status_parse(const char *record, int *errno_value, char *text,
                                                           size_t text_size)
{
        char *end;
        long kind, value;
        size_t length;

        *errno_value = 0;
        if (text_size)
                text[0] = '\0';
        kind = strtol(record, &end, 10);
        if (end == record || *end != ' ' || (kind != DSH_SANDBOX_EXEC_STATUS_EXEC && kind != DSH_SANDBOX_EXEC_STATUS_HELPER))
                return DSH_SANDBOX_EXEC_STATUS_NONE;
        record = end + 1;
        value = strtol(record, &end, 10);
        if (end == record || *end != ' ' || value < 0 || value > 4095)
                return DSH_SANDBOX_EXEC_STATUS_NONE;
        record = end + 1;
        length = strcspn(record, "\n");
        if (text_size) {
                if (length >= text_size)
                        length = text_size - 1;
                memcpy(text, record, length);
                text[length] = '\0';
        }
        *errno_value = (int) value;
        return (dsh_sandbox_exec_status_kind) kind;
}
