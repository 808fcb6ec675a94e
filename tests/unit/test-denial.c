/* SPDX-License-Identifier: MIT */
/* The typed denial as a value: names, the bounded list, the reader's line, the JSON round trip. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/json.h"
#include "base/denial-json.h"

static dsh_denial make(dsh_denial_op op, const char *path, const char *host, int port, const char *rule)
{
        dsh_denial denial = DSH_DENIAL_INIT;

        denial.op = op;
        denial.call = strdup(op == DSH_DENIAL_CONNECT ? "connect" : "open");
        denial.path = path ? strdup(path) : NULL;
        denial.host = host ? strdup(host) : NULL;
        denial.port = port;
        denial.rule = strdup(rule);
        return denial;
}

static void test_names_round_trip(void **state)
{
        (void) state;
        for (int i = 0; i < DSH_DENIAL_OP_COUNT; i++) {
                dsh_denial_op op;

                assert_int_equal(dsh_denial_op_parse(dsh_denial_op_name((dsh_denial_op) i), &op), 0);
                assert_int_equal(op, i);
        }
        for (int i = 0; i <= DSH_GRANT_MODE; i++) {
                dsh_grant_kind kind;

                assert_int_equal(dsh_grant_kind_parse(dsh_grant_kind_name((dsh_grant_kind) i), &kind), 0);
                assert_int_equal(kind, i);
        }
        for (int i = 0; i <= DSH_DENIAL_SOURCE_POLICY; i++) {
                dsh_denial_source source;

                assert_int_equal(dsh_denial_source_parse(dsh_denial_source_name((dsh_denial_source) i), &source), 0);
                assert_int_equal(source, i);
        }
        assert_string_equal(dsh_denial_op_name((dsh_denial_op) 99), "invalid");
        assert_int_equal(dsh_denial_op_parse("Write", &(dsh_denial_op) { 0 }), -EINVAL);
        assert_int_equal(dsh_denial_op_parse(NULL, &(dsh_denial_op) { 0 }), -EINVAL);
}

/* A retry loop leaves one record; past the bound only the count grows, and nothing leaks. */
static void test_bounded_and_deduplicated(void **state)
{
        dsh_denials denials = DSH_DENIALS_INIT;

        (void) state;
        for (int i = 0; i < 3; i++) {
                dsh_denial same = make(DSH_DENIAL_WRITE, "/etc/x", NULL, 0, "outside-roots");

                assert_int_equal(dsh_denials_take(&denials, &same, 4), 0);
                assert_null(same.path);
        }
        assert_int_equal(denials.count, 1);
        for (int i = 0; i < 6; i++) {
                char path[32];
                dsh_denial other;

                snprintf(path, sizeof(path), "/etc/%d", i);
                other = make(DSH_DENIAL_WRITE, path, NULL, 0, "outside-roots");
                assert_int_equal(dsh_denials_take(&denials, &other, 4), 0);
        }
        assert_int_equal(denials.count, 4);
        assert_int_equal(denials.dropped, 3);
        assert_string_equal(denials.items[3].path, "/etc/2");
        dsh_denials_clear(&denials);
        assert_int_equal(denials.count, 0);
}

static void test_describe(void **state)
{
        dsh_denial write = make(DSH_DENIAL_WRITE, "/etc/x", NULL, 0, "outside-roots");
        dsh_denial connect = make(DSH_DENIAL_CONNECT, NULL, "2001:db8::1", 443, "host-not-allowed");
        dsh_denial own = make(DSH_DENIAL_WRITE, "/w/.dsh\xff", NULL, 0, "own-file");
        char *line;

        (void) state;
        write.grant = (dsh_grant) { DSH_GRANT_WRITABLE_ROOT, true, DSH_MODE_WORKSPACE_WRITE, strdup("/etc") };
        line = dsh_denial_describe(&write);
        assert_string_equal(line, "write \"/etc/x\" (outside-roots): grant --sandbox-permissions workspace-write "
                                  "--additional-write /etc");
        free(line);
        write.grant.widens = false;
        line = dsh_denial_describe(&write);
        assert_string_equal(line, "write \"/etc/x\" (outside-roots): grant --additional-write /etc");
        free(line);
        connect.grant = (dsh_grant) { DSH_GRANT_ALLOWED_HOST, false, DSH_MODE_WORKSPACE_WRITE,
                                      strdup("[2001:db8::1]:443") };
        line = dsh_denial_describe(&connect);
        assert_string_equal(line, "connect [2001:db8::1]:443 (host-not-allowed): grant --additional-host "
                                  "[2001:db8::1]:443");
        free(line);
        line = dsh_denial_describe(&own);
        assert_string_equal(line, "write \"/w/.dsh\\xff\" (own-file): no grant: only the user can allow it");
        free(line);
        /* A name made by the command stays on its line and reads as itself: a break, a quote, a backslash. */
        free(own.path);
        own.path = strdup("/w/s\n\"x\\x0a");
        line = dsh_denial_describe(&own);
        assert_string_equal(line, "write \"/w/s\\x0a\\x22x\\x5cx0a\" (own-file): no grant: only the user can allow it");
        free(line);
        dsh_denial_clear(&write);
        dsh_denial_clear(&connect);
        dsh_denial_clear(&own);
}

/* What one process writes, another reads back the same; a stray byte is escaped, not fatal. */
static void test_json_round_trip(void **state)
{
        dsh_denial denial = make(DSH_DENIAL_CONNECT, NULL, "example.com", 8443, "host-not-allowed");
        dsh_denial back = DSH_DENIAL_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_json_decoder decoder = { "denial", &error };
        json_t *value;
        char *text = NULL;

        (void) state;
        denial.source = DSH_DENIAL_SOURCE_PROXY;
        denial.grant = (dsh_grant) { DSH_GRANT_ALLOWED_HOST, false, DSH_MODE_READ_ONLY, strdup("example.com:8443") };
        assert_int_equal(dsh_json_encode_denial(&denial, &text, &error), 0);
        assert_string_equal(text, "{\"op\":\"connect\",\"call\":\"connect\",\"host\":\"example.com\",\"port\":8443,"
                                  "\"rule\":\"host-not-allowed\",\"source\":\"proxy\",\"grant\":{\"kind\":"
                                  "\"allowed-host\",\"target\":\"example.com:8443\"}}");
        value = json_loads(text, 0, NULL);
        assert_non_null(value);
        assert_int_equal(dsh_json_decode_denial(&decoder, value, &dsh_json_root, &back), 0);
        assert_int_equal(back.op, DSH_DENIAL_CONNECT);
        assert_int_equal(back.port, 8443);
        assert_int_equal(back.source, DSH_DENIAL_SOURCE_PROXY);
        assert_string_equal(back.grant.target, "example.com:8443");
        assert_false(back.grant.widens);
        json_decref(value);
        free(text);
        dsh_denial_clear(&back);

        /* An unknown op is refused, naming the member. */
        value = json_loads("{\"op\":\"teleport\",\"rule\":\"x\",\"source\":\"proxy\",\"grant\":{\"kind\":\"none\"}}", 0,
                           NULL);
        assert_int_equal(dsh_json_decode_denial(&decoder, value, &dsh_json_root, &back), -EINVAL);
        assert_non_null(strstr(error.message, "\"op\""));
        dsh_error_clear(&error);
        json_decref(value);
        dsh_denial_clear(&denial);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names_round_trip),
                cmocka_unit_test(test_bounded_and_deduplicated),
                cmocka_unit_test(test_describe),
                cmocka_unit_test(test_json_round_trip),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
