/* SPDX-License-Identifier: MIT */
#include "service-results.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/json.h"

int service_error_set(dsh_error *error, int errno_value, const char *format, ...)
{
        va_list arguments;
        char *message = NULL;

        dsh_error_clear(error);
        va_start(arguments, format);
        if (vasprintf(&message, format, arguments) < 0)
                message = NULL;
        va_end(arguments);
        error->code = DSH_ERROR_SYSTEM;
        error->errno_value = errno_value;
        error->message = message;
        return -errno_value;
}

json_t *service_encoded_json(int encoded, char *text, dsh_error *error)
{
        json_t *value = encoded < 0 ? NULL : json_loads(text, JSON_ALLOW_NUL, NULL);

        if (encoded == 0 && !value)
                service_error_set(error, ENOMEM, "%s", strerror(ENOMEM));
        free(text);
        return value;
}

json_t *service_bash_result_json(const dsh_bash_result *result, dsh_error *error)
{
        char *text = NULL;
        int encoded = dsh_json_encode_bash_result(result, &text, error);

        return service_encoded_json(encoded, text, error);
}

json_t *service_file_result_json(const dsh_file_result *result, dsh_error *error)
{
        char *text = NULL;
        int encoded = dsh_json_encode_file_result(result, &text, error);

        return service_encoded_json(encoded, text, error);
}

json_t *service_denial_json(const dsh_denial *denial, dsh_error *error)
{
        char *text = NULL;
        int encoded = dsh_json_encode_denial(denial, &text, error);

        return service_encoded_json(encoded, text, error);
}
