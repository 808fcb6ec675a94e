/* SPDX-License-Identifier: MIT */
/*
 * The environment's secrets: the match and the scrub (src/core/env-scrub.c),
 * and one call's rules (src/provider/call-environment.c) — the defaults, the
 * allowed names, SSH_AUTH_SOCK let through only for an allowed socket, the
 * call's own variables set after the scrub, the facts and the launchers'
 * words.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/env-scrub.h"
#include "provider/call-environment.h"
#include "test-support.h"

/* A literal where the API takes `char *const *` (it never writes one). */
#define W(literal) ((char *) (literal))

static char *deny_defaults[] = { W("*_TOKEN"), W("*_SECRET_*"), W("*PASSWORD*"), W("AWS_SECRET_ACCESS_KEY"),
                                 W("SSH_AUTH_SOCK"),
                                 NULL };

static void test_patterns_match_without_regard_to_case(void **state)
{
        dsh_env_rules rules = { deny_defaults, NULL };

        (void) state;
        assert_true(dsh_env_name_denied("GITHUB_TOKEN=x", &rules));
        assert_true(dsh_env_name_denied("github_token=x", &rules));
        assert_true(dsh_env_name_denied("Npm_Token=x", &rules));
        assert_true(dsh_env_name_denied("aws_secret_access_key=x", &rules));
        assert_true(dsh_env_name_denied("MY_SECRET_VALUE=x", &rules));
        assert_true(dsh_env_name_denied("db_password=x", &rules));
        assert_true(dsh_env_name_denied("PASSWORD", &rules));  /* no '=': the whole string is the name */
        /* Only the name decides: the value is never looked at. */
        assert_false(dsh_env_name_denied("PATH=GITHUB_TOKEN", &rules));
        assert_false(dsh_env_name_denied("TOKEN=x", &rules));
        assert_false(dsh_env_name_denied("MY_TOKENS=x", &rules));
        assert_false(dsh_env_name_denied("MY_SECRET=x", &rules));  /* *_SECRET_* needs something after */
        assert_false(dsh_env_name_denied("GOOGLE_APPLICATION_CREDENTIALS=/k.json", &rules));
        assert_false(dsh_env_name_denied("SSH_AUTH_SOCKET=x", &rules));
        assert_false(dsh_env_name_denied("=x", &rules));
}

static void test_wildcards_backtrack(void **state)
{
        char *deny[] = { W("A*B*C"), W("X?Z"), W("*"), NULL };
        dsh_env_rules rules = { deny, NULL };
        char *only_first[] = { W("A*B*C"), NULL };
        dsh_env_rules first = { only_first, NULL };
        char *question[] = { W("X?Z"), NULL };
        dsh_env_rules one = { question, NULL };

        (void) state;
        assert_true(dsh_env_name_denied("anything", &rules));
        assert_true(dsh_env_name_denied("AxxBxxBxxC=1", &first));
        assert_true(dsh_env_name_denied("abc", &first));
        assert_true(dsh_env_name_denied("ABCBC", &first));
        assert_false(dsh_env_name_denied("AxxBxxCx", &first));
        assert_false(dsh_env_name_denied("ACB", &first));
        assert_true(dsh_env_name_denied("xyz", &one));
        assert_false(dsh_env_name_denied("XZ", &one));
        assert_false(dsh_env_name_denied("XYYZ", &one));
}

static void test_allowed_names_are_exact(void **state)
{
        char *allow[] = { W("GITHUB_TOKEN"), NULL };
        dsh_env_rules rules = { deny_defaults, allow };

        (void) state;
        assert_false(dsh_env_name_denied("GITHUB_TOKEN=x", &rules));
        assert_true(dsh_env_name_denied("github_token=x", &rules));
        assert_false(dsh_env_name_denied("GITHUB_TOKEN_X=x", &rules));  /* *_TOKEN does not match it */
        assert_true(dsh_env_name_denied("GITHUB_TOKENS_TOKEN=x", &rules));
        assert_false(dsh_env_name_denied("x", NULL));
}

static void test_scrub_keeps_the_order_of_the_rest(void **state)
{
        char *environment[] = { W("PATH=/bin"), W("GITHUB_TOKEN=1"), W("HOME=/h"), W("github_token=2"),
                                W("GITHUB_TOKEN=3"),
                                W("LANG=C"), W("OPENAI_PASSWORD"), NULL };
        dsh_env_rules rules = { deny_defaults, NULL };

        (void) state;
        assert_int_equal(dsh_env_scrub(environment, &rules), 4);
        assert_string_equal(environment[0], "PATH=/bin");
        assert_string_equal(environment[1], "HOME=/h");
        assert_string_equal(environment[2], "LANG=C");
        assert_null(environment[3]);
        assert_int_equal(dsh_env_scrub(environment, &rules), 0);
        assert_int_equal(dsh_env_scrub(NULL, &rules), 0);
}

static void test_scrub_without_rules_removes_nothing(void **state)
{
        char *environment[] = { W("GITHUB_TOKEN=1"), NULL };
        dsh_env_rules none = { NULL, NULL };

        (void) state;
        assert_int_equal(dsh_env_scrub(environment, &none), 0);
        assert_int_equal(dsh_env_scrub(environment, NULL), 0);
        assert_string_equal(environment[0], "GITHUB_TOKEN=1");
}

static void test_pattern_forms(void **state)
{
        (void) state;
        assert_true(dsh_env_pattern_well_formed("*_TOKEN", true));
        assert_true(dsh_env_pattern_well_formed("A?b_9", true));
        assert_true(dsh_env_pattern_well_formed("GITHUB_TOKEN", false));
        assert_false(dsh_env_pattern_well_formed("*_TOKEN", false));
        assert_false(dsh_env_pattern_well_formed("", true));
        assert_false(dsh_env_pattern_well_formed(NULL, true));
        assert_false(dsh_env_pattern_well_formed("A=B", true));
        assert_false(dsh_env_pattern_well_formed("[AB]", true));
        assert_false(dsh_env_pattern_well_formed("A B", true));
}

/* ------------------------------------------------------ one call's rules -- */

static bool contains(char *const *vector, const char *value)
{
        for (; vector && *vector; vector++)
                if (strcmp(*vector, value) == 0)
                        return true;
        return false;
}

static int make_socket(const char *path)
{
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
        assert_int_equal(bind(fd, (struct sockaddr *) &address, sizeof(address)), 0);
        return fd;
}

static void test_defaults_apply_when_unconfigured(void **state)
{
        dsh_protections protections = DSH_PROTECTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_call_environment environment;

        (void) state;
        unsetenv("SSH_AUTH_SOCK");
        assert_int_equal(dsh_call_environment_init(&environment, &protections, &policy), 0);
        for (const char *const *pattern = dsh_default_environment_deny(); *pattern; pattern++)
                assert_true(contains(environment.deny, *pattern));
        assert_true(contains(environment.deny, "SSH_AUTH_SOCK"));
        assert_true(dsh_env_name_denied("OPENAI_API_KEY=x", &environment.rules));
        assert_true(dsh_env_name_denied("anthropic_api_key=x", &environment.rules));
        assert_true(dsh_env_name_denied("AWS_SESSION_TOKEN=x", &environment.rules));
        assert_false(dsh_env_name_denied("GOOGLE_APPLICATION_CREDENTIALS=x", &environment.rules));
        assert_false(dsh_env_name_denied("PATH=x", &environment.rules));
        dsh_call_environment_clear(&environment);
}

static void test_configured_rules_replace_the_defaults(void **state)
{
        char *no_patterns[] = { NULL };
        char *own_patterns[] = { W("CORP_*"), NULL };
        char *allowed[] = { W("CORP_VISIBLE"), NULL };
        char *call_allowed[] = { W("CORP_ALSO"), NULL };
        dsh_protections protections = DSH_PROTECTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_call_environment environment;

        (void) state;
        protections.environment_deny = no_patterns;
        assert_int_equal(dsh_call_environment_init(&environment, &protections, &policy), 0);
        assert_false(dsh_env_name_denied("GITHUB_TOKEN=x", &environment.rules));
        dsh_call_environment_clear(&environment);

        protections.environment_deny = own_patterns;
        protections.environment_allow = allowed;
        policy.allowed_environment = call_allowed;
        assert_int_equal(dsh_call_environment_init(&environment, &protections, &policy), 0);
        assert_false(dsh_env_name_denied("GITHUB_TOKEN=x", &environment.rules));
        assert_true(dsh_env_name_denied("corp_secret=x", &environment.rules));
        assert_false(dsh_env_name_denied("CORP_VISIBLE=x", &environment.rules));
        assert_false(dsh_env_name_denied("CORP_ALSO=x", &environment.rules));
        dsh_call_environment_clear(&environment);
}

/* SSH_AUTH_SOCK passes only when the socket it names, canonical, is one the policy allows. */
static void test_agent_socket_follows_the_allowed_sockets(void **state)
{
        char *directory = test_make_directory("/var/tmp");
        char *agent = test_path_join(directory, "agent.sock");
        char *other = test_path_join(directory, "other.sock");
        char *link = test_path_join(directory, "link.sock");
        int agent_fd = make_socket(agent), other_fd = make_socket(other);
        char *allow_agent[] = { agent, NULL };
        char *allow_other[] = { other, NULL };
        char *allow_link[] = { link, NULL };
        dsh_protections protections = DSH_PROTECTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_call_environment environment;

        (void) state;
        assert_int_equal(symlink(agent, link), 0);
        /* Named through a symlink, the socket is still the allowed one. */
        setenv("SSH_AUTH_SOCK", link, 1);
        policy.allowed_unix_sockets = allow_agent;
        assert_int_equal(dsh_call_environment_init(&environment, &protections, &policy), 0);
        assert_false(dsh_env_name_denied("SSH_AUTH_SOCK=x", &environment.rules));
        dsh_call_environment_clear(&environment);
        /* An allowed spelling that is a symlink to it, too. */
        setenv("SSH_AUTH_SOCK", agent, 1);
        policy.allowed_unix_sockets = allow_link;
        assert_int_equal(dsh_call_environment_init(&environment, &protections, &policy), 0);
        assert_false(dsh_env_name_denied("SSH_AUTH_SOCK=x", &environment.rules));
        dsh_call_environment_clear(&environment);
        /* Another socket allowed: the agent's variable goes. */
        policy.allowed_unix_sockets = allow_other;
        assert_int_equal(dsh_call_environment_init(&environment, &protections, &policy), 0);
        assert_true(dsh_env_name_denied("SSH_AUTH_SOCK=x", &environment.rules));
        dsh_call_environment_clear(&environment);
        /* None allowed, or a relative or missing value: it goes. */
        policy.allowed_unix_sockets = NULL;
        assert_int_equal(dsh_call_environment_init(&environment, &protections, &policy), 0);
        assert_true(dsh_env_name_denied("SSH_AUTH_SOCK=x", &environment.rules));
        dsh_call_environment_clear(&environment);
        policy.allowed_unix_sockets = allow_agent;
        setenv("SSH_AUTH_SOCK", "agent.sock", 1);
        assert_int_equal(dsh_call_environment_init(&environment, &protections, &policy), 0);
        assert_true(dsh_env_name_denied("SSH_AUTH_SOCK=x", &environment.rules));
        dsh_call_environment_clear(&environment);
        unlink(agent);
        setenv("SSH_AUTH_SOCK", agent, 1);
        assert_int_equal(dsh_call_environment_init(&environment, &protections, &policy), 0);
        assert_true(dsh_env_name_denied("SSH_AUTH_SOCK=x", &environment.rules));
        dsh_call_environment_clear(&environment);
        unsetenv("SSH_AUTH_SOCK");
        close(agent_fd);
        close(other_fd);
        free(agent);
        free(other);
        free(link);
        test_remove_tree(directory);
}

/* The built environment: scrubbed, then the call's variables set over it, whatever a pattern says. */
static void test_call_variables_are_set_after_the_scrub(void **state)
{
        char *deny[] = { W("TMP*"), W("*_TOKEN"), W("*PROXY*"), NULL };
        char *pairs[] = { W("TMPDIR"), W("/tmp"), W("HTTPS_PROXY"), W("http://127.0.0.1:1"), NULL };
        dsh_protections protections = DSH_PROTECTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        char **built;
        int tmpdir_count = 0;

        (void) state;
        protections.environment_deny = deny;
        setenv("TMPDIR", "/caller/tmp", 1);
        setenv("TMP_TOKEN_FILE", "x", 1);
        setenv("GITLAB_TOKEN", "secret", 1);
        setenv("https_proxy", "http://caller", 1);
        setenv("KEEP_ME", "1", 1);
        built = dsh_call_environment_build(&protections, &policy, pairs);
        assert_non_null(built);
        assert_true(contains(built, "TMPDIR=/tmp"));
        assert_true(contains(built, "HTTPS_PROXY=http://127.0.0.1:1"));
        assert_false(contains(built, "TMPDIR=/caller/tmp"));
        assert_false(contains(built, "GITLAB_TOKEN=secret"));
        assert_false(contains(built, "TMP_TOKEN_FILE=x"));
        assert_false(contains(built, "https_proxy=http://caller"));
        assert_true(contains(built, "KEEP_ME=1"));
        for (char **variable = built; *variable; variable++)
                tmpdir_count += strncmp(*variable, "TMPDIR=", 7) == 0;
        assert_int_equal(tmpdir_count, 1);
        dsh_strv_free(built);
        unsetenv("TMPDIR");
        unsetenv("TMP_TOKEN_FILE");
        unsetenv("GITLAB_TOKEN");
        unsetenv("https_proxy");
        unsetenv("KEEP_ME");
}

static void test_facts_name_each_removed_variable_once(void **state)
{
        char *deny[] = { W("*_TOKEN"), NULL };
        dsh_protections protections = DSH_PROTECTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;

        (void) state;
        protections.environment_deny = deny;
        setenv("FIRST_TOKEN", "1", 1);
        setenv("second_token", "2", 1);
        assert_int_equal(dsh_call_environment_set_facts(&protections, &policy, &facts), 0);
        assert_true(contains(facts.environment_removed, "FIRST_TOKEN"));
        assert_true(contains(facts.environment_removed, "second_token"));
        for (char **name = facts.environment_removed; *name; name++)
                assert_null(strchr(*name, '='));
        unsetenv("FIRST_TOKEN");
        unsetenv("second_token");
        assert_int_equal(dsh_call_environment_set_facts(&protections, &policy, &facts), 0);
        assert_null(facts.environment_removed);
        dsh_confined_argv_clear(&facts);
}

static void test_launcher_words(void **state)
{
        char *deny[] = { W("*_TOKEN"), NULL };
        char *allow[] = { W("KEEP_TOKEN"), NULL };
        char *pairs[] = { W("TMPDIR"), W("/tmp"), NULL };
        dsh_protections protections = DSH_PROTECTIONS_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        char **argv = NULL;

        (void) state;
        unsetenv("SSH_AUTH_SOCK");
        protections.environment_deny = deny;
        protections.environment_allow = allow;
        assert_int_equal(dsh_call_environment_append_arguments(&protections, &policy, pairs, &argv), 0);
        assert_int_equal(dsh_strv_length(argv), 6);
        assert_string_equal(argv[0], "--deny-env");
        assert_string_equal(argv[1], "*_TOKEN");
        assert_string_equal(argv[2], "--allow-env");
        assert_string_equal(argv[3], "KEEP_TOKEN");
        assert_string_equal(argv[4], "--allow-env");
        assert_string_equal(argv[5], "TMPDIR");
        dsh_strv_free(argv);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_patterns_match_without_regard_to_case),
                cmocka_unit_test(test_wildcards_backtrack),
                cmocka_unit_test(test_allowed_names_are_exact),
                cmocka_unit_test(test_scrub_keeps_the_order_of_the_rest),
                cmocka_unit_test(test_scrub_without_rules_removes_nothing),
                cmocka_unit_test(test_pattern_forms),
                cmocka_unit_test(test_defaults_apply_when_unconfigured),
                cmocka_unit_test(test_configured_rules_replace_the_defaults),
                cmocka_unit_test(test_agent_socket_follows_the_allowed_sockets),
                cmocka_unit_test(test_call_variables_are_set_after_the_scrub),
                cmocka_unit_test(test_facts_name_each_removed_variable_once),
                cmocka_unit_test(test_launcher_words),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
