/* SPDX-License-Identifier: MIT */
/*
 * The address book and the capture table (src/network/address-book.h):
 * what the gate and the proxy trust.  An address counts for the name it
 * was given out for and no other; an IPv4-mapped IPv6 address is its IPv4
 * form (a client may connect either way); both tables are bounded; a
 * capture is taken once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "network/address-book.h"

static const uint8_t five[4] = { 127, 0, 0, 5 };

static void mapped(const uint8_t four[4], uint8_t out[16])
{
        memset(out, 0, 16);
        out[10] = out[11] = 0xff;
        memcpy(out + 12, four, 4);
}

static void test_book_names_each_address(void **state)
{
        dsh_address_book *book = dsh_address_book_new();
        uint8_t six[16], found[16];
        int family = 0;

        (void) state;
        assert_non_null(book);
        assert_false(dsh_address_book_knows(book, AF_INET, five));
        dsh_address_book_add(book, "allowed.dsh.test", AF_INET, five, 0);
        assert_true(dsh_address_book_has(book, "allowed.dsh.test", AF_INET, five));
        assert_false(dsh_address_book_has(book, "denied.dsh.test", AF_INET, five));
        assert_true(dsh_address_book_knows(book, AF_INET, five));
        /* The mapped form is the same address, both ways. */
        mapped(five, six);
        assert_true(dsh_address_book_has(book, "allowed.dsh.test", AF_INET6, six));
        dsh_address_book_add(book, "six.dsh.test", AF_INET6, six, 30);
        assert_true(dsh_address_book_has(book, "six.dsh.test", AF_INET, five));
        assert_true(dsh_address_book_find(book, "six.dsh.test", &family, found));
        assert_int_equal(family, AF_INET);
        assert_memory_equal(found, five, 4);
        assert_false(dsh_address_book_find(book, "nothing.dsh.test", &family, found));
        dsh_address_book_free(book);
}

/* Full: the entry closest to expiry makes room; the book never grows past its bound. */
static void test_book_is_bounded(void **state)
{
        dsh_address_book *book = dsh_address_book_new();
        char name[64];

        (void) state;
        for (unsigned i = 0; i <= DSH_ADDRESS_BOOK_MAX; i++) {
                uint8_t address[4] = { 10, (uint8_t) (i >> 16), (uint8_t) (i >> 8), (uint8_t) i };
                snprintf(name, sizeof(name), "n%u.dsh.test", i);
                dsh_address_book_add(book, name, AF_INET, address, 300);
        }
        uint8_t first[4] = { 10, 0, 0, 0 }, last[4] = { 10, 0, DSH_ADDRESS_BOOK_MAX >> 8, DSH_ADDRESS_BOOK_MAX & 0xff };
        snprintf(name, sizeof(name), "n%u.dsh.test", DSH_ADDRESS_BOOK_MAX);
        assert_true(dsh_address_book_has(book, name, AF_INET, last));
        assert_false(dsh_address_book_has(book, "n0.dsh.test", AF_INET, first));
        dsh_address_book_free(book);
}

static struct sockaddr_in inet(const uint8_t four[4], unsigned short port)
{
        struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons(port) };

        memcpy(&address.sin_addr, four, 4);
        return address;
}

static void test_capture_is_taken_once(void **state)
{
        dsh_captures *captures = dsh_captures_new();
        static const uint8_t loopback[4] = { 127, 0, 0, 1 };
        struct sockaddr_in source = inet(loopback, 40000), destination = inet(five, 443), other = inet(loopback, 40001);
        struct sockaddr_in6 source6 = { .sin6_family = AF_INET6, .sin6_port = htons(40000) };
        struct sockaddr_storage taken;
        socklen_t length = 0;

        (void) state;
        assert_non_null(captures);
        assert_int_equal(dsh_captures_add(captures, (struct sockaddr *) &source, sizeof(source),
                                          (struct sockaddr *) &destination, sizeof(destination)), 0);
        assert_false(dsh_captures_take(captures, (struct sockaddr *) &other, sizeof(other), &taken, &length));
        /* The peer as an IPv6 socket sees it (mapped) is the same source. */
        mapped(loopback, source6.sin6_addr.s6_addr);
        assert_true(dsh_captures_take(captures, (struct sockaddr *) &source6, sizeof(source6), &taken, &length));
        assert_int_equal(length, sizeof(destination));
        assert_memory_equal(&taken, &destination, sizeof(destination));
        /* Once: a second connection from that source is no capture. */
        assert_false(dsh_captures_take(captures, (struct sockaddr *) &source, sizeof(source), &taken, &length));
        /* Detached after a failed connect: gone. */
        assert_int_equal(dsh_captures_add(captures, (struct sockaddr *) &source, sizeof(source),
                                          (struct sockaddr *) &destination, sizeof(destination)), 0);
        dsh_captures_remove(captures, (struct sockaddr *) &source, sizeof(source));
        assert_false(dsh_captures_take(captures, (struct sockaddr *) &source, sizeof(source), &taken, &length));
        /* A source that is no inet address. */
        struct sockaddr unix_source = { .sa_family = AF_UNIX };
        assert_int_equal(dsh_captures_add(captures, &unix_source, sizeof(unix_source), (struct sockaddr *) &destination,
                                          sizeof(destination)), -EINVAL);
        dsh_captures_free(captures);
}

/* Full: the attach is refused (the connect with it), never an old capture overwritten. */
static void test_captures_are_bounded(void **state)
{
        dsh_captures *captures = dsh_captures_new();
        static const uint8_t loopback[4] = { 127, 0, 0, 1 };
        struct sockaddr_in destination = inet(five, 443);
        struct sockaddr_storage taken;
        socklen_t length;

        (void) state;
        for (unsigned i = 0; i < DSH_CAPTURES_MAX; i++) {
                struct sockaddr_in source = inet(loopback, (unsigned short) (10000 + i));
                assert_int_equal(dsh_captures_add(captures, (struct sockaddr *) &source, sizeof(source),
                                                  (struct sockaddr *) &destination, sizeof(destination)), 0);
        }
        struct sockaddr_in one_more = inet(loopback, 10000 + DSH_CAPTURES_MAX), first = inet(loopback, 10000);
        assert_int_equal(dsh_captures_add(captures, (struct sockaddr *) &one_more, sizeof(one_more),
                                          (struct sockaddr *) &destination, sizeof(destination)), -ENOSPC);
        assert_true(dsh_captures_take(captures, (struct sockaddr *) &first, sizeof(first), &taken, &length));
        dsh_captures_free(captures);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_book_names_each_address),
                cmocka_unit_test(test_book_is_bounded),
                cmocka_unit_test(test_capture_is_taken_once),
                cmocka_unit_test(test_captures_are_bounded),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
