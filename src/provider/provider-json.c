/* SPDX-License-Identifier: MIT */
/*
 * The provider's shapes (dsh-sandbox/json.h): the confined argv and its
 * facts, written by `confine` and the remote helper and read back by the
 * remote client, and the probe report.  Built on the JSON core
 * (base/json-core.h), which checks every string and decodes strictly.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/json.h"
#include "base/json-core.h"
#include "provider/provider-json.h"

/* ----------------------------------------------------------------- facts -- */

static json_t *encode_rule(dsh_json_encoder *encoder, const dsh_runner_failure_rule *rule, const dsh_json_path *path)
{
        json_t *object = dsh_json_encoder_new(encoder, json_object());

        if (rule->allowed_exit_code_count > 0) {
                json_t *codes = dsh_json_encoder_new(encoder, json_array());

                for (size_t i = 0; codes && i < rule->allowed_exit_code_count; i++)
                        dsh_json_append_element(encoder, codes,
                                                dsh_json_encoder_new(encoder,
                                                                     json_integer(rule->allowed_exit_codes[i])));
                dsh_json_set_member(encoder, object, "allowedExitCodes", codes);
        }
        dsh_json_set_strings_member(encoder, object, path, "fatalSignatures", rule->fatal_signatures);
        if (dsh_strv_length(rule->informational_lines) > 0)
                dsh_json_set_strings_member(encoder, object, path, "informationalLines", rule->informational_lines);
        return object;
}

json_t *dsh_json_confined_argv_value(const dsh_confined_argv *facts, const char *what, dsh_error *error)
{
        dsh_json_encoder encoder = { what, error, false };
        json_t *object = dsh_json_encoder_new(&encoder, json_object());
        json_t *rules = dsh_json_encoder_new(&encoder, json_array());
        dsh_json_path rules_path = dsh_json_path_key(&dsh_json_root, "runnerFailureRules");

        dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "argv", facts->argv);
        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "enforcement",
                                   dsh_enforcement_name(facts->enforcement));
        dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "denialSignatures", facts->denial_signatures);
        for (size_t i = 0; rules && i < facts->runner_failure_rule_count && !encoder.failed; i++) {
                dsh_json_path rule_path = dsh_json_path_index(&rules_path, i);

                dsh_json_append_element(&encoder, rules,
                                        encode_rule(&encoder, &facts->runner_failure_rules[i], &rule_path));
        }
        dsh_json_set_member(&encoder, object, "runnerFailureRules", rules);
        if (facts->backend)
                dsh_json_set_string_member(&encoder, object, &dsh_json_root, "backend", facts->backend);
        if (facts->partial_reasons)
                dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "partialReasons", facts->partial_reasons);
        if (facts->network)
                dsh_json_set_string_member(&encoder, object, &dsh_json_root, "network", facts->network);
        /* The secrets held back (docs/secrets.md), omitted when none: facts without them read back the same. */
        if (dsh_strv_length(facts->masked) > 0)
                dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "masked", facts->masked);
        if (dsh_strv_length(facts->environment_removed) > 0)
                dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "environmentRemoved",
                                            facts->environment_removed);
        return dsh_json_encoder_finish(&encoder, object);
}

/* An exit status that can prove a runner failed: what waitpid() reports for a nonzero exit. */
#define EXIT_CODE_MIN 1
#define EXIT_CODE_MAX 255

static int decode_exit_codes(dsh_json_decoder *decoder, const json_t *rule, const dsh_json_path *parent,
                             dsh_runner_failure_rule *out)
{
        dsh_json_path path = dsh_json_path_key(parent, "allowedExitCodes");
        const json_t *member;
        size_t count;
        int result = dsh_json_find_member(decoder, rule, &path, "allowedExitCodes", 0, &member);

        if (result < 0 || !member)
                return result;
        if (!json_is_array(member))
                return dsh_json_invalid(decoder->error, decoder->what, &path, "must be an array of integers");
        count = json_array_size(member);
        if (count == 0)
                return 0;   /* as absent: any nonzero exit */
        out->allowed_exit_codes = calloc(count, sizeof(int));
        if (!out->allowed_exit_codes)
                return dsh_json_out_of_memory(decoder->error, decoder->what);
        out->allowed_exit_code_count = count;
        for (size_t i = 0; i < count; i++) {
                const json_t *code = json_array_get(member, i);
                dsh_json_path element = dsh_json_path_index(&path, i);

                if (!json_is_integer(code) || json_integer_value(code) < EXIT_CODE_MIN ||
                    json_integer_value(code) > EXIT_CODE_MAX)
                        return dsh_json_invalid(decoder->error, decoder->what, &element,
                                                "must be an integer from %d to %d",
                                                EXIT_CODE_MIN, EXIT_CODE_MAX);
                out->allowed_exit_codes[i] = (int) json_integer_value(code);
        }
        return 0;
}

/* A signature is matched as a substring of one stderr line: an empty one would match every line. */
#define SIGNATURE_RULES (DSH_JSON_TEXT_NON_EMPTY | DSH_JSON_TEXT_SINGLE_LINE)

static int decode_rule(dsh_json_decoder *decoder, const json_t *value, const dsh_json_path *path,
                       dsh_runner_failure_rule *out)
{
        static const char *const keys[] = { "allowedExitCodes", "fatalSignatures", "informationalLines", NULL };
        int result = dsh_json_check_object(decoder, value, path, keys);

        if (result == 0)
                result = decode_exit_codes(decoder, value, path, out);
        if (result == 0)
                result = dsh_json_decode_string_list(decoder, value, path, "fatalSignatures",
                                                     DSH_JSON_REQUIRED | DSH_JSON_LIST_NON_EMPTY | SIGNATURE_RULES,
                                                     &out->fatal_signatures);
        if (result == 0)
                result = dsh_json_decode_string_list(decoder, value, path, "informationalLines", 0,
                                                     &out->informational_lines);
        return result;
}

static int decode_rules(dsh_json_decoder *decoder, const json_t *object, dsh_confined_argv *out)
{
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, "runnerFailureRules");
        const json_t *member;
        size_t count;
        int result = dsh_json_find_member(decoder, object, &path, "runnerFailureRules", DSH_JSON_REQUIRED, &member);

        if (result < 0)
                return result;
        /* Without a rule nothing could tell the runner's failure from the command's: its status would be misread. */
        if (!json_is_array(member) || json_array_size(member) == 0)
                return dsh_json_invalid(decoder->error, decoder->what, &path, "must be a non-empty array of objects");
        count = json_array_size(member);
        out->runner_failure_rules = calloc(count, sizeof(dsh_runner_failure_rule));
        if (!out->runner_failure_rules)
                return dsh_json_out_of_memory(decoder->error, decoder->what);
        out->runner_failure_rule_count = count;
        for (size_t i = 0; i < count && result == 0; i++) {
                dsh_json_path element = dsh_json_path_index(&path, i);

                result = decode_rule(decoder, json_array_get(member, i), &element, &out->runner_failure_rules[i]);
        }
        return result;
}

/* "network": absent (facts an older peer wrote), or one of the policy's names ("on", "off", "allow-list"). */
static int decode_network_name(dsh_json_decoder *decoder, const json_t *value, char **network_out)
{
        static const dsh_network_mode modes[] = { DSH_NETWORK_ON, DSH_NETWORK_OFF, DSH_NETWORK_ALLOW_LIST };
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, "network");
        int result = dsh_json_decode_string_member(decoder, value, &dsh_json_root, "network",
                                                   DSH_JSON_TEXT_NON_EMPTY | DSH_JSON_TEXT_SINGLE_LINE, network_out);

        if (result < 0 || !*network_out)
                return result;
        for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
                if (strcmp(*network_out, dsh_network_mode_name(modes[i])) == 0)
                        return 0;
        return dsh_json_invalid(decoder->error, decoder->what, &path, "must be \"on\", \"off\" or \"allow-list\"");
}

int dsh_json_confined_argv_from_value(const json_t *value, const char *what, dsh_confined_argv *facts_out,
                                      dsh_error *error)
{
        static const char *const keys[] = { "argv", "enforcement", "denialSignatures", "runnerFailureRules",
                                            "backend", "partialReasons", "network", "masked", "environmentRemoved",
                                            NULL };
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_json_decoder decoder = { what, error };
        int result = dsh_json_check_object(&decoder, value, &dsh_json_root, keys);

        if (result == 0)
                result = dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "argv",
                                                     DSH_JSON_REQUIRED | DSH_JSON_LIST_NON_EMPTY,
                                                     &facts.argv);
        if (result == 0)
                result = dsh_json_decode_enforcement(&decoder, value, &facts.enforcement);
        if (result == 0)
                result = dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "denialSignatures",
                                                     DSH_JSON_REQUIRED | SIGNATURE_RULES, &facts.denial_signatures);
        if (result == 0)
                result = decode_rules(&decoder, value, &facts);
        if (result == 0)
                result = dsh_json_decode_string_member(&decoder, value, &dsh_json_root, "backend",
                                                       DSH_JSON_TEXT_NON_EMPTY | DSH_JSON_TEXT_SINGLE_LINE,
                                                       &facts.backend);
        if (result == 0)
                result = dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "partialReasons",
                                                     DSH_JSON_TEXT_NON_EMPTY,
                                                     &facts.partial_reasons);
        if (result == 0)
                result = decode_network_name(&decoder, value, &facts.network);
        if (result == 0)
                result = dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "masked",
                                                     DSH_JSON_TEXT_NON_EMPTY, &facts.masked);
        if (result == 0)
                result = dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "environmentRemoved",
                                                     DSH_JSON_TEXT_NON_EMPTY, &facts.environment_removed);
        /* A reason qualifies a "partial" claim; beside "full" it contradicts the claim it sits next to. */
        if (result == 0 && facts.partial_reasons && facts.enforcement != DSH_ENFORCEMENT_PARTIAL) {
                dsh_json_path path = dsh_json_path_key(&dsh_json_root, "partialReasons");

                result = dsh_json_invalid(error, what, &path, "requires \"enforcement\": \"%s\"",
                                          dsh_enforcement_name(DSH_ENFORCEMENT_PARTIAL));
        }
        if (result < 0) {
                dsh_confined_argv_clear(&facts);
                return result;
        }
        *facts_out = facts;
        return 0;
}

/* ----------------------------------------------------------------- probe -- */

static const char *bwrap_version(const dsh_probe_report *report)
{
        for (size_t i = 0; i < report->backend_count; i++)
                if (strcmp(report->backends[i].name, "bwrap") == 0)
                        return report->backends[i].version;
        return NULL;
}

/* A backend's member, named the way a person reads the report: "backend bwrap's \"runner\"". */
static void set_backend_member(dsh_json_encoder *encoder, json_t *entry, const dsh_backend_status *status,
                               const char *key,
                               const char *text, char *const *strings)
{
        dsh_json_path path = dsh_json_path_format("backend %s's \"%s\"", status->name, key);

        dsh_json_set_member(encoder, entry, key,
                            strings ? dsh_json_strings_value(encoder, strings, &path) : dsh_json_string_value(encoder,
                                                                                                              text,
                                                                                                              &path));
}

static json_t *encode_backend_status(dsh_json_encoder *encoder, const dsh_backend_status *status, size_t index)
{
        dsh_json_path name_path = dsh_json_path_format("\"backends\"[%zu].\"name\"", index);
        json_t *entry = dsh_json_encoder_new(encoder, json_object());

        dsh_json_set_member(encoder, entry, "name", dsh_json_string_value(encoder, status->name, &name_path));
        dsh_json_set_member(encoder, entry, "usable", dsh_json_encoder_new(encoder, json_boolean(status->usable)));
        if (status->usable)
                set_backend_member(encoder, entry, status, "enforcement", dsh_enforcement_name(status->enforcement),
                                   NULL);
        if (status->reason)
                set_backend_member(encoder, entry, status, "reason", status->reason, NULL);
        if (status->version)
                set_backend_member(encoder, entry, status, "version", status->version, NULL);
        if (status->runner_path)
                set_backend_member(encoder, entry, status, "runner", status->runner_path, NULL);
        if (status->usable && status->partial_reasons)
                set_backend_member(encoder, entry, status, "partialReasons", NULL, status->partial_reasons);
        if (status->usable && status->notes)
                set_backend_member(encoder, entry, status, "notes", NULL, status->notes);
        if (status->usable && status->network)
                set_backend_member(encoder, entry, status, "network", NULL, status->network);
        return entry;
}

/* "secrets": {maskedPaths, requireMasks, environmentDeny, environmentAllow}, every member always there. */
static json_t *encode_secrets(dsh_json_encoder *encoder, const dsh_probe_report *report)
{
        static char *const none[] = { NULL };
        json_t *secrets = dsh_json_encoder_new(encoder, json_object());
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, "secrets");

        dsh_json_set_strings_member(encoder, secrets, &path, "maskedPaths",
                                    report->secrets_masked_paths ? report->secrets_masked_paths : none);
        dsh_json_set_member(encoder, secrets, "requireMasks",
                            dsh_json_encoder_new(encoder, json_boolean(report->secrets_require_masks)));
        dsh_json_set_strings_member(encoder, secrets, &path, "environmentDeny",
                                    report->secrets_environment_deny ? report->secrets_environment_deny : none);
        dsh_json_set_strings_member(encoder, secrets, &path, "environmentAllow",
                                    report->secrets_environment_allow ? report->secrets_environment_allow : none);
        return secrets;
}

json_t *dsh_json_probe_report_value(const dsh_probe_report *report, const char *what, dsh_error *error)
{
        dsh_json_encoder encoder = { what, error, false };
        json_t *object = dsh_json_encoder_new(&encoder, json_object());
        json_t *backends = dsh_json_encoder_new(&encoder, json_array());
        const char *version = bwrap_version(report);

        for (size_t i = 0; backends && i < report->backend_count && !encoder.failed; i++)
                dsh_json_append_element(&encoder, backends, encode_backend_status(&encoder, &report->backends[i], i));
        dsh_json_set_member(&encoder, object, "backends", backends);
        if (version)
                dsh_json_set_string_member(&encoder, object, &dsh_json_root, "bwrapVersion", version);
        dsh_json_set_member(&encoder, object, "landlockAbi",
                            dsh_json_encoder_new(&encoder, json_integer(report->landlock_abi)));
        dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "landlockScopes", report->landlock_scopes);
        dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "landlockScopesMissing",
                                    report->landlock_scopes_missing);
        if (report->selected)
                dsh_json_set_string_member(&encoder, object, &dsh_json_root, "selected", report->selected);
        else
                dsh_json_set_member(&encoder, object, "selected", dsh_json_encoder_new(&encoder, json_null()));
        dsh_json_set_member(&encoder, object, "secrets", encode_secrets(&encoder, report));
        return dsh_json_encoder_finish(&encoder, object);
}

int dsh_json_encode_confined_argv(const dsh_confined_argv *facts, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        int result = dsh_json_value_text(dsh_json_confined_argv_value(facts, "facts", used), text_out, used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_encode_probe_report(const dsh_probe_report *report, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        int result = dsh_json_value_text(dsh_json_probe_report_value(report, "probe", used), text_out, used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_decode_confined_argv(const char *text, size_t length, dsh_confined_argv *facts_out, dsh_error *error)
{
        json_t *value;
        int result = dsh_json_load_object(text, length, "facts", &value, error);

        if (result == 0)
                result = dsh_json_confined_argv_from_value(value, "facts", facts_out, error);
        json_decref(value);
        return result;
}
