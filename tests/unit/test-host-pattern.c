/* SPDX-License-Identifier: MIT */
/* Allow-list entries (base/host-pattern.c): what parses, what is refused and why, what matches. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/host-pattern.h"

static dsh_host_pattern parsed(const char *text)
{
        dsh_host_pattern pattern;
        const char *reason = NULL;

        if (dsh_host_pattern_parse(text, &pattern, &reason) != 0)
                fail_msg("\"%s\" refused: %s", text, reason ? reason : "(no reason)");
        return pattern;
}

/* Every refusal rule, each with the words its reason must hold. */
static void test_refusals_name_their_rule(void **state)
{
        static const struct {
                const char *text;
                const char *reason_holds;
        } refused[] = {
                { "", "must name a host" },
                { "*", "\"*\" alone allows everything" },
                { "*:443", "\"*\" alone allows everything" },
                { "com", "bare top-level name" },
                { "com.", "bare top-level name" },
                { "*.com", "top-level name" },
                { "https://example.com", "no scheme" },
                { "example.com/path", "no path" },
                { "example.com?q=1", "no query" },
                { "example.com#x", "no query or fragment" },
                { "user@example.com", "no user info" },
                { "@npm", "named set" },
                { "a..example.com", "empty label" },
                { ".example.com", "empty label" },
                { "example.com..", "empty label" },
                { "exa mple.com", "letters, digits" },
                { "exa\nmple.com", "letters, digits" },
                { "ex%61mple.com", "letters, digits" },
                { "*foo.example.com", "wildcard" },
                { "a.*.example.com", "wildcard" },
                { "**.example.com", "wildcard" },
                { "*.", "wildcard" },
                { "example.com:", "port" },
                { "example.com:0", "1 to 65535" },
                { "example.com:65536", "1 to 65535" },
                { "example.com:99999999999999999999", "1 to 65535" },
                { "example.com:+80", "port" },
                { "example.com:80:81", "brackets" },
                { "::1", "brackets" },
                { "[::1", "closed by ']'" },
                { "[]", "not an IPv6 address" },
                { "[fe80::1%eth0]", "no zone" },
                { "[::1]x", "port" },
                { "[1.2.3.4]", "not an IPv6 address" },
                { "127.1", "all digits" },
                { "1.2.3.256", "all digits" },
                { "*.10.0.0.1", "all digits" },
        };
        char long_label[80], long_name[300];

        (void) state;
        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
                dsh_host_pattern pattern;
                const char *reason = NULL;

                if (dsh_host_pattern_parse(refused[i].text, &pattern, &reason) != -EINVAL)
                        fail_msg("\"%s\" was accepted", refused[i].text);
                assert_non_null(reason);
                if (!strstr(reason, refused[i].reason_holds))
                        fail_msg("\"%s\": reason \"%s\" lacks \"%s\"", refused[i].text, reason, refused[i].reason_holds);
        }
        memset(long_label, 'a', 64);
        strcpy(long_label + 64, ".example.com");
        assert_int_equal(dsh_host_pattern_parse(long_label, &(dsh_host_pattern) { 0 }, NULL), -EINVAL);
        long_label[1] = '.';    /* a 62-byte label: fine */
        assert_int_equal(dsh_host_pattern_parse(long_label, &(dsh_host_pattern) { 0 }, NULL), 0);
        for (size_t i = 0; i < 254; i += 2)
                memcpy(long_name + i, "a.", 2);
        strcpy(long_name + 252, "com");  /* 255 bytes */
        assert_int_equal(dsh_host_pattern_parse(long_name, &(dsh_host_pattern) { 0 }, NULL), -EINVAL);
        assert_int_equal(dsh_host_pattern_parse(NULL, &(dsh_host_pattern) { 0 }, NULL), -EINVAL);
}

static void test_kinds_and_normal_forms(void **state)
{
        dsh_host_pattern pattern;

        (void) state;
        pattern = parsed("Example.COM.");
        assert_int_equal(pattern.kind, DSH_HOST_PATTERN_NAME);
        assert_string_equal(pattern.name, "example.com");
        assert_int_equal(pattern.port, 0);
        pattern = parsed("*.GitHub.com:443");
        assert_int_equal(pattern.kind, DSH_HOST_PATTERN_SUBDOMAINS);
        assert_string_equal(pattern.name, "github.com");
        assert_int_equal(pattern.port, 443);
        pattern = parsed("my_host-1.internal.example");
        assert_int_equal(pattern.kind, DSH_HOST_PATTERN_NAME);
        pattern = parsed("10.1.2.3:8080");
        assert_int_equal(pattern.kind, DSH_HOST_PATTERN_IPV4);
        assert_int_equal(ntohl(pattern.ipv4.s_addr), 0x0a010203);
        assert_int_equal(pattern.port, 8080);
        pattern = parsed("[2001:db8::1]:65535");
        assert_int_equal(pattern.kind, DSH_HOST_PATTERN_IPV6);
        assert_int_equal(pattern.port, 65535);
        pattern = parsed("[::ffff:10.1.2.3]");
        assert_int_equal(pattern.kind, DSH_HOST_PATTERN_IPV6);
        pattern = parsed("1.example");   /* a digit label is fine where it is not the last */
        assert_int_equal(pattern.kind, DSH_HOST_PATTERN_NAME);
}

static void test_names_subdomains_case_and_dot(void **state)
{
        dsh_host_pattern exact = parsed("example.com"), below = parsed("*.example.com");

        (void) state;
        assert_true(dsh_host_pattern_matches(&exact, "example.com", 443));
        assert_true(dsh_host_pattern_matches(&exact, "EXAMPLE.com.", 443));
        assert_false(dsh_host_pattern_matches(&exact, "www.example.com", 443));
        assert_false(dsh_host_pattern_matches(&exact, "example.com.evil.net", 443));
        assert_false(dsh_host_pattern_matches(&exact, "xexample.com", 443));
        /* Subdomains only: never the domain itself, never a name that merely ends the same way. */
        assert_true(dsh_host_pattern_matches(&below, "a.example.com", 80));
        assert_true(dsh_host_pattern_matches(&below, "A.B.Example.Com.", 80));
        assert_false(dsh_host_pattern_matches(&below, "example.com", 80));
        assert_false(dsh_host_pattern_matches(&below, "badexample.com", 80));
        assert_false(dsh_host_pattern_matches(&below, ".example.com", 80));
        /* A host that is no well-formed name is allowed by nothing. */
        assert_false(dsh_host_pattern_matches(&below, "a b.example.com", 80));
        assert_false(dsh_host_pattern_matches(&below, "*.example.com", 80));
        assert_false(dsh_host_pattern_matches(&below, "a..example.com", 80));
        assert_false(dsh_host_pattern_matches(&exact, "", 80));
        assert_false(dsh_host_pattern_matches(&exact, NULL, 80));
        /* A name never matches an address pattern, nor an address a name pattern. */
        assert_false(dsh_host_pattern_matches(&exact, "93.184.216.34", 80));
}

static void test_ports(void **state)
{
        dsh_host_pattern any = parsed("example.com"), https = parsed("example.com:443");
        dsh_host_pattern patterns[] = { parsed("a.example"), parsed("b.example:8443") };

        (void) state;
        assert_true(dsh_host_pattern_matches(&any, "example.com", 1));
        assert_true(dsh_host_pattern_matches(&any, "example.com", 65535));
        assert_true(dsh_host_pattern_matches(&https, "example.com", 443));
        assert_false(dsh_host_pattern_matches(&https, "example.com", 80));
        /* Port 0 asks whether a name is named at all (the DNS stub's question). */
        assert_true(dsh_host_pattern_matches(&https, "example.com", 0));
        assert_true(dsh_host_patterns_allow(patterns, 2, "b.example", 8443));
        assert_false(dsh_host_patterns_allow(patterns, 2, "b.example", 443));
        assert_true(dsh_host_patterns_allow(patterns, 2, "a.example", 443));
        assert_false(dsh_host_patterns_allow(patterns, 2, "c.example", 0));
        assert_false(dsh_host_patterns_allow(patterns, 0, "a.example", 0));
}

static void test_address_literals(void **state)
{
        dsh_host_pattern patterns[] = { parsed("10.1.2.3"), parsed("[2001:db8::1]:443"), parsed("[::ffff:192.0.2.7]") };
        struct in_addr ipv4;
        struct in6_addr ipv6;

        (void) state;
        assert_true(dsh_host_patterns_allow(patterns, 3, "10.1.2.3", 80));
        assert_true(dsh_host_patterns_allow(patterns, 3, "2001:db8::1", 443));
        assert_true(dsh_host_patterns_allow(patterns, 3, "[2001:DB8:0::1]", 443));
        assert_false(dsh_host_patterns_allow(patterns, 3, "2001:db8::1", 80));
        assert_false(dsh_host_patterns_allow(patterns, 3, "10.1.2.4", 80));
        /* The mapped forms compare as their IPv4 address, both ways. */
        assert_true(dsh_host_patterns_allow(patterns, 3, "::ffff:10.1.2.3", 80));
        assert_true(dsh_host_patterns_allow(patterns, 3, "192.0.2.7", 80));

        assert_int_equal(inet_pton(AF_INET, "10.1.2.3", &ipv4), 1);
        assert_true(dsh_host_patterns_allow_address(patterns, 3, AF_INET, &ipv4, 22));
        assert_int_equal(inet_pton(AF_INET6, "::ffff:10.1.2.3", &ipv6), 1);
        assert_true(dsh_host_patterns_allow_address(patterns, 3, AF_INET6, &ipv6, 22));
        assert_int_equal(inet_pton(AF_INET, "192.0.2.7", &ipv4), 1);
        assert_true(dsh_host_patterns_allow_address(patterns, 3, AF_INET, &ipv4, 22));
        assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", &ipv6), 1);
        assert_true(dsh_host_patterns_allow_address(patterns, 3, AF_INET6, &ipv6, 443));
        assert_false(dsh_host_patterns_allow_address(patterns, 3, AF_INET6, &ipv6, 444));
        assert_int_equal(inet_pton(AF_INET6, "::10.1.2.3", &ipv6), 1);  /* IPv4-compatible: not the same address */
        assert_false(dsh_host_patterns_allow_address(patterns, 3, AF_INET6, &ipv6, 22));
        assert_false(dsh_host_patterns_allow_address(patterns, 3, AF_UNIX, &ipv4, 22));
        assert_false(dsh_host_patterns_allow_address(patterns, 3, AF_INET, NULL, 22));
        /* A name pattern is no address. */
        dsh_host_pattern name = parsed("example.com");
        assert_false(dsh_host_patterns_allow_address(&name, 1, AF_INET, &ipv4, 22));
}

static bool metadata_text(const char *text)
{
        struct in_addr ipv4;
        struct in6_addr ipv6;

        if (inet_pton(AF_INET, text, &ipv4) == 1)
                return dsh_address_is_metadata(AF_INET, &ipv4);
        assert_int_equal(inet_pton(AF_INET6, text, &ipv6), 1);
        return dsh_address_is_metadata(AF_INET6, &ipv6);
}

static void test_metadata_ranges(void **state)
{
        (void) state;
        assert_true(metadata_text("169.254.169.254"));
        assert_true(metadata_text("169.254.0.0"));
        assert_true(metadata_text("169.254.255.255"));
        assert_true(metadata_text("100.100.100.200"));
        assert_true(metadata_text("fd00:ec2::254"));
        assert_true(metadata_text("fe80::1"));
        assert_true(metadata_text("febf:ffff::1"));
        assert_true(metadata_text("::ffff:169.254.169.254"));
        assert_true(metadata_text("64:ff9b::169.254.169.254"));
        /* Unspecified: a connect there reaches the host itself. */
        assert_true(metadata_text("0.0.0.0"));
        assert_true(metadata_text("0.1.2.3"));
        assert_true(metadata_text("::"));
        assert_true(metadata_text("::ffff:0.0.0.0"));
        assert_false(metadata_text("1.0.0.0"));
        assert_false(metadata_text("169.253.255.255"));
        assert_false(metadata_text("169.255.0.0"));
        assert_false(metadata_text("127.0.0.1"));
        assert_false(metadata_text("10.0.0.1"));
        assert_false(metadata_text("fec0::1"));
        assert_false(metadata_text("fd00:ec2::253"));
        assert_false(metadata_text("::1"));
        assert_false(metadata_text("::ffff:127.0.0.1"));
        assert_false(metadata_text("64:ff9b::10.0.0.1"));
        assert_false(dsh_address_is_metadata(AF_INET, NULL));
        assert_false(dsh_address_is_metadata(AF_UNIX, "169.254.169.254"));
}

static void test_every_named_set_parses(void **state)
{
        const char *const *names = dsh_host_named_sets();
        size_t count = 0;

        (void) state;
        for (; *names; names++, count++) {
                const char *const *set = dsh_host_named_set(*names);

                assert_non_null(set);
                assert_non_null(set[0]);
                for (; *set; set++) {
                        dsh_host_pattern pattern;
                        const char *reason = NULL;

                        if (dsh_host_pattern_parse(*set, &pattern, &reason) != 0)
                                fail_msg("%s: \"%s\" refused: %s", *names, *set, reason);
                }
        }
        assert_int_equal(count, 7);
        assert_string_equal(dsh_host_named_set("@npm")[0], "registry.npmjs.org");
        assert_string_equal(dsh_host_named_set("@github")[2], "*.githubusercontent.com");
        assert_null(dsh_host_named_set("@nope"));
        assert_null(dsh_host_named_set("npm"));
        assert_null(dsh_host_named_set(NULL));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_refusals_name_their_rule),
                cmocka_unit_test(test_kinds_and_normal_forms),
                cmocka_unit_test(test_names_subdomains_case_and_dot),
                cmocka_unit_test(test_ports),
                cmocka_unit_test(test_address_literals),
                cmocka_unit_test(test_metadata_ranges),
                cmocka_unit_test(test_every_named_set_parses),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
