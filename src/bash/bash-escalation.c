/* SPDX-License-Identifier: MIT */
/*
 * The bash tool's escalation: see bash-escalation.h.
 *
 * Security.  What the user approves is what runs: the approval channel is
 * shown the canonical directories (a relative one taken against the
 * workspace root, symlinks resolved) and the host patterns exactly as they
 * are granted, and every one of them is one line of UTF-8 text, so that a
 * name can neither hide a second one behind a line break (the approval
 * command's environment is newline-separated) nor redraw the prompt.  The
 * grant goes into the policy copy of this one call; the provider then
 * judges the extra roots as it judges any writable root (a root it refuses
 * fails the call, nothing runs), and the next call resolves as before.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bash/bash-escalation.h"
#include "base/error.h"
#include "base/path.h"

#define BLANKS " \t\n\r\v\f"

/* One line of UTF-8 text with no control character: shown to the user as it is. */
static bool shown_as_it_is(const char *text)
{
        if (!dsh_text_is_utf8(text, strlen(text), NULL))
                return false;
        for (const unsigned char *byte = (const unsigned char *) text; *byte; byte++)
                if (*byte < 0x20 || *byte == 0x7f)
                        return false;
        return true;
}

/*
 * A justification is shown to the user in the approval prompt: one line of
 * text, so that it can neither hide the request behind line breaks nor
 * carry a terminal escape sequence that redraws what the user reads.
 */
static bool justification_is_sentence(const char *text)
{
        return text[strspn(text, BLANKS)] != '\0' && shown_as_it_is(text);
}

static bool has_entries(char *const *list)
{
        return list && list[0];
}

/* The justification's checks, and which escalation is asked for. */
static int check_asked(const dsh_bash_request *request, dsh_bash_grant *grant, dsh_error *error)
{
        bool roots = has_entries(request->additional_write), hosts = has_entries(request->additional_hosts);

        grant->asked = request->sandbox_permissions || roots || hosts;
        if (request->sandbox_permissions && !request->justification)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: sandbox_permissions requires a justification");
        if (roots && !request->justification)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: additional_write requires a justification");
        if (hosts && !request->justification)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: additional_hosts requires a justification");
        if (request->justification && !grant->asked)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: justification is only valid together with "
                                     "sandbox_permissions, additional_write or additional_hosts");
        return 0;
}

/* The mode asked for: strictly wider than the call's, or the same (which needs no approval). */
static int check_mode(const dsh_bash_request *request, dsh_bash_grant *grant, dsh_error *error)
{
        if (!request->sandbox_permissions)
                return 0;
        if (dsh_mode_parse(request->sandbox_permissions, &grant->requested) < 0)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: sandbox_permissions must be \"read-only\", "
                                     "\"workspace-write\" or \"danger-full-access\"");
        if (!justification_is_sentence(request->justification))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid justification: expected a non-empty sentence");
        if (grant->requested != grant->current && !dsh_mode_is_wider(grant->requested, grant->current))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "sandbox escalation to \"%s\" is not strictly wider than this call's current "
                                     "\"%s\" mode",
                                     dsh_mode_name(grant->requested), dsh_mode_name(grant->current));
        grant->needs_approval = grant->requested != grant->current;
        return 0;
}

/*
 * One extra root: absolute or relative to the workspace root, an existing
 * directory, canonical.  Appended to the grant.  The canonical name is what
 * the user is shown and what the provider opens (and judges) for the call.
 */
static int check_root(const char *directory, const dsh_policy *policy, dsh_bash_grant *grant, dsh_error *error)
{
        dsh_autofree char *joined = NULL;
        dsh_autofree char *canonical = NULL;
        const char *root = policy->workspace_root;
        struct stat status;

        if (!*directory)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: an additional_write directory is empty");
        if (!shown_as_it_is(directory))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: an additional_write directory holds a line break, a "
                                     "control character or a byte that is not UTF-8");
        if (directory[0] != '/') {
                if (!root || root[0] != '/')
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "invalid escalation: additional_write \"%s\" is relative, and the "
                                             "policy has no workspace root", directory);
                if (asprintf(&joined, "%s/%s", strcmp(root, "/") == 0 ? "" : root, directory) < 0) {
                        joined = NULL;
                        return -ENOMEM;
                }
                directory = joined;
        }
        if (stat(directory, &status) < 0 && errno == ENOENT)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: additional_write \"%s\" does not exist", directory);
        if (stat(directory, &status) < 0)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: additional_write \"%s\" cannot be reached: %s", directory,
                                     strerror(errno));
        if (!S_ISDIR(status.st_mode))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: additional_write \"%s\" is not a directory", directory);
        canonical = dsh_path_canonical(directory);
        if (!canonical)
                return errno == ENOMEM ? -ENOMEM
                                       : dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                                       "invalid escalation: additional_write \"%s\" cannot be "
                                                       "resolved", directory);
        /* Resolved through a symlink into a name the user would not be shown as it is: refused as well. */
        if (!shown_as_it_is(canonical))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: additional_write \"%s\" resolves to a name with a control "
                                     "character or a byte that is not UTF-8", directory);
        return dsh_strv_append(&grant->additional_write, canonical);
}

/* Extra roots exist only under workspace-write: the call's own mode, or the one it asks for. */
static int check_roots(const dsh_bash_request *request, const dsh_policy *policy, dsh_bash_grant *grant,
                       dsh_error *error)
{
        int result = 0;

        if (!has_entries(request->additional_write))
                return 0;
        if (grant->requested != DSH_MODE_WORKSPACE_WRITE)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: additional_write needs workspace-write, as this call's "
                                     "mode or its sandbox_permissions (the call would run under \"%s\")",
                                     dsh_mode_name(grant->requested));
        for (char *const *directory = request->additional_write; *directory && result == 0; directory++)
                result = check_root(*directory, policy, grant, error);
        grant->needs_approval = true;
        return result;
}

/*
 * Extra hosts widen a restricted network: "off" or an allow-list.  Under
 * "on" they would grant nothing (everything is reached already), and under
 * danger-full-access nothing holds the network back.
 */
static int check_hosts(const dsh_bash_request *request, const dsh_policy *policy, dsh_bash_grant *grant,
                       dsh_error *error)
{
        if (!has_entries(request->additional_hosts))
                return 0;
        if (grant->requested == DSH_MODE_DANGER_FULL_ACCESS)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: additional_hosts needs a confined mode: under "
                                     "danger-full-access nothing holds the network back");
        if (policy->network.mode == DSH_NETWORK_ON)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid escalation: additional_hosts needs a restricted network (\"off\" or "
                                     "an allow-list); this call's network is \"on\"");
        for (char *const *host = request->additional_hosts; *host; host++) {
                const char *reason = NULL;

                /* The refusal quotes the host: one that would not print as it is must not reach the line. */
                if (!shown_as_it_is(*host))
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "invalid escalation: an additional_hosts entry holds a line break, a "
                                             "control character or a byte that is not UTF-8");
                /*
                 * A named set (@npm) is many hosts the prompt would not show: the
                 * user approves what they read, so a grant names its hosts.
                 */
                if ((*host)[0] == '@')
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "invalid escalation: additional_hosts \"%s\": a named set is many "
                                             "hosts the approval would not show; name each host", *host);
                if (dsh_network_pattern_check(*host, &reason) < 0)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "invalid escalation: additional_hosts \"%s\": %s", *host,
                                             reason ? reason : "not a host pattern");
                if (dsh_strv_append(&grant->additional_hosts, *host) < 0)
                        return -ENOMEM;
        }
        grant->needs_approval = true;
        return 0;
}

int dsh_bash_grant_check(const dsh_bash_request *request, const dsh_policy *policy, dsh_bash_grant *grant,
                         dsh_error *error)
{
        int result;

        *grant = (dsh_bash_grant) DSH_BASH_GRANT_INIT;
        grant->current = policy->mode;
        grant->requested = policy->mode;
        result = check_asked(request, grant, error);
        if (result < 0 || !grant->asked)
                return result;
        result = check_mode(request, grant, error);
        if (result == 0 && !justification_is_sentence(request->justification))
                result = dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                       "invalid justification: expected a non-empty sentence");
        if (result == 0)
                result = check_roots(request, policy, grant, error);
        if (result == 0)
                result = check_hosts(request, policy, grant, error);
        if (result == -ENOMEM && error && error->code == DSH_ERROR_NONE)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        return result;
}

dsh_bash_escalation dsh_bash_grant_escalation(const dsh_bash_grant *grant, const dsh_bash_request *request,
                                              const dsh_policy *policy)
{
        return (dsh_bash_escalation) {
                request->command,          grant->current,      grant->requested,
                request->justification,    policy->workspace_root, policy->session_id,
                grant->additional_write,   grant->additional_hosts,
        };
}

/* Appends each of `extra` to `*list`.  Returns 0 or -ENOMEM. */
static int append_all(char ***list, char *const *extra)
{
        for (; extra && *extra; extra++)
                if (dsh_strv_append(list, *extra) < 0)
                        return -ENOMEM;
        return 0;
}

int dsh_bash_grant_apply(const dsh_bash_grant *grant, dsh_policy *policy)
{
        policy->mode = grant->requested;
        if (append_all(&policy->additional_writable_roots, grant->additional_write) < 0)
                return -ENOMEM;
        if (!grant->additional_hosts)
                return 0;
        /* "off" had no hosts: the allow-list is exactly the granted ones; the allowed local ports stay. */
        if (policy->network.mode == DSH_NETWORK_OFF) {
                dsh_strv_free(policy->network.allow_hosts);
                policy->network.allow_hosts = NULL;
                policy->network.mode = DSH_NETWORK_ALLOW_LIST;
        }
        return append_all(&policy->network.allow_hosts, grant->additional_hosts);
}

/* `"a", "b"` after `label` ("the writable root"/"the writable roots"), into `out`. */
static void describe_list(FILE *out, const char *singular, const char *plural, char *const *list)
{
        fprintf(out, " %s", list[1] ? plural : singular);
        for (size_t i = 0; list[i]; i++)
                fprintf(out, "%s\"%s\"", i == 0 ? " " : ", ", list[i]);
}

char *dsh_bash_grant_describe(const dsh_bash_grant *grant)
{
        char *text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);

        if (!out)
                return NULL;
        fprintf(out, "\"%s\"", dsh_mode_name(grant->requested));
        if (grant->additional_write || grant->additional_hosts)
                fputs(" with", out);
        if (grant->additional_write)
                describe_list(out, "the writable root", "the writable roots", grant->additional_write);
        if (grant->additional_write && grant->additional_hosts)
                fputs(" and", out);
        if (grant->additional_hosts)
                describe_list(out, "the host", "the hosts", grant->additional_hosts);
        if (fclose(out) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

void dsh_bash_grant_clear(dsh_bash_grant *grant)
{
        if (!grant)
                return;
        dsh_strv_free(grant->additional_write);
        dsh_strv_free(grant->additional_hosts);
        *grant = (dsh_bash_grant) DSH_BASH_GRANT_INIT;
}
