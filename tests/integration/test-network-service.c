/* SPDX-License-Identifier: MIT */
/*
 * The call's network service alone (src/network/), driven as the command
 * and the supervisor would drive it, against real servers on loopback
 * (network-fixture.py: a DNS server that logs every query it is asked, an
 * HTTP server and a TLS server that echo what they were sent) and real
 * clients (curl through the proxy; the ClientHello of Python's ssl module).
 * Each refusal is checked by its record and, for DNS, by the upstream's
 * log: a denied name must never reach it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "network/dns-answer.h"
#include "network/network-service.h"
#include "test-support.h"

static const char allowed_name[] = "allowed.dsh.test";

typedef struct fixture {
        char *directory;
        char *query_log;
        char *cert;
        pid_t pid;
        int stdin_fd;
        unsigned short dns_port, http_port, tls_port;
        char upstream[32];
        dsh_network_refusals refusals;
        dsh_network_service *service;
        const dsh_network_gate *gate;
        bool inherited[1024];           /* descriptors open before the test made any */
} fixture;

static fixture fx;

/* ------------------------------------------------------------- helpers -- */

static struct sockaddr_in loopback(unsigned short port)
{
        struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons(port) };

        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return address;
}

static struct sockaddr_in inet_address(const char *text, unsigned short port)
{
        struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons(port) };

        assert_int_equal(inet_pton(AF_INET, text, &address.sin_addr), 1);
        return address;
}

/* A socket whose reads give up after 10 s: a broken service fails the test instead of hanging it. */
static int guarded_socket(int type)
{
        struct timeval guard = { 10, 0 };
        int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &guard, sizeof(guard));
        return fd;
}

static dsh_network_route route_of(int type, struct sockaddr_in destination)
{
        dsh_network_route route;

        fx.gate->route(fx.gate->data, type, (struct sockaddr *) &destination, sizeof(destination), &route);
        return route;
}

static bool has_record(dsh_network_op op, const char *host, unsigned short port, dsh_network_rule rule)
{
        bool found = false;

        pthread_mutex_lock(&fx.refusals.lock);
        for (size_t i = 0; i < fx.refusals.count && !found; i++) {
                const dsh_network_refusal *r = &fx.refusals.items[i];
                found = r->op == op && strcmp(r->host, host) == 0 && r->port == port && r->rule == rule;
        }
        pthread_mutex_unlock(&fx.refusals.lock);
        return found;
}

static void expect_record(dsh_network_op op, const char *host, unsigned short port, dsh_network_rule rule)
{
        if (!has_record(op, host, port, rule))
                fail_msg("no record {%s, %s, %u, %s}", dsh_network_op_name(op), host, port,
                         dsh_network_rule_name(rule));
}

/* Reads until the peer closes (or the guard passes); returns what came, NUL-terminated. */
static char *read_all(int fd, ssize_t *length_out)
{
        size_t size = 65536, length = 0;
        char *text = malloc(size + 1);
        ssize_t got;

        assert_non_null(text);
        while (length < size && (got = read(fd, text + length, size - length)) > 0)
                length += (size_t) got;
        text[length] = '\0';
        if (length_out)
                *length_out = (ssize_t) length;
        return text;
}

static void send_all(int fd, const void *data, size_t length)
{
        assert_int_equal(send(fd, data, length, MSG_NOSIGNAL), (ssize_t) length);
}

/* ------------------------------------------------------------ fixtures -- */

static void start_fixture(void)
{
        char *script = test_path_join(getenv("DSH_SOURCE_ROOT"), "tests/integration/network-fixture.py");
        char *key = test_path_join(fx.directory, "key.pem");
        char san[] = "subjectAltName=DNS:allowed.dsh.test,DNS:alias.dsh.test,DNS:denied.dsh.test";
        const char *openssl[] = { "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                                  "-subj", "/CN=allowed.dsh.test", "-addext", san, "-keyout", key, "-out",
                                  fx.cert, NULL };
        test_process_result made = { 0 };
        int in[2], out[2];
        char line[128] = "";
        FILE *ready;

        test_run_bounded(openssl, NULL, 60, &made);
        assert_int_equal(made.exit_code, 0);
        test_process_result_clear(&made);
        assert_int_equal(pipe2(in, O_CLOEXEC), 0);
        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        fx.pid = fork();
        assert_true(fx.pid >= 0);
        if (fx.pid == 0) {
                dup2(in[0], 0);
                dup2(out[1], 1);
                execlp("python3", "python3", script, fx.cert, key, fx.query_log, (char *) NULL);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        fx.stdin_fd = in[1];
        ready = fdopen(out[0], "r");
        assert_non_null(ready);
        assert_non_null(fgets(line, sizeof(line), ready));
        fclose(ready);
        assert_int_equal(sscanf(line, "ready %hu %hu %hu", &fx.dns_port, &fx.http_port, &fx.tls_port), 3);
        snprintf(fx.upstream, sizeof(fx.upstream), "127.0.0.1:%u", fx.dns_port);
        free(script);
        free(key);
}

static int start_service(const char *const *hosts)
{
        dsh_network_policy network = { .mode = DSH_NETWORK_ALLOW_LIST, .allow_hosts = (char **) hosts,
                                       .dns_upstream = fx.upstream };
        char *reason = NULL;
        int result = dsh_network_service_start(&network, &fx.refusals, &fx.service, &reason);

        if (result != 0)
                fail_msg("the service did not start: %s", reason);
        fx.gate = dsh_network_service_gate(fx.service);
        return 0;
}

static int setup(void **state)
{
        static const char *const hosts[] = { "allowed.dsh.test", "alias.dsh.test", "meta.dsh.test",
                                             "127.0.0.2", NULL };

        (void) state;
        signal(SIGPIPE, SIG_IGN);
        for (int fd = 0; fd < 1024; fd++)
                fx.inherited[fd] = fcntl(fd, F_GETFD) >= 0;
        fx.directory = test_make_directory(NULL);
        fx.query_log = test_path_join(fx.directory, "queries.log");
        fx.cert = test_path_join(fx.directory, "cert.pem");
        test_write_file(fx.query_log, "");
        start_fixture();
        assert_int_equal(dsh_network_refusals_init(&fx.refusals), 0);
        return start_service(hosts);
}

static int teardown(void **state)
{
        (void) state;
        dsh_network_service_stop(fx.service);
        dsh_network_refusals_destroy(&fx.refusals);
        close(fx.stdin_fd);
        waitpid(fx.pid, NULL, 0);
        test_remove_tree(fx.directory);
        free(fx.query_log);
        free(fx.cert);
        return 0;
}

/* ----------------------------------------------------------------- DNS -- */

/* Asks `name` as the command would ask any resolver (port 53, sent where the gate routes it); returns the reply's length. */
static size_t dns_ask(int type, const char *name, uint16_t id, uint8_t *reply, size_t size)
{
        dsh_network_route route = route_of(type, inet_address("192.0.2.53", 53));
        uint8_t query[512];
        size_t length = dsh_dns_query_build(name, DSH_DNS_TYPE_A, id, query, sizeof(query));
        int fd = guarded_socket(type);
        ssize_t got;

        assert_int_equal(route.verdict, DSH_NETWORK_REDIRECT);
        assert_false(route.attach);
        assert_int_equal(connect(fd, (struct sockaddr *) &route.address, route.length), 0);
        if (type == SOCK_STREAM) {
                uint8_t prefix[2] = { (uint8_t) (length >> 8), (uint8_t) length };
                send_all(fd, prefix, 2);
                send_all(fd, query, length);
                assert_int_equal(recv(fd, prefix, 2, MSG_WAITALL), 2);
                size_t expected = (size_t) prefix[0] << 8 | prefix[1];
                assert_true(expected <= size);
                got = recv(fd, reply, expected, MSG_WAITALL);
        } else {
                send_all(fd, query, length);
                got = recv(fd, reply, size, 0);
        }
        close(fd);
        assert_true(got >= 12);
        assert_memory_equal(reply, query, 2);
        return (size_t) got;
}

static bool upstream_was_asked(const char *name)
{
        char *log = test_read_file(fx.query_log);
        char *lines = NULL, line[300];
        bool asked;

        assert_non_null(log);
        assert_true(asprintf(&lines, "\n%s", log) > 0);
        snprintf(line, sizeof(line), "\n%s\n", name);
        asked = strstr(lines, line) != NULL;
        free(lines);
        free(log);
        return asked;
}

static void test_dns_allowed_name_is_answered(void **state)
{
        uint8_t reply[4096];
        size_t length;

        (void) state;
        for (int type = SOCK_STREAM; type <= SOCK_DGRAM; type++) {
                length = dns_ask(type, allowed_name, (uint16_t) (100 + type), reply, sizeof(reply));
                assert_int_equal(reply[3] & 0x0f, DSH_DNS_RCODE_NOERROR);
                assert_int_equal(reply[7], 1);  /* one answer */
                assert_memory_equal(reply + length - 4, "\x7f\x00\x00\x01", 4);
        }
        assert_true(upstream_was_asked(allowed_name));
}

static void test_dns_denied_name_never_reaches_the_upstream(void **state)
{
        uint8_t reply[4096];

        (void) state;
        /* The name carries the data: it must not leave, over UDP or TCP. */
        dns_ask(SOCK_DGRAM, "c2VjcmV0.denied.dsh.test", 201, reply, sizeof(reply));
        assert_int_equal(reply[3] & 0x0f, DSH_DNS_RCODE_REFUSED);
        dns_ask(SOCK_STREAM, "denied.dsh.test", 202, reply, sizeof(reply));
        assert_int_equal(reply[3] & 0x0f, DSH_DNS_RCODE_REFUSED);
        expect_record(DSH_NETWORK_OP_DNS, "c2vjcmv0.denied.dsh.test", 53, DSH_NETWORK_RULE_HOST_NOT_ALLOWED);
        expect_record(DSH_NETWORK_OP_DNS, "denied.dsh.test", 53, DSH_NETWORK_RULE_HOST_NOT_ALLOWED);
        /* An allowed query after them is answered, so the upstream has logged all it was sent. */
        dns_ask(SOCK_DGRAM, "alias.dsh.test", 203, reply, sizeof(reply));
        assert_true(upstream_was_asked("alias.dsh.test"));
        assert_false(upstream_was_asked("denied.dsh.test"));
        assert_false(upstream_was_asked("c2vjcmv0.denied.dsh.test"));
}

static void test_dns_metadata_answer_is_refused(void **state)
{
        uint8_t reply[4096];

        (void) state;
        dns_ask(SOCK_DGRAM, "meta.dsh.test", 301, reply, sizeof(reply));
        assert_int_equal(reply[3] & 0x0f, DSH_DNS_RCODE_REFUSED);
        assert_int_equal(reply[7], 0);
        expect_record(DSH_NETWORK_OP_DNS, "meta.dsh.test", 53, DSH_NETWORK_RULE_METADATA_ADDRESS);
}

static void test_dns_malformed_query_is_formerr(void **state)
{
        dsh_network_route route = route_of(SOCK_DGRAM, inet_address("192.0.2.53", 53));
        uint8_t query[512], reply[512];
        size_t length = dsh_dns_query_build("allowed.dsh.test", DSH_DNS_TYPE_A, 401, query, sizeof(query));
        int fd = guarded_socket(SOCK_DGRAM);

        (void) state;
        query[5] = 2;                   /* two questions, one given */
        assert_int_equal(connect(fd, (struct sockaddr *) &route.address, route.length), 0);
        send_all(fd, query, length);
        assert_true(recv(fd, reply, sizeof(reply), 0) >= 12);
        close(fd);
        assert_int_equal(reply[3] & 0x0f, DSH_DNS_RCODE_FORMERR);
}

/* glibc's resolver over TCP (RES_OPTIONS=use-vc) sends its A and AAAA queries back to back on one connection. */
static void test_dns_tcp_answers_each_query(void **state)
{
        dsh_network_route route = route_of(SOCK_STREAM, inet_address("192.0.2.53", 53));
        uint8_t queries[1024], reply[4096], prefix[2];
        size_t length = 0;
        int fd = guarded_socket(SOCK_STREAM);
        bool seen[2] = { false, false };

        (void) state;
        for (uint16_t i = 0; i < 2; i++) {
                size_t one = dsh_dns_query_build(allowed_name, i ? DSH_DNS_TYPE_AAAA : DSH_DNS_TYPE_A,
                                                 (uint16_t) (900 + i), queries + length + 2, 500);
                queries[length] = (uint8_t) (one >> 8);
                queries[length + 1] = (uint8_t) one;
                length += 2 + one;
        }
        assert_int_equal(connect(fd, (struct sockaddr *) &route.address, route.length), 0);
        send_all(fd, queries, length);
        for (int i = 0; i < 2; i++) {
                assert_int_equal(recv(fd, prefix, 2, MSG_WAITALL), 2);
                size_t expected = (size_t) prefix[0] << 8 | prefix[1];
                assert_int_equal(recv(fd, reply, expected, MSG_WAITALL), (ssize_t) expected);
                unsigned id = (unsigned) reply[0] << 8 | reply[1];
                assert_true(id == 900 || id == 901);
                assert_int_equal(reply[3] & 0x0f, DSH_DNS_RCODE_NOERROR);
                seen[id - 900] = true;
        }
        close(fd);
        assert_true(seen[0] && seen[1]);
}

/* An upstream that never answers: SERVFAIL once the exchange's 5 s are up, never an answer made up. */
static void test_dns_silent_upstream_is_servfail(void **state)
{
        static const char *const hosts[] = { "allowed.dsh.test", NULL };
        struct sockaddr_in silent = loopback(0);
        socklen_t length = sizeof(silent);
        int silent_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        char upstream[32];
        dsh_network_policy network = { .mode = DSH_NETWORK_ALLOW_LIST, .allow_hosts = (char **) hosts,
                                       .dns_upstream = upstream };
        dsh_network_service *service = NULL;
        dsh_network_route route;
        uint8_t query[512], reply[512];
        char *reason = NULL;
        int fd;

        (void) state;
        assert_int_equal(bind(silent_fd, (struct sockaddr *) &silent, sizeof(silent)), 0);
        assert_int_equal(getsockname(silent_fd, (struct sockaddr *) &silent, &length), 0);
        snprintf(upstream, sizeof(upstream), "127.0.0.1:%u", ntohs(silent.sin_port));
        assert_int_equal(dsh_network_service_start(&network, NULL, &service, &reason), 0);
        struct sockaddr_in any = inet_address("192.0.2.53", 53);
        dsh_network_service_gate(service)->route(dsh_network_service_gate(service)->data, SOCK_DGRAM,
                                                 (struct sockaddr *) &any, sizeof(any), &route);
        fd = guarded_socket(SOCK_DGRAM);
        length = dsh_dns_query_build(allowed_name, DSH_DNS_TYPE_A, 77, query, sizeof(query));
        assert_int_equal(connect(fd, (struct sockaddr *) &route.address, route.length), 0);
        send_all(fd, query, length);
        assert_true(recv(fd, reply, sizeof(reply), 0) >= 12);
        assert_int_equal(reply[3] & 0x0f, DSH_DNS_RCODE_SERVFAIL);
        assert_int_equal(reply[7], 0);
        /* The silent upstream was asked: the query did leave, to it alone. */
        assert_true(recv(silent_fd, reply, sizeof(reply), MSG_DONTWAIT) > 0);
        close(fd);
        close(silent_fd);
        dsh_network_service_stop(service);
}

/* ----------------------------------------------------------------- gate -- */

static void test_gate_routes(void **state)
{
        dsh_network_route route;
        uint8_t reply[4096];

        (void) state;
        /* An address the stub never gave out. */
        route = route_of(SOCK_STREAM, inet_address("198.51.100.7", 443));
        assert_int_equal(route.verdict, DSH_NETWORK_REFUSE);
        assert_int_equal(route.error, EACCES);
        expect_record(DSH_NETWORK_OP_CONNECT, "198.51.100.7", 443, DSH_NETWORK_RULE_ADDRESS_NOT_RESOLVED);
        /* Metadata, by its literal. */
        route = route_of(SOCK_STREAM, inet_address("169.254.169.254", 80));
        assert_int_equal(route.verdict, DSH_NETWORK_REFUSE);
        expect_record(DSH_NETWORK_OP_CONNECT, "169.254.169.254", 80, DSH_NETWORK_RULE_METADATA_ADDRESS);
        /* UDP other than DNS, even to a given-out address. */
        dns_ask(SOCK_DGRAM, allowed_name, 501, reply, sizeof(reply));
        route = route_of(SOCK_DGRAM, loopback(9999));
        assert_int_equal(route.verdict, DSH_NETWORK_REFUSE);
        expect_record(DSH_NETWORK_OP_CONNECT, "127.0.0.1", 9999, DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED);
        /* TCP to an address the stub gave out: to the proxy, attached. */
        route = route_of(SOCK_STREAM, loopback(fx.http_port));
        assert_int_equal(route.verdict, DSH_NETWORK_REDIRECT);
        assert_true(route.attach);
        /* An allowed literal: the proxy too. */
        route = route_of(SOCK_STREAM, inet_address("127.0.0.2", 22));
        assert_int_equal(route.verdict, DSH_NETWORK_REDIRECT);
        assert_true(route.attach);
        /* The proxy itself: direct. */
        const char *url = dsh_network_service_proxy_url(fx.service);
        unsigned short proxy_port = (unsigned short) atoi(strrchr(url, ':') + 1);
        route = route_of(SOCK_STREAM, loopback(proxy_port));
        assert_int_equal(route.verdict, DSH_NETWORK_DIRECT);
}

/* ------------------------------------------------------------- captured -- */

/* What the supervisor does for a REDIRECT with attach: bind on loopback, attach, connect to the proxy. */
static int captured_connect(struct sockaddr_in original)
{
        dsh_network_route route = route_of(SOCK_STREAM, original);
        struct sockaddr_in source = loopback(0);
        socklen_t length = sizeof(source);
        int fd = guarded_socket(SOCK_STREAM);

        assert_int_equal(route.verdict, DSH_NETWORK_REDIRECT);
        assert_true(route.attach);
        assert_int_equal(bind(fd, (struct sockaddr *) &source, sizeof(source)), 0);
        assert_int_equal(getsockname(fd, (struct sockaddr *) &source, &length), 0);
        assert_int_equal(fx.gate->attach(fx.gate->data, (struct sockaddr *) &source, length,
                                         (struct sockaddr *) &original, sizeof(original)), 0);
        assert_int_equal(connect(fd, (struct sockaddr *) &route.address, route.length), 0);
        return fd;
}

/* A real TLS client (Python's ssl) on `fd`, as a proxy-unaware program would speak: its output. */
static char *tls_client_on(int fd, const char *server_name)
{
        static const char script[] =
                "import socket, ssl, sys\n"
                "s = socket.socket(fileno=3)\n"
                "c = ssl.create_default_context(cafile=sys.argv[1])\n"
                "c.check_hostname = False\n"
                "try:\n"
                "    t = c.wrap_socket(s, server_hostname=sys.argv[2])\n"
                "    t.sendall(b'GET /tls HTTP/1.1\\r\\nHost: ' + sys.argv[2].encode() + b'\\r\\n\\r\\n')\n"
                "    sys.stdout.write(t.recv(4096).decode())\n"
                "except (OSError, ssl.SSLError) as e:\n"
                "    sys.stdout.write('failed: ' + type(e).__name__)\n";
        int out[2];
        pid_t pid;
        char *text;

        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                dup2(out[1], 1);
                dup2(fd, 3);
                alarm(30);
                execlp("python3", "python3", "-c", script, fx.cert, server_name, (char *) NULL);
                _exit(127);
        }
        close(out[1]);
        close(fd);
        text = read_all(out[0], NULL);
        close(out[0]);
        waitpid(pid, NULL, 0);
        return text;
}

static void test_captured_http_by_host(void **state)
{
        const char request[] = "GET /plain HTTP/1.1\r\nHost: allowed.dsh.test\r\nConnection: keep-alive\r\n\r\n";
        uint8_t reply[4096];
        int fd;
        char *text;

        (void) state;
        dns_ask(SOCK_DGRAM, allowed_name, 601, reply, sizeof(reply));
        fd = captured_connect(loopback(fx.http_port));
        send_all(fd, request, sizeof(request) - 1);
        text = read_all(fd, NULL);
        close(fd);
        assert_true(test_contains(text, "line=GET /plain HTTP/1.1"));
        assert_true(test_contains(text, "host=allowed.dsh.test\n"));
        free(text);

        /* The same address under a name the list does not hold: closed, recorded, the server never asked. */
        const char denied[] = "GET /denied HTTP/1.1\r\nHost: denied.dsh.test\r\n\r\n";
        fd = captured_connect(loopback(fx.http_port));
        send_all(fd, denied, sizeof(denied) - 1);
        text = read_all(fd, NULL);
        close(fd);
        assert_string_equal(text, "");
        free(text);
        expect_record(DSH_NETWORK_OP_CONNECT, "denied.dsh.test", fx.http_port, DSH_NETWORK_RULE_HOST_NOT_ALLOWED);
}

static void test_captured_tls_by_sni(void **state)
{
        uint8_t reply[4096];
        char *text;

        (void) state;
        dns_ask(SOCK_DGRAM, allowed_name, 701, reply, sizeof(reply));
        text = tls_client_on(captured_connect(loopback(fx.tls_port)), allowed_name);
        assert_true(test_contains(text, "sni=allowed.dsh.test\n"));
        assert_true(test_contains(text, "line=GET /tls HTTP/1.1"));
        free(text);
        /* An SNI naming a denied host on the allowed destination. */
        text = tls_client_on(captured_connect(loopback(fx.tls_port)), "denied.dsh.test");
        assert_true(test_contains(text, "failed"));
        free(text);
        expect_record(DSH_NETWORK_OP_CONNECT, "denied.dsh.test", fx.tls_port, DSH_NETWORK_RULE_HOST_NOT_ALLOWED);
}

/* An IPv6 socket to the IPv4-mapped form of a given-out address: redirected to the proxy's ::1 and let through. */
static void test_captured_over_ipv6(void **state)
{
        struct sockaddr_in6 original = { .sin6_family = AF_INET6, .sin6_port = htons(fx.http_port) };
        struct sockaddr_in6 source = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
        const char request[] = "GET /six HTTP/1.1\r\nHost: allowed.dsh.test\r\n\r\n";
        socklen_t length = sizeof(source);
        dsh_network_route route;
        uint8_t reply[4096];
        int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct timeval guard = { 10, 0 };
        char *text;

        (void) state;
        if (fd < 0 || bind(fd, (struct sockaddr *) &source, sizeof(source)) != 0) {
                printf("# SKIP: no IPv6 loopback on this host\n");
                if (fd >= 0)
                        close(fd);
                skip();
        }
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &guard, sizeof(guard));
        dns_ask(SOCK_DGRAM, allowed_name, 851, reply, sizeof(reply));
        original.sin6_addr.s6_addr[10] = original.sin6_addr.s6_addr[11] = 0xff;
        original.sin6_addr.s6_addr[12] = 127;
        original.sin6_addr.s6_addr[15] = 1;
        fx.gate->route(fx.gate->data, SOCK_STREAM, (struct sockaddr *) &original, sizeof(original), &route);
        assert_int_equal(route.verdict, DSH_NETWORK_REDIRECT);
        assert_true(route.attach);
        assert_int_equal(route.address.ss_family, AF_INET6);
        assert_int_equal(getsockname(fd, (struct sockaddr *) &source, &length), 0);
        assert_int_equal(fx.gate->attach(fx.gate->data, (struct sockaddr *) &source, length,
                                         (struct sockaddr *) &original, sizeof(original)), 0);
        assert_int_equal(connect(fd, (struct sockaddr *) &route.address, route.length), 0);
        send_all(fd, request, sizeof(request) - 1);
        text = read_all(fd, NULL);
        close(fd);
        assert_true(test_contains(text, "line=GET /six HTTP/1.1"));
        free(text);
}

static void test_captured_raw_tcp_is_refused(void **state)
{
        uint8_t reply[4096];
        int fd;
        char *text;

        (void) state;
        dns_ask(SOCK_DGRAM, allowed_name, 801, reply, sizeof(reply));
        fd = captured_connect(loopback(fx.http_port));
        send_all(fd, "SSH-2.0-OpenSSH_9.2\r\n", 21);
        shutdown(fd, SHUT_WR);
        text = read_all(fd, NULL);
        close(fd);
        assert_string_equal(text, "");
        free(text);
        expect_record(DSH_NETWORK_OP_CONNECT, "127.0.0.1", fx.http_port, DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED);
}

/* ---------------------------------------------------------- proxy-aware -- */

static char *curl_through_proxy(const char *url, int *exit_code)
{
        const char *proxy = dsh_network_service_proxy_url(fx.service);
        const char *argv[] = { "curl", "-sS", "--max-time", "20", "--noproxy", "", "-x", proxy, "--cacert",
                               fx.cert, "-w", "\nstatus=%{http_code}\n", url, NULL };
        test_process_result result = { 0 };
        char *text;

        test_run_bounded(argv, NULL, 60, &result);
        *exit_code = result.exit_code;
        text = dsh_steal_pointer(&result.stdout_text);
        test_process_result_clear(&result);
        return text;
}

static void test_proxy_absolute_uri(void **state)
{
        char url[128];
        int code;
        char *text;

        (void) state;
        snprintf(url, sizeof(url), "http://allowed.dsh.test:%u/through/proxy?x=1", fx.http_port);
        text = curl_through_proxy(url, &code);
        assert_int_equal(code, 0);
        /* The server saw the origin form and the allowed host. */
        assert_true(test_contains(text, "line=GET /through/proxy?x=1 HTTP/1.1"));
        assert_true(test_contains(text, "host=allowed.dsh.test:"));
        assert_true(test_contains(text, "status=200"));
        free(text);
        snprintf(url, sizeof(url), "http://denied.dsh.test:%u/", fx.http_port);
        text = curl_through_proxy(url, &code);
        assert_true(test_contains(text, "host-not-allowed"));
        assert_true(test_contains(text, "status=403"));
        free(text);
        expect_record(DSH_NETWORK_OP_HTTP, "denied.dsh.test", fx.http_port, DSH_NETWORK_RULE_HOST_NOT_ALLOWED);
        assert_false(upstream_was_asked("denied.dsh.test"));
}

static void test_proxy_connect(void **state)
{
        char url[128];
        int code;
        char *text;

        (void) state;
        snprintf(url, sizeof(url), "https://allowed.dsh.test:%u/secure", fx.tls_port);
        text = curl_through_proxy(url, &code);
        assert_int_equal(code, 0);
        assert_true(test_contains(text, "sni=allowed.dsh.test\n"));
        assert_true(test_contains(text, "line=GET /secure HTTP/1.1"));
        free(text);
        snprintf(url, sizeof(url), "https://denied.dsh.test:%u/", fx.tls_port);
        text = curl_through_proxy(url, &code);
        assert_int_not_equal(code, 0);
        free(text);
        expect_record(DSH_NETWORK_OP_HTTP, "denied.dsh.test", fx.tls_port, DSH_NETWORK_RULE_HOST_NOT_ALLOWED);
        /* A name resolving to a metadata address. */
        snprintf(url, sizeof(url), "https://meta.dsh.test:%u/", fx.tls_port);
        text = curl_through_proxy(url, &code);
        assert_int_not_equal(code, 0);
        free(text);
        expect_record(DSH_NETWORK_OP_HTTP, "meta.dsh.test", fx.tls_port, DSH_NETWORK_RULE_METADATA_ADDRESS);
}

/* CONNECT by hand: the 200 is read, then `tunnel` is sent; returns what came back after the 200. */
static char *connect_then(const char *authority, const void *tunnel, size_t length)
{
        const char *url = dsh_network_service_proxy_url(fx.service);
        struct sockaddr_in proxy = loopback((unsigned short) atoi(strrchr(url, ':') + 1));
        int fd = guarded_socket(SOCK_STREAM);
        char request[256], established[64] = "";
        int request_length = snprintf(request, sizeof(request), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n",
                                      authority, authority);
        static const char expected[] = "HTTP/1.1 200 Connection established\r\n\r\n";

        assert_int_equal(connect(fd, (struct sockaddr *) &proxy, sizeof(proxy)), 0);
        send_all(fd, request, (size_t) request_length);
        assert_int_equal(recv(fd, established, sizeof(expected) - 1, MSG_WAITALL), (ssize_t) sizeof(expected) - 1);
        assert_string_equal(established, expected);
        send_all(fd, tunnel, length);
        char *text = read_all(fd, NULL);
        close(fd);
        return text;
}

/* The ClientHello Python's ssl module sends for `server_name`, made by python3 itself. */
static uint8_t *python_hello(const char *server_name, size_t *length)
{
        const char *argv[] = { "python3", "-c",
                               "import ssl, sys\n"
                               "i, o = ssl.MemoryBIO(), ssl.MemoryBIO()\n"
                               "s = ssl.create_default_context().wrap_bio(i, o, server_hostname=sys.argv[1])\n"
                               "try:\n    s.do_handshake()\nexcept ssl.SSLWantReadError:\n    pass\n"
                               "sys.stdout.write(o.read().hex())\n",
                               server_name, NULL };
        test_process_result result = { 0 };
        uint8_t *bytes;

        test_run_bounded(argv, NULL, 60, &result);
        assert_int_equal(result.exit_code, 0);
        *length = strlen(result.stdout_text) / 2;
        bytes = malloc(*length);
        assert_non_null(bytes);
        for (size_t i = 0; i < *length; i++)
                assert_int_equal(sscanf(result.stdout_text + 2 * i, "%2hhx", &bytes[i]), 1);
        test_process_result_clear(&result);
        return bytes;
}

static void test_proxy_connect_tunnel_checks(void **state)
{
        char authority[64];
        size_t length;
        uint8_t *hello;
        char *text;

        (void) state;
        snprintf(authority, sizeof(authority), "allowed.dsh.test:%u", fx.tls_port);
        /* A ClientHello naming another host than the one the tunnel was opened for. */
        hello = python_hello("denied.dsh.test", &length);
        text = connect_then(authority, hello, length);
        assert_string_equal(text, "");
        free(text);
        free(hello);
        expect_record(DSH_NETWORK_OP_HTTP, "denied.dsh.test", fx.tls_port, DSH_NETWORK_RULE_SNI_MISMATCH);
        /* A relayed CONNECT: the tunnel carries a second proxy request. */
        static const char relayed[] = "CONNECT denied.dsh.test:443 HTTP/1.1\r\n\r\n";
        text = connect_then(authority, relayed, sizeof(relayed) - 1);
        assert_string_equal(text, "");
        free(text);
        expect_record(DSH_NETWORK_OP_HTTP, "allowed.dsh.test", fx.tls_port, DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED);
        /* The matching hello goes through: the TLS server answers it. */
        hello = python_hello(allowed_name, &length);
        text = connect_then(authority, hello, length);
        assert_true(text[0] == 22);     /* a handshake record: the ServerHello */
        free(text);
        free(hello);
}

static void test_proxy_refuses_what_it_cannot_read(void **state)
{
        const char *url = dsh_network_service_proxy_url(fx.service);
        struct sockaddr_in proxy = loopback((unsigned short) atoi(strrchr(url, ':') + 1));
        static const char origin[] = "GET / HTTP/1.1\r\nHost: allowed.dsh.test\r\n\r\n";
        int fd = guarded_socket(SOCK_STREAM);
        char *text;

        (void) state;
        assert_int_equal(connect(fd, (struct sockaddr *) &proxy, sizeof(proxy)), 0);
        send_all(fd, origin, sizeof(origin) - 1);
        text = read_all(fd, NULL);
        close(fd);
        assert_true(strncmp(text, "HTTP/1.1 400 ", 13) == 0);
        assert_true(test_contains(text, "bad-request"));
        free(text);
        expect_record(DSH_NETWORK_OP_HTTP, "allowed.dsh.test", 80, DSH_NETWORK_RULE_BAD_REQUEST);
}

/*
 * The harness spawns commands while the service runs: none of its
 * descriptors (listeners, the loop's, accepted and outbound connections) may
 * reach a command.  Checked with a proxied connection held open mid-way.
 */
static void test_descriptors_are_close_on_exec(void **state)
{
        char authority[64];
        const char *proxy_url = dsh_network_service_proxy_url(fx.service);
        struct sockaddr_in proxy = loopback((unsigned short) atoi(strrchr(proxy_url, ':') + 1));
        int held = guarded_socket(SOCK_STREAM), checked = 0;
        char request[128], established[64];
        int request_length;

        (void) state;
        snprintf(authority, sizeof(authority), "allowed.dsh.test:%u", fx.tls_port);
        request_length = snprintf(request, sizeof(request), "CONNECT %s HTTP/1.1\r\n\r\n", authority);
        assert_int_equal(connect(held, (struct sockaddr *) &proxy, sizeof(proxy)), 0);
        send_all(held, request, (size_t) request_length);
        assert_true(recv(held, established, 39, MSG_WAITALL) == 39);
        for (int fd = 3; fd < 1024; fd++) {
                int flags = fcntl(fd, F_GETFD);
                if (flags < 0 || fd == held || fx.inherited[fd])
                        continue;
                checked++;
                if (!(flags & FD_CLOEXEC))
                        fail_msg("descriptor %d is not close-on-exec", fd);
        }
        close(held);
        assert_true(checked >= 6);      /* the listeners, the loop's, the upstream of the held tunnel */
}

/* ---------------------------------------------------------- fail closed -- */

static int start_expecting_failure(const char *upstream, const char *expected_reason)
{
        static const char *const hosts[] = { "allowed.dsh.test", NULL };
        dsh_network_policy network = { .mode = DSH_NETWORK_ALLOW_LIST, .allow_hosts = (char **) hosts,
                                       .dns_upstream = (char *) upstream };
        dsh_network_service *service = NULL;
        char *reason = NULL;
        int result = dsh_network_service_start(&network, NULL, &service, &reason);
        bool as_expected = result < 0 && service == NULL && reason && strstr(reason, expected_reason) != NULL;

        if (!as_expected)
                fprintf(stderr, "start: %d, reason: %s (expected: %s)\n", result, reason ? reason : "(none)",
                        expected_reason);
        free(reason);
        dsh_network_service_stop(service);
        return as_expected ? 0 : 1;
}

/* Runs `body` in a child with its own mount or network namespace; 77 from it is a skip. */
static void in_namespace(int flags, int (*body)(void))
{
        pid_t pid = fork();
        int status = 0;

        assert_true(pid >= 0);
        if (pid == 0) {
                if (unshare(flags) != 0)
                        _exit(77);
                _exit(body());
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77) {
                printf("# SKIP: unshare(%#x) is not allowed here: %s\n", flags, "the case needs a namespace");
                skip();
        }
        assert_int_equal(WEXITSTATUS(status), 0);
}

static int without_resolv_conf(void)
{
        char *empty = test_path_join(fx.directory, "resolv.conf");

        test_write_file(empty, "# no nameserver\nsearch dsh.test\n");
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
            mount(empty, "/etc/resolv.conf", NULL, MS_BIND, NULL) != 0)
                return 77;
        return start_expecting_failure(NULL, "no upstream resolver: /etc/resolv.conf names none; set dnsUpstream");
}

/*
 * Out of descriptors at each step of the start in turn: every start either
 * fails with a reason and no service, or starts whole; one of them is a
 * listener that could not be made.
 */
static void test_start_without_descriptors(void **state)
{
        pid_t pid = fork();
        int status = 0;

        (void) state;
        assert_true(pid >= 0);
        if (pid == 0) {
                static const char *const hosts[] = { "allowed.dsh.test", NULL };
                dsh_network_policy network = { .mode = DSH_NETWORK_ALLOW_LIST, .allow_hosts = (char **) hosts,
                                               .dns_upstream = fx.upstream };
                bool listener_failed = false, started = false;
                close_range(3, ~0U, 0);
                for (rlim_t limit = 3; limit < 32 && !started; limit++) {
                        struct rlimit rlimit;
                        getrlimit(RLIMIT_NOFILE, &rlimit);
                        rlimit.rlim_cur = limit;        /* the soft limit only: it can be raised again */
                        dsh_network_service *service = NULL;
                        char *reason = NULL;
                        setrlimit(RLIMIT_NOFILE, &rlimit);
                        int result = dsh_network_service_start(&network, NULL, &service, &reason);
                        if (result == 0 && service != NULL) {
                                started = true;
                        } else {
                                if (service != NULL || reason == NULL)
                                        _exit(2);
                                listener_failed |= strstr(reason, "cannot listen on 127.0.0.1") != NULL;
                        }
                        free(reason);
                        dsh_network_service_stop(service);
                }
                _exit(started && listener_failed ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_start_fails_closed(void **state)
{
        dsh_network_policy off = { .mode = DSH_NETWORK_OFF };
        dsh_network_service *service = NULL;
        char *reason = NULL;

        (void) state;
        assert_int_equal(start_expecting_failure("resolver.example:53", "is no IP:PORT"), 0);
        assert_int_equal(start_expecting_failure("127.0.0.1:0", "is no IP:PORT"), 0);
        assert_true(dsh_network_service_start(&off, NULL, &service, &reason) < 0);
        assert_null(service);
        assert_non_null(reason);
        free(reason);
        in_namespace(CLONE_NEWNS, without_resolv_conf);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_dns_allowed_name_is_answered),
                cmocka_unit_test(test_dns_denied_name_never_reaches_the_upstream),
                cmocka_unit_test(test_dns_metadata_answer_is_refused),
                cmocka_unit_test(test_dns_malformed_query_is_formerr),
                cmocka_unit_test(test_gate_routes),
                cmocka_unit_test(test_captured_http_by_host),
                cmocka_unit_test(test_captured_tls_by_sni),
                cmocka_unit_test(test_captured_over_ipv6),
                cmocka_unit_test(test_captured_raw_tcp_is_refused),
                cmocka_unit_test(test_dns_tcp_answers_each_query),
                cmocka_unit_test(test_dns_silent_upstream_is_servfail),
                cmocka_unit_test(test_proxy_absolute_uri),
                cmocka_unit_test(test_proxy_connect),
                cmocka_unit_test(test_proxy_connect_tunnel_checks),
                cmocka_unit_test(test_proxy_refuses_what_it_cannot_read),
                cmocka_unit_test(test_descriptors_are_close_on_exec),
                cmocka_unit_test(test_start_fails_closed),
                cmocka_unit_test(test_start_without_descriptors),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
