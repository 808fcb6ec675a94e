/* SPDX-License-Identifier: MIT */
/* NULL-terminated string vectors, the library's one list type. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/sandbox.h"

size_t dsh_strv_length(char *const *strv)
{
        size_t length = 0;

        if (strv)
                while (strv[length])
                        length++;
        return length;
}

void dsh_strv_free(char **strv)
{
        if (!strv)
                return;
        for (char **item = strv; *item; item++)
                free(*item);
        free(strv);
}

char **dsh_strv_copy(char *const *strv)
{
        size_t length = dsh_strv_length(strv);
        char **copy = calloc(length + 1, sizeof(char *));

        if (!copy)
                return NULL;
        for (size_t i = 0; i < length; i++) {
                copy[i] = strdup(strv[i]);
                if (!copy[i]) {
                        dsh_strv_free(copy);
                        return NULL;
                }
        }
        return copy;
}

int dsh_strv_append(char ***strv, const char *value)
{
        size_t length = dsh_strv_length(*strv);
        char *item = strdup(value);
        char **grown;

        if (!item)
                return -ENOMEM;
        grown = realloc(*strv, (length + 2) * sizeof(char *));
        if (!grown) {
                free(item);
                return -ENOMEM;
        }
        grown[length] = item;
        grown[length + 1] = NULL;
        *strv = grown;
        return 0;
}
