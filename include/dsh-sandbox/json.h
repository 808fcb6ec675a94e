/* SPDX-License-Identifier: MIT */
/*
 * dsh-sandbox: the JSON codec, for everything that crosses a process
 * boundary (the command line's --json output, the service, the MCP server,
 * the remote provider).  One place writes each shape and one place reads it
 * back, so a producer and a consumer cannot drift apart.
 *
 * Shapes (compact, keys in this order, optional keys omitted as noted):
 *
 *   facts   {"argv":[...],"enforcement":"full"|"partial","denialSignatures":[...],
 *            "runnerFailureRules":[{"allowedExitCodes":[...],"fatalSignatures":[...],
 *            "informationalLines":[...]}],"backend":"...","partialReasons":[...]}
 *           allowedExitCodes and informationalLines only when non-empty; backend and
 *           partialReasons only when set.
 *   policy  {"mode":"...","workspaceRoot":"...","additionalWritableRoots":[...],"sessionId":"..."}
 *           additionalWritableRoots only when non-empty, sessionId only when set.
 *   error   {"code":"SANDBOX_UNAVAILABLE","message":"..."}
 *   probe   {"backends":[{"name","usable","enforcement"?,"reason"?,"version"?,"runner"?,
 *            "partialReasons"?}],"bwrapVersion"?,"landlockAbi","landlockScopes",
 *            "landlockScopesMissing","selected":"..."|null}
 *   session {"header":{...},"events":[...],"effectiveMode":"...","path":"...","override"?:"..."}
 *   session list  [{"id":"...","cwd":"...","effectiveMode":"...","override"?:"..."}, ...]
 *   file    {"operation":"write"|"edit"|"mkdir"|"remove"|"move"|"read","source"?,"path",
 *            "created"?,"replacements"?,"removed"?,"bytes"?,"content"?}: the members
 *            each operation has (see dsh_json_encode_file_result)
 *   bash result   {"kind":"...","exitCode":N|null,"signal":N|null,"timedOut":false,"cancelled":false,
 *            "stdout":{"text":"...","truncated":false,"bytes":N},"stderr":{...},
 *            "sandbox":{"mode":"...","backend":"..."|null,"enforcement":"..."|null,"denied":false,
 *            "runnerFailed":false},"markers":[...],"message"?:"...","error"?:{error},"warnings"?:[...]}
 *   escalation    {"command":"...","sandboxPermissions":"...","currentMode":"...","justification":"...",
 *            "workspaceRoot":"...","sessionId"?:"..."}
 *
 * Strings.  A JSON string carries only UTF-8, and paths and arguments are
 * bytes.  Encoding never drops or alters a member it cannot carry: it fails
 * with DSH_ERROR_INVALID_INPUT naming the member,
 *   "facts: \"argv\"[3] is not valid UTF-8 (byte 0xff at offset 4), and a JSON string cannot carry it"
 * so `rm -rf "junk\xff" /` can never be printed as `rm -rf /`.  (An error
 * object's message is the one exception: see dsh_json_encode_error.)
 *
 * Decoding is strict, because a decoder reads what another process (another
 * machine, for the remote provider) sent and the facts decide how a
 * command's result is read.  The text must be one JSON object (surrounding
 * whitespace allowed); every member must have its type; a key may appear
 * once; and a key this version does not know is refused, not ignored: an
 * unknown member may qualify the others (a reason the enforcement is not
 * what it says, a narrower policy), and a reader that skipped it would act
 * on a claim the writer did not make.  Peers of different versions are told
 * apart by version, not by silently dropping what one does not understand.
 * Failures are DSH_ERROR_INVALID_INPUT with -EINVAL and one line naming the
 * member by its path: "facts: \"enforcement\" must be \"full\" or
 * \"partial\"", "facts: \"runnerFailureRules\"[0].\"fatalSignatures\"[1]
 * must be a non-empty single-line string", "facts: \"foo\" is an unknown key".
 *
 * Every function returns 0 or a negative errno with `error` set (-ENOMEM
 * with DSH_ERROR_SYSTEM when out of memory).  Encoded text is a new
 * NUL-terminated string without a trailing newline, owned by the caller
 * (free()); on failure `*text_out` is NULL.  Decoded objects are owned by
 * the caller, who clears them as usual; on failure they are left cleared.
 */
#ifndef DSH_SANDBOX_JSON_H
#define DSH_SANDBOX_JSON_H

#include <stddef.h>

#include "dsh-sandbox/file-guard.h"
#include "dsh-sandbox/bash-tool.h"
#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/policy-service.h"
#include "dsh-sandbox/provider.h"
#include "dsh-sandbox/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------- facts -- */

/*
 * The confined argv and its facts, as `dsh-sandbox confine` prints them.
 * Every string is checked (the argv, the signatures, the lines, the
 * backend, the reasons); a NULL argv or signature list encodes as [].
 */
DSH_PUBLIC int dsh_json_encode_confined_argv(const dsh_confined_argv *facts, char **text_out, dsh_error *error);

/*
 * Reads facts back, validated as a consumer that spawns them must have them:
 *   - "argv": a non-empty array of strings;
 *   - "enforcement": "full" or "partial";
 *   - "denialSignatures": an array of non-empty single-line strings (a
 *     signature that is empty would call every failure a denial);
 *   - "runnerFailureRules": a non-empty array (the evidence that tells a
 *     runner's failure from the command's) of objects with
 *     "fatalSignatures", a non-empty array of non-empty single-line
 *     strings, and optionally "allowedExitCodes", integers from 1 to 255
 *     (an exit status; 0 never proves a failure), and "informationalLines",
 *     strings;
 *   - "backend", optional: a non-empty single-line string (a name);
 *   - "partialReasons", optional: non-empty strings, and when there are any
 *     the enforcement must be "partial" (a "full" claim with reasons is a
 *     contradiction, not a nuance).
 * No string may contain a NUL byte.  An empty optional array reads as
 * absent.  `text` is `length` bytes, NUL-terminated or not.  `facts_out`
 * must be DSH_CONFINED_ARGV_INIT.
 */
DSH_PUBLIC int dsh_json_decode_confined_argv(const char *text, size_t length, dsh_confined_argv *facts_out,
                                             dsh_error *error);

/* ---------------------------------------------------------- policy -- */

/* The execution policy, as `dsh-sandbox policy resolve --json` prints it.  `workspace_root` must be set. */
DSH_PUBLIC int dsh_json_encode_policy(const dsh_policy *policy, char **text_out, dsh_error *error);

/*
 * Reads a policy back: "mode" one of the three modes, "workspaceRoot" a
 * string, "additionalWritableRoots" (optional) an array of strings,
 * "sessionId" (optional) a valid session id (dsh_session_id_is_valid).
 * Only the shape is checked here: what a root may be (absolute, an existing
 * directory, no symlink) is dsh_policy_prepare()'s to say, and every
 * provider call applies it.  `policy_out` must be DSH_POLICY_INIT.
 */
DSH_PUBLIC int dsh_json_decode_policy(const char *text, size_t length, dsh_policy *policy_out, dsh_error *error);

/*
 * The network dimension alone, in the config's shape (docs/configuration.md,
 * "network"): "on", "off", or {"allowHosts": [...], "allowLocalPorts":
 * [...], "dnsUpstream": "IP:PORT"}; an object without hosts is off with
 * its local ports.  The policy's "network" member has this shape (absent:
 * on).  The decoder checks every entry with dsh_network_pattern_check()
 * ("<what>: \"allowHosts\"[1] \"*\": <reason>"), each port (1..65535) and
 * the upstream, refuses unknown keys, and keeps the entries as written
 * (dsh_policy_prepare() expands the named sets).  `network_out` is
 * DSH_NETWORK_POLICY_INIT on failure.
 */
DSH_PUBLIC int dsh_json_encode_network_policy(const dsh_network_policy *network, char **text_out, dsh_error *error);
DSH_PUBLIC int dsh_json_decode_network_policy(const char *text, size_t length, const char *what,
                                              dsh_network_policy *network_out, dsh_error *error);

/* ---------------------------------------------------------- errors -- */

/*
 * A typed error: "code" is the spec's code ("SANDBOX_UNAVAILABLE", ...) or,
 * for the codes the spec does not name, "INVALID_INPUT", "INVARIANT",
 * "SYSTEM" or "EXEC_FAILED"; "message" is the error's exact text (strerror
 * of its errno when it has none).  errno_value is not carried.  A message
 * is text for a person and quotes paths, which are bytes: rather than fail
 * to report an error, each byte that is not UTF-8 is written as the four
 * characters \xNN.  -EINVAL for DSH_ERROR_NONE, which is not an error.
 */
DSH_PUBLIC int dsh_json_encode_error(const dsh_error *value, char **text_out, dsh_error *error);

/*
 * Reads an error back: "code" one of the names above, "message" a string.
 * `value_out` must be DSH_ERROR_INIT; its errno_value is 0.
 */
DSH_PUBLIC int dsh_json_decode_error(const char *text, size_t length, dsh_error *value_out, dsh_error *error);

/* ----------------------------------------------------------- probe -- */

/*
 * The probe report, as `dsh-sandbox probe --json` prints it.  A string
 * that is not UTF-8 is named by its backend: "probe: backend bwrap's
 * \"runner\" is not valid UTF-8 ...".
 */
DSH_PUBLIC int dsh_json_encode_probe_report(const dsh_probe_report *report, char **text_out, dsh_error *error);

/* -------------------------------------------------------- sessions -- */

/*
 * A session as `dsh-sandbox session show --json` prints it: the header and
 * every event as they stand in the log (each line's JSON re-encoded
 * compact), the effective mode (the session's override, else
 * `default_mode`), the log's path, and the override when there is one.
 * Walks the log (dsh_session_foreach_event, whose errors it returns).  A
 * line replay accepted but no JSON reader can load (replay checks only the
 * syntax of events it ignores, not their UTF-8) fails with
 * DSH_ERROR_INVARIANT, "session log <path>: line <n> is not valid UTF-8
 * JSON".
 */
DSH_PUBLIC int dsh_json_encode_session(dsh_session *session, dsh_mode default_mode, char **text_out,
                                       dsh_error *error);

/*
 * Called for a session of the store that does not load (a corrupt log, a
 * FIFO at its path): it is left out and the list goes on.  `error` says
 * why; it is valid only during the call.
 */
typedef void (*dsh_json_session_skipped_fn)(const char *id, const dsh_error *error, void *data);

/*
 * Every session of `store` (dsh_session_store_list order) as the array
 * `dsh-sandbox session list --json` prints: each one's id, cwd, effective
 * mode (its override, else `default_mode`) and override when it has one.
 * Sessions are opened one at a time, so a store of any size lists within
 * the descriptor limit.  `skipped` (may be NULL) hears of each one left
 * out.  Fails only when the store cannot be listed or the array cannot be
 * built.
 */
DSH_PUBLIC int dsh_json_encode_session_list(dsh_session_store *store, dsh_mode default_mode,
                                            dsh_json_session_skipped_fn skipped, void *data, char **text_out,
                                            dsh_error *error);

/*
 * The data of a `sandbox/mode` event, {"mode":"<mode>"}, for
 * dsh_session_append().  `mode` is any text: the store's invariant judges
 * it (an unknown one is refused there with its exact message).
 */
DSH_PUBLIC int dsh_json_encode_mode_event_data(const char *mode, char **text_out, dsh_error *error);

/* ------------------------------------------------------ file guard -- */

/*
 * What a guarded file operation did (dsh-sandbox/file-guard.h), as
 * `dsh-sandbox fs ... --json` prints it, with the members its operation has:
 *   {"operation":"write","path":"/abs","created":true,"bytes":12}
 *   {"operation":"edit","path":"/abs","replacements":1,"bytes":40}
 *   {"operation":"mkdir","path":"/abs","created":false}
 *   {"operation":"remove","path":"/abs","removed":3}
 *   {"operation":"move","source":"/abs","path":"/abs"}
 *   {"operation":"read","path":"/abs","bytes":12,"content":"..."}
 * "bytes" counts bytes (of the file), not characters.  A read's content
 * travels as a JSON string (a NUL byte as \u0000): content that is not
 * UTF-8 fails, as every string does, naming "content".
 */
DSH_PUBLIC int dsh_json_encode_file_result(const dsh_file_result *result, char **text_out, dsh_error *error);
/* -------------------------------------------------------- bash tool -- */

/*
 * The bash tool's result (dsh-sandbox/bash-tool.h), as `dsh-sandbox bash
 * --json` prints it: "kind" (dsh_bash_kind_name), "exitCode" (null when it
 * did not exit), "signal" (null unless a signal killed it), "timedOut",
 * "cancelled", "stdout" and "stderr" each {"text","truncated","bytes"} (the
 * text as kept; "bytes" all the command wrote), "sandbox" {"mode",
 * "backend" (null when nothing was spawned), "enforcement" (null when no
 * backend confined the command), "denied", "runnerFailed"}, "markers" (the
 * marker lines, in order), and, when set, "message", "error" (the error
 * shape above: a runner failure's SANDBOX_UNAVAILABLE) and "warnings".
 * The output is the command's bytes, which JSON cannot always carry: like
 * an error's message, and unlike every other string here, each byte of it
 * that is not UTF-8 is written as the four characters \xNN — output is
 * shown to a reader, never executed, and a result must not be lost to one
 * stray byte.
 */
DSH_PUBLIC int dsh_json_encode_bash_result(const dsh_bash_result *result, char **text_out, dsh_error *error);

/*
 * Reads a bash result back (what the remote provider relays: `bash
 * --remote`), strictly: every member above with its type, "kind" one of
 * the kinds, "exitCode" null or 0..255, "signal" null or 1..64, no unknown
 * member.  The output text is read as it was written (\xNN stays four
 * characters).  `result_out` must be DSH_BASH_RESULT_INIT; clear it with
 * dsh_bash_result_clear().
 */
DSH_PUBLIC int dsh_json_decode_bash_result(const char *text, size_t length, dsh_bash_result *result_out,
                                           dsh_error *error);

/*
 * An escalation request, as the approval command reads it on stdin.  Every
 * string is checked: a command that is not UTF-8 cannot be shown to the
 * user faithfully, and is refused (-EINVAL) rather than asked about.
 */
DSH_PUBLIC int dsh_json_encode_bash_escalation(const dsh_bash_escalation *escalation, char **text_out,
                                               dsh_error *error);

/*
 * A denial (dsh-sandbox/denial.h) as one JSON object:
 *   {"op","call"?,"path"?,"host"?,"port"?,"rule","source","grant":{"kind","target"?,"mode"?}}
 * (docs/denials.md).  A path or host byte that is not UTF-8 is written \xNN,
 * as in a bash result's output: a command names files as it likes, and must
 * not make its record unencodable.  The list form is
 *   {"denials":[...],"dropped"?:N}
 * and a session's is {"sessionId","denials":[{...,"at":MS,"surface":"bash"}...],"dropped"?:N}.
 */
DSH_PUBLIC int dsh_json_encode_denial(const dsh_denial *denial, char **text_out, dsh_error *error);
DSH_PUBLIC int dsh_json_encode_denials(const dsh_denials *denials, char **text_out, dsh_error *error);
DSH_PUBLIC int dsh_json_encode_session_denials(const char *session_id, const dsh_session_denials *denials,
                                               char **text_out, dsh_error *error);

#ifdef __cplusplus
}
#endif

#endif
