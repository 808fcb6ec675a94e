/* SPDX-License-Identifier: MIT */
/* The deployment configuration: strict JSON loading through jansson. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "dsh-sandbox/config.h"
#include "config-internal.h"
#include "error.h"
#include "xdg.h"

void dsh_config_clear(dsh_config *config)
{
        if (!config)
                return;
        free(config->workspace_root);
        dsh_strv_free(config->additional_writable_roots);
        dsh_strv_free(config->backends);
        dsh_strv_free(config->runner_command);
        dsh_strv_free(config->runner_failure_signatures);
        memset(config, 0, sizeof(*config));
}

int dsh_config_init(dsh_config *config, dsh_error *error)
{
        char *cwd;

        (void) error;
        memset(config, 0, sizeof(*config));
        config->mode = DSH_MODE_READ_ONLY;
        config->probe_timeout_ms = DSH_CONFIG_DEFAULT_PROBE_TIMEOUT_MS;
        /*
         * A cwd that cannot be resolved (deleted, unreadable) leaves the
         * fallback root unset rather than failing here: a call that names its
         * root does not need it, and one that does is refused when it asks.
         */
        cwd = getcwd(NULL, 0);
        if (cwd) {
                config->workspace_root = realpath(cwd, NULL);
                free(cwd);
        }
        return 0;
}

char *dsh_config_default_directory(void)
{
        return dsh_xdg_directory(NULL, "XDG_CONFIG_HOME", ".config");
}

char *dsh_config_default_path(void)
{
        const char *explicit_path = getenv("DSH_SANDBOX_CONFIG");
        dsh_autofree char *directory = NULL;
        char *path = NULL;

        if (explicit_path && explicit_path[0])
                return strdup(explicit_path);
        directory = dsh_config_default_directory();
        if (!directory || asprintf(&path, "%s/config.json", directory) < 0)
                return NULL;
        if (access(path, F_OK) < 0) {
                free(path);
                return NULL;
        }
        return path;
}

struct load_context {
        const char *path;
        dsh_error *error;
};

/*
 * `text` from the file as a JSON string literal ("mode" stays "mode"), for
 * error messages: a key or value holding a newline or a terminal escape
 * sequence must neither split the one-line message nor reach the terminal
 * raw.  Returns a new string (caller frees), or NULL when out of memory.
 */
static char *quoted_text(const char *text)
{
        json_t *string = json_string(text);
        char *quoted = string ? json_dumps(string, JSON_ENCODE_ANY) : NULL;

        json_decref(string);
        return quoted;
}

__attribute__((format(printf, 3, 4))) static int key_error(const struct load_context *context, const char *key,
                                                           const char *format, ...)
{
        dsh_autofree char *quoted_key = quoted_text(key);
        dsh_autofree char *prefix = NULL;
        va_list arguments;
        int result;

        /* Built to size: a long key must not cut the message, or a character, short. */
        if (asprintf(&prefix, "config %s: key %s: ", context->path, quoted_key ? quoted_key : "\"?\"") < 0)
                prefix = NULL;
        va_start(arguments, format);
        result = dsh_error_vset(context->error, DSH_ERROR_INVALID_INPUT, EINVAL, prefix, format, arguments);
        va_end(arguments);
        return result;
}

/* A JSON array of non-empty strings; `single_line` also rejects CR and LF. */
static int load_string_array(const struct load_context *context, const char *key, json_t *value,
                             bool single_line, char ***out)
{
        char **strings = calloc(1, sizeof(char *));
        size_t index;
        json_t *item;

        if (!strings)
                return dsh_error_set(context->error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (!json_is_array(value)) {
                dsh_strv_free(strings);
                return key_error(context, key, "expected an array of strings");
        }
        json_array_foreach(value, index, item) {
                const char *text = json_string_value(item);

                if (!text || json_string_length(item) != strlen(text) || text[0] == '\0' ||
                    (single_line && strpbrk(text, "\r\n"))) {
                        dsh_strv_free(strings);
                        return key_error(context, key, "entry %zu must be a non-empty%s string", index,
                                         single_line ? " single-line" : "");
                }
                if (dsh_strv_append(&strings, text) < 0) {
                        dsh_strv_free(strings);
                        return dsh_error_set(context->error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
        }
        *out = strings;
        return 0;
}

static int load_absolute_path(const struct load_context *context, const char *key, json_t *value, char **out)
{
        const char *text = json_string_value(value);

        if (!text || json_string_length(value) != strlen(text) || text[0] != '/')
                return key_error(context, key, "expected an absolute path without NUL bytes");
        *out = realpath(text, NULL);
        if (!*out)
                *out = strdup(text);  /* a root that does not exist yet is refused per call, not at load */
        return *out ? 0 : dsh_error_set(context->error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
}

static int load_key(const struct load_context *context, const char *key, json_t *value, dsh_config *config)
{
        if (strcmp(key, "mode") == 0) {
                if (dsh_mode_parse(json_string_value(value), &config->mode) < 0)
                        return key_error(context, key, "expected one of read-only, workspace-write, danger-full-access");
                return 0;
        }
        if (strcmp(key, "workspaceRoot") == 0) {
                free(config->workspace_root);
                config->workspace_root = NULL;
                return load_absolute_path(context, key, value, &config->workspace_root);
        }
        if (strcmp(key, "additionalWritableRoots") == 0) {
                int result = load_string_array(context, key, value, true, &config->additional_writable_roots);

                for (char **root = config->additional_writable_roots; result == 0 && root && *root; root++) {
                        dsh_autofree char *quoted_root = NULL;

                        if ((*root)[0] == '/')
                                continue;
                        quoted_root = quoted_text(*root);
                        return key_error(context, key, "%s is not an absolute path",
                                         quoted_root ? quoted_root : "\"?\"");
                }
                return result;
        }
        if (strcmp(key, "backends") == 0)
                return load_string_array(context, key, value, true, &config->backends);
        if (strcmp(key, "probeTimeoutMs") == 0) {
                double timeout = json_number_value(value);

                if (!json_is_number(value) || !isfinite(timeout) || timeout <= 0 || timeout > (double) INT_MAX)
                        return dsh_error_set(context->error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "config %s: key \"probeTimeoutMs\": sandbox-local: probeTimeoutMs "
                                             "must be a positive finite number",
                                             context->path);
                config->probe_timeout_ms = (long) ceil(timeout);
                return 0;
        }
        if (strcmp(key, "runnerCommand") == 0)
                return load_string_array(context, key, value, false, &config->runner_command);
        if (strcmp(key, "runnerFailureSignatures") == 0) {
                if (json_is_array(value) && json_array_size(value) == 0) {
                        config->runner_failure_signatures = calloc(1, sizeof(char *));
                        return config->runner_failure_signatures ? 0 : -ENOMEM;
                }
                if (load_string_array(context, key, value, true, &config->runner_failure_signatures) < 0)
                        return dsh_error_set(context->error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "config %s: key \"runnerFailureSignatures\": sandbox-local: "
                                             "runnerFailureSignatures entries must be non-empty single-line strings",
                                             context->path);
                return 0;
        }
        return key_error(context, key, "unknown key");
}

/* The operator override's cross-key rules, with the upstream texts. */
static int check_runner_override(const struct load_context *context, const dsh_config *config)
{
        if (config->runner_failure_signatures && !config->runner_command)
                return dsh_error_set(context->error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "config %s: key \"runnerFailureSignatures\": sandbox-local: "
                                     "runnerFailureSignatures requires runnerCommand",
                                     context->path);
        if (config->runner_command && dsh_strv_length(config->runner_failure_signatures) == 0)
                return dsh_error_set(context->error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "config %s: key \"runnerCommand\": sandbox-local: runnerCommand requires at "
                                     "least one runnerFailureSignatures entry",
                                     context->path);
        if (config->runner_command && dsh_strv_length(config->runner_command) == 0)
                return dsh_error_set(context->error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "config %s: key \"runnerCommand\": expected a non-empty array", context->path);
        return 0;
}

/*
 * The one parse path behind both loaders: `root` is what jansson made of the
 * text (NULL when it failed, `json_error` then says why); it is released here.
 */
static int load_document(dsh_config *config, const char *path, json_t *root, const json_error_t *json_error,
                         dsh_error *error)
{
        struct load_context context = { path, error };
        dsh_config loaded;
        json_t *value;
        const char *key;
        int result = 0;

        if (!root) {
                /* jansson's complaint cites the offending bytes of the file, which may be anything. */
                dsh_autofree char *reason = dsh_error_printable_text(json_error->text);

                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "config %s: line %d: %s", path,
                                     json_error->line, reason ? reason : "out of memory");
        }
        if (!json_is_object(root)) {
                json_decref(root);
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "config %s: expected a JSON object",
                                     path);
        }
        /* Work on a deep copy so that a failure leaves `config` as it was. */
        memset(&loaded, 0, sizeof(loaded));
        loaded.mode = config->mode;
        loaded.probe_timeout_ms = config->probe_timeout_ms;
        loaded.workspace_root = config->workspace_root ? strdup(config->workspace_root) : NULL;
        json_object_foreach(root, key, value) {
                result = load_key(&context, key, value, &loaded);
                if (result < 0)
                        break;
        }
        if (result == 0)
                result = check_runner_override(&context, &loaded);
        json_decref(root);
        if (result < 0) {
                dsh_config_clear(&loaded);
                return result;
        }
        dsh_config_clear(config);
        *config = loaded;
        return 0;
}

int dsh_config_load_file(dsh_config *config, const char *path, dsh_error *error)
{
        json_error_t json_error;
        json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &json_error);

        return load_document(config, path, root, &json_error, error);
}

int dsh_config_load_buffer(dsh_config *config, const char *name, const char *text, size_t length,
                           dsh_error *error)
{
        json_error_t json_error;
        json_t *root = json_loadb(text, length, JSON_REJECT_DUPLICATES, &json_error);

        return load_document(config, name, root, &json_error, error);
}
