/* SPDX-License-Identifier: MIT */
/*
 * The network service's pure parsers (src/network/): the ClientHello's SNI
 * (tls-hello.c), the request head (http-head.c) and DNS messages
 * (dns-answer.c).  Each is fed what a hostile command could send: every
 * prefix of a valid message, two names where one is expected, lengths that
 * run past the end, compression pointers that loop or point forward.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "base/host-pattern.h"
#include "network/dns-answer.h"
#include "network/http-head.h"
#include "network/tls-hello.h"

/* ------------------------------------------------------------ TLS hello -- */

typedef struct bytes {
        uint8_t data[20000];
        size_t length;
} bytes;

static void put(bytes *b, const void *data, size_t length)
{
        assert_true(b->length + length <= sizeof(b->data));
        memcpy(b->data + b->length, data, length);
        b->length += length;
}

static void put8(bytes *b, unsigned value)
{
        uint8_t byte = (uint8_t) value;
        put(b, &byte, 1);
}

static void put16(bytes *b, unsigned value)
{
        put8(b, value >> 8);
        put8(b, value);
}

static void put24(bytes *b, size_t value)
{
        put8(b, (unsigned) (value >> 16));
        put16(b, (unsigned) value);
}

static void put_server_name(bytes *extensions, const char *name)
{
        size_t length = strlen(name);

        put16(extensions, 0);                   /* server_name */
        put16(extensions, (unsigned) (length + 5));
        put16(extensions, (unsigned) (length + 3));
        put8(extensions, 0);                    /* host_name */
        put16(extensions, (unsigned) length);
        put(extensions, name, length);
}

/* A ClientHello with `extensions`, in records of at most `record_size` payload bytes. */
static void make_hello(bytes *out, const bytes *extensions, size_t record_size)
{
        static bytes body, message;
        uint8_t random[32] = { 1 };

        body.length = message.length = out->length = 0;
        put16(&body, 0x0303);
        put(&body, random, sizeof(random));
        put8(&body, 0);                         /* no session id */
        put16(&body, 4);
        put16(&body, 0x1301);
        put16(&body, 0xc02f);
        put8(&body, 1);
        put8(&body, 0);
        if (extensions) {
                put16(&body, (unsigned) extensions->length);
                put(&body, extensions->data, extensions->length);
        }
        put8(&message, 1);                      /* client_hello */
        put24(&message, body.length);
        put(&message, body.data, body.length);
        for (size_t at = 0; at < message.length; at += record_size) {
                size_t piece = message.length - at < record_size ? message.length - at : record_size;
                put8(out, 22);
                put16(out, 0x0301);
                put16(out, (unsigned) piece);
                put(out, message.data + at, piece);
        }
}

static void hello_with_names(bytes *out, size_t record_size, const char *first, const char *second)
{
        static bytes extensions;

        extensions.length = 0;
        put16(&extensions, 10);                 /* supported_groups, before the name */
        put16(&extensions, 4);
        put16(&extensions, 2);
        put16(&extensions, 29);
        if (first)
                put_server_name(&extensions, first);
        if (second)
                put_server_name(&extensions, second);
        make_hello(out, &extensions, record_size);
}

static void test_tls_hello_names_its_host(void **state)
{
        static bytes hello;
        char sni[DSH_TLS_HELLO_NAME_SIZE];

        (void) state;
        hello_with_names(&hello, 16384, "Allowed.DSH.test.", NULL);
        assert_int_equal(dsh_tls_hello_read(hello.data, hello.length, sni), DSH_TLS_HELLO_COMPLETE);
        assert_string_equal(sni, "allowed.dsh.test");
        /* Split over records of 7 bytes: the same name. */
        hello_with_names(&hello, 7, "allowed.dsh.test", NULL);
        assert_int_equal(dsh_tls_hello_read(hello.data, hello.length, sni), DSH_TLS_HELLO_COMPLETE);
        assert_string_equal(sni, "allowed.dsh.test");
}

static void test_tls_hello_without_name(void **state)
{
        static bytes hello;
        char sni[DSH_TLS_HELLO_NAME_SIZE] = "x";

        (void) state;
        hello_with_names(&hello, 16384, NULL, NULL);
        assert_int_equal(dsh_tls_hello_read(hello.data, hello.length, sni), DSH_TLS_HELLO_COMPLETE);
        assert_string_equal(sni, "");
        make_hello(&hello, NULL, 16384);        /* no extensions at all */
        assert_int_equal(dsh_tls_hello_read(hello.data, hello.length, sni), DSH_TLS_HELLO_COMPLETE);
        assert_string_equal(sni, "");
}

/* Every proper prefix asks for more, never a name: a name is read only from a whole hello. */
static void test_tls_hello_prefixes_are_incomplete(void **state)
{
        static bytes hello;
        char sni[DSH_TLS_HELLO_NAME_SIZE];

        (void) state;
        hello_with_names(&hello, 50, "allowed.dsh.test", NULL);
        for (size_t length = 0; length < hello.length; length++)
                assert_int_equal(dsh_tls_hello_read(hello.data, length, sni), DSH_TLS_HELLO_INCOMPLETE);
}

static void test_tls_hello_refuses_what_servers_could_read_otherwise(void **state)
{
        static bytes hello, extensions;
        char sni[DSH_TLS_HELLO_NAME_SIZE];

        (void) state;
        /* Two server_name extensions: which one the server acts on is its choice, not ours. */
        hello_with_names(&hello, 16384, "allowed.dsh.test", "denied.dsh.test");
        assert_int_equal(dsh_tls_hello_read(hello.data, hello.length, sni), DSH_TLS_HELLO_MALFORMED);
        /* A name a pattern cannot speak of. */
        hello_with_names(&hello, 16384, "allowed.dsh.test\x01", NULL);
        assert_int_equal(dsh_tls_hello_read(hello.data, hello.length, sni), DSH_TLS_HELLO_MALFORMED);
        hello_with_names(&hello, 16384, "a b.test", NULL);
        assert_int_equal(dsh_tls_hello_read(hello.data, hello.length, sni), DSH_TLS_HELLO_MALFORMED);
        /* Two names in one extension. */
        extensions.length = 0;
        put16(&extensions, 0);
        put16(&extensions, 2 + 2 * (3 + 6));
        put16(&extensions, 2 * (3 + 6));
        put8(&extensions, 0);
        put16(&extensions, 6);
        put(&extensions, "a.test", 6);
        put8(&extensions, 0);
        put16(&extensions, 6);
        put(&extensions, "b.test", 6);
        make_hello(&hello, &extensions, 16384);
        assert_int_equal(dsh_tls_hello_read(hello.data, hello.length, sni), DSH_TLS_HELLO_MALFORMED);
        /* An extension longer than what is left. */
        extensions.length = 0;
        put16(&extensions, 0);
        put16(&extensions, 500);
        make_hello(&hello, &extensions, 16384);
        assert_int_equal(dsh_tls_hello_read(hello.data, hello.length, sni), DSH_TLS_HELLO_MALFORMED);
        /* Not a ClientHello (a ServerHello's type). */
        hello_with_names(&hello, 16384, "allowed.dsh.test", NULL);
        hello.data[5] = 2;
        assert_int_equal(dsh_tls_hello_read(hello.data, hello.length, sni), DSH_TLS_HELLO_MALFORMED);
        /* Plain text, a relayed CONNECT. */
        assert_int_equal(dsh_tls_hello_read((const uint8_t *) "CONNECT a:443 HTTP/1.1\r\n", 24, sni),
                         DSH_TLS_HELLO_NOT_TLS);
        /* A record header claiming more than a record holds. */
        static const uint8_t huge[] = { 22, 3, 1, 0x7f, 0xff, 1, 0, 0, 1 };
        assert_int_equal(dsh_tls_hello_read(huge, sizeof(huge), sni), DSH_TLS_HELLO_MALFORMED);
}

/* ------------------------------------------------------------ HTTP head -- */

static dsh_http_head head;

static dsh_http_head_status read_head(const char *text)
{
        return dsh_http_head_read(text, strlen(text), &head);
}

static void test_http_connect(void **state)
{
        (void) state;
        assert_int_equal(read_head("CONNECT Allowed.DSH.test:8443 HTTP/1.1\r\nHost: x\r\n\r\n"), DSH_HTTP_HEAD_COMPLETE);
        assert_int_equal(head.target, DSH_HTTP_TARGET_AUTHORITY);
        assert_string_equal(head.host, "allowed.dsh.test");
        assert_int_equal(head.port, 8443);
        assert_false(head.host_is_literal);
        assert_int_equal(read_head("CONNECT [::1]:443 HTTP/1.1\r\n\r\n"), DSH_HTTP_HEAD_COMPLETE);
        assert_string_equal(head.host, "::1");
        assert_true(head.host_is_literal);
        assert_int_equal(read_head("CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n"), DSH_HTTP_HEAD_COMPLETE);
        assert_true(head.host_is_literal);
        /* No port, port 0, a port too large, a host with a space: refused. */
        assert_int_equal(read_head("CONNECT allowed.dsh.test HTTP/1.1\r\n\r\n"), DSH_HTTP_HEAD_MALFORMED);
        assert_int_equal(read_head("CONNECT allowed.dsh.test:0 HTTP/1.1\r\n\r\n"), DSH_HTTP_HEAD_MALFORMED);
        assert_int_equal(read_head("CONNECT allowed.dsh.test:65536 HTTP/1.1\r\n\r\n"), DSH_HTTP_HEAD_MALFORMED);
        assert_int_equal(read_head("CONNECT a%20b.test:443 HTTP/1.1\r\n\r\n"), DSH_HTTP_HEAD_MALFORMED);
}

static void test_http_absolute_uri_to_origin_form(void **state)
{
        const char *request = "GET http://Allowed.DSH.test:8080/a/b?c=d#frag HTTP/1.1\r\n"
                              "Host: denied.dsh.test\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n"
                              "Content-Length: 3\r\n\r\nabc";
        size_t length = 0;
        char *forwarded;

        (void) state;
        assert_int_equal(read_head(request), DSH_HTTP_HEAD_COMPLETE);
        assert_int_equal(head.target, DSH_HTTP_TARGET_ABSOLUTE);
        assert_string_equal(head.host, "allowed.dsh.test");
        assert_int_equal(head.port, 8080);
        assert_int_equal(head.content_length, 3);
        assert_int_equal(head.length, strlen(request) - 3);
        forwarded = dsh_http_head_forwarded(request, &head, &length);
        assert_non_null(forwarded);
        assert_int_equal(length, strlen(forwarded));
        /* The server is told the host that was allowed, never the client's Host header. */
        assert_string_equal(forwarded, "GET /a/b?c=d HTTP/1.1\r\nHost: allowed.dsh.test:8080\r\nAccept: */*\r\n"
                                       "Content-Length: 3\r\nConnection: close\r\n\r\n");
        free(forwarded);
        assert_int_equal(read_head("GET http://allowed.dsh.test HTTP/1.0\r\n\r\n"), DSH_HTTP_HEAD_COMPLETE);
        assert_int_equal(head.port, 80);
        forwarded = dsh_http_head_forwarded("GET http://allowed.dsh.test HTTP/1.0\r\n\r\n", &head, &length);
        assert_string_equal(forwarded, "GET / HTTP/1.0\r\nHost: allowed.dsh.test\r\nConnection: close\r\n\r\n");
        free(forwarded);
}

static void test_http_refuses_ambiguous_heads(void **state)
{
        (void) state;
        assert_int_equal(read_head("GET http://user@allowed.dsh.test/ HTTP/1.1\r\n\r\n"), DSH_HTTP_HEAD_MALFORMED);
        assert_int_equal(read_head("GET https://allowed.dsh.test/ HTTP/1.1\r\n\r\n"), DSH_HTTP_HEAD_MALFORMED);
        assert_int_equal(read_head("GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n"), DSH_HTTP_HEAD_MALFORMED);
        assert_int_equal(read_head("GET / HTTP/1.1\r\nHost: a b.test\r\n\r\n"), DSH_HTTP_HEAD_MALFORMED);
        assert_int_equal(read_head("GET / HTTP/2.0\r\nHost: a.test\r\n\r\n"), DSH_HTTP_HEAD_MALFORMED);
        assert_int_equal(read_head("\x16\x03\x01\x02\x05hello\r\n\r\n"), DSH_HTTP_HEAD_MALFORMED);
        assert_int_equal(read_head("GET / HTTP/1.1\r\nHost: a.test\r\n"), DSH_HTTP_HEAD_INCOMPLETE);
        static const char nul[] = "GET / HTTP/1.1\r\nHost: a.test\r\nX: a\0b\r\n\r\n";
        assert_int_equal(dsh_http_head_read(nul, sizeof(nul) - 1, &head), DSH_HTTP_HEAD_MALFORMED);
        assert_int_equal(read_head("GET / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"),
                         DSH_HTTP_HEAD_COMPLETE);
        assert_true(head.chunked);
}

static void test_http_origin_form_names_its_host(void **state)
{
        (void) state;
        assert_int_equal(read_head("GET /x HTTP/1.1\r\nHost: Allowed.DSH.test:80\r\n\r\n"), DSH_HTTP_HEAD_COMPLETE);
        assert_int_equal(head.target, DSH_HTTP_TARGET_ORIGIN);
        assert_string_equal(head.host, "allowed.dsh.test");
        assert_int_equal(read_head("GET /x HTTP/1.0\r\n\r\n"), DSH_HTTP_HEAD_COMPLETE);
        assert_string_equal(head.host, "");
}

static void test_http_head_is_bounded(void **state)
{
        size_t length = DSH_HTTP_HEAD_MAX + 10;
        char *text = malloc(length);

        (void) state;
        assert_non_null(text);
        memcpy(text, "GET / HTTP/1.1\r\nX: ", 19);
        memset(text + 19, 'a', length - 19);
        assert_int_equal(dsh_http_head_read(text, length, &head), DSH_HTTP_HEAD_MALFORMED);
        assert_int_equal(dsh_http_head_read(text, 1000, &head), DSH_HTTP_HEAD_INCOMPLETE);
        free(text);
        /* More header lines than the bound. */
        bytes *many = calloc(1, sizeof(*many));
        assert_non_null(many);
        put(many, "GET / HTTP/1.1\r\n", 16);
        for (int i = 0; i <= DSH_HTTP_HEAD_HEADERS_MAX; i++)
                put(many, "X: y\r\n", 6);
        put(many, "\r\n", 2);
        assert_int_equal(dsh_http_head_read((const char *) many->data, many->length, &head), DSH_HTTP_HEAD_MALFORMED);
        free(many);
}

/* ------------------------------------------------------------------ DNS -- */

static void put_name(bytes *b, const char *name)
{
        while (*name) {
                const char *dot = strchr(name, '.');
                size_t length = dot ? (size_t) (dot - name) : strlen(name);
                put8(b, (unsigned) length);
                put(b, name, length);
                name += length + (dot ? 1 : 0);
        }
        put8(b, 0);
}

static void put_header(bytes *b, unsigned id, unsigned flags, unsigned qd, unsigned an, unsigned ns, unsigned ar)
{
        put16(b, id);
        put16(b, flags);
        put16(b, qd);
        put16(b, an);
        put16(b, ns);
        put16(b, ar);
}

static void put_record_head(bytes *b, unsigned type, uint32_t ttl, unsigned data_length)
{
        put16(b, type);
        put16(b, 1);
        put16(b, ttl >> 16);
        put16(b, ttl & 0xffff);
        put16(b, data_length);
}

static dsh_dns_question question;

static void test_dns_query_read(void **state)
{
        uint8_t query[512];
        size_t length = dsh_dns_query_build("Allowed.DSH.test", DSH_DNS_TYPE_AAAA, 0x1234, query, sizeof(query));
        bytes b = { .length = 0 };

        (void) state;
        assert_true(length > 12);
        assert_int_equal(dsh_dns_query_read(query, length, &question), DSH_DNS_QUERY_OK);
        assert_string_equal(question.name, "allowed.dsh.test");
        assert_int_equal(question.type, DSH_DNS_TYPE_AAAA);
        assert_int_equal(question.id, 0x1234);
        assert_int_equal(question.end, length);
        /* Every prefix: dropped (no header) or malformed, never OK. */
        for (size_t prefix = 0; prefix < length; prefix++)
                assert_int_not_equal(dsh_dns_query_read(query, prefix, &question), DSH_DNS_QUERY_OK);
        /* A response is not answered; two questions, an update, a name with a byte no host name holds, a
         * compression pointer in the question: FORMERR. */
        query[2] |= 0x80;
        assert_int_equal(dsh_dns_query_read(query, length, &question), DSH_DNS_QUERY_DROP);
        query[2] &= 0x7f;
        query[5] = 2;
        assert_int_equal(dsh_dns_query_read(query, length, &question), DSH_DNS_QUERY_MALFORMED);
        query[5] = 1;
        query[2] |= 5 << 3;
        assert_int_equal(dsh_dns_query_read(query, length, &question), DSH_DNS_QUERY_MALFORMED);
        put_header(&b, 1, 0x0100, 1, 0, 0, 0);
        put(&b, "\x04" "a\x01" "bc\x04test\x00\x00\x01\x00\x01", 16);
        assert_int_equal(dsh_dns_query_read(b.data, b.length, &question), DSH_DNS_QUERY_MALFORMED);
        b.length = 0;
        put_header(&b, 1, 0x0100, 1, 0, 0, 0);
        put(&b, "\x01" "a\xc0\x0c\x00\x01\x00\x01", 8);
        assert_int_equal(dsh_dns_query_read(b.data, b.length, &question), DSH_DNS_QUERY_MALFORMED);
        /* A name that spells data in its labels is still a name: the allow-list decides it, not the parser. */
        length = dsh_dns_query_build("c2VjcmV0.exfil.dsh.test", DSH_DNS_TYPE_A, 7, query, sizeof(query));
        assert_int_equal(dsh_dns_query_read(query, length, &question), DSH_DNS_QUERY_OK);
        assert_string_equal(question.name, "c2vjcmv0.exfil.dsh.test");
}

static void test_dns_reply_refusal(void **state)
{
        uint8_t query[512], reply[512];
        size_t length = dsh_dns_query_build("denied.dsh.test", DSH_DNS_TYPE_A, 0xbeef, query, sizeof(query));
        size_t reply_length;

        (void) state;
        assert_int_equal(dsh_dns_query_read(query, length, &question), DSH_DNS_QUERY_OK);
        reply_length = dsh_dns_reply_refusal(query, length, &question, DSH_DNS_RCODE_REFUSED, reply, sizeof(reply));
        assert_int_equal(reply_length, length);
        assert_memory_equal(reply, query, 2);
        assert_int_equal(reply[2] & 0x80, 0x80);
        assert_int_equal(reply[3] & 0x0f, DSH_DNS_RCODE_REFUSED);
        assert_memory_equal(reply + 12, query + 12, length - 12);
        assert_int_equal(dsh_dns_reply_refusal(query, 11, NULL, DSH_DNS_RCODE_FORMERR, reply, sizeof(reply)), 0);
}

/* An answer for allowed.dsh.test: a CNAME to edge.cdn.test (compressed), its A, a stray A, and `extra` in the additional section. */
static void make_answer(bytes *b, uint16_t id, const uint8_t extra[4])
{
        b->length = 0;
        put_header(b, id, 0x8180, 1, 3, 0, extra ? 1 : 0);
        put_name(b, "allowed.dsh.test");
        put16(b, DSH_DNS_TYPE_A);
        put16(b, 1);
        put16(b, 0xc00c);                       /* allowed.dsh.test */
        put_record_head(b, DSH_DNS_TYPE_CNAME, 30, 11);
        put(b, "\x04" "edge\x03" "cdn\xc0\x18", 11);    /* edge.cdn + "test" at offset 24 */
        put16(b, 0xc000 | 46);                  /* edge.cdn.test, where the CNAME's data began */
        put_record_head(b, DSH_DNS_TYPE_A, 600, 4);
        put(b, "\x7f\x00\x00\x05", 4);
        put_name(b, "stray.test");
        put_record_head(b, DSH_DNS_TYPE_A, 600, 4);
        put(b, "\x7f\x00\x00\x06", 4);
        if (extra) {
                put_name(b, "other.test");
                put_record_head(b, DSH_DNS_TYPE_A, 600, 4);
                put(b, extra, 4);
        }
}

static void test_dns_answer_scan_follows_the_chain(void **state)
{
        static bytes answer;
        static dsh_dns_answer scanned;
        uint8_t query[512];
        size_t length = dsh_dns_query_build("allowed.dsh.test", DSH_DNS_TYPE_A, 42, query, sizeof(query));

        (void) state;
        assert_int_equal(dsh_dns_query_read(query, length, &question), DSH_DNS_QUERY_OK);
        make_answer(&answer, 42, NULL);
        assert_int_equal(dsh_dns_answer_scan(answer.data, answer.length, &question, NULL, 0, &scanned),
                         DSH_DNS_ANSWER_OK);
        assert_int_equal(scanned.name_count, 2);
        assert_string_equal(scanned.names[0], "allowed.dsh.test");
        assert_string_equal(scanned.names[1], "edge.cdn.test");
        /* The stray record's owner is on no chain: its address is given out for no name. */
        assert_int_equal(scanned.address_count, 1);
        assert_int_equal(scanned.addresses[0].family, AF_INET);
        assert_memory_equal(scanned.addresses[0].bytes, "\x7f\x00\x00\x05", 4);
        assert_int_equal(scanned.addresses[0].ttl, 600);
        assert_string_equal(scanned.metadata_address, "");
        /* Every prefix: malformed or not ours, never a partial OK. */
        for (size_t prefix = 0; prefix < answer.length; prefix++)
                assert_int_not_equal(dsh_dns_answer_scan(answer.data, prefix, &question, NULL, 0, &scanned),
                                     DSH_DNS_ANSWER_OK);
        /* Another id, another question: not the answer to this query. */
        make_answer(&answer, 43, NULL);
        assert_int_equal(dsh_dns_answer_scan(answer.data, answer.length, &question, NULL, 0, &scanned),
                         DSH_DNS_ANSWER_NOT_OURS);
        length = dsh_dns_query_build("allowed.dsh.test", DSH_DNS_TYPE_AAAA, 42, query, sizeof(query));
        assert_int_equal(dsh_dns_query_read(query, length, &question), DSH_DNS_QUERY_OK);
        make_answer(&answer, 42, NULL);
        assert_int_equal(dsh_dns_answer_scan(answer.data, answer.length, &question, NULL, 0, &scanned),
                         DSH_DNS_ANSWER_NOT_OURS);
}

static void test_dns_answer_scan_finds_metadata(void **state)
{
        static bytes answer;
        static dsh_dns_answer scanned;
        uint8_t query[512];
        size_t length = dsh_dns_query_build("allowed.dsh.test", DSH_DNS_TYPE_A, 42, query, sizeof(query));
        dsh_host_pattern literal;

        (void) state;
        assert_int_equal(dsh_dns_query_read(query, length, &question), DSH_DNS_QUERY_OK);
        /* Even in the additional section, even for another name. */
        make_answer(&answer, 42, (const uint8_t *) "\xa9\xfe\xa9\xfe");
        assert_int_equal(dsh_dns_answer_scan(answer.data, answer.length, &question, NULL, 0, &scanned),
                         DSH_DNS_ANSWER_OK);
        assert_string_equal(scanned.metadata_address, "169.254.169.254");
        /* Unless an entry names it. */
        assert_int_equal(dsh_host_pattern_parse("169.254.169.254", &literal, NULL), 0);
        assert_int_equal(dsh_dns_answer_scan(answer.data, answer.length, &question, &literal, 1, &scanned),
                         DSH_DNS_ANSWER_OK);
        assert_string_equal(scanned.metadata_address, "");
}

static void test_dns_answer_scan_refuses_pointer_tricks(void **state)
{
        static bytes answer;
        static dsh_dns_answer scanned;
        uint8_t query[512];
        size_t length = dsh_dns_query_build("allowed.dsh.test", DSH_DNS_TYPE_A, 42, query, sizeof(query));

        (void) state;
        assert_int_equal(dsh_dns_query_read(query, length, &question), DSH_DNS_QUERY_OK);
        /* A record owner that points at itself: a loop. */
        answer.length = 0;
        put_header(&answer, 42, 0x8180, 1, 1, 0, 0);
        put_name(&answer, "allowed.dsh.test");
        put16(&answer, 1);
        put16(&answer, 1);
        put16(&answer, 0xc000 | (unsigned) answer.length);
        put_record_head(&answer, DSH_DNS_TYPE_A, 60, 4);
        put(&answer, "\x7f\x00\x00\x05", 4);
        assert_int_equal(dsh_dns_answer_scan(answer.data, answer.length, &question, NULL, 0, &scanned),
                         DSH_DNS_ANSWER_MALFORMED);
        /* A pointer forwards, past itself. */
        answer.data[34] = 0xc0;
        answer.data[35] = 40;
        assert_int_equal(dsh_dns_answer_scan(answer.data, answer.length, &question, NULL, 0, &scanned),
                         DSH_DNS_ANSWER_MALFORMED);
        /* RDATA longer than the message. */
        answer.data[35] = 12;
        answer.data[44] = 0x40;
        assert_int_equal(dsh_dns_answer_scan(answer.data, answer.length, &question, NULL, 0, &scanned),
                         DSH_DNS_ANSWER_MALFORMED);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_tls_hello_names_its_host),
                cmocka_unit_test(test_tls_hello_without_name),
                cmocka_unit_test(test_tls_hello_prefixes_are_incomplete),
                cmocka_unit_test(test_tls_hello_refuses_what_servers_could_read_otherwise),
                cmocka_unit_test(test_http_connect),
                cmocka_unit_test(test_http_absolute_uri_to_origin_form),
                cmocka_unit_test(test_http_refuses_ambiguous_heads),
                cmocka_unit_test(test_http_origin_form_names_its_host),
                cmocka_unit_test(test_http_head_is_bounded),
                cmocka_unit_test(test_dns_query_read),
                cmocka_unit_test(test_dns_reply_refusal),
                cmocka_unit_test(test_dns_answer_scan_follows_the_chain),
                cmocka_unit_test(test_dns_answer_scan_finds_metadata),
                cmocka_unit_test(test_dns_answer_scan_refuses_pointer_tricks),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
