/* SPDX-License-Identifier: MIT */
/*
 * The provider's wiring of the network dimension (src/provider/call-network.c,
 * the backends' argv, the facts, the bash result, the remote request):
 *   - bwrap's confined argv under "off" holds --unshare-net and hands
 *     dsh-sandbox-exec --network off; under "on" neither; an allowed local
 *     port or the allow-list cannot be held by an argv nobody supervises;
 *   - landlock-run's argv under "off" holds --network off and each
 *     --allow-local-port; the allow-list is refused there too;
 *   - the allow-list's variables: every proxy variable set to the proxy's
 *     URL, NO_PROXY for loopback, RES_OPTIONS with use-vc after the
 *     caller's own; none under "off";
 *   - the allow-list with no service to start is SANDBOX_UNAVAILABLE with the
 *     reason, and danger-full-access under "off" runs nothing;
 *   - the facts, the bash result and the remote request carry the network
 *     through their JSON, and read it back strictly.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dsh-sandbox/bash-tool.h"
#include "dsh-sandbox/json.h"
#include "provider/backend.h"
#include "provider/call-network.h"
#include "provider/prepared-policy.h"
#include "remote/remote-protocol.h"
#include "test-support.h"

static char *const command[] = { (char *) "true", NULL };

/* A provider whose launchers are the build's (dsh-sandbox-exec beside landlock-run). */
static dsh_provider *test_provider(void)
{
        dsh_provider *provider = dsh_provider_new();
        dsh_error error = DSH_ERROR_INIT;

        assert_non_null(provider);
        assert_int_equal(dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), &error), 0);
        return provider;
}

/* A read-only prepared policy under `mode`, with `ports` allowed local ports (the backends' own input). */
static void prepare_read_only(dsh_prepared_policy *prepared, dsh_network_mode mode, const unsigned short *ports,
                              size_t port_count)
{
        static char *hosts[] = { (char *) "example.org", NULL };

        *prepared = (dsh_prepared_policy) DSH_PREPARED_POLICY_INIT;
        prepared->policy.mode = DSH_MODE_READ_ONLY;
        prepared->policy.workspace_root = strdup("/");
        prepared->policy.network.mode = mode;
        prepared->policy.network.allow_hosts = mode == DSH_NETWORK_ALLOW_LIST ? hosts : NULL;
        prepared->policy.network.allow_local_ports = (unsigned short *) ports;
        prepared->policy.network.allow_local_port_count = port_count;
}

/* The backends' own input is borrowed here: only the root is freed. */
static void clear_read_only(dsh_prepared_policy *prepared)
{
        free(prepared->policy.workspace_root);
}

static ptrdiff_t index_of(char *const *argv, const char *word, ptrdiff_t from)
{
        for (ptrdiff_t i = from; argv && argv[i]; i++)
                if (strcmp(argv[i], word) == 0)
                        return i;
        return -1;
}

/* The index of the exec helper in bwrap's argv: the word after bwrap's own "--". */
static ptrdiff_t exec_helper_index(char *const *argv)
{
        ptrdiff_t separator = index_of(argv, "--", 0);

        assert_true(separator > 0);
        return separator + 1;
}

static void confine_with(const dsh_backend_ops *backend, dsh_network_mode mode, const unsigned short *ports,
                         size_t port_count, dsh_confined_argv *out, dsh_error *error, int expected)
{
        dsh_provider *provider = test_provider();
        dsh_prepared_policy prepared;

        prepare_read_only(&prepared, mode, ports, port_count);
        *out = (dsh_confined_argv) DSH_CONFINED_ARGV_INIT;
        assert_int_equal(backend->confine(provider, command, &prepared, out, error) < 0 ? -1 : 0, expected);
        clear_read_only(&prepared);
        dsh_provider_free(provider);
}

static void test_bwrap_off_unshares_the_network_and_tells_the_filter(void **state)
{
        dsh_confined_argv out;
        dsh_error error = DSH_ERROR_INIT;
        ptrdiff_t helper, network;

        (void) state;
        if (access("/usr/bin/bwrap", X_OK) < 0)
                skip();
        confine_with(&dsh_backend_bwrap, DSH_NETWORK_OFF, NULL, 0, &out, &error, 0);
        helper = exec_helper_index(out.argv);
        assert_true(index_of(out.argv, "--unshare-net", 0) > 0);
        assert_true(index_of(out.argv, "--unshare-net", 0) < helper);
        network = index_of(out.argv, "--network", helper);
        assert_true(network > helper);
        assert_string_equal(out.argv[network + 1], "off");
        /* dsh-sandbox-exec's own options end before the command's "--". */
        assert_true(network < index_of(out.argv, "--", helper));
        dsh_confined_argv_clear(&out);
}

static void test_bwrap_on_is_unchanged(void **state)
{
        dsh_confined_argv out;
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        if (access("/usr/bin/bwrap", X_OK) < 0)
                skip();
        confine_with(&dsh_backend_bwrap, DSH_NETWORK_ON, NULL, 0, &out, &error, 0);
        assert_int_equal(index_of(out.argv, "--unshare-net", 0), -1);
        assert_int_equal(index_of(out.argv, "--network", 0), -1);
        dsh_confined_argv_clear(&out);
}

static void test_bwrap_confine_refuses_a_local_port_and_the_allow_list(void **state)
{
        static const unsigned short ports[] = { 8080 };
        dsh_confined_argv out;
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        if (access("/usr/bin/bwrap", X_OK) < 0)
                skip();
        confine_with(&dsh_backend_bwrap, DSH_NETWORK_OFF, ports, 1, &out, &error, -1);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
        assert_non_null(strstr(error.message, "allowed local port"));
        assert_null(out.argv);
        dsh_error_clear(&error);
        confine_with(&dsh_backend_bwrap, DSH_NETWORK_ALLOW_LIST, NULL, 0, &out, &error, -1);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
        assert_non_null(strstr(error.message, "not confine"));
        assert_null(out.argv);
        dsh_error_clear(&error);
}

static void test_landlock_run_is_told_off_and_the_local_ports(void **state)
{
        static const unsigned short ports[] = { 8080, 5432 };
        dsh_confined_argv out;
        dsh_error error = DSH_ERROR_INIT;
        ptrdiff_t network, separator;

        (void) state;
        confine_with(&dsh_backend_landlock, DSH_NETWORK_OFF, ports, 2, &out, &error, 0);
        separator = index_of(out.argv, "--", 0);
        network = index_of(out.argv, "--network", 0);
        assert_true(network > 0 && network < separator);
        assert_string_equal(out.argv[network + 1], "off");
        assert_true(index_of(out.argv, "--allow-local-port", 0) > 0);
        assert_string_equal(out.argv[index_of(out.argv, "--allow-local-port", 0) + 1], "8080");
        assert_string_equal(out.argv[index_of(out.argv, "--allow-local-port", network + 4) + 1], "5432");
        dsh_confined_argv_clear(&out);
        confine_with(&dsh_backend_landlock, DSH_NETWORK_ON, NULL, 0, &out, &error, 0);
        assert_int_equal(index_of(out.argv, "--network", 0), -1);
        dsh_confined_argv_clear(&out);
        confine_with(&dsh_backend_landlock, DSH_NETWORK_ALLOW_LIST, NULL, 0, &out, &error, -1);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
        assert_non_null(strstr(error.message, "proxy and DNS stub live in the process that spawns"));
        dsh_error_clear(&error);
}

static const char *pair_value(char *const *pairs, const char *name)
{
        for (size_t i = 0; pairs && pairs[i] && pairs[i + 1]; i += 2)
                if (strcmp(pairs[i], name) == 0)
                        return pairs[i + 1];
        return NULL;
}

static void test_allow_list_variables_point_every_client_at_the_proxy(void **state)
{
        static const char *const proxies[] = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                                               "all_proxy", NULL };
        char **pairs = calloc(1, sizeof(char *));

        (void) state;
        assert_int_equal(setenv("RES_OPTIONS", "timeout:2", 1), 0);
        assert_int_equal(dsh_call_network_proxy_variables("http://127.0.0.1:41234", &pairs), 0);
        for (const char *const *name = proxies; *name; name++)
                assert_string_equal(pair_value(pairs, *name), "http://127.0.0.1:41234");
        assert_string_equal(pair_value(pairs, "NO_PROXY"), "localhost,127.0.0.1,::1");
        assert_string_equal(pair_value(pairs, "no_proxy"), "localhost,127.0.0.1,::1");
        assert_string_equal(pair_value(pairs, "RES_OPTIONS"), "timeout:2 use-vc");
        dsh_strv_free(pairs);
        unsetenv("RES_OPTIONS");
        pairs = calloc(1, sizeof(char *));
        assert_int_equal(dsh_call_network_proxy_variables("http://127.0.0.1:1", &pairs), 0);
        assert_string_equal(pair_value(pairs, "RES_OPTIONS"), "use-vc");
        dsh_strv_free(pairs);
}

static void test_off_sets_no_variable_and_records_nothing_yet(void **state)
{
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_call_network *network = NULL;
        dsh_refused_connection *records = NULL;
        dsh_error error = DSH_ERROR_INIT;
        unsigned long dropped = 7;
        char **pairs = calloc(1, sizeof(char *));

        (void) state;
        policy.network.mode = DSH_NETWORK_OFF;
        assert_int_equal(dsh_call_network_start(&policy, &network, &error), 0);
        assert_non_null(network);
        assert_int_equal(dsh_call_network_filter(network), DSH_NETWORK_FILTER_OFF);
        assert_int_equal(dsh_call_network_add_variables(network, &pairs), 0);
        assert_null(pairs[0]);
        assert_int_equal(dsh_call_network_finish(network, &records, &dropped), 0);
        assert_null(records);
        assert_int_equal(dropped, 0);
        dsh_call_network_free(network);
        dsh_strv_free(pairs);
        /* "on": nothing at all. */
        policy.network.mode = DSH_NETWORK_ON;
        assert_int_equal(dsh_call_network_start(&policy, &network, &error), 0);
        assert_null(network);
        assert_int_equal(dsh_call_network_filter(network), DSH_NETWORK_FILTER_ON);
}

/*
 * The allow-list starts whole — its service, and the proxy variables
 * pointing at it — or not at all: SANDBOX_UNAVAILABLE saying why, and no
 * call network handed out for a spawn to run under.
 */
static void test_allow_list_without_its_service_is_unavailable(void **state)
{
        static char *hosts[] = { (char *) "example.org", NULL };
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_call_network *network = NULL;
        dsh_error error = DSH_ERROR_INIT;
        int result;

        (void) state;
        policy.mode = DSH_MODE_WORKSPACE_WRITE;
        policy.network.mode = DSH_NETWORK_ALLOW_LIST;
        policy.network.allow_hosts = hosts;
        /* An upstream nobody answers on: the service may start (it asks lazily) or refuse; never half. */
        policy.network.dns_upstream = (char *) "127.0.0.1:9";
        result = dsh_call_network_start(&policy, &network, &error);
        if (result == 0) {
                char **pairs = calloc(1, sizeof(char *));

                assert_int_equal(dsh_call_network_filter(network), DSH_NETWORK_FILTER_ALLOW_LIST);
                assert_int_equal(dsh_call_network_add_variables(network, &pairs), 0);
                assert_non_null(strstr(pair_value(pairs, "HTTPS_PROXY"), "http://127.0.0.1:"));
                dsh_strv_free(pairs);
                dsh_call_network_free(network);
                return;
        }
        assert_null(network);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
        assert_true(strstr(error.message, "proxy and DNS stub cannot start") ||
                    strstr(error.message, "network allow-list is enforced by the supervisor"));
        dsh_error_clear(&error);
}

static void test_danger_full_access_holds_no_network_policy(void **state)
{
        char *marker = test_path_join("/var/tmp", "dsh-call-network-dfa-ran");
        char script[512];
        char *argv[] = { (char *) "sh", (char *) "-c", script, NULL };
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_provider *provider = test_provider();
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        unlink(marker);
        snprintf(script, sizeof(script), ": > '%s'", marker);
        policy.mode = DSH_MODE_DANGER_FULL_ACCESS;
        policy.network.mode = DSH_NETWORK_OFF;
        assert_int_equal(dsh_provider_spawn(provider, argv, &policy, NULL, &child, &error), -ENOSYS);
        assert_null(child);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
        assert_non_null(strstr(error.message, "danger-full-access confines nothing"));
        assert_false(test_path_exists(marker));
        dsh_error_clear(&error);
        dsh_provider_free(provider);
        free(marker);
}

static void test_runner_command_holds_on_only(void **state)
{
        char **modes = dsh_call_network_modes_held("runner-command");

        (void) state;
        assert_non_null(modes);
        assert_string_equal(modes[0], "on");
        assert_null(modes[1]);
        dsh_strv_free(modes);
        modes = dsh_call_network_modes_held("landlock");
        assert_string_equal(modes[0], "on");
        assert_string_equal(modes[1], "off");
        dsh_strv_free(modes);
}

/*
 * TEMPORARY skip, until part A's dsh_policy_copy() carries the network:
 * before it, every prepared policy is "on" and the provider-level checks
 * below have nothing to see.
 */
static bool policy_copy_carries_network(void)
{
        dsh_policy in = DSH_POLICY_INIT, out = DSH_POLICY_INIT;
        bool carried;

        in.network.mode = DSH_NETWORK_OFF;
        assert_int_equal(dsh_policy_copy(&out, &in), 0);
        carried = out.network.mode == DSH_NETWORK_OFF;
        dsh_policy_clear(&out);
        if (!carried)
                printf("# SKIP: dsh_policy_copy() does not carry the network yet (issue 21, part A)\n");
        return carried;
}

/* The facts of a provider's confine say the network held; a runner command refuses any but "on". */
static void test_provider_facts_and_the_runner_command(void **state)
{
        char *runner[] = { (char *) "/usr/bin/env", NULL };
        char *signatures[] = { (char *) "runner: ", NULL };
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_provider *provider = test_provider();
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_error error = DSH_ERROR_INIT;

        (void) state;
        policy.mode = DSH_MODE_READ_ONLY;
        policy.workspace_root = (char *) "/";
        assert_int_equal(dsh_provider_set_runner_command(provider, runner, signatures, &error), 0);
        assert_int_equal(dsh_provider_confine(provider, command, &policy, &facts, &error), 0);
        assert_string_equal(facts.network, "on");
        dsh_confined_argv_clear(&facts);
        if (!policy_copy_carries_network()) {
                dsh_provider_free(provider);
                skip();
        }
        policy.network.mode = DSH_NETWORK_OFF;
        assert_int_equal(dsh_provider_confine(provider, command, &policy, &facts, &error), -ENOSYS);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_UNAVAILABLE);
        assert_non_null(strstr(error.message, "runner-command backend cannot hold the network policy \"off\""));
        assert_null(facts.argv);
        dsh_error_clear(&error);
        dsh_provider_free(provider);
}

static void test_facts_say_the_network(void **state)
{
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT, back = DSH_CONFINED_ARGV_INIT;
        dsh_error error = DSH_ERROR_INIT;
        static const char sideways[] = "{\"argv\": [\"true\"], \"enforcement\": \"full\", \"denialSignatures\": [], "
                                       "\"runnerFailureRules\": [{\"fatalSignatures\": [\"x: \"]}], "
                                       "\"network\": \"sideways\"}";
        char *text = NULL;

        (void) state;
        assert_int_equal(dsh_strv_append(&facts.argv, "true"), 0);
        facts.denial_signatures = calloc(1, sizeof(char *));
        assert_int_equal(dsh_confined_argv_add_rule(&facts, NULL, 0, (const char *const[]) { "bwrap: ", NULL }, NULL),
                         0);
        facts.network = strdup("off");
        assert_int_equal(dsh_json_encode_confined_argv(&facts, &text, &error), 0);
        assert_non_null(strstr(text, "\"network\":\"off\""));
        assert_int_equal(dsh_json_decode_confined_argv(text, strlen(text), &back, &error), 0);
        assert_string_equal(back.network, "off");
        dsh_confined_argv_clear(&back);
        assert_true(dsh_json_decode_confined_argv(sideways, strlen(sideways), &back, &error) < 0);
        assert_non_null(strstr(error.message, "network"));
        dsh_error_clear(&error);
        free(text);
        dsh_confined_argv_clear(&facts);
}

static void test_bash_result_carries_refused_connections(void **state)
{
        dsh_bash_result result = DSH_BASH_RESULT_INIT, back = DSH_BASH_RESULT_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *text = NULL;

        (void) state;
        result.markers = calloc(1, sizeof(char *));
        result.warnings = calloc(1, sizeof(char *));
        /* None: the member is there, empty. */
        assert_int_equal(dsh_json_encode_bash_result(&result, &text, &error), 0);
        assert_non_null(strstr(text, "\"refusedConnections\":[]"));
        assert_null(strstr(text, "refusedConnectionsDropped"));
        free(text);
        result.refused_connections = calloc(1, sizeof(*result.refused_connections));
        result.refused_connections[0] = (dsh_refused_connection) { strdup("dns"), strdup("evil\xff.example"), 53,
                                                                   strdup("host-not-allowed"), strdup("proxy") };
        result.refused_connection_count = 1;
        result.refused_connections_dropped = 3;
        assert_int_equal(dsh_json_encode_bash_result(&result, &text, &error), 0);
        assert_non_null(strstr(text, "\"refusedConnectionsDropped\":3"));
        assert_int_equal(dsh_json_decode_bash_result(text, strlen(text), &back, &error), 0);
        assert_int_equal(back.refused_connection_count, 1);
        assert_string_equal(back.refused_connections[0].op, "dns");
        assert_string_equal(back.refused_connections[0].host, "evil\\xff.example");
        assert_int_equal(back.refused_connections[0].port, 53);
        assert_string_equal(back.refused_connections[0].rule, "host-not-allowed");
        assert_string_equal(back.refused_connections[0].source, "proxy");
        assert_int_equal(back.refused_connections_dropped, 3);
        dsh_bash_result_clear(&back);
        /* A peer from before the source was written sends none: decoded, NULL. */
        free(result.refused_connections[0].source);
        result.refused_connections[0].source = NULL;
        free(text);
        assert_int_equal(dsh_json_encode_bash_result(&result, &text, &error), 0);
        assert_null(strstr(text, "\"source\""));
        assert_int_equal(dsh_json_decode_bash_result(text, strlen(text), &back, &error), 0);
        assert_null(back.refused_connections[0].source);
        dsh_bash_result_clear(&back);
        dsh_bash_result_clear(&result);
        free(text);
}

static void test_remote_request_carries_the_network(void **state)
{
        static char *hosts[] = { (char *) "*.example.org", (char *) "@npm", NULL };
        static unsigned short ports[] = { 5432 };
        dsh_network_policy network = { DSH_NETWORK_ALLOW_LIST, hosts, ports, 1, (char *) "127.0.0.1:5353" };
        dsh_remote_request request = DSH_REMOTE_REQUEST_INIT;
        dsh_remote_call call = DSH_REMOTE_CALL_INIT;
        dsh_error error = DSH_ERROR_INIT;
        static const char unknown[] = "{\"protocol\": " "%d" ", \"operation\": \"run\", \"argv\": [\"true\"], "
                                      "\"network\": {\"allowHosts\": [], \"proxy\": 1}}";
        char *text = NULL, bad[256];

        (void) state;
        request.network = &network;
        assert_int_equal(dsh_remote_request_encode(DSH_REMOTE_OPERATION_RUN, &request, command, NULL, &text, &error),
                         0);
        assert_int_equal(dsh_remote_call_decode((const unsigned char *) text, strlen(text), &call, &error), 0);
        assert_true(call.has_network);
        assert_int_equal(call.network.mode, DSH_NETWORK_ALLOW_LIST);
        assert_string_equal(call.network.allow_hosts[0], "*.example.org");
        assert_string_equal(call.network.allow_hosts[1], "@npm");
        assert_int_equal(call.network.allow_local_port_count, 1);
        assert_int_equal(call.network.allow_local_ports[0], 5432);
        assert_string_equal(call.network.dns_upstream, "127.0.0.1:5353");
        dsh_remote_call_clear(&call);
        free(text);
        network = (dsh_network_policy) { DSH_NETWORK_OFF, NULL, NULL, 0, NULL };
        assert_int_equal(dsh_remote_request_encode(DSH_REMOTE_OPERATION_RUN, &request, command, NULL, &text, &error),
                         0);
        assert_non_null(strstr(text, "\"network\":\"off\""));
        assert_int_equal(dsh_remote_call_decode((const unsigned char *) text, strlen(text), &call, &error), 0);
        assert_int_equal(call.network.mode, DSH_NETWORK_OFF);
        dsh_remote_call_clear(&call);
        free(text);
        /* No network named: the remote's config's, and none sent. */
        request.network = NULL;
        assert_int_equal(dsh_remote_request_encode(DSH_REMOTE_OPERATION_RUN, &request, command, NULL, &text, &error),
                         0);
        assert_null(strstr(text, "network"));
        free(text);
        snprintf(bad, sizeof(bad), unknown, DSH_REMOTE_PROTOCOL_VERSION);
        assert_true(dsh_remote_call_decode((const unsigned char *) bad, strlen(bad), &call, &error) < 0);
        assert_non_null(strstr(error.message, "network"));
        dsh_error_clear(&error);
        dsh_remote_call_clear(&call);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bwrap_off_unshares_the_network_and_tells_the_filter),
                cmocka_unit_test(test_bwrap_on_is_unchanged),
                cmocka_unit_test(test_bwrap_confine_refuses_a_local_port_and_the_allow_list),
                cmocka_unit_test(test_landlock_run_is_told_off_and_the_local_ports),
                cmocka_unit_test(test_allow_list_variables_point_every_client_at_the_proxy),
                cmocka_unit_test(test_off_sets_no_variable_and_records_nothing_yet),
                cmocka_unit_test(test_allow_list_without_its_service_is_unavailable),
                cmocka_unit_test(test_danger_full_access_holds_no_network_policy),
                cmocka_unit_test(test_runner_command_holds_on_only),
                cmocka_unit_test(test_provider_facts_and_the_runner_command),
                cmocka_unit_test(test_facts_say_the_network),
                cmocka_unit_test(test_bash_result_carries_refused_connections),
                cmocka_unit_test(test_remote_request_carries_the_network),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
