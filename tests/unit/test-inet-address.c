/* SPDX-License-Identifier: MIT */
/*
 * The pure rules of the inet supervision (src/core/inet-address.h): what an
 * address is (loopback, wildcard, IPv4-mapped judged by its IPv4 form, the
 * kernel's length rules), the wildcard made the loopback, and /proc/net
 * lines — made-up ones and the real table after a bind of this test's own,
 * which must name the socket's inode at its address and port.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/inet-address.h"

static socklen_t v4(struct sockaddr_storage *address, const char *text, uint16_t port)
{
        struct sockaddr_in *in = (struct sockaddr_in *) address;

        memset(address, 0, sizeof(*address));
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        assert_int_equal(inet_pton(AF_INET, text, &in->sin_addr), 1);
        return sizeof(*in);
}

static socklen_t v6(struct sockaddr_storage *address, const char *text, uint16_t port)
{
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) address;

        memset(address, 0, sizeof(*address));
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        assert_int_equal(inet_pton(AF_INET6, text, &in6->sin6_addr), 1);
        return sizeof(*in6);
}

static void test_classify(void **state)
{
        static const struct { const char *text; dsh_inet_kind kind; bool v4; } cases[] = {
                { "127.0.0.1", DSH_INET_LOOPBACK, true }, { "127.255.3.4", DSH_INET_LOOPBACK, true },
                { "0.0.0.0", DSH_INET_WILDCARD, true }, { "10.0.0.1", DSH_INET_OTHER, true },
                { "169.254.169.254", DSH_INET_OTHER, true }, { "::1", DSH_INET_LOOPBACK, false },
                { "::", DSH_INET_WILDCARD, false }, { "::2", DSH_INET_OTHER, false },
                { "::ffff:127.0.0.1", DSH_INET_LOOPBACK, true }, { "::ffff:127.9.9.9", DSH_INET_LOOPBACK, true },
                { "::ffff:0.0.0.0", DSH_INET_WILDCARD, true }, { "::ffff:8.8.8.8", DSH_INET_OTHER, true },
                { "fd00:ec2::254", DSH_INET_OTHER, false }, { "::127.0.0.1", DSH_INET_OTHER, false },
        };
        struct sockaddr_storage address;
        dsh_inet_endpoint endpoint;

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                socklen_t length = strchr(cases[i].text, ':') ? v6(&address, cases[i].text, 8080)
                                                               : v4(&address, cases[i].text, 8080);

                if (dsh_inet_classify(&address, length, &endpoint) != cases[i].kind)
                        fail_msg("%s: kind %d", cases[i].text, dsh_inet_classify(&address, length, &endpoint));
                assert_int_equal(endpoint.v4, cases[i].v4);
                assert_int_equal(endpoint.port, 8080);
        }
        /* The kernel's lengths: a sockaddr_in needs 16 bytes, a sockaddr_in6 24, AF_UNSPEC its family. */
        assert_int_equal(dsh_inet_classify(&address, 23, NULL), DSH_INET_INVALID);
        assert_int_equal(dsh_inet_classify(&address, 24, NULL), DSH_INET_OTHER);
        v4(&address, "127.0.0.1", 1);
        assert_int_equal(dsh_inet_classify(&address, 15, NULL), DSH_INET_INVALID);
        assert_int_equal(dsh_inet_classify(&address, 1, NULL), DSH_INET_INVALID);
        address.ss_family = AF_UNSPEC;
        assert_int_equal(dsh_inet_classify(&address, 2, NULL), DSH_INET_UNSPEC);
        address.ss_family = AF_UNIX;
        assert_int_equal(dsh_inet_classify(&address, 16, NULL), DSH_INET_INVALID);
}

static void expect_rewritten(const char *from, const char *to)
{
        struct sockaddr_storage address, expected;
        bool is_v6 = strchr(from, ':') != NULL;
        socklen_t length = is_v6 ? v6(&address, from, 53) : v4(&address, from, 53);

        (void) (is_v6 ? v6(&expected, to, 53) : v4(&expected, to, 53));
        dsh_inet_wildcard_to_loopback(&address, length);
        if (memcmp(&address, &expected, length) != 0)
                fail_msg("%s did not become %s", from, to);
}

static void test_wildcard_is_the_loopback(void **state)
{
        (void) state;
        expect_rewritten("0.0.0.0", "127.0.0.1");
        expect_rewritten("::", "::1");
        expect_rewritten("::ffff:0.0.0.0", "::ffff:127.0.0.1");
        expect_rewritten("10.1.2.3", "10.1.2.3");
        expect_rewritten("127.0.0.2", "127.0.0.2");
        expect_rewritten("::ffff:1.2.3.4", "::ffff:1.2.3.4");
}

static void test_loopback_address_and_text(void **state)
{
        struct sockaddr_storage address;
        dsh_inet_endpoint endpoint;
        char text[INET6_ADDRSTRLEN];

        (void) state;
        assert_int_equal(dsh_inet_loopback_address(AF_INET, 99, &address), sizeof(struct sockaddr_in));
        assert_int_equal(dsh_inet_classify(&address, sizeof(struct sockaddr_in), &endpoint), DSH_INET_LOOPBACK);
        dsh_inet_endpoint_text(&endpoint, text, sizeof(text));
        assert_string_equal(text, "127.0.0.1");
        assert_int_equal(endpoint.port, 99);
        assert_int_equal(dsh_inet_loopback_address(AF_INET6, 7, &address), sizeof(struct sockaddr_in6));
        assert_int_equal(dsh_inet_classify(&address, sizeof(struct sockaddr_in6), &endpoint), DSH_INET_LOOPBACK);
        dsh_inet_endpoint_text(&endpoint, text, sizeof(text));
        assert_string_equal(text, "::1");
        assert_int_equal(dsh_inet_loopback_address(AF_UNIX, 7, &address), 0);
        v6(&address, "::ffff:192.0.2.9", 443);
        dsh_inet_classify(&address, sizeof(struct sockaddr_in6), &endpoint);
        dsh_inet_endpoint_text(&endpoint, text, sizeof(text));
        assert_string_equal(text, "192.0.2.9");  /* a mapped address is recorded in its IPv4 form */
}

#define TCP_LINE "   3: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 " \
                 "0000000000000000 100 0 0 10 0\n"
#define TCP6_LINE "   1: 00000000000000000000000001000000:0035 00000000000000000000000000000000:0000 0A " \
                  "00000000:00000000 00:00000000 00000000     0        0 777 1 0000000000000000 100 0 0 10 0\n"
#define MAPPED_LINE "   2: 0000000000000000FFFF00000100007F:0050 00000000000000000000000000000000:0000 07 " \
                    "00000000:00000000 00:00000000 00000000     0        0 31337 2 0000000000000000 0\n"
#define WILDCARD6_LINE "   4: 00000000000000000000000000000000:0050 00000000000000000000000000000000:0000 0A " \
                       "00000000:00000000 00:00000000 00000000     0        0 99 1 0000000000000000 0\n"

static void test_proc_net_lines(void **state)
{
        dsh_proc_net_entry entry;
        dsh_inet_endpoint destination = { .v4 = true, .address = { 127, 0, 0, 1 }, .port = 8080 };
        dsh_inet_endpoint loopback6 = { .v4 = false, .address = { [15] = 1 }, .port = 53 };

        (void) state;
        assert_true(dsh_proc_net_parse_line(TCP_LINE, false, &entry));
        assert_int_equal(entry.local.port, 8080);
        assert_int_equal(entry.state, 0x0A);
        assert_int_equal(entry.inode, 4242);
        assert_true(entry.local.v4);
        assert_memory_equal(entry.local.address, destination.address, 4);
        assert_false(entry.wildcard);
        assert_true(dsh_proc_net_entry_serves(&entry, &destination));
        destination.port = 8081;
        assert_false(dsh_proc_net_entry_serves(&entry, &destination));
        destination.address[3] = 2;
        destination.port = 8080;
        assert_false(dsh_proc_net_entry_serves(&entry, &destination));  /* 127.0.0.2 is another address */
        assert_true(dsh_proc_net_parse_line(TCP6_LINE, true, &entry));
        assert_false(entry.local.v4);
        assert_int_equal(entry.local.port, 53);
        assert_int_equal(entry.inode, 777);
        assert_true(dsh_proc_net_entry_serves(&entry, &loopback6));
        assert_true(dsh_proc_net_parse_line(MAPPED_LINE, true, &entry));
        assert_true(entry.local.v4);
        assert_int_equal(entry.state, 0x07);
        assert_int_equal(entry.local.address[0], 127);
        assert_int_equal(entry.local.address[3], 1);
        assert_true(dsh_proc_net_parse_line(WILDCARD6_LINE, true, &entry));
        assert_true(entry.wildcard);
        assert_true(entry.any_family);
        destination = (dsh_inet_endpoint) { .v4 = true, .address = { 127, 0, 0, 1 }, .port = 80 };
        assert_true(dsh_proc_net_entry_serves(&entry, &destination));  /* :: may take IPv4 too */
        /* A v4 table's line read as v6, the header, cut lines, garbage: none is an entry. */
        assert_false(dsh_proc_net_parse_line(TCP_LINE, true, &entry));
        assert_false(dsh_proc_net_parse_line("  sl  local_address rem_address   st tx_queue rx_queue tr\n", false,
                                             &entry));
        assert_false(dsh_proc_net_parse_line("   3: 0100007F:1F90 00000000:0000 0A\n", false, &entry));
        assert_false(dsh_proc_net_parse_line("   3: 0100007G:1F90 00000000:0000 0A 0 0 0 0 0 1\n", false, &entry));
        assert_false(dsh_proc_net_parse_line("", false, &entry));
        assert_false(dsh_proc_net_parse_line(":", false, &entry));
}

/* The real table, after a listen of our own: its line names our socket's inode at 127.0.0.1:port. */
static void test_proc_net_real_table(void **state)
{
        struct sockaddr_storage address;
        socklen_t length = v4(&address, "127.0.0.1", 0);
        int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        dsh_inet_endpoint destination;
        struct stat status;
        char *line = NULL;
        size_t capacity = 0;
        bool found = false;
        FILE *table;

        (void) state;
        assert_true(server >= 0);
        assert_int_equal(bind(server, (struct sockaddr *) &address, length), 0);
        assert_int_equal(listen(server, 1), 0);
        assert_int_equal(getsockname(server, (struct sockaddr *) &address, &length), 0);
        dsh_inet_classify(&address, length, &destination);
        assert_int_equal(fstat(server, &status), 0);
        table = fopen("/proc/thread-self/net/tcp", "re");
        assert_non_null(table);
        while (getline(&line, &capacity, table) > 0) {
                dsh_proc_net_entry entry;

                if (dsh_proc_net_parse_line(line, false, &entry) && entry.inode == status.st_ino) {
                        found = true;
                        assert_int_equal(entry.state, 0x0A);
                        assert_true(dsh_proc_net_entry_serves(&entry, &destination));
                }
        }
        free(line);
        fclose(table);
        close(server);
        assert_true(found);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_classify),
                cmocka_unit_test(test_wildcard_is_the_loopback),
                cmocka_unit_test(test_loopback_address_and_text),
                cmocka_unit_test(test_proc_net_lines),
                cmocka_unit_test(test_proc_net_real_table),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
