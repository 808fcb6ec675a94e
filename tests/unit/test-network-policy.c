/* SPDX-License-Identifier: MIT */
/* The policy's network dimension (policy/network-policy.c): its words, its checks, ownership, prepare. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dsh-sandbox/config.h"
#include "dsh-sandbox/json.h"
#include "dsh-sandbox/policy-service.h"
#include "dsh-sandbox/sandbox.h"
#include "test-support.h"

static void test_mode_words(void **state)
{
        dsh_network_mode mode = DSH_NETWORK_ALLOW_LIST;

        (void) state;
        assert_string_equal(dsh_network_mode_name(DSH_NETWORK_ON), "on");
        assert_string_equal(dsh_network_mode_name(DSH_NETWORK_OFF), "off");
        assert_string_equal(dsh_network_mode_name(DSH_NETWORK_ALLOW_LIST), "allow-list");
        assert_string_equal(dsh_network_mode_name((dsh_network_mode) 42), "invalid");
        assert_int_equal(dsh_network_mode_parse("off", &mode), 0);
        assert_int_equal(mode, DSH_NETWORK_OFF);
        assert_int_equal(dsh_network_mode_parse("on", &mode), 0);
        assert_int_equal(mode, DSH_NETWORK_ON);
        /* The allow-list is chosen by naming hosts, never by its name. */
        assert_int_equal(dsh_network_mode_parse("allow-list", &mode), -EINVAL);
        assert_int_equal(dsh_network_mode_parse("ON", &mode), -EINVAL);
        assert_int_equal(dsh_network_mode_parse("", &mode), -EINVAL);
        assert_int_equal(dsh_network_mode_parse(NULL, &mode), -EINVAL);
        assert_int_equal(mode, DSH_NETWORK_ON);
}

static void test_pattern_check_and_sets(void **state)
{
        const char *reason = NULL;

        (void) state;
        assert_int_equal(dsh_network_pattern_check("*.example.com:443", &reason), 0);
        assert_null(reason);
        for (const char *const *set = dsh_network_named_sets(); *set; set++) {
                assert_int_equal(dsh_network_pattern_check(*set, &reason), 0);
                assert_non_null(dsh_network_named_set(*set));
        }
        assert_int_equal(dsh_network_pattern_check("@nope", &reason), -EINVAL);
        assert_non_null(strstr(reason, "unknown named set"));
        assert_int_equal(dsh_network_pattern_check("*", &reason), -EINVAL);
        assert_string_equal(reason, "a pattern must name a domain (\"*\" alone allows everything)");
        assert_int_equal(dsh_network_pattern_check("https://example.com", NULL), -EINVAL);
        assert_int_equal(dsh_network_pattern_check(NULL, &reason), -EINVAL);
        assert_null(dsh_network_named_set("npm"));
        assert_string_equal(dsh_network_named_set("@debian")[1], "security.debian.org");
}

static void test_upstream_check(void **state)
{
        (void) state;
        assert_int_equal(dsh_network_upstream_check("127.0.0.1:53"), 0);
        assert_int_equal(dsh_network_upstream_check("[::1]:5353"), 0);
        assert_int_equal(dsh_network_upstream_check("127.0.0.1"), -EINVAL);
        assert_int_equal(dsh_network_upstream_check("[::1]"), -EINVAL);
        assert_int_equal(dsh_network_upstream_check("::1:53"), -EINVAL);
        assert_int_equal(dsh_network_upstream_check("dns.example.com:53"), -EINVAL);
        assert_int_equal(dsh_network_upstream_check("127.0.0.1:0"), -EINVAL);
        assert_int_equal(dsh_network_upstream_check("127.0.0.1:65536"), -EINVAL);
        assert_int_equal(dsh_network_upstream_check(""), -EINVAL);
        assert_int_equal(dsh_network_upstream_check(NULL), -EINVAL);
}

static dsh_network_policy sample_network(void)
{
        dsh_network_policy network = DSH_NETWORK_POLICY_INIT;

        network.mode = DSH_NETWORK_ALLOW_LIST;
        assert_int_equal(dsh_strv_append(&network.allow_hosts, "@npm"), 0);
        assert_int_equal(dsh_strv_append(&network.allow_hosts, "example.com"), 0);
        network.allow_local_ports = calloc(2, sizeof(*network.allow_local_ports));
        assert_non_null(network.allow_local_ports);
        network.allow_local_ports[0] = 5432;
        network.allow_local_ports[1] = 6379;
        network.allow_local_port_count = 2;
        network.dns_upstream = strdup("127.0.0.1:5353");
        return network;
}

static void test_copy_is_deep(void **state)
{
        dsh_network_policy network = sample_network(), copy;
        dsh_policy policy = DSH_POLICY_INIT, policy_copy;

        (void) state;
        assert_int_equal(dsh_network_policy_copy(&copy, &network), 0);
        assert_int_equal(copy.mode, DSH_NETWORK_ALLOW_LIST);
        assert_ptr_not_equal(copy.allow_hosts, network.allow_hosts);
        assert_string_equal(copy.allow_hosts[1], "example.com");
        assert_ptr_not_equal(copy.allow_local_ports, network.allow_local_ports);
        assert_int_equal(copy.allow_local_port_count, 2);
        assert_int_equal(copy.allow_local_ports[1], 6379);
        assert_string_equal(copy.dns_upstream, "127.0.0.1:5353");
        dsh_network_policy_clear(&copy);
        assert_int_equal(copy.mode, DSH_NETWORK_ON);
        assert_null(copy.allow_hosts);

        /* dsh_policy_copy and dsh_policy_clear carry the field. */
        policy.workspace_root = strdup("/");
        policy.network = network;
        assert_int_equal(dsh_policy_copy(&policy_copy, &policy), 0);
        assert_int_equal(policy_copy.network.mode, DSH_NETWORK_ALLOW_LIST);
        assert_ptr_not_equal(policy_copy.network.allow_hosts, policy.network.allow_hosts);
        assert_string_equal(policy_copy.network.dns_upstream, "127.0.0.1:5353");
        dsh_policy_clear(&policy);
        assert_int_equal(policy.network.mode, DSH_NETWORK_ON);
        assert_null(policy.network.allow_hosts);
        assert_int_equal(policy_copy.network.allow_local_ports[0], 5432);
        dsh_policy_clear(&policy_copy);
        dsh_network_policy_clear(NULL);
}

struct prepared {
        char *root;
        dsh_policy policy;
        dsh_error error;
};

static int prepare(struct prepared *run, dsh_mode mode, dsh_network_policy network)
{
        run->root = test_make_directory(NULL);
        run->policy = (dsh_policy) DSH_POLICY_INIT;
        run->policy.mode = mode;
        run->policy.workspace_root = strdup(run->root);
        run->policy.network = network;
        run->error = (dsh_error) DSH_ERROR_INIT;
        return dsh_policy_prepare(&run->policy, &run->error);
}

static void prepared_clear(struct prepared *run)
{
        dsh_policy_clear(&run->policy);
        dsh_error_clear(&run->error);
        test_remove_tree(run->root);
}

static void test_prepare_expands_sets_and_drops_duplicates(void **state)
{
        dsh_network_policy network = sample_network();
        struct prepared run;

        (void) state;
        assert_int_equal(dsh_strv_append(&network.allow_hosts, "registry.npmjs.org"), 0);
        assert_int_equal(dsh_strv_append(&network.allow_hosts, "example.com"), 0);
        network.allow_local_ports[1] = 5432;
        assert_int_equal(prepare(&run, DSH_MODE_WORKSPACE_WRITE, network), 0);
        assert_int_equal(run.policy.network.mode, DSH_NETWORK_ALLOW_LIST);
        assert_int_equal(dsh_strv_length(run.policy.network.allow_hosts), 3);
        assert_string_equal(run.policy.network.allow_hosts[0], "registry.npmjs.org");
        assert_string_equal(run.policy.network.allow_hosts[1], "registry.yarnpkg.com");
        assert_string_equal(run.policy.network.allow_hosts[2], "example.com");
        assert_int_equal(run.policy.network.allow_local_port_count, 1);
        assert_int_equal(run.policy.network.allow_local_ports[0], 5432);
        prepared_clear(&run);
}

static void test_prepare_refuses_bad_entries(void **state)
{
        static const char *const bad[] = { "*", "com", "https://example.com", "@nope", "exa mple.com" };

        (void) state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                dsh_network_policy network = DSH_NETWORK_POLICY_INIT;
                struct prepared run;
                char expected[128];

                network.mode = DSH_NETWORK_ALLOW_LIST;
                assert_int_equal(dsh_strv_append(&network.allow_hosts, "example.com"), 0);
                assert_int_equal(dsh_strv_append(&network.allow_hosts, bad[i]), 0);
                assert_int_equal(prepare(&run, DSH_MODE_READ_ONLY, network), -EINVAL);
                assert_int_equal(run.error.code, DSH_ERROR_INVALID_INPUT);
                snprintf(expected, sizeof(expected), "network: allow-list entry \"%s\": ", bad[i]);
                if (strncmp(run.error.message, expected, strlen(expected)) != 0)
                        fail_msg("message \"%s\" does not start \"%s\"", run.error.message, expected);
                prepared_clear(&run);
        }
}

static void test_prepare_refuses_what_it_cannot_hold(void **state)
{
        struct prepared run;
        dsh_network_policy network;

        (void) state;
        /* danger-full-access confines nothing: a network policy there is refused, never dropped. */
        network = sample_network();
        assert_int_equal(prepare(&run, DSH_MODE_DANGER_FULL_ACCESS, network), -ENOSYS);
        assert_int_equal(run.error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
        assert_string_equal(run.error.message, "danger-full-access confines nothing, so no network policy can be "
                                               "held; use read-only or workspace-write");
        prepared_clear(&run);
        network = (dsh_network_policy) DSH_NETWORK_POLICY_INIT;
        network.mode = DSH_NETWORK_OFF;
        assert_int_equal(prepare(&run, DSH_MODE_DANGER_FULL_ACCESS, network), -ENOSYS);
        assert_int_equal(run.error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
        prepared_clear(&run);
        /* ON under danger-full-access is today's behaviour. */
        assert_int_equal(prepare(&run, DSH_MODE_DANGER_FULL_ACCESS, (dsh_network_policy) DSH_NETWORK_POLICY_INIT), 0);
        prepared_clear(&run);

        /* Restrictions given with ON would read as held: refused. */
        network = sample_network();
        network.mode = DSH_NETWORK_ON;
        assert_int_equal(prepare(&run, DSH_MODE_READ_ONLY, network), -EINVAL);
        assert_int_equal(run.error.code, DSH_ERROR_INVALID_INPUT);
        prepared_clear(&run);
        network = sample_network();
        network.mode = DSH_NETWORK_OFF;
        assert_int_equal(prepare(&run, DSH_MODE_READ_ONLY, network), -EINVAL);
        assert_non_null(strstr(run.error.message, "select the allow-list"));
        prepared_clear(&run);

        network = sample_network();
        free(network.dns_upstream);
        network.dns_upstream = strdup("resolver.example:53");
        assert_int_equal(prepare(&run, DSH_MODE_READ_ONLY, network), -EINVAL);
        assert_string_equal(run.error.message,
                            "network: DNS upstream \"resolver.example:53\" is not IPV4:PORT or [IPV6]:PORT");
        prepared_clear(&run);

        network = sample_network();
        network.allow_local_ports[0] = 0;
        assert_int_equal(prepare(&run, DSH_MODE_READ_ONLY, network), -EINVAL);
        assert_non_null(strstr(run.error.message, "local port 0"));
        prepared_clear(&run);

        /* Ports counted but not given (a caller's mistake): refused, never read from NULL, even through a copy. */
        network = (dsh_network_policy) DSH_NETWORK_POLICY_INIT;
        network.mode = DSH_NETWORK_OFF;
        network.allow_local_port_count = 3;
        assert_int_equal(prepare(&run, DSH_MODE_READ_ONLY, network), -EINVAL);
        assert_non_null(strstr(run.error.message, "counted but not given"));
        dsh_policy copy;
        assert_int_equal(dsh_policy_copy(&copy, &run.policy), 0);
        assert_int_equal(copy.network.allow_local_port_count, 3);
        assert_null(copy.network.allow_local_ports);
        dsh_error_clear(&run.error);
        assert_int_equal(dsh_policy_prepare(&copy, &run.error), -EINVAL);
        dsh_policy_clear(&copy);
        run.policy.network.allow_local_port_count = 0;
        prepared_clear(&run);

        network = (dsh_network_policy) DSH_NETWORK_POLICY_INIT;
        network.mode = (dsh_network_mode) 7;
        assert_int_equal(prepare(&run, DSH_MODE_READ_ONLY, network), -EINVAL);
        assert_int_equal(run.error.code, DSH_ERROR_INVARIANT);
        prepared_clear(&run);
}

static void test_prepare_empty_allow_list_is_off(void **state)
{
        dsh_network_policy network = DSH_NETWORK_POLICY_INIT;
        struct prepared run;

        (void) state;
        network.mode = DSH_NETWORK_ALLOW_LIST;
        network.allow_local_ports = calloc(1, sizeof(*network.allow_local_ports));
        network.allow_local_ports[0] = 8080;
        network.allow_local_port_count = 1;
        assert_int_equal(prepare(&run, DSH_MODE_WORKSPACE_WRITE, network), 0);
        assert_int_equal(run.policy.network.mode, DSH_NETWORK_OFF);
        assert_int_equal(run.policy.network.allow_local_port_count, 1);
        prepared_clear(&run);
        /* OFF and ON stay as they are. */
        network = (dsh_network_policy) DSH_NETWORK_POLICY_INIT;
        network.mode = DSH_NETWORK_OFF;
        assert_int_equal(prepare(&run, DSH_MODE_READ_ONLY, network), 0);
        assert_int_equal(run.policy.network.mode, DSH_NETWORK_OFF);
        prepared_clear(&run);
}

/* The config's network is every call's default; a call's own replaces it whole, never merged. */
static void test_service_default_and_replacement(void **state)
{
        dsh_config config;
        dsh_error error = DSH_ERROR_INIT;
        dsh_policy_service *service = NULL;
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_network_policy own = DSH_NETWORK_POLICY_INIT;
        dsh_policy policy;
        char *root = test_make_directory(NULL);

        (void) state;
        assert_int_equal(dsh_config_init(&config, &error), 0);
        config.network = sample_network();
        request.workspace_root = root;
        assert_int_equal(dsh_policy_service_new(&config, &service, &error), 0);
        dsh_config_clear(&config);      /* the service keeps its own copy */

        assert_int_equal(dsh_policy_service_resolve(service, &request, &policy, &error), 0);
        assert_int_equal(policy.network.mode, DSH_NETWORK_ALLOW_LIST);
        assert_string_equal(policy.network.allow_hosts[0], "@npm");
        assert_int_equal(policy.network.allow_local_port_count, 2);
        assert_string_equal(policy.network.dns_upstream, "127.0.0.1:5353");
        dsh_policy_clear(&policy);

        own.mode = DSH_NETWORK_ALLOW_LIST;
        assert_int_equal(dsh_strv_append(&own.allow_hosts, "a.example"), 0);
        request.network = &own;
        assert_int_equal(dsh_policy_service_resolve(service, &request, &policy, &error), 0);
        assert_int_equal(dsh_strv_length(policy.network.allow_hosts), 1);
        assert_string_equal(policy.network.allow_hosts[0], "a.example");
        assert_int_equal(policy.network.allow_local_port_count, 0);
        assert_null(policy.network.dns_upstream);
        assert_ptr_not_equal(policy.network.allow_hosts, own.allow_hosts);
        dsh_policy_clear(&policy);

        dsh_network_policy_clear(&own);
        request.network = &own;         /* an explicit on: the config's allow-list is not kept */
        assert_int_equal(dsh_policy_service_resolve(service, &request, &policy, &error), 0);
        assert_int_equal(policy.network.mode, DSH_NETWORK_ON);
        assert_null(policy.network.allow_hosts);
        dsh_policy_clear(&policy);
        dsh_policy_service_free(service);
        test_remove_tree(root);
}

static void expect_round_trip(const dsh_network_policy *network, const char *golden)
{
        dsh_network_policy decoded;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;

        assert_int_equal(dsh_json_encode_network_policy(network, &text, &error), 0);
        assert_string_equal(text, golden);
        if (dsh_json_decode_network_policy(text, strlen(text), "network", &decoded, &error) < 0)
                fail_msg("%s: %s", text, error.message);
        assert_int_equal(decoded.mode, network->mode);
        assert_int_equal(dsh_strv_length(decoded.allow_hosts), dsh_strv_length(network->allow_hosts));
        assert_int_equal(decoded.allow_local_port_count, network->allow_local_port_count);
        dsh_network_policy_clear(&decoded);
        free(text);
}

static void test_json_shape(void **state)
{
        dsh_network_policy network = DSH_NETWORK_POLICY_INIT;
        dsh_policy policy = DSH_POLICY_INIT, decoded = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;

        (void) state;
        expect_round_trip(&network, "\"on\"");
        network.mode = DSH_NETWORK_OFF;
        expect_round_trip(&network, "\"off\"");
        network = sample_network();
        expect_round_trip(&network, "{\"allowHosts\":[\"@npm\",\"example.com\"],\"allowLocalPorts\":[5432,6379],"
                                    "\"dnsUpstream\":\"127.0.0.1:5353\"}");
        /* Off with hosts would read back as an allow-list: refused, never written. */
        network.mode = DSH_NETWORK_OFF;
        assert_int_equal(dsh_json_encode_network_policy(&network, &text, &error), -EINVAL);
        assert_null(text);
        assert_string_equal(error.message, "network: is not a network policy");
        dsh_error_clear(&error);

        /* In a policy: absent is on (today's shape unchanged), any other mode its member. */
        network.mode = DSH_NETWORK_ALLOW_LIST;
        policy.workspace_root = (char *) "/w";
        assert_int_equal(dsh_json_encode_policy(&policy, &text, &error), 0);
        assert_string_equal(text, "{\"mode\":\"read-only\",\"workspaceRoot\":\"/w\"}");
        free(text);
        policy.network = network;
        assert_int_equal(dsh_json_encode_policy(&policy, &text, &error), 0);
        assert_non_null(strstr(text, ",\"network\":{\"allowHosts\":[\"@npm\",\"example.com\"],"));
        assert_int_equal(dsh_json_decode_policy(text, strlen(text), &decoded, &error), 0);
        assert_int_equal(decoded.network.mode, DSH_NETWORK_ALLOW_LIST);
        assert_string_equal(decoded.network.dns_upstream, "127.0.0.1:5353");
        free(text);
        dsh_policy_clear(&decoded);
        static const char bad_policy[] = "{\"mode\":\"read-only\",\"workspaceRoot\":\"/w\",\"network\":"
                                         "{\"allowHosts\":[\"*\"]}}";
        assert_int_equal(dsh_json_decode_policy(bad_policy, strlen(bad_policy), &decoded, &error), -EINVAL);
        assert_string_equal(error.message, "policy: \"network\".\"allowHosts\"[0] \"*\": a pattern must name a "
                                           "domain (\"*\" alone allows everything)");
        dsh_error_clear(&error);
        assert_int_equal(dsh_json_decode_network_policy("[", 1, "network", &decoded.network, &error), -EINVAL);
        assert_int_equal(error.code, DSH_ERROR_INVALID_INPUT);
        dsh_error_clear(&error);
        dsh_network_policy_clear(&network);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_mode_words),
                cmocka_unit_test(test_pattern_check_and_sets),
                cmocka_unit_test(test_upstream_check),
                cmocka_unit_test(test_copy_is_deep),
                cmocka_unit_test(test_prepare_expands_sets_and_drops_duplicates),
                cmocka_unit_test(test_prepare_refuses_bad_entries),
                cmocka_unit_test(test_prepare_refuses_what_it_cannot_hold),
                cmocka_unit_test(test_prepare_empty_allow_list_is_off),
                cmocka_unit_test(test_service_default_and_replacement),
                cmocka_unit_test(test_json_shape),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
