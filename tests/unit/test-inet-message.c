/* SPDX-License-Identifier: MIT */
/*
 * The control data a supervised inet send refuses (src/core/inet-message.h,
 * dsh_inet_message_routes()): an IPv4 source route, an IPv6 routing header
 * or next hop, alone or behind an ordinary header, a packet info naming an
 * interface but loopback (or too short to say), and a header the kernel
 * would not walk; ordinary control data (a hop limit, a traffic class, a
 * packet info naming no interface or loopback, no control at all) is sent.
 */
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "core/inet-message.h"

#define ROOM 256

typedef struct control {
        union {
                unsigned char bytes[ROOM];
                struct cmsghdr align;
        } buffer;
        size_t length;
} control;

/* Appends one header of `level`/`type` with `size` zero bytes of data. */
static void add_header(control *c, int level, int type, size_t size)
{
        struct cmsghdr *header = (struct cmsghdr *) (c->buffer.bytes + c->length);

        assert_true(c->length + CMSG_SPACE(size) <= ROOM);
        memset(header, 0, CMSG_SPACE(size));
        header->cmsg_level = level;
        header->cmsg_type = type;
        header->cmsg_len = CMSG_LEN(size);
        c->length += CMSG_SPACE(size);
}

static bool routes(control *c)
{
        dsh_inet_message message = { .control = c->buffer.bytes, .control_length = c->length };

        return dsh_inet_message_routes(&message);
}

static void test_routing_control_is_found(void **state)
{
        static const int routing[][2] = { { SOL_IP, IP_RETOPTS }, { SOL_IPV6, IPV6_RTHDR },
                                          { SOL_IPV6, IPV6_2292RTHDR }, { SOL_IPV6, IPV6_NEXTHOP } };

        (void) state;
        for (size_t i = 0; i < sizeof(routing) / sizeof(routing[0]); i++) {
                control alone = { .length = 0 }, behind = { .length = 0 };

                add_header(&alone, routing[i][0], routing[i][1], 24);
                assert_true(routes(&alone));
                add_header(&behind, SOL_IPV6, IPV6_HOPLIMIT, sizeof(int));
                add_header(&behind, routing[i][0], routing[i][1], 24);
                assert_true(routes(&behind));
        }
}

static void test_ordinary_control_is_sent(void **state)
{
        control none = { .length = 0 }, ordinary = { .length = 0 };

        (void) state;
        assert_false(routes(&none));
        add_header(&ordinary, SOL_IPV6, IPV6_HOPLIMIT, sizeof(int));
        add_header(&ordinary, SOL_IPV6, IPV6_TCLASS, sizeof(int));
        add_header(&ordinary, SOL_IP, IP_TOS, 1);
        add_header(&ordinary, SOL_SOCKET, SCM_RIGHTS, sizeof(int));
        assert_false(routes(&ordinary));
}

/* A packet-info header naming interface `index`: IP_PKTINFO (IPv4) or IPV6_PKTINFO. */
static void add_packet_info(control *c, bool ipv6, int index)
{
        size_t size = ipv6 ? sizeof(struct in6_pktinfo) : sizeof(struct in_pktinfo);
        size_t at = ipv6 ? offsetof(struct in6_pktinfo, ipi6_ifindex) : offsetof(struct in_pktinfo, ipi_ifindex);
        size_t start = c->length;

        add_header(c, ipv6 ? SOL_IPV6 : SOL_IP, ipv6 ? IPV6_PKTINFO : IP_PKTINFO, size);
        memcpy(CMSG_DATA((struct cmsghdr *) (c->buffer.bytes + start)) + at, &index, sizeof(index));
}

static void test_packet_info_leaving_loopback_is_found(void **state)
{
        (void) state;
        for (int ipv6 = 0; ipv6 < 2; ipv6++) {
                control none = { .length = 0 }, loopback = { .length = 0 }, other = { .length = 0 };
                control short_one = { .length = 0 };

                add_packet_info(&none, ipv6, 0);
                assert_false(routes(&none));
                add_packet_info(&loopback, ipv6, 1);
                assert_false(routes(&loopback));
                add_packet_info(&other, ipv6, 2);
                assert_true(routes(&other));
                add_header(&short_one, ipv6 ? SOL_IPV6 : SOL_IP, ipv6 ? IPV6_PKTINFO : IP_PKTINFO, 2);
                assert_true(routes(&short_one));
        }
}

static void test_a_header_the_kernel_would_not_walk_is_refused(void **state)
{
        control c = { .length = 0 };

        (void) state;
        add_header(&c, SOL_IPV6, IPV6_HOPLIMIT, sizeof(int));
        ((struct cmsghdr *) c.buffer.bytes)->cmsg_len = ROOM * 2;  /* longer than the control data */
        assert_true(routes(&c));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_routing_control_is_found),
                cmocka_unit_test(test_ordinary_control_is_sent),
                cmocka_unit_test(test_packet_info_leaving_loopback_is_found),
                cmocka_unit_test(test_a_header_the_kernel_would_not_walk_is_refused),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
