/* SPDX-License-Identifier: MIT */
/*
 * The DNS stub (dns-stub.h).  A query is decided before anything leaves:
 * its form (dsh_dns_query_read()), then its name against the allow-list;
 * only then is it forwarded.  A UDP answer larger than a client without
 * EDNS can take is replaced by a truncated reply, so the client asks again
 * over TCP (where the stub answers in full).  Bounds: DSH_DNS_STUB_PENDING
 * queries in flight, DSH_DNS_STUB_TCP_CLIENTS TCP connections, each idle
 * at most 10 s.
 */
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include "network/dns-stub.h"
#include "network/dns-upstream.h"

enum {
        DSH_DNS_STUB_PENDING = 256,
        DSH_DNS_STUB_TCP_CLIENTS = 64,
        TCP_IDLE_SECONDS = 10,
        UDP_ANSWER_MAX = 1232,          /* what every EDNS client takes; past it, TC */
        UDP_ANSWER_PLAIN = 512,         /* what a client without EDNS takes */
        TCP_OUTPUT_MAX = 256 * 1024,
};

typedef struct stub_client stub_client;

typedef struct stub_query {
        LIST_ENTRY(stub_query) link;
        dsh_dns_stub *stub;
        stub_client *tcp;               /* NULL: over UDP, to `peer` from `udp_fd` */
        int udp_fd;
        struct sockaddr_storage peer;
        socklen_t peer_length;
        bool edns;
        dsh_dns_question question;
        uint8_t *query;
        size_t query_length;
        dsh_dns_exchange *exchange;
} stub_query;

struct stub_client {
        LIST_ENTRY(stub_client) link;
        dsh_dns_stub *stub;
        struct bufferevent *connection;
        size_t pending;
};

struct dsh_dns_stub {
        dsh_network_context *context;
        int udp_fds[2];
        struct event *udp_events[2];
        struct evconnlistener *listeners[2];
        LIST_HEAD(, stub_query) queries;
        LIST_HEAD(, stub_client) clients;
        size_t query_count;
        size_t client_count;
};

static void client_free(stub_client *client);

static void query_free(stub_query *query)
{
        LIST_REMOVE(query, link);
        query->stub->query_count--;
        if (query->tcp)
                query->tcp->pending--;
        dsh_dns_exchange_cancel(query->exchange);
        free(query->query);
        free(query);
}

static void send_reply(stub_query *query, const uint8_t *reply, size_t length)
{
        if (query->tcp) {
                uint8_t prefix[2] = { (uint8_t) (length >> 8), (uint8_t) length };
                bufferevent_write(query->tcp->connection, prefix, 2);
                bufferevent_write(query->tcp->connection, reply, length);
                return;
        }
        (void) sendto(query->udp_fd, reply, length, MSG_DONTWAIT, (struct sockaddr *) &query->peer,
                      query->peer_length);
}

static void send_refusal(stub_query *query, uint8_t rcode, bool truncated)
{
        uint8_t reply[512];
        size_t length = dsh_dns_reply_refusal(query->query, query->query_length,
                                              query->question.end ? &query->question : NULL, rcode, reply,
                                              sizeof(reply));

        if (length == 0)
                return;
        if (truncated)
                reply[2] |= 0x02;
        send_reply(query, reply, length);
}

static void relay_answer(stub_query *query, const uint8_t *answer, size_t length)
{
        dsh_network_context *context = query->stub->context;
        dsh_dns_answer scanned;

        if (dsh_dns_answer_scan(answer, length, &query->question, context->patterns, context->pattern_count,
                                &scanned) != DSH_DNS_ANSWER_OK) {
                send_refusal(query, DSH_DNS_RCODE_SERVFAIL, false);
                return;
        }
        if (scanned.metadata_address[0] != '\0') {
                dsh_network_record(context, DSH_NETWORK_SOURCE_PROXY, DSH_NETWORK_OP_DNS, query->question.name, 53,
                                   DSH_NETWORK_RULE_METADATA_ADDRESS);
                send_refusal(query, DSH_DNS_RCODE_REFUSED, false);
                return;
        }
        for (size_t i = 0; i < scanned.address_count; i++)
                for (size_t n = 0; n < scanned.name_count; n++)
                        dsh_address_book_add(context->book, scanned.names[n], scanned.addresses[i].family,
                                             scanned.addresses[i].bytes, scanned.addresses[i].ttl);
        if (!query->tcp && length > (query->edns ? UDP_ANSWER_MAX : UDP_ANSWER_PLAIN)) {
                send_refusal(query, DSH_DNS_RCODE_NOERROR, true);
                return;
        }
        send_reply(query, answer, length);
}

static void query_answered(void *data, const uint8_t *answer, size_t length)
{
        stub_query *query = data;

        query->exchange = NULL;         /* the exchange frees itself once this returns */
        if (answer == NULL)
                send_refusal(query, DSH_DNS_RCODE_SERVFAIL, false);
        else
                relay_answer(query, answer, length);
        query_free(query);
}

/* Decides one query: answered here (FORMERR, REFUSED) or forwarded; the query is freed when answered. */
static void query_decide(stub_query *query)
{
        dsh_network_context *context = query->stub->context;

        switch (dsh_dns_query_read(query->query, query->query_length, &query->question)) {
        case DSH_DNS_QUERY_DROP:
                query_free(query);
                return;
        case DSH_DNS_QUERY_MALFORMED:
                query->question.end = 0;
                dsh_network_record(context, DSH_NETWORK_SOURCE_PROXY, DSH_NETWORK_OP_DNS, "", 53,
                                   DSH_NETWORK_RULE_BAD_REQUEST);
                send_refusal(query, DSH_DNS_RCODE_FORMERR, false);
                query_free(query);
                return;
        case DSH_DNS_QUERY_OK:
                break;
        }
        query->edns = query->query[11] != 0;    /* the one additional record a query may carry: OPT */
        if (!dsh_host_patterns_allow(context->patterns, context->pattern_count, query->question.name, 0)) {
                dsh_network_record(context, DSH_NETWORK_SOURCE_PROXY, DSH_NETWORK_OP_DNS, query->question.name, 53,
                                   DSH_NETWORK_RULE_HOST_NOT_ALLOWED);
                send_refusal(query, DSH_DNS_RCODE_REFUSED, false);
                query_free(query);
                return;
        }
        query->exchange = dsh_dns_exchange_start(context, query->query, query->query_length, query_answered, query);
        if (query->exchange == NULL) {
                send_refusal(query, DSH_DNS_RCODE_SERVFAIL, false);
                query_free(query);
        }
}

static stub_query *query_new(dsh_dns_stub *stub, const uint8_t *bytes, size_t length)
{
        stub_query *query;

        if (stub->query_count >= DSH_DNS_STUB_PENDING)
                return NULL;
        query = calloc(1, sizeof(*query));
        if (query == NULL)
                return NULL;
        query->query = malloc(length ? length : 1);
        if (query->query == NULL) {
                free(query);
                return NULL;
        }
        memcpy(query->query, bytes, length);
        query->query_length = length;
        query->stub = stub;
        query->udp_fd = -1;
        LIST_INSERT_HEAD(&stub->queries, query, link);
        stub->query_count++;
        return query;
}

static void udp_readable(evutil_socket_t fd, short what, void *data)
{
        dsh_dns_stub *stub = data;
        uint8_t message[DSH_DNS_MESSAGE_MAX];
        struct sockaddr_storage peer;
        socklen_t peer_length = sizeof(peer);
        ssize_t length;
        stub_query *query;

        (void) what;
        length = recvfrom(fd, message, sizeof(message), MSG_DONTWAIT, (struct sockaddr *) &peer, &peer_length);
        if (length < 0)
                return;
        query = query_new(stub, message, (size_t) length);
        if (query == NULL)
                return;         /* too many in flight: dropped, the client asks again */
        query->udp_fd = fd;
        query->peer = peer;
        query->peer_length = peer_length;
        query_decide(query);
}

static void client_readable(struct bufferevent *connection, void *data)
{
        stub_client *client = data;
        struct evbuffer *input = bufferevent_get_input(connection);
        uint8_t prefix[2];

        while (evbuffer_copyout(input, prefix, 2) == 2) {
                /* A client that does not read its answers stops being read: its answers are bounded. */
                if (evbuffer_get_length(bufferevent_get_output(connection)) >= TCP_OUTPUT_MAX) {
                        bufferevent_disable(connection, EV_READ);
                        return;
                }
                size_t length = (size_t) prefix[0] << 8 | prefix[1];
                if (evbuffer_get_length(input) < 2 + length)
                        return;
                const uint8_t *message = evbuffer_pullup(input, (ssize_t) (2 + length));
                stub_query *query = message ? query_new(client->stub, message + 2, length) : NULL;
                evbuffer_drain(input, 2 + length);
                if (query == NULL) {
                        client_free(client);
                        return;
                }
                query->tcp = client;
                client->pending++;
                query_decide(query);
        }
}

static void client_writable(struct bufferevent *connection, void *data)
{
        if (!(bufferevent_get_enabled(connection) & EV_READ)) {
                bufferevent_enable(connection, EV_READ);
                client_readable(connection, data);
        }
}

static void client_event(struct bufferevent *connection, short what, void *data)
{
        (void) connection;
        if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
                client_free(data);
}

static void client_free(stub_client *client)
{
        stub_query *query, *next;

        for (query = LIST_FIRST(&client->stub->queries); query; query = next) {
                next = LIST_NEXT(query, link);
                if (query->tcp == client)
                        query_free(query);
        }
        LIST_REMOVE(client, link);
        client->stub->client_count--;
        bufferevent_free(client->connection);
        free(client);
}

static void client_accepted(struct evconnlistener *listener, evutil_socket_t fd, struct sockaddr *peer,
                            int peer_length, void *data)
{
        const struct timeval idle = { TCP_IDLE_SECONDS, 0 };
        dsh_dns_stub *stub = data;
        stub_client *client;

        (void) listener;
        (void) peer;
        (void) peer_length;
        client = stub->client_count < DSH_DNS_STUB_TCP_CLIENTS ? calloc(1, sizeof(*client)) : NULL;
        if (client == NULL) {
                close(fd);
                return;
        }
        client->stub = stub;
        client->connection = bufferevent_socket_new(stub->context->base, fd, BEV_OPT_CLOSE_ON_FREE);
        if (client->connection == NULL) {
                close(fd);
                free(client);
                return;
        }
        LIST_INSERT_HEAD(&stub->clients, client, link);
        stub->client_count++;
        bufferevent_setcb(client->connection, client_readable, client_writable, client_event, client);
        bufferevent_set_timeouts(client->connection, &idle, &idle);
        bufferevent_enable(client->connection, EV_READ | EV_WRITE);
}

int dsh_dns_stub_start(dsh_network_context *context, dsh_dns_stub **stub_out, char **reason)
{
        dsh_dns_stub *stub = calloc(1, sizeof(*stub));
        int tcp_fds[2] = { -1, -1 };
        int result;

        if (stub == NULL)
                return -ENOMEM;
        stub->context = context;
        stub->udp_fds[0] = stub->udp_fds[1] = -1;
        LIST_INIT(&stub->queries);
        LIST_INIT(&stub->clients);
        result = dsh_network_listen(SOCK_DGRAM, "the DNS stub (UDP)", &context->stub_udp, stub->udp_fds, reason);
        if (result == 0)
                result = dsh_network_listen(SOCK_STREAM, "the DNS stub (TCP)", &context->stub_tcp, tcp_fds, reason);
        for (int i = 0; i < 2 && result == 0; i++) {
                if (stub->udp_fds[i] >= 0) {
                        stub->udp_events[i] = event_new(context->base, stub->udp_fds[i], EV_READ | EV_PERSIST,
                                                        udp_readable, stub);
                        if (stub->udp_events[i] == NULL || event_add(stub->udp_events[i], NULL) != 0)
                                result = -ENOMEM;
                }
                if (tcp_fds[i] >= 0 && result == 0) {
                        stub->listeners[i] = evconnlistener_new(context->base, client_accepted, stub,
                                                                LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, tcp_fds[i]);
                        if (stub->listeners[i] == NULL)
                                result = -ENOMEM;
                        else
                                tcp_fds[i] = -1;
                }
        }
        for (int i = 0; i < 2; i++)
                if (tcp_fds[i] >= 0)
                        close(tcp_fds[i]);
        if (result != 0) {
                if (*reason == NULL)
                        *reason = strdup("the DNS stub could not start: out of memory");
                dsh_dns_stub_free(stub);
                return result;
        }
        *stub_out = stub;
        return 0;
}

void dsh_dns_stub_free(dsh_dns_stub *stub)
{
        if (stub == NULL)
                return;
        while (!LIST_EMPTY(&stub->clients))
                client_free(LIST_FIRST(&stub->clients));
        while (!LIST_EMPTY(&stub->queries))
                query_free(LIST_FIRST(&stub->queries));
        for (int i = 0; i < 2; i++) {
                if (stub->udp_events[i])
                        event_free(stub->udp_events[i]);
                if (stub->udp_fds[i] >= 0)
                        close(stub->udp_fds[i]);
                if (stub->listeners[i])
                        evconnlistener_free(stub->listeners[i]);
        }
        free(stub);
}
