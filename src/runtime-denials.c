/* SPDX-License-Identifier: MIT */
/*
 * The runtime's side of a session's denials (dsh-sandbox/denial.h,
 * "sessions"): the session is opened through the runtime's own store, so a
 * record lands where `session denials` and serve read it, whatever program
 * recorded it.  The store itself is policy/session-denials.c's.
 */
#include <errno.h>
#include <time.h>

#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/runtime.h"

#include "base/error.h"
#include "policy/session-denials.h"

static int64_t now_milliseconds(void)
{
        struct timespec now;

        clock_gettime(CLOCK_REALTIME, &now);
        return (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

int dsh_runtime_record_denials(dsh_runtime *runtime, const dsh_policy *policy, const char *surface,
                               const dsh_denials *denials, dsh_error *error)
{
        dsh_session *session = NULL;
        int result;

        if (!session_denials_surface_is_valid(surface))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "a denial's surface must be 1 to 32 of [a-z0-9._-], not \"%s\"",
                                     surface ? surface : "");
        /* An agentless call has no session to keep them; a call without a record has nothing to keep. */
        if (!policy || !policy->session_id || !denials || (denials->count == 0 && denials->dropped == 0))
                return 0;
        result = dsh_runtime_open_session(runtime, policy->session_id, &session, error);
        if (result == 0)
                result = session_denials_append(session, surface, now_milliseconds(), denials, error);
        dsh_session_free(session);
        return result;
}

int dsh_runtime_session_denials(dsh_runtime *runtime, const char *session_id, dsh_session_denials *out,
                                dsh_error *error)
{
        dsh_session *session = NULL;
        int result;

        *out = (dsh_session_denials) DSH_SESSION_DENIALS_INIT;
        /* Opening the session first: an invalid or unknown id is refused as every session command refuses it. */
        result = dsh_runtime_open_session(runtime, session_id, &session, error);
        if (result == 0)
                result = session_denials_load(session, out, error);
        dsh_session_free(session);
        return result;
}
