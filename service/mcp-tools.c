/* SPDX-License-Identifier: MIT */
/*
 * The MCP server's tools: their definitions (what a model reads to use
 * them), the check of a call's arguments against the declared inputSchema,
 * and the file tools, each one operation of a file guard made for the
 * call's resolved policy (dsh-sandbox/file-guard.h).  The bash tool is in
 * mcp-bash.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/json.h"

#include "mcp-tools.h"
#include "service-results.h"

/* ---------------------------------------------------------- definitions -- */

/*
 * What the model is told.  The descriptions say what the sandbox allows,
 * what a denial looks like, and when (and how) to ask for more: a model that
 * does not know the denial is the sandbox's tends to work around it.
 */
#define WHERE_WRITES_GO                                                                                        \
        "The sandbox's mode decides where changes may go: under \\\"workspace-write\\\", beneath the workspace " \
        "root and its extra writable roots (never .git/hooks, .git/config, the agent's own launch config "     \
        "such as .mcp.json, .claude or .vscode, a home's startup files, or the sandbox's own files); under "    \
        "\\\"read-only\\\", nowhere but a private /tmp where the backend gives one; under "                      \
        "\\\"danger-full-access\\\", everywhere. The server's instructions name the policy in force and what "   \
        "/tmp is. Relative paths are taken from the workspace root. "
#define FILE_DENIAL                                                                                            \
        "A change the sandbox does not allow changes nothing and ends with isError and the text "              \
        "'FS_SANDBOX_DENIED: cannot write \\\"<path>\\\": file access denied under <mode> mode': "  \
        "do not work around it with another tool or path; if the change is really needed, ask the user, or "    \
        "use the bash tool's escalation (sandbox_permissions + justification), which asks the user to "        \
        "approve one call."

/*
 * The bash tool's structuredContent: the result object of docs/bash-tool.md
 * (dsh_json_encode_bash_result), so that a client can read the verdict
 * without parsing the text.
 */
#define STREAM_SCHEMA                                                                                          \
        "{\"type\": \"object\", \"properties\": {\"text\": {\"type\": \"string\"}, \"truncated\": {\"type\": "      \
        "\"boolean\"}, \"bytes\": {\"type\": \"integer\"}}, \"required\": [\"text\", \"truncated\", \"bytes\"]}"
/*
 * A write the sandbox refused, as its enforcing layer recorded it
 * (docs/bash-tool.md, "Refused writes").  The rule is named, not
 * enumerated: a client that checks structuredContent against the schema
 * must not throw a whole result away for a rule a newer remote added.
 */
#define REFUSED_WRITE_SCHEMA                                                                                   \
        "{\"type\": \"object\", \"properties\": {\"op\": {\"type\": \"string\"}, \"path\": {\"type\": \"string\"}, "   \
        "\"rule\": {\"type\": \"string\", \"description\": \"outside-roots, protected-subpath, own-file or "          \
        "masked-path\"}}, \"required\": [\"op\", \"path\", \"rule\"]}"
/*
 * A connection, DNS query or proxied request the network policy refused
 * (docs/bash-tool.md, "Refused connections"); the rule named, not
 * enumerated, for the same reason.
 */
#define REFUSED_CONNECTION_SCHEMA                                                                              \
        "{\"type\": \"object\", \"properties\": {\"op\": {\"type\": \"string\", \"description\": \"connect, dns or " \
        "http\"}, \"host\": {\"type\": \"string\"}, \"port\": {\"type\": \"integer\"}, \"rule\": {\"type\": "              \
        "\"string\", \"description\": \"network-off, host-not-allowed, address-not-resolved, metadata-address, "      \
        "sni-mismatch, protocol-not-allowed, local-port or bad-request\"}}, \"required\": [\"op\", \"host\", "         \
        "\"port\", \"rule\"]}"
/*
 * A typed denial (docs/denials.md): what was refused, by which rule and
 * layer, and the narrowest grant that would allow it.  The vocabularies
 * are named, not enumerated: a newer server's new rule must not make an
 * older client refuse the whole result.
 */
#define DENIAL_SCHEMA                                                                                          \
        "{\"type\": \"object\", \"properties\": {\"op\": {\"type\": \"string\", \"description\": \"write, "        \
        "metadata, read, connect, dns or http\"}, \"call\": {\"type\": \"string\"}, \"path\": {\"type\": "         \
        "\"string\"}, \"host\": {\"type\": \"string\"}, \"port\": {\"type\": \"integer\"}, \"rule\": {\"type\": "    \
        "\"string\"}, \"source\": {\"type\": \"string\"}, \"grant\": {\"type\": \"object\", \"properties\": "       \
        "{\"kind\": {\"type\": \"string\", \"description\": \"none, writable-root, allowed-host, unix-socket, "     \
        "local-port or mode\"}, \"target\": {\"type\": \"string\"}, \"mode\": {\"type\": \"string\"}}, "            \
        "\"required\": [\"kind\"]}}, \"required\": [\"op\", \"rule\", \"source\", \"grant\"]}"
#define BASH_RESULT_SCHEMA                                                                                     \
        "{\"type\": \"object\", \"properties\": {"                                                              \
        " \"kind\": {\"type\": \"string\", \"enum\": [\"completed\", \"denied\", \"runner-failed\", \"timed-out\", "  \
        "\"cancelled\", \"rejected\"]},"                                                                         \
        " \"exitCode\": {\"type\": [\"integer\", \"null\"]}, \"signal\": {\"type\": [\"integer\", \"null\"]},"        \
        " \"timedOut\": {\"type\": \"boolean\"}, \"cancelled\": {\"type\": \"boolean\"},"                             \
        " \"stdout\": " STREAM_SCHEMA ", \"stderr\": " STREAM_SCHEMA ","                                          \
        " \"sandbox\": {\"type\": \"object\", \"properties\": {\"mode\": {\"type\": \"string\"}, \"backend\": "        \
        "{\"type\": [\"string\", \"null\"]}, \"enforcement\": {\"type\": [\"string\", \"null\"]}, \"denied\": "       \
        "{\"type\": \"boolean\"}, \"runnerFailed\": {\"type\": \"boolean\"}}, \"required\": [\"mode\", \"denied\", "  \
        "\"runnerFailed\"]},"                                                                                    \
        " \"markers\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}},"                                  \
        " \"message\": {\"type\": \"string\"},"                                                                  \
        " \"error\": {\"type\": \"object\", \"properties\": {\"code\": {\"type\": \"string\"}, \"message\": "         \
        "{\"type\": \"string\"}}},"                                                                              \
        " \"warnings\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}},"                                 \
        " \"refusedWrites\": {\"type\": \"array\", \"items\": " REFUSED_WRITE_SCHEMA "},"                              \
        " \"refusedWritesDropped\": {\"type\": \"integer\"},"                                                      \
        " \"refusedConnections\": {\"type\": \"array\", \"items\": " REFUSED_CONNECTION_SCHEMA "},"                    \
        " \"refusedConnectionsDropped\": {\"type\": \"integer\"},"                                                 \
        " \"denials\": {\"type\": \"array\", \"items\": " DENIAL_SCHEMA "},"                                       \
        " \"denialsDropped\": {\"type\": \"integer\"}"                                                             \
        "}, \"required\": [\"kind\", \"exitCode\", \"signal\", \"timedOut\", \"cancelled\", \"stdout\", \"stderr\", " \
        "\"sandbox\", \"markers\", \"refusedWrites\", \"refusedConnections\"]}"

static const char *const tool_definitions[] = {
        "{\"name\": \"bash\", \"title\": \"Run a shell command in the sandbox\","
        " \"description\": \"Runs COMMAND as `bash -c COMMAND` inside the dsh-sandbox sandbox and returns its "
        "stdout, stderr, exit status and the sandbox's verdict. The command reads everywhere it could outside "
        "the sandbox, but writes only where the sandbox allows. " WHERE_WRITES_GO
        "stdin is empty and there is no terminal; whatever the command leaves running in the background is "
        "killed when it ends. A write the sandbox denied ends with the line \\\"[sandbox: file access denied "
        "under <mode> mode]\\\" and isError: that is the sandbox, not a bug in the command; do not work around "
        "it (another path, another tool, disabling anything). .git/config and .git/hooks are held back (git's "
        "config and hooks run code at the user's next git command): a git command that changes them (git "
        "config, git remote add, tracking branches) is denied, even when git exits 0; only danger-full-access "
        "would allow that, so ask the user. "
        "If the write is really needed, retry this exact "
        "command once with sandbox_permissions set to the narrowest wider mode that suffices and a one-sentence "
        "justification: the user is asked to approve that one call, and may decline (then stop and explain). "
        "Narrower still, where the denial's record names its grant (structuredContent.denials[].grant): "
        "additional_write with that directory, or additional_hosts with that host, + justification. "
        "A line \\\"[sandbox: the sandbox runner itself failed ...]\\\" means the command never ran: report it. "
        "A command that fails on its own has isError and its exit code: fix the command.\","
        " \"inputSchema\": {\"type\": \"object\", \"properties\": {"
        "  \"command\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"The shell command line, run as bash -c COMMAND, starting in the workspace root (or cwd).\"},"
        "  \"cwd\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"The directory the command starts in: absolute, or relative to the workspace root (default: the root). It must exist. It grants nothing: the sandbox allows the same writes from any directory.\"},"
        "  \"timeout_ms\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 2147483647, \"description\": \"Kill the command after this many milliseconds (default: no limit).\"},"
        "  \"sandbox_permissions\": {\"type\": \"string\", \"enum\": [\"read-only\", \"workspace-write\", \"danger-full-access\"], \"description\": \"Only after a denial: run this one call under this wider mode, if the user approves. Requires justification.\"},"
        "  \"additional_write\": {\"type\": \"array\", \"items\": {\"type\": \"string\", \"minLength\": 1}, \"description\": \"Only after a denial whose grant names a writable root: for this one call also make these directories writable (absolute, or relative to the workspace root; they must exist), if the user approves. Needs workspace-write and a justification. Narrower than a wider mode: prefer it.\"},"
        "  \"additional_hosts\": {\"type\": \"array\", \"items\": {\"type\": \"string\", \"minLength\": 1}, \"description\": \"Only after a denial whose grant names a host: for this one call also allow these hosts (host or host:port), if the user approves. Needs a restricted network and a justification.\"},"
        "  \"justification\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"Only with sandbox_permissions, additional_write or additional_hosts: one sentence, shown to the user, saying why this command needs the grant.\"}"
        " }, \"required\": [\"command\"], \"additionalProperties\": false},"
        " \"outputSchema\": " BASH_RESULT_SCHEMA ","
        " \"annotations\": {\"title\": \"Run a shell command in the sandbox\", \"readOnlyHint\": false, \"destructiveHint\": true, \"idempotentHint\": false, \"openWorldHint\": true}}",

        "{\"name\": \"read_file\", \"title\": \"Read a file\","
        " \"description\": \"Reads a UTF-8 text file whole and returns its content. Reading is allowed in "
        "every mode, wherever the server may read. Relative paths are taken from the workspace root. A file "
        "that is not UTF-8 text is refused: look at it with the bash tool (e.g. xxd). A file larger than the "
        "read limit (16 MiB unless configured) is refused with FS_TOO_LARGE: read it in parts with offset and "
        "length (bytes; a part's edges move inward to whole UTF-8 characters).\","
        " \"inputSchema\": {\"type\": \"object\", \"properties\": {"
        "  \"path\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"The file, absolute or relative to the workspace root.\"},"
        "  \"offset\": {\"type\": \"integer\", \"minimum\": 0, \"description\": \"Read from this byte (default 0).\"},"
        "  \"length\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 1073741824, \"description\": \"Read at most this many bytes (default: up to the read limit).\"}"
        " }, \"required\": [\"path\"], \"additionalProperties\": false},"
        " \"annotations\": {\"title\": \"Read a file\", \"readOnlyHint\": true, \"openWorldHint\": false}}",

        "{\"name\": \"write_file\", \"title\": \"Write a file\","
        " \"description\": \"Writes content to a file, replacing it atomically or creating it with any missing "
        "parent directories. " WHERE_WRITES_GO FILE_DENIAL "\","
        " \"inputSchema\": {\"type\": \"object\", \"properties\": {"
        "  \"path\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"The file, absolute or relative to the workspace root.\"},"
        "  \"content\": {\"type\": \"string\", \"description\": \"The whole new content (UTF-8 text).\"}"
        " }, \"required\": [\"path\", \"content\"], \"additionalProperties\": false},"
        " \"annotations\": {\"title\": \"Write a file\", \"readOnlyHint\": false, \"destructiveHint\": true, \"idempotentHint\": true, \"openWorldHint\": false}}",

        "{\"name\": \"edit_file\", \"title\": \"Edit a file\","
        " \"description\": \"Replaces old_string by new_string in a text file: old_string must occur exactly "
        "once (include enough surrounding lines to make it unique), or set replace_all to replace every "
        "occurrence. The file is rewritten atomically. " WHERE_WRITES_GO FILE_DENIAL "\","
        " \"inputSchema\": {\"type\": \"object\", \"properties\": {"
        "  \"path\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"The file, absolute or relative to the workspace root.\"},"
        "  \"old_string\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"The exact text to replace.\"},"
        "  \"new_string\": {\"type\": \"string\", \"description\": \"The text to put in its place (may be empty).\"},"
        "  \"replace_all\": {\"type\": \"boolean\", \"default\": false, \"description\": \"Replace every occurrence instead of the one that must be unique.\"}"
        " }, \"required\": [\"path\", \"old_string\", \"new_string\"], \"additionalProperties\": false},"
        " \"annotations\": {\"title\": \"Edit a file\", \"readOnlyHint\": false, \"destructiveHint\": true, \"idempotentHint\": false, \"openWorldHint\": false}}",

        "{\"name\": \"create_directory\", \"title\": \"Create a directory\","
        " \"description\": \"Creates a directory; with recursive, also its missing parents, and an existing "
        "directory is fine. " WHERE_WRITES_GO FILE_DENIAL "\","
        " \"inputSchema\": {\"type\": \"object\", \"properties\": {"
        "  \"path\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"The directory, absolute or relative to the workspace root.\"},"
        "  \"recursive\": {\"type\": \"boolean\", \"default\": false, \"description\": \"Make missing parents too (mkdir -p).\"}"
        " }, \"required\": [\"path\"], \"additionalProperties\": false},"
        " \"annotations\": {\"title\": \"Create a directory\", \"readOnlyHint\": false, \"destructiveHint\": false, \"idempotentHint\": true, \"openWorldHint\": false}}",

        "{\"name\": \"remove\", \"title\": \"Remove a file or directory\","
        " \"description\": \"Removes a file, a symlink (never its target) or an empty directory; with "
        "recursive, a directory and everything beneath it. " WHERE_WRITES_GO FILE_DENIAL "\","
        " \"inputSchema\": {\"type\": \"object\", \"properties\": {"
        "  \"path\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"The entry, absolute or relative to the workspace root.\"},"
        "  \"recursive\": {\"type\": \"boolean\", \"default\": false, \"description\": \"Remove a directory with everything beneath it (rm -r).\"}"
        " }, \"required\": [\"path\"], \"additionalProperties\": false},"
        " \"annotations\": {\"title\": \"Remove a file or directory\", \"readOnlyHint\": false, \"destructiveHint\": true, \"idempotentHint\": true, \"openWorldHint\": false}}",

        "{\"name\": \"move\", \"title\": \"Move or rename\","
        " \"description\": \"Renames source to destination (destination names the new entry itself; an "
        "existing file or empty directory there is replaced). Both must be where changes are allowed, on one "
        "filesystem. " WHERE_WRITES_GO FILE_DENIAL "\","
        " \"inputSchema\": {\"type\": \"object\", \"properties\": {"
        "  \"source\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"The entry to move, absolute or relative to the workspace root.\"},"
        "  \"destination\": {\"type\": \"string\", \"minLength\": 1, \"description\": \"Its new path, absolute or relative to the workspace root.\"}"
        " }, \"required\": [\"source\", \"destination\"], \"additionalProperties\": false},"
        " \"annotations\": {\"title\": \"Move or rename\", \"readOnlyHint\": false, \"destructiveHint\": true, \"idempotentHint\": false, \"openWorldHint\": false}}",
};

#define TOOL_COUNT (sizeof(tool_definitions) / sizeof(tool_definitions[0]))

/* The bash tool's description (the first definition), with the policy in force after it. */
static int describe_policy_to_bash(json_t *tools, const char *policy_text)
{
        json_t *bash = json_array_get(tools, 0);
        char *description = NULL;
        int result;

        if (!policy_text)
                return 0;
        if (asprintf(&description, "%s %s", json_string_value(json_object_get(bash, "description")), policy_text) < 0)
                return -ENOMEM;
        result = json_object_set_new(bash, "description", json_string(description)) < 0 ? -ENOMEM : 0;
        free(description);
        return result;
}

json_t *mcp_tool_definitions(const char *policy_text)
{
        json_t *tools = json_array();

        for (size_t i = 0; tools && i < TOOL_COUNT; i++) {
                json_error_t parse_error;
                json_t *tool = json_loads(tool_definitions[i], 0, &parse_error);

                if (!tool || json_array_append_new(tools, tool) < 0) {
                        /* A definition that does not parse is this file's bug; the tests list every tool. */
                        json_decref(tools);
                        return NULL;
                }
        }
        if (tools && describe_policy_to_bash(tools, policy_text) < 0) {
                json_decref(tools);
                return NULL;
        }
        return tools;
}

/* ------------------------------------------------------------- results -- */

/* A tool result whose text is `length` bytes of UTF-8 (NUL bytes included), then `note` (NULL: none) as a block of its own. */
static void reply_text_note(mcp_tool_call *tool_call, const char *text, size_t length, const char *note,
                            bool is_error, json_t *structured)
{
        json_t *result = json_pack("{s:[{s:s, s:s#}], s:b}", "content", "type", "text", "text", text, length,
                                   "isError", is_error);

        if (result && note &&
            json_array_append_new(json_object_get(result, "content"),
                                  json_pack("{s:s, s:s}", "type", "text", "text", note)) < 0) {
                json_decref(result);
                result = NULL;
        }
        if (result && structured)
                json_object_set_new(result, "structuredContent", structured);
        else
                json_decref(structured);
        if (!result) {
                rpc_call_fail(tool_call->call, RPC_INTERNAL_ERROR,
                              "the tool's result cannot be sent: out of memory, or text that is not UTF-8", NULL);
                return;
        }
        rpc_call_reply(tool_call->call, result);
}

static void reply_text(mcp_tool_call *tool_call, const char *text, size_t length, bool is_error, json_t *structured)
{
        reply_text_note(tool_call, text, length, NULL, is_error, structured);
}

void mcp_tool_reply(mcp_tool_call *tool_call, const char *text, bool is_error, json_t *structured)
{
        reply_text(tool_call, text, strlen(text), is_error, structured);
}

void mcp_tool_reply_note(mcp_tool_call *tool_call, const char *text, const char *note, bool is_error,
                         json_t *structured)
{
        reply_text_note(tool_call, text, strlen(text), note, is_error, structured);
}

void mcp_tool_reply_error(mcp_tool_call *tool_call, const dsh_error *error, const char *advice)
{
        const char *code = dsh_error_code_name(error->code);
        const char *message = error->message ? error->message : strerror(error->errno_value ? error->errno_value
                                                                                               : EIO);
        char *text = NULL;

        if (asprintf(&text, "%s%s%s%s%s", code ? code : "", code ? ": " : "", message, advice ? "\n" : "",
                     advice ? advice : "") < 0) {
                rpc_call_fail(tool_call->call, RPC_INTERNAL_ERROR, "out of memory", NULL);
                return;
        }
        mcp_tool_reply(tool_call, text, true, NULL);
        free(text);
}

/* ----------------------------------------------------------- arguments -- */

const char *mcp_argument_string(const mcp_tool_call *tool_call, const char *name)
{
        return json_string_value(json_object_get(tool_call->arguments, name));
}

char **mcp_argument_strings(const mcp_tool_call *tool_call, const char *name, bool *failed)
{
        json_t *array = json_object_get(tool_call->arguments, name);
        char **strings = NULL;
        size_t index;
        json_t *value;

        *failed = false;
        json_array_foreach(array, index, value)
                if (json_is_string(value) && dsh_strv_append(&strings, json_string_value(value)) < 0) {
                        dsh_strv_free(strings);
                        *failed = true;
                        return NULL;
                }
        return strings;
}

bool mcp_argument_bool(const mcp_tool_call *tool_call, const char *name, bool fallback)
{
        json_t *value = json_object_get(tool_call->arguments, name);

        return json_is_boolean(value) ? json_is_true(value) : fallback;
}

long long mcp_argument_integer(const mcp_tool_call *tool_call, const char *name, long long fallback)
{
        json_t *value = json_object_get(tool_call->arguments, name);

        return json_is_integer(value) ? json_integer_value(value) : fallback;
}

/*
 * What is wrong with `value` for the property `schema` (the subset of JSON
 * Schema the definitions above use: type, enum, minLength, minimum,
 * maximum, an array's items), or NULL when it fits.  A string holding a NUL
 * byte is refused: paths and commands are C strings, and a NUL would cut
 * them silently.
 */
static const char *property_problem(const json_t *schema, const json_t *value)
{
        const char *type = json_string_value(json_object_get(schema, "type"));
        json_t *allowed = json_object_get(schema, "enum");
        json_t *minimum = json_object_get(schema, "minimum"), *maximum = json_object_get(schema, "maximum");

        if (strcmp(type, "array") == 0) {
                size_t index;
                json_t *item;

                if (!json_is_array(value))
                        return "expected an array";
                json_array_foreach(value, index, item) {
                        const char *problem = property_problem(json_object_get(schema, "items"), item);

                        if (problem)
                                return problem;
                }
                return NULL;
        }
        if (strcmp(type, "boolean") == 0)
                return json_is_boolean(value) ? NULL : "expected true or false";
        if (strcmp(type, "integer") == 0) {
                if (!json_is_integer(value))
                        return "expected a whole number";
                if ((minimum && json_integer_value(value) < json_integer_value(minimum)) ||
                    (maximum && json_integer_value(value) > json_integer_value(maximum)))
                        return "out of range";
                return NULL;
        }
        if (!json_is_string(value))
                return "expected a string";
        if (strlen(json_string_value(value)) != json_string_length(value))
                return "holds a NUL byte";
        if (json_object_get(schema, "minLength") && json_string_length(value) == 0)
                return "must not be empty";
        if (allowed) {
                size_t index;
                json_t *choice;

                json_array_foreach(allowed, index, choice)
                        if (json_equal(choice, value))
                                return NULL;
                return "not one of the allowed values";
        }
        return NULL;
}

static bool array_holds_string(const json_t *array, const char *text)
{
        size_t index;
        json_t *value;

        json_array_foreach(array, index, value)
                if (json_is_string(value) && strcmp(json_string_value(value), text) == 0)
                        return true;
        return false;
}

/*
 * Checks `arguments` against the tool's inputSchema: no unknown member
 * (a model's misspelt "timeout" must not be ignored silently), every
 * required one present, each of its type.  Returns 0, or -1 with *name_out
 * and *problem_out set.
 */
static int check_arguments(const json_t *input_schema, json_t *arguments, const char **name_out,
                           const char **problem_out)
{
        json_t *properties = json_object_get(input_schema, "properties");
        json_t *required = json_object_get(input_schema, "required");
        const char *name;
        json_t *value;
        size_t index;

        json_object_foreach(arguments, name, value) {
                json_t *schema = json_object_get(properties, name);

                *name_out = name;
                *problem_out = schema ? property_problem(schema, value) : "unknown argument";
                if (json_is_null(value) && schema && !array_holds_string(required, name))
                        *problem_out = NULL;   /* null stands for absent, for an optional argument */
                if (*problem_out)
                        return -1;
        }
        json_array_foreach(required, index, value) {
                *name_out = json_string_value(value);
                *problem_out = "missing";
                if (!json_object_get(arguments, *name_out))
                        return -1;
        }
        return 0;
}

/* ---------------------------------------------------------- file tools -- */

typedef int (*file_operation_fn)(const mcp_tool_call *tool_call, dsh_file_guard *guard, dsh_file_result *result,
                                 dsh_error *error);

static int write_file(const mcp_tool_call *tool_call, dsh_file_guard *guard, dsh_file_result *result,
                      dsh_error *error)
{
        const char *content = mcp_argument_string(tool_call, "content");

        return dsh_file_guard_write(guard, mcp_argument_string(tool_call, "path"), content, strlen(content), 0,
                                    result, error);
}

static int edit_file(const mcp_tool_call *tool_call, dsh_file_guard *guard, dsh_file_result *result,
                     dsh_error *error)
{
        unsigned flags = mcp_argument_bool(tool_call, "replace_all", false) ? DSH_FILE_EDIT_ALL : 0;

        return dsh_file_guard_edit(guard, mcp_argument_string(tool_call, "path"),
                                   mcp_argument_string(tool_call, "old_string"),
                                   mcp_argument_string(tool_call, "new_string"), flags, result, error);
}

static int create_directory(const mcp_tool_call *tool_call, dsh_file_guard *guard, dsh_file_result *result,
                            dsh_error *error)
{
        unsigned flags = mcp_argument_bool(tool_call, "recursive", false) ? DSH_FILE_MKDIR_PARENTS : 0;

        return dsh_file_guard_mkdir(guard, mcp_argument_string(tool_call, "path"), flags, result, error);
}

static int remove_entry(const mcp_tool_call *tool_call, dsh_file_guard *guard, dsh_file_result *result,
                        dsh_error *error)
{
        unsigned flags = mcp_argument_bool(tool_call, "recursive", false) ? DSH_FILE_REMOVE_RECURSIVE : 0;

        return dsh_file_guard_remove(guard, mcp_argument_string(tool_call, "path"), flags, result, error);
}

static int move_entry(const mcp_tool_call *tool_call, dsh_file_guard *guard, dsh_file_result *result,
                      dsh_error *error)
{
        return dsh_file_guard_move(guard, mcp_argument_string(tool_call, "source"),
                                   mcp_argument_string(tool_call, "destination"), 0, result, error);
}

/* The whole file, or with offset or length the part asked (the guard bounds both). */
static int read_file(const mcp_tool_call *tool_call, dsh_file_guard *guard, dsh_file_result *result,
                     dsh_error *error)
{
        long long offset = mcp_argument_integer(tool_call, "offset", -1);
        long long length = mcp_argument_integer(tool_call, "length", -1);

        if (offset < 0 && length < 0)
                return dsh_file_guard_read(guard, mcp_argument_string(tool_call, "path"), result, error);
        return dsh_file_guard_read_range(guard, mcp_argument_string(tool_call, "path"),
                                         offset < 0 ? 0 : (unsigned long long) offset, length < 0 ? 0 : (size_t) length,
                                         result, error);
}

/*
 * A part of a file may start inside a UTF-8 character or end inside one: up
 * to three continuation bytes at the start, and an unfinished sequence at the
 * end, are left out so that the part reads as text.  Whole-file reads are
 * never trimmed (a file that is not UTF-8 is refused as such).
 */
static void trim_to_whole_characters(const char **text, size_t *length)
{
        size_t lead = 0, tail;

        while (lead < 3 && lead < *length && ((unsigned char) (*text)[lead] & 0xC0) == 0x80)
                lead++;
        *text += lead;
        *length -= lead;
        for (tail = 1; tail <= 3 && tail <= *length; tail++) {
                unsigned char byte = (unsigned char) (*text)[*length - tail];
                size_t needed = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 0;

                if ((byte & 0xC0) == 0x80)
                        continue;
                if (needed > tail)
                        *length -= tail;
                break;
        }
}

/* The canonical path when JSON can carry it, else the path as the model gave it (which came as JSON). */
static const char *shown_path(const char *canonical, const char *given)
{
        return canonical && dsh_text_is_utf8(canonical, strlen(canonical), NULL) ? canonical : given;
}

/* One sentence for the model saying what the operation did. */
static char *describe_file_result(const mcp_tool_call *tool_call, const dsh_file_result *result)
{
        const char *path = shown_path(result->path, mcp_argument_string(tool_call, "path"));
        char *text = NULL;
        int written = -1;

        switch (result->operation) {
        case DSH_FILE_WRITE:
                written = asprintf(&text, "wrote %zu bytes to %s%s", result->bytes, path,
                                   result->created ? " (a new file)" : "");
                break;
        case DSH_FILE_EDIT:
                written = asprintf(&text, "replaced %zu occurrence%s in %s (now %zu bytes)", result->replacements,
                                   result->replacements == 1 ? "" : "s", path, result->bytes);
                break;
        case DSH_FILE_MKDIR:
                written = asprintf(&text, result->created ? "created directory %s" : "directory %s already exists",
                                   path);
                break;
        case DSH_FILE_REMOVE:
                written = asprintf(&text, "removed %s (%zu entr%s)", path, result->removed,
                                   result->removed == 1 ? "y" : "ies");
                break;
        case DSH_FILE_MOVE:
                written = asprintf(&text, "moved %s to %s",
                                   shown_path(result->source, mcp_argument_string(tool_call, "source")),
                                   shown_path(result->path, mcp_argument_string(tool_call, "destination")));
                break;
        case DSH_FILE_READ:
                break;
        }
        return written < 0 ? NULL : text;
}

/* The file result as structuredContent (dsh_json_encode_file_result's object), or NULL when JSON cannot carry it. */
static json_t *structured_file_result(const dsh_file_result *result)
{
        dsh_error error = DSH_ERROR_INIT;
        json_t *object = service_file_result_json(result, &error);

        dsh_error_clear(&error);
        return object;
}

/* A read's content, as text when it is UTF-8; JSON cannot carry anything else. */
static void reply_read(mcp_tool_call *tool_call, const dsh_file_result *result)
{
        const char *content = result->content;
        size_t invalid_offset = 0, length = result->bytes;
        char *text = NULL;

        if (json_object_get(tool_call->arguments, "offset") || json_object_get(tool_call->arguments, "length"))
                trim_to_whole_characters(&content, &length);
        if (dsh_text_is_utf8(content, length, &invalid_offset)) {
                reply_text(tool_call, content, length, false, NULL);
                return;
        }
        if (asprintf(&text,
                     "cannot read \"%s\": it is not UTF-8 text (byte 0x%02x at offset %zu); look at it with the "
                     "bash tool instead (e.g. xxd or file)",
                     mcp_argument_string(tool_call, "path"), (unsigned char) result->content[invalid_offset],
                     invalid_offset) < 0) {
                rpc_call_fail(tool_call->call, RPC_INTERNAL_ERROR, "out of memory", NULL);
                return;
        }
        mcp_tool_reply(tool_call, text, true, NULL);
        free(text);
}

/*
 * A refusal (FS_SANDBOX_DENIED): the error's text and the advice, then one
 * line naming what was refused and the grant (dsh_denial_describe()), and as
 * structuredContent the error object with the record as `denial` (as `fs
 * --json` prints it).  The record is kept in the server's session, if any.
 */
static void reply_denied(mcp_tool_call *tool_call, dsh_file_guard *guard, const dsh_error *error, const char *advice)
{
        dsh_denial denial = DSH_DENIAL_INIT;
        dsh_error encode_error = DSH_ERROR_INIT;
        char *warning = NULL, *described = NULL, *text = NULL;
        bool taken = service_file_guard_denial(tool_call->server->context, tool_call->server->policy, guard, &denial,
                                               &warning);
        json_t *structured = json_pack("{s:s, s:s}", "code", dsh_error_code_name(error->code), "message",
                                       error->message ? error->message : "denied");

        if (taken)
                described = dsh_denial_describe(&denial);
        if (structured && taken)
                json_object_set_new(structured, "denial", service_denial_json(&denial, &encode_error));
        if (asprintf(&text, "%s: %s\n%s%s%s%s%s", dsh_error_code_name(error->code),
                     error->message ? error->message : "denied", advice, described ? "\ndenied: " : "",
                     described ? described : "", warning ? "\nwarning: " : "", warning ? warning : "") < 0) {
                json_decref(structured);
                rpc_call_fail(tool_call->call, RPC_INTERNAL_ERROR, "out of memory", NULL);
        } else {
                mcp_tool_reply(tool_call, text, true, structured);
        }
        free(text);
        free(described);
        free(warning);
        dsh_error_clear(&encode_error);
        dsh_denial_clear(&denial);
}

/*
 * One file tool: a guard for the policy this call resolves to (a session is
 * read again, so its current mode counts), the operation, and its result.
 * Every error is a tool result for the model (isError), a denial included:
 * a denial is the sandbox working, never a protocol failure.
 */
static void run_file_tool(mcp_tool_call *tool_call, file_operation_fn operation)
{
        static const char denial_advice[] =
                "Nothing was changed: the sandbox does not allow this change under the current mode. Do not "
                "work around it; if it is really needed, ask the user, or run the command that makes it with "
                "the bash tool's sandbox_permissions + justification, which asks the user to approve one call.";
        dsh_file_result result = DSH_FILE_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_file_guard *guard = NULL;
        char *text;

        if (service_file_guard(tool_call->server->context, tool_call->server->policy, &guard, &error) < 0) {
                mcp_tool_reply_error(tool_call, &error,
                                     error.code == DSH_ERROR_FS_SANDBOX_DENIED ? denial_advice : NULL);
        } else if (operation(tool_call, guard, &result, &error) < 0) {
                if (error.code == DSH_ERROR_FS_SANDBOX_DENIED)
                        reply_denied(tool_call, guard, &error, denial_advice);
                else
                        mcp_tool_reply_error(tool_call, &error, NULL);
        } else if (result.operation == DSH_FILE_READ) {
                reply_read(tool_call, &result);
        } else if ((text = describe_file_result(tool_call, &result))) {
                mcp_tool_reply(tool_call, text, false, structured_file_result(&result));
                free(text);
        } else {
                rpc_call_fail(tool_call->call, RPC_INTERNAL_ERROR, "out of memory", NULL);
        }
        dsh_file_result_clear(&result);
        dsh_error_clear(&error);
        dsh_file_guard_free(guard);
}

/* ---------------------------------------------------------- dispatch -- */

static void run_write_file(mcp_tool_call *tool_call) { run_file_tool(tool_call, write_file); }
static void run_edit_file(mcp_tool_call *tool_call) { run_file_tool(tool_call, edit_file); }
static void run_create_directory(mcp_tool_call *tool_call) { run_file_tool(tool_call, create_directory); }
static void run_remove(mcp_tool_call *tool_call) { run_file_tool(tool_call, remove_entry); }
static void run_move(mcp_tool_call *tool_call) { run_file_tool(tool_call, move_entry); }
static void run_read_file(mcp_tool_call *tool_call) { run_file_tool(tool_call, read_file); }

static const struct {
        const char *name;
        void (*run)(mcp_tool_call *tool_call);
} tool_runners[] = {
        { "bash", mcp_tool_bash },
        { "read_file", run_read_file },
        { "write_file", run_write_file },
        { "edit_file", run_edit_file },
        { "create_directory", run_create_directory },
        { "remove", run_remove },
        { "move", run_move },
};

/* The definition of tool `name` in the server's list, or NULL. */
static json_t *find_definition(const mcp_tool_server *server, const char *name)
{
        size_t index;
        json_t *tool;

        json_array_foreach(server->tools, index, tool)
                if (strcmp(json_string_value(json_object_get(tool, "name")), name) == 0)
                        return tool;
        return NULL;
}

/*
 * Arguments the inputSchema refuses: a protocol error (-32602) up to
 * 2025-06-18, whose tools page lists "invalid arguments" among them; from
 * 2025-11-25 on, a tool result with isError, so that the model sees what it
 * got wrong and can correct itself.
 */
static void refuse_arguments(mcp_tool_call *tool_call, const char *name, const char *problem)
{
        char parameter[256], *text = NULL;

        snprintf(parameter, sizeof(parameter), "arguments.%s", name);
        if (!tool_call->invalid_arguments_as_tool_errors) {
                rpc_call_fail_params(tool_call->call, parameter, problem);
                return;
        }
        if (asprintf(&text, "invalid arguments: %s: %s", name, problem) < 0) {
                rpc_call_fail(tool_call->call, RPC_INTERNAL_ERROR, "out of memory", NULL);
                return;
        }
        mcp_tool_reply(tool_call, text, true, NULL);
        free(text);
}

void mcp_tool_run(mcp_tool_call *tool_call, const char *name)
{
        json_t *definition = find_definition(tool_call->server, name);
        const char *argument = NULL, *problem = NULL;
        json_t *no_arguments = NULL;

        if (!definition) {
                char *what = NULL;

                if (asprintf(&what, "unknown tool \"%s\"", name) < 0)
                        rpc_call_fail(tool_call->call, RPC_INTERNAL_ERROR, "out of memory", NULL);
                else
                        rpc_call_fail_params(tool_call->call, "name", what);
                free(what);
                return;
        }
        if (!tool_call->arguments)
                tool_call->arguments = no_arguments = json_object();
        if (!tool_call->arguments) {
                rpc_call_fail(tool_call->call, RPC_INTERNAL_ERROR, "out of memory", NULL);
        } else if (check_arguments(json_object_get(definition, "inputSchema"), tool_call->arguments, &argument,
                                   &problem) < 0) {
                refuse_arguments(tool_call, argument, problem);
        } else {
                for (size_t i = 0; i < sizeof(tool_runners) / sizeof(tool_runners[0]); i++)
                        if (strcmp(tool_runners[i].name, name) == 0)
                                tool_runners[i].run(tool_call);
        }
        json_decref(no_arguments);
}
