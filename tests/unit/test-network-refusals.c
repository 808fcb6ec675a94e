/* SPDX-License-Identifier: MIT */
/*
 * The network refusal records (src/core/network-refusals.h): a record as
 * given, the same one twice kept once, the bound and its count, a long
 * host cut, every op, rule and source named, and several threads adding at once
 * (the supervisor, its workers and the network service share one list).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/network-refusals.h"

static void test_one_record(void **state)
{
        dsh_network_refusals list;

        (void) state;
        assert_int_equal(dsh_network_refusals_init(&list), 0);
        dsh_network_refusals_add(&list, DSH_NETWORK_SOURCE_SUPERVISOR, DSH_NETWORK_OP_CONNECT, "127.0.0.1", 8080,
                                 DSH_NETWORK_RULE_NETWORK_OFF);
        dsh_network_refusals_add(&list, DSH_NETWORK_SOURCE_SUPERVISOR, DSH_NETWORK_OP_CONNECT, "127.0.0.1", 8080,
                                 DSH_NETWORK_RULE_NETWORK_OFF);
        dsh_network_refusals_add(&list, DSH_NETWORK_SOURCE_PROXY, DSH_NETWORK_OP_DNS, "denied.dsh.test", 53,
                                 DSH_NETWORK_RULE_HOST_NOT_ALLOWED);
        dsh_network_refusals_add(&list, DSH_NETWORK_SOURCE_SUPERVISOR, DSH_NETWORK_OP_CONNECT, "127.0.0.1", 8081,
                                 DSH_NETWORK_RULE_NETWORK_OFF);
        /* The same refusal from another layer is another record. */
        dsh_network_refusals_add(&list, DSH_NETWORK_SOURCE_PROXY, DSH_NETWORK_OP_CONNECT, "127.0.0.1", 8081,
                                 DSH_NETWORK_RULE_NETWORK_OFF);
        assert_int_equal(list.count, 4);
        assert_int_equal(list.dropped, 0);
        assert_int_equal(list.items[0].source, DSH_NETWORK_SOURCE_SUPERVISOR);
        assert_int_equal(list.items[1].source, DSH_NETWORK_SOURCE_PROXY);
        assert_int_equal(list.items[3].source, DSH_NETWORK_SOURCE_PROXY);
        assert_int_equal(list.items[0].op, DSH_NETWORK_OP_CONNECT);
        assert_string_equal(list.items[0].host, "127.0.0.1");
        assert_int_equal(list.items[0].port, 8080);
        assert_int_equal(list.items[0].rule, DSH_NETWORK_RULE_NETWORK_OFF);
        assert_string_equal(list.items[1].host, "denied.dsh.test");
        assert_int_equal(list.items[2].port, 8081);
        dsh_network_refusals_destroy(&list);
}

static void test_bounded_and_cut(void **state)
{
        dsh_network_refusals list;
        char long_host[600];

        (void) state;
        memset(long_host, 'a', sizeof(long_host) - 1);
        long_host[sizeof(long_host) - 1] = '\0';
        assert_int_equal(dsh_network_refusals_init(&list), 0);
        dsh_network_refusals_add(&list, DSH_NETWORK_SOURCE_PROXY, DSH_NETWORK_OP_HTTP, long_host, 443,
                                 DSH_NETWORK_RULE_BAD_REQUEST);
        assert_int_equal(strlen(list.items[0].host), 255);
        dsh_network_refusals_add(&list, DSH_NETWORK_SOURCE_PROXY, DSH_NETWORK_OP_HTTP, NULL, 0, DSH_NETWORK_RULE_BAD_REQUEST);
        assert_string_equal(list.items[1].host, "");
        for (unsigned short port = 1; port <= 100; port++)
                dsh_network_refusals_add(&list, DSH_NETWORK_SOURCE_SUPERVISOR, DSH_NETWORK_OP_CONNECT, "10.0.0.1",
                                         port, DSH_NETWORK_RULE_NETWORK_OFF);
        assert_int_equal(list.count, DSH_NETWORK_REFUSALS_MAX);
        assert_int_equal(list.dropped, 102 - DSH_NETWORK_REFUSALS_MAX);
        dsh_network_refusals_destroy(&list);
}

static void test_names(void **state)
{
        (void) state;
        assert_string_equal(dsh_network_op_name(DSH_NETWORK_OP_CONNECT), "connect");
        assert_string_equal(dsh_network_op_name(DSH_NETWORK_OP_DNS), "dns");
        assert_string_equal(dsh_network_op_name(DSH_NETWORK_OP_HTTP), "http");
        assert_string_equal(dsh_network_rule_name(DSH_NETWORK_RULE_NETWORK_OFF), "network-off");
        assert_string_equal(dsh_network_rule_name(DSH_NETWORK_RULE_HOST_NOT_ALLOWED), "host-not-allowed");
        assert_string_equal(dsh_network_rule_name(DSH_NETWORK_RULE_ADDRESS_NOT_RESOLVED), "address-not-resolved");
        assert_string_equal(dsh_network_rule_name(DSH_NETWORK_RULE_METADATA_ADDRESS), "metadata-address");
        assert_string_equal(dsh_network_rule_name(DSH_NETWORK_RULE_SNI_MISMATCH), "sni-mismatch");
        assert_string_equal(dsh_network_rule_name(DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED), "protocol-not-allowed");
        assert_string_equal(dsh_network_rule_name(DSH_NETWORK_RULE_LOCAL_PORT), "local-port");
        assert_string_equal(dsh_network_rule_name(DSH_NETWORK_RULE_BAD_REQUEST), "bad-request");
        assert_string_equal(dsh_network_source_name(DSH_NETWORK_SOURCE_SUPERVISOR), "supervisor");
        assert_string_equal(dsh_network_source_name(DSH_NETWORK_SOURCE_PROXY), "proxy");
}

struct adder {
        dsh_network_refusals *list;
        unsigned short first_port;
};

static void *add_many(void *data)
{
        struct adder *adder = data;

        for (unsigned short i = 0; i < 40; i++)
                dsh_network_refusals_add(adder->list, DSH_NETWORK_SOURCE_SUPERVISOR, DSH_NETWORK_OP_CONNECT,
                                         "192.0.2.1", (unsigned short) (adder->first_port + i),
                                         DSH_NETWORK_RULE_NETWORK_OFF);
        return NULL;
}

/* 4 threads × 40 distinct records: 64 kept, 96 counted, none lost or torn. */
static void test_threads(void **state)
{
        dsh_network_refusals list;
        pthread_t threads[4];
        struct adder adders[4];

        (void) state;
        assert_int_equal(dsh_network_refusals_init(&list), 0);
        for (int i = 0; i < 4; i++) {
                adders[i] = (struct adder) { &list, (unsigned short) (1000 * (i + 1)) };
                assert_int_equal(pthread_create(&threads[i], NULL, add_many, &adders[i]), 0);
        }
        for (int i = 0; i < 4; i++)
                pthread_join(threads[i], NULL);
        assert_int_equal(list.count, DSH_NETWORK_REFUSALS_MAX);
        assert_int_equal(list.count + list.dropped, 160);
        for (size_t i = 0; i < list.count; i++)
                assert_string_equal(list.items[i].host, "192.0.2.1");
        dsh_network_refusals_destroy(&list);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_one_record),
                cmocka_unit_test(test_bounded_and_cut),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_threads),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
