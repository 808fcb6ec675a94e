/* SPDX-License-Identifier: MIT */
/*
 * The `sandbox:policy` runtime context: what the model is told about the
 * standing file policy, once on the first request and once per effective
 * change.  The told text is logged in the session, so what the model last
 * heard is reconstructable from the log alone, without an in-memory mirror.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "policy/session.h"

/* The root as a JSON string literal, the way the upstream text quotes it. */
static char *quote_root(const char *root)
{
        json_t *string = json_stringn_nocheck(root, strlen(root));
        char *quoted = string ? json_dumps(string, JSON_ENCODE_ANY) : NULL;

        json_decref(string);
        if (!quoted && asprintf(&quoted, "\"%s\"", root) < 0)  /* not UTF-8: quote it as it is */
                quoted = NULL;
        return quoted;
}

char *dsh_runtime_context_text(const dsh_policy *policy)
{
        dsh_autofree char *quoted = NULL;
        char *text = NULL;

        switch (policy->mode) {
        case DSH_MODE_READ_ONLY:
                return strdup("Current DSH file policy: read-only. Any available operation enforced by the DSH file "
                              "sandbox cannot modify files in the standing mode. Do not refuse a required "
                              "modification from this policy alone: try an available tool normally and follow any "
                              "denial and escalation guidance it returns.");
        case DSH_MODE_WORKSPACE_WRITE:
                quoted = quote_root(policy->workspace_root ? policy->workspace_root : "");
                if (!quoted ||
                    asprintf(&text,
                             "Current DSH file policy: workspace-write. Any available operation enforced by the DSH "
                             "file sandbox may modify files under the session workspace: %s. Some platform "
                             "temporary areas may also be writable.",
                             quoted) < 0)
                        return NULL;
                return text;
        case DSH_MODE_DANGER_FULL_ACCESS:
                return strdup("Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict "
                              "file modifications by available operations.");
        }
        return NULL;
}

struct context_build {
        dsh_policy_service *service;
        char *text;     /* the text to report, when it changed */
};

/* Runs under the log's lock, after catch-up: the comparison and the append are one step. */
static int build_context(dsh_session *session, void *userdata, json_t **data_out, dsh_error *error)
{
        struct context_build *build = userdata;
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_autofree char *text = NULL;
        int result;

        *data_out = NULL;
        request.session = session;
        result = dsh_policy_service_resolve(build->service, &request, &policy, error);
        if (result < 0)
                return result;
        text = dsh_runtime_context_text(&policy);
        dsh_policy_clear(&policy);
        if (!text)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (session->fold.last_context && strcmp(session->fold.last_context, text) == 0)
                return 0;
        *data_out = json_pack("{s:s}", "text", text);
        if (!*data_out)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        build->text = dsh_steal_pointer(&text);
        return 0;
}

int dsh_policy_service_context(dsh_policy_service *service, dsh_session *session, char **text_out,
                               dsh_error *error)
{
        struct context_build build = { service, NULL };
        bool appended = false;
        int result;

        *text_out = NULL;
        result = session_append_built(session, SESSION_TYPE_CONTEXT, build_context, &build, NULL, &appended, error);
        if (result == 0 && appended)
                *text_out = dsh_steal_pointer(&build.text);
        free(build.text);
        return result;
}
