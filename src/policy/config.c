/* SPDX-License-Identifier: MIT */
/* The deployment configuration: strict JSON loading through jansson. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "dsh-sandbox/config.h"
#include "policy/config-internal.h"
#include "dsh-sandbox/provider.h"
#include "base/provider-rules.h"
#include "base/error.h"
#include "base/json-core.h"
#include "base/xdg.h"
#include "policy/policy-json.h"

void dsh_config_clear(dsh_config *config)
{
        if (!config)
                return;
        free(config->workspace_root);
        dsh_strv_free(config->additional_writable_roots);
        dsh_strv_free(config->backends);
        dsh_strv_free(config->runner_command);
        dsh_strv_free(config->runner_failure_signatures);
        dsh_strv_free(config->protected_subpaths);
        dsh_strv_free(config->ssh_command);
        free(config->remote_program);
        dsh_strv_free(config->allowed_unix_sockets);
        dsh_network_policy_clear(&config->network);
        dsh_strv_free(config->masked_paths);
        dsh_strv_free(config->environment_deny);
        dsh_strv_free(config->environment_allow);
        memset(config, 0, sizeof(*config));
}

int dsh_config_init(dsh_config *config, dsh_error *error)
{
        char *cwd;

        (void) error;
        memset(config, 0, sizeof(*config));
        config->mode = DSH_MODE_READ_ONLY;
        config->probe_timeout_ms = DSH_CONFIG_DEFAULT_PROBE_TIMEOUT_MS;
        config->file_read_limit_bytes = DSH_CONFIG_DEFAULT_FILE_READ_LIMIT_BYTES;
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

/* A shared check's message (the provider's, with its upstream text) behind the file and the key. */
static int key_error_from(const struct load_context *context, const char *key, dsh_error *checked)
{
        /* The shared check quotes the file's own bytes (a backend's name): made printable, as every key error. */
        dsh_autofree char *reason = dsh_error_printable_text(checked->message ? checked->message : "invalid");
        int result = key_error(context, key, "%s", reason ? reason : "invalid");

        dsh_error_clear(checked);
        return result;
}

static int out_of_memory(const struct load_context *context)
{
        return dsh_error_set(context->error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
}

/* The value as a C string, or NULL when it is not a string or holds a NUL byte (which would shorten it). */
static const char *string_value(json_t *value)
{
        const char *text = json_string_value(value);

        return text && json_string_length(value) == strlen(text) ? text : NULL;
}

/* A JSON array of strings; `non_empty` refuses "" and `single_line` also CR and LF. */
static int load_string_array(const struct load_context *context, const char *key, json_t *value, bool non_empty,
                             bool single_line, char ***out)
{
        char **strings;
        size_t index;
        json_t *item;

        if (!json_is_array(value))
                return key_error(context, key, "expected an array of strings");
        strings = calloc(1, sizeof(char *));
        if (!strings)
                return out_of_memory(context);
        json_array_foreach(value, index, item) {
                const char *text = string_value(item);

                if (!text || (non_empty && text[0] == '\0') || (single_line && strpbrk(text, "\r\n"))) {
                        dsh_strv_free(strings);
                        return key_error(context, key, "entry %zu must be a%s%s string", index,
                                         non_empty ? " non-empty" : "", single_line ? " single-line" : "");
                }
                if (dsh_strv_append(&strings, text) < 0) {
                        dsh_strv_free(strings);
                        return out_of_memory(context);
                }
        }
        dsh_strv_free(*out);
        *out = strings;
        return 0;
}

static int load_mode(const struct load_context *context, const char *key, json_t *value, dsh_config *config)
{
        const char *name = string_value(value);

        if (!name || dsh_mode_parse(name, &config->mode) < 0)
                return key_error(context, key, "expected one of read-only, workspace-write, danger-full-access");
        return 0;
}

static int load_workspace_root(const struct load_context *context, const char *key, json_t *value,
                               dsh_config *config)
{
        const char *text = string_value(value);
        char *root;

        if (!text || text[0] != '/')
                return key_error(context, key, "expected an absolute path without NUL bytes");
        root = realpath(text, NULL);
        if (!root)
                root = strdup(text);  /* a root that does not exist yet is refused per call, not at load */
        if (!root)
                return out_of_memory(context);
        free(config->workspace_root);
        config->workspace_root = root;
        return 0;
}

static int load_additional_roots(const struct load_context *context, const char *key, json_t *value,
                                 dsh_config *config)
{
        int result = load_string_array(context, key, value, true, true, &config->additional_writable_roots);

        for (char **root = config->additional_writable_roots; result == 0 && root && *root; root++) {
                dsh_autofree char *quoted_root = NULL;

                if ((*root)[0] == '/')
                        continue;
                quoted_root = quoted_text(*root);
                return key_error(context, key, "%s is not an absolute path", quoted_root ? quoted_root : "\"?\"");
        }
        return result;
}

/* Absolute paths only: a relative socket path would name a different socket in every cwd. */
static int load_allowed_unix_sockets(const struct load_context *context, const char *key, json_t *value,
                                     dsh_config *config)
{
        int result = load_string_array(context, key, value, true, true, &config->allowed_unix_sockets);

        for (char **path = config->allowed_unix_sockets; result == 0 && path && *path; path++) {
                dsh_autofree char *quoted_path = NULL;

                if ((*path)[0] == '/')
                        continue;
                quoted_path = quoted_text(*path);
                return key_error(context, key, "%s is not an absolute path", quoted_path ? quoted_path : "\"?\"");
        }
        return result;
}

/* The policy's own shape and checks (policy-json.c): an entry the CLI would refuse is refused here too. */
static int load_network(const struct load_context *context, const char *key, json_t *value, dsh_config *config)
{
        dsh_autofree char *quoted_key = quoted_text(key);
        dsh_autofree char *what = NULL;
        dsh_network_policy network;

        if (asprintf(&what, "config %s: key %s", context->path, quoted_key ? quoted_key : "\"?\"") < 0)
                return out_of_memory(context);
        if (dsh_json_network_from_value(value, what, &dsh_json_root, &network, context->error) < 0)
                return -EINVAL;
        dsh_network_policy_clear(&config->network);
        config->network = network;
        return 0;
}

/* Checked here, with the provider's own list, so that no subcommand can accept a chain `run` would refuse. */
static int load_backends(const struct load_context *context, const char *key, json_t *value, dsh_config *config)
{
        dsh_error checked = DSH_ERROR_INIT;
        int result = load_string_array(context, key, value, true, true, &config->backends);

        if (result == 0 && dsh_provider_check_backends((const char *const *) config->backends, &checked) < 0)
                return key_error_from(context, key, &checked);
        return result;
}

static int load_probe_timeout(const struct load_context *context, const char *key, json_t *value,
                              dsh_config *config)
{
        dsh_error checked = DSH_ERROR_INIT;

        /* A non-number reads as 0, which the shared check refuses with the upstream text. */
        if (dsh_probe_timeout_check(json_is_number(value) ? json_number_value(value) : 0, &config->probe_timeout_ms,
                                    &checked) < 0)
                return key_error_from(context, key, &checked);
        return 0;
}

/* Any words: the shared check judges them once every key is in, empty ones included. */
static int load_runner_command(const struct load_context *context, const char *key, json_t *value,
                               dsh_config *config)
{
        return load_string_array(context, key, value, false, false, &config->runner_command);
}

/* Any strings, or the upstream text; the shared check judges them once every key is in. */
static int load_runner_signatures(const struct load_context *context, const char *key, json_t *value,
                                  dsh_config *config)
{
        dsh_error ignored = DSH_ERROR_INIT;
        struct load_context quiet = { context->path, &ignored };
        int result = load_string_array(&quiet, key, value, false, false, &config->runner_failure_signatures);

        dsh_error_clear(&ignored);
        if (result < 0)
                return key_error(context, key, "sandbox-local: runnerFailureSignatures entries must be non-empty "
                                               "single-line strings");
        return 0;
}

/*
 * A protected subpath names a place inside each writable root, so it must
 * stay there: relative, and every component a real name.  ".." would climb
 * out of the root, an empty component or "." would name the same place two
 * ways.
 */
static int check_subpath(const struct load_context *context, const char *key, size_t index, const char *subpath)
{
        const char *given = subpath;

        if (strncmp(subpath, "~/", 2) == 0)
                subpath += 2;  /* a place in the user's home, and there only */
        if (subpath[0] == '/')
                return key_error(context, key, "entry %zu (\"%s\") must be relative: it names a place inside each "
                                               "writable root", index, given);
        for (const char *component = subpath;; component++) {
                size_t length = strcspn(component, "/");

                if (length == 0)
                        return key_error(context, key, "entry %zu (\"%s\") must not contain an empty component",
                                         index, given);
                if (length == 2 && strncmp(component, "..", 2) == 0)
                        return key_error(context, key, "entry %zu (\"%s\") must not contain \"..\": it would name "
                                                       "a place outside the writable root", index, given);
                if (length == 1 && component[0] == '.')
                        return key_error(context, key, "entry %zu (\"%s\") must not contain \".\" components",
                                         index, given);
                component += length;
                if (*component == '\0')
                        return 0;
        }
}

/* The checked strings of `value` (an array) under `key`, into `*out`. */
static int load_subpath_list(const struct load_context *context, const char *key, json_t *value, char ***out)
{
        int result = load_string_array(context, key, value, true, true, out);

        for (size_t i = 0; result == 0 && (*out)[i]; i++)
                result = check_subpath(context, key, i, (*out)[i]);
        return result;
}

static bool default_subpath(const char *subpath)
{
        for (const char *const *entry = dsh_provider_default_protected_subpaths(); *entry; entry++)
                if (strcmp(*entry, subpath) == 0)
                        return true;
        return false;
}

static bool strv_has(char *const *strv, const char *value)
{
        for (; strv && *strv; strv++)
                if (strcmp(*strv, value) == 0)
                        return true;
        return false;
}

static int unknown_member(const struct load_context *context, const char *key, const char *member)
{
        dsh_autofree char *quoted = quoted_text(member);

        return key_error(context, key, "unknown member %s (expected \"add\" and \"remove\")",
                         quoted ? quoted : "\"?\"");
}

/* The defaults but `removed`, then `added` (a new vector, [] when empty); NULL when out of memory. */
static char **merged_subpaths(char *const *removed, char *const *added)
{
        char **subpaths = calloc(1, sizeof(char *));

        for (const char *const *entry = dsh_provider_default_protected_subpaths(); subpaths && *entry; entry++)
                if (!strv_has(removed, *entry) && dsh_strv_append(&subpaths, *entry) < 0) {
                        dsh_strv_free(subpaths);
                        return NULL;
                }
        for (size_t i = 0; subpaths && added && added[i]; i++)
                if (!strv_has(subpaths, added[i]) && dsh_strv_append(&subpaths, added[i]) < 0) {
                        dsh_strv_free(subpaths);
                        return NULL;
                }
        return subpaths;
}

/*
 * {"add": [...], "remove": [...]}: the defaults, minus each removed one,
 * plus each added one.  A removal names a default or is an error: a typo in
 * it would otherwise leave a default the user believes gone in force, or
 * one believed removed from an older list silently kept.
 */
static int load_subpath_changes(const struct load_context *context, const char *key, json_t *value, char ***out)
{
        char **added = NULL, **removed = NULL, **subpaths;
        const char *member;
        json_t *item;
        int result = 0;

        json_object_foreach(value, member, item) {
                if (strcmp(member, "add") == 0)
                        result = load_subpath_list(context, "protectedSubpaths.add", item, &added);
                else if (strcmp(member, "remove") == 0)
                        result = load_subpath_list(context, "protectedSubpaths.remove", item, &removed);
                else
                        result = unknown_member(context, key, member);
                if (result < 0)
                        goto out;
        }
        for (size_t i = 0; removed && removed[i]; i++)
                if (!default_subpath(removed[i])) {
                        dsh_autofree char *quoted = quoted_text(removed[i]);

                        result = key_error(context, "protectedSubpaths.remove",
                                           "entry %zu (%s) is not a default protected subpath", i,
                                           quoted ? quoted : "\"?\"");
                        goto out;
                }
        subpaths = merged_subpaths(removed, added);
        if (!subpaths)
                result = out_of_memory(context);
        *out = subpaths;
out:
        dsh_strv_free(added);
        dsh_strv_free(removed);
        return result;
}

/*
 * A list replaces the defaults (`[]` turns the feature off); an object
 * changes them (load_subpath_changes()).
 */
static int load_protected_subpaths(const struct load_context *context, const char *key, json_t *value,
                                   dsh_config *config)
{
        char **subpaths = NULL;
        int result;

        if (json_is_object(value))
                result = load_subpath_changes(context, key, value, &subpaths);
        else if (json_is_array(value))
                result = load_subpath_list(context, key, value, &subpaths);
        else
                result = key_error(context, key, "expected an array of strings, or an object with \"add\" and "
                                                 "\"remove\" arrays");
        if (result < 0) {
                dsh_strv_free(subpaths);
                return result;
        }
        dsh_strv_free(config->protected_subpaths);
        config->protected_subpaths = subpaths;   /* [] stays an empty vector: the feature turned off */
        config->protected_subpaths_set = true;
        return 0;
}

static int load_require_protected_subpaths(const struct load_context *context, const char *key, json_t *value,
                                           dsh_config *config)
{
        if (!json_is_boolean(value))
                return key_error(context, key, "expected true or false");
        config->require_protected_subpaths = json_is_true(value);
        return 0;
}

/* The words that start ssh: at least one, none empty (an empty word would be an empty argument to ssh). */
static int load_ssh_command(const struct load_context *context, const char *key, json_t *value, dsh_config *config)
{
        int result = load_string_array(context, key, value, true, false, &config->ssh_command);

        if (result == 0 && !config->ssh_command[0])
                return key_error(context, key, "expected at least one word (the ssh program)");
        return result;
}

/* One word for the remote shell (it is quoted there), so one line without NUL bytes. */
static int load_remote_program(const struct load_context *context, const char *key, json_t *value,
                               dsh_config *config)
{
        const char *text = string_value(value);
        char *program;

        if (!text || !text[0] || strpbrk(text, "\r\n"))
                return key_error(context, key, "expected a non-empty single-line string");
        program = strdup(text);
        if (!program)
                return out_of_memory(context);
        free(config->remote_program);
        config->remote_program = program;
        return 0;
}

/* A whole number of bytes, at least one, at most 1 GiB: one read's content is held in memory whole. */
static int load_file_read_limit(const struct load_context *context, const char *key, json_t *value,
                                dsh_config *config)
{
        json_int_t bytes = json_is_integer(value) ? json_integer_value(value) : 0;

        if (bytes < 1 || bytes > (json_int_t) 1 << 30)
                return key_error(context, key, "expected a whole number of bytes from 1 to 1073741824");
        config->file_read_limit_bytes = (size_t) bytes;
        return 0;
}

/* A string array each of whose entries passes `check` (the library's own, so the CLI and the file agree). */
static int load_checked_array(const struct load_context *context, const char *key, json_t *value,
                              int (*check)(const char *entry, const char **reason), char ***out)
{
        char **entries = NULL;
        int result = load_string_array(context, key, value, true, true, &entries);

        for (char **entry = entries; result == 0 && entry && *entry; entry++) {
                dsh_autofree char *quoted_entry = NULL;
                const char *reason = NULL;

                if (check(*entry, &reason) == 0)
                        continue;
                quoted_entry = quoted_text(*entry);
                result = key_error(context, key, "%s: %s", quoted_entry ? quoted_entry : "\"?\"", reason);
        }
        if (result < 0) {
                dsh_strv_free(entries);
                return result;
        }
        dsh_strv_free(*out);
        *out = entries;
        return 0;
}

/* `[]` stays an empty vector: nothing masked, which is not the defaults. */
static int load_masked_paths(const struct load_context *context, const char *key, json_t *value,
                             dsh_config *config)
{
        int result = load_checked_array(context, key, value, dsh_mask_entry_check, &config->masked_paths);

        if (result == 0)
                config->masked_paths_set = true;
        return result;
}

static int load_require_masks(const struct load_context *context, const char *key, json_t *value,
                              dsh_config *config)
{
        if (!json_is_boolean(value))
                return key_error(context, key, "expected true or false");
        config->require_masks = json_is_true(value);
        return 0;
}

static int check_deny_pattern(const char *pattern, const char **reason)
{
        return dsh_environment_pattern_check(pattern, true, reason);
}

/* An allowed name is one name: a wildcard would let a whole family of secrets through. */
static int check_allowed_name(const char *name, const char **reason)
{
        return dsh_environment_pattern_check(name, false, reason);
}

/* {"deny": [patterns], "allow": [names]}, each member optional; any other member is refused. */
static int load_environment(const struct load_context *context, const char *key, json_t *value,
                            dsh_config *config)
{
        const char *member;
        json_t *item;

        if (!json_is_object(value))
                return key_error(context, key, "expected an object with \"deny\" and \"allow\" arrays");
        json_object_foreach(value, member, item) {
                int result;

                if (strcmp(member, "deny") == 0) {
                        result = load_checked_array(context, "environment.deny", item, check_deny_pattern,
                                                    &config->environment_deny);
                        config->environment_deny_set = config->environment_deny_set || result == 0;
                } else if (strcmp(member, "allow") == 0) {
                        result = load_checked_array(context, "environment.allow", item, check_allowed_name,
                                                    &config->environment_allow);
                } else {
                        dsh_autofree char *quoted_member = quoted_text(member);

                        result = key_error(context, key, "unknown member %s (expected \"deny\" and \"allow\")",
                                           quoted_member ? quoted_member : "\"?\"");
                }
                if (result < 0)
                        return result;
        }
        return 0;
}

static int load_key(const struct load_context *context, const char *key, json_t *value, dsh_config *config)
{
        static const struct {
                const char *name;
                int (*load)(const struct load_context *context, const char *key, json_t *value, dsh_config *config);
        } keys[] = {
                { "mode", load_mode },
                { "workspaceRoot", load_workspace_root },
                { "additionalWritableRoots", load_additional_roots },
                { "backends", load_backends },
                { "probeTimeoutMs", load_probe_timeout },
                { "runnerCommand", load_runner_command },
                { "runnerFailureSignatures", load_runner_signatures },
                { "protectedSubpaths", load_protected_subpaths },
                { "requireProtectedSubpaths", load_require_protected_subpaths },
                { "sshCommand", load_ssh_command },
                { "remoteProgram", load_remote_program },
                { "fileReadLimitBytes", load_file_read_limit },
                { "allowUnixSockets", load_allowed_unix_sockets },
                { "network", load_network },
                { "maskedPaths", load_masked_paths },
                { "requireMasks", load_require_masks },
                { "environment", load_environment },
        };

        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                if (strcmp(key, keys[i].name) == 0)
                        return keys[i].load(context, key, value, config);
        return key_error(context, key, "unknown key");
}

/* jansson's complaint cites the offending bytes of the file, which may be anything: made printable. */
static int json_load_error(const char *name, const json_error_t *json_error, dsh_error *error)
{
        dsh_autofree char *reason = dsh_error_printable_text(json_error->text);

        if (json_error_code(json_error) == json_error_invalid_utf8)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EILSEQ,
                                     "config %s: line %d: not valid UTF-8 (%s), which a JSON file must be", name,
                                     json_error->line, reason ? reason : "?");
        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "config %s: line %d: %s", name, json_error->line,
                             reason ? reason : "?");
}

/*
 * The file as JSON.  The path may name a symlink (dotfile managers link the
 * config), so it is followed, but what it leads to must be a regular file:
 * O_NONBLOCK keeps a FIFO planted there from blocking the open, and so
 * every later call, until a writer comes; fstat then refuses it.
 */
static int load_json(const char *path, json_t **root_out, dsh_error *error)
{
        dsh_autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        json_error_t json_error;
        struct stat status;

        *root_out = NULL;
        if (fd < 0)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, errno, "config %s: cannot open: %s", path,
                                     strerror(errno));
        if (fstat(fd, &status) < 0)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, errno, "config %s: cannot read: %s", path,
                                     strerror(errno));
        if (!S_ISREG(status.st_mode))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "config %s: not a regular file", path);
        /* The core's strict parse: a duplicate key refused, a "\u0000" let through to the key's own check. */
        *root_out = json_loadfd(fd, DSH_JSON_STRICT_PARSE, &json_error);
        return *root_out ? 0 : json_load_error(path, &json_error, error);
}

/* The one parse path behind both loaders: `root` (owned, released here) is the document of `path`. */
static int load_document(dsh_config *config, const char *path, json_t *root, dsh_error *error)
{
        struct load_context context = { path, error };
        dsh_error checked = DSH_ERROR_INIT;
        const char *faulty_key = NULL;
        dsh_config loaded;
        json_t *value;
        const char *key;
        int result = 0;

        if (!json_is_object(root)) {
                json_decref(root);
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "config %s: expected a JSON object",
                                     path);
        }
        /* Work on a copy so that a failure leaves `config` as it was. */
        memset(&loaded, 0, sizeof(loaded));
        loaded.mode = config->mode;
        loaded.probe_timeout_ms = config->probe_timeout_ms;
        loaded.file_read_limit_bytes = config->file_read_limit_bytes;
        loaded.require_protected_subpaths = config->require_protected_subpaths;
        loaded.require_masks = config->require_masks;
        loaded.workspace_root = config->workspace_root ? strdup(config->workspace_root) : NULL;
        if (config->workspace_root && !loaded.workspace_root)
                result = out_of_memory(&context);
        json_object_foreach(root, key, value) {
                if (result == 0)
                        result = load_key(&context, key, value, &loaded);
        }
        if (result == 0 && dsh_runner_command_check(loaded.runner_command, loaded.runner_failure_signatures,
                                                    &faulty_key, &checked) < 0)
                result = key_error_from(&context, faulty_key, &checked);
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
        json_t *root;
        int result = load_json(path, &root, error);

        return result < 0 ? result : load_document(config, path, root, error);
}

int dsh_config_load_buffer(dsh_config *config, const char *name, const char *text, size_t length,
                           dsh_error *error)
{
        json_error_t json_error;
        json_t *root = json_loadb(text, length, DSH_JSON_STRICT_PARSE, &json_error);

        return root ? load_document(config, name, root, error) : json_load_error(name, &json_error, error);
}
