/* SPDX-License-Identifier: MIT */
/* One confined call's environment rules (provider/call-environment.h has the security argument). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider/call-environment.h"

extern char **environ;

#define SSH_AGENT_VARIABLE "SSH_AUTH_SOCK"

static int append_all(char ***vector, const char *const *values)
{
        for (; values && *values; values++)
                if (dsh_strv_append(vector, *values) < 0)
                        return -ENOMEM;
        return 0;
}

/*
 * Whether $SSH_AUTH_SOCK names one of the policy's allowed sockets, both
 * canonical: a variable that points at a socket the command may connect to
 * gives it nothing it could not reach already, and one that points
 * elsewhere only tells it where an agent it must not reach listens.  The
 * value is read now, at the call, as the command would get it.
 */
static bool agent_socket_allowed(const dsh_policy *policy)
{
        const char *value = getenv(SSH_AGENT_VARIABLE);
        char agent[PATH_MAX], allowed[PATH_MAX];

        if (!value || value[0] != '/' || !realpath(value, agent))
                return false;
        for (char **path = policy->allowed_unix_sockets; path && *path; path++)
                if (realpath(*path, allowed) && strcmp(agent, allowed) == 0)
                        return true;
        return false;
}

int dsh_call_environment_init(dsh_call_environment *environment, const dsh_protections *protections,
                              const dsh_policy *policy)
{
        const char *const *deny = protections->environment_deny
                                          ? (const char *const *) protections->environment_deny
                                          : dsh_default_environment_deny();

        *environment = (dsh_call_environment) DSH_CALL_ENVIRONMENT_INIT;
        environment->deny = calloc(1, sizeof(char *));
        environment->allow = calloc(1, sizeof(char *));
        if (!environment->deny || !environment->allow || append_all(&environment->deny, deny) < 0 ||
            append_all(&environment->allow, (const char *const *) protections->environment_allow) < 0 ||
            append_all(&environment->allow, (const char *const *) policy->allowed_environment) < 0 ||
            (agent_socket_allowed(policy) && dsh_strv_append(&environment->allow, SSH_AGENT_VARIABLE) < 0)) {
                dsh_call_environment_clear(environment);
                return -ENOMEM;
        }
        environment->rules = (dsh_env_rules) { environment->deny, environment->allow };
        return 0;
}

void dsh_call_environment_clear(dsh_call_environment *environment)
{
        dsh_strv_free(environment->deny);
        dsh_strv_free(environment->allow);
        *environment = (dsh_call_environment) DSH_CALL_ENVIRONMENT_INIT;
}

/* Whether `assignment` ("NAME=VALUE") sets one of the names of `pairs` (NAME, VALUE, ...). */
static bool set_by_pairs(const char *assignment, char *const *pairs)
{
        size_t length = strcspn(assignment, "=");

        for (; pairs && pairs[0] && pairs[1]; pairs += 2)
                if (strlen(pairs[0]) == length && strncmp(assignment, pairs[0], length) == 0)
                        return true;
        return false;
}

static bool listed(char *const *names, const char *name)
{
        for (; names && *names; names++)
                if (strcmp(*names, name) == 0)
                        return true;
        return false;
}

/* Notes the name of `assignment` in *removed, once. */
static int note_removed(char ***removed, const char *assignment)
{
        dsh_autofree char *name = strndup(assignment, strcspn(assignment, "="));

        if (!name)
                return -ENOMEM;
        return listed(*removed, name) || dsh_strv_append(removed, name) == 0 ? 0 : -ENOMEM;
}

/*
 * Scrubbed first, the call's own set after: a pattern can never take
 * TMPDIR, a cache or a proxy away.  With `removed`, each name the rules
 * remove is noted there in the same pass (set_facts()'s list): every
 * variable is judged once, for both.
 */
static char **build(const dsh_call_environment *environment, char *const *pairs, char ***removed)
{
        char **built = calloc(1, sizeof(char *));

        for (char **variable = environ; built && variable && *variable; variable++) {
                bool denied = dsh_env_name_denied(*variable, &environment->rules);

                if (denied && removed && note_removed(removed, *variable) < 0)
                        goto out_of_memory;
                if (denied || set_by_pairs(*variable, pairs))
                        continue;
                if (dsh_strv_append(&built, *variable) < 0)
                        goto out_of_memory;
        }
        for (; built && pairs && pairs[0] && pairs[1]; pairs += 2) {
                dsh_autofree char *assignment = NULL;

                if (asprintf(&assignment, "%s=%s", pairs[0], pairs[1]) < 0) {
                        assignment = NULL;
                        goto out_of_memory;
                }
                if (dsh_strv_append(&built, assignment) < 0)
                        goto out_of_memory;
        }
        return built;
out_of_memory:
        dsh_strv_free(built);
        return NULL;
}

static int set_facts(const dsh_call_environment *environment, dsh_confined_argv *facts)
{
        char **removed = NULL;

        for (char **variable = environ; variable && *variable; variable++)
                if (dsh_env_name_denied(*variable, &environment->rules) && note_removed(&removed, *variable) < 0) {
                        dsh_strv_free(removed);
                        return -ENOMEM;
                }
        dsh_strv_free(facts->environment_removed);
        facts->environment_removed = removed;
        return 0;
}

static int append_option(char ***argv, const char *option, const char *value)
{
        return dsh_strv_append(argv, option) < 0 || dsh_strv_append(argv, value) < 0 ? -ENOMEM : 0;
}

static int append_arguments(const dsh_call_environment *environment, char *const *pairs, char ***argv)
{
        for (char **pattern = environment->deny; pattern && *pattern; pattern++)
                if (append_option(argv, "--deny-env", *pattern) < 0)
                        return -ENOMEM;
        for (char **name = environment->allow; name && *name; name++)
                if (append_option(argv, "--allow-env", *name) < 0)
                        return -ENOMEM;
        for (; pairs && pairs[0] && pairs[1]; pairs += 2)
                if (append_option(argv, "--allow-env", pairs[0]) < 0)
                        return -ENOMEM;
        return 0;
}

char **dsh_call_environment_build(const dsh_protections *protections, const dsh_policy *policy, char *const *pairs)
{
        dsh_call_environment environment;
        char **built = NULL;

        if (dsh_call_environment_init(&environment, protections, policy) == 0)
                built = build(&environment, pairs, NULL);
        dsh_call_environment_clear(&environment);
        return built;
}

char **dsh_call_environment_build_with_facts(const dsh_protections *protections, const dsh_policy *policy,
                                             char *const *pairs, dsh_confined_argv *facts)
{
        dsh_call_environment environment;
        char **built = NULL, **removed = NULL;

        if (dsh_call_environment_init(&environment, protections, policy) == 0)
                built = build(&environment, pairs, &removed);
        dsh_call_environment_clear(&environment);
        if (!built) {
                dsh_strv_free(removed);
                return NULL;
        }
        dsh_strv_free(facts->environment_removed);
        facts->environment_removed = removed;
        return built;
}

int dsh_call_environment_set_facts(const dsh_protections *protections, const dsh_policy *policy,
                                   dsh_confined_argv *facts)
{
        dsh_call_environment environment;
        int result = dsh_call_environment_init(&environment, protections, policy);

        if (result == 0)
                result = set_facts(&environment, facts);
        dsh_call_environment_clear(&environment);
        return result;
}

int dsh_call_environment_append_arguments(const dsh_protections *protections, const dsh_policy *policy,
                                          char *const *pairs, char ***argv)
{
        dsh_call_environment environment;
        int result = dsh_call_environment_init(&environment, protections, policy);

        if (result == 0)
                result = append_arguments(&environment, pairs, argv);
        dsh_call_environment_clear(&environment);
        return result;
}
