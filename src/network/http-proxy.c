/* SPDX-License-Identifier: MIT */
/*
 * The proxy (http-proxy.h).  Nothing the client sends reaches a server
 * before it was decided: the head or the hello is held in the client's
 * input buffer (bounded by its read watermark) until it is complete and
 * checked, the server is connected only then, and only then are the held
 * bytes passed on.  Each connection is a small state machine (stage); the
 * relay moves bytes between the two buffered connections with
 * back-pressure (a side stops reading while the other's output holds
 * RELAY_BUFFERED bytes) and passes each side's end of stream on.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include "network/dns-upstream.h"
#include "network/http-head.h"
#include "network/http-proxy.h"
#include "network/tls-hello.h"

enum {
        FIRST_BYTES_SECONDS = 10,       /* a head, a hello: this long idle at most */
        CONNECT_SECONDS = 10,
        RELAY_BUFFERED = 256 * 1024,
        PROXY_CONNECTIONS = 512,
};

typedef enum stage {
        STAGE_HEAD,                     /* proxy-aware: reading the request head */
        STAGE_CAPTURED,                 /* captured: reading a hello or a head */
        STAGE_RESOLVING,
        STAGE_CONNECTING,
        STAGE_TUNNEL_HELLO,             /* after CONNECT's 200: reading the tunnel's ClientHello */
        STAGE_RELAY,
        STAGE_CLOSING,                  /* a refusal written: closed once it is sent */
} stage;

typedef enum forward {
        FORWARD_RAW,                    /* the held bytes as they are (a hello, nothing) */
        FORWARD_HEAD,                   /* the head rewritten, then its body */
        FORWARD_TUNNEL,                 /* CONNECT: 200 to the client first */
} forward;

typedef struct connection {
        LIST_ENTRY(connection) link;
        dsh_http_proxy *proxy;
        struct bufferevent *client;
        struct bufferevent *server;
        stage stage;
        forward forward;
        bool captured;
        struct sockaddr_storage destination;
        socklen_t destination_length;
        dsh_http_head head;
        char host[DSH_HTTP_HOST_SIZE];
        unsigned short port;
        bool host_is_literal;
        bool body_limited;
        unsigned long long body_left;
        bool client_eof;
        bool server_eof;
        dsh_dns_resolution *resolution;
} connection;

struct dsh_http_proxy {
        dsh_network_context *context;
        struct evconnlistener *listeners[2];
        LIST_HEAD(, connection) connections;
        size_t count;
};

static void connection_free(connection *c)
{
        LIST_REMOVE(c, link);
        c->proxy->count--;
        dsh_dns_resolution_cancel(c->resolution);
        if (c->server)
                bufferevent_free(c->server);
        bufferevent_free(c->client);
        free(c);
}

static dsh_network_context *context_of(const connection *c)
{
        return c->proxy->context;
}

/* A captured connection refused: recorded, closed at once (the command sees its connection reset). */
static void refuse_captured(connection *c, const char *host, dsh_network_rule rule)
{
        char text[INET6_ADDRSTRLEN];
        unsigned short port;

        dsh_network_address_text((struct sockaddr *) &c->destination, text, &port);
        dsh_network_record(context_of(c), DSH_NETWORK_SOURCE_PROXY, DSH_NETWORK_OP_CONNECT, host ? host : text, port,
                           rule);
        connection_free(c);
}

/* A proxy request refused: recorded, answered `status` with a one-line body naming the rule, then closed. */
static void refuse_request(connection *c, int status, const char *host, unsigned short port, dsh_network_rule rule,
                           bool record)
{
        const char *reason = status == 403 ? "Forbidden" : status == 400 ? "Bad Request" : "Bad Gateway";
        char body[400], response[600];
        int body_length, length;

        if (record)
                dsh_network_record(context_of(c), DSH_NETWORK_SOURCE_PROXY, DSH_NETWORK_OP_HTTP, host, port, rule);
        body_length = snprintf(body, sizeof(body), "dsh-sandbox: %s:%u: %s\n", host[0] ? host : "-", port,
                               record ? dsh_network_rule_name(rule) : "the host could not be reached");
        length = snprintf(response, sizeof(response),
                          "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                          "Connection: close\r\n\r\n%s", status, reason, body_length, body);
        c->stage = STAGE_CLOSING;
        bufferevent_disable(c->client, EV_READ);
        if (c->server) {
                bufferevent_free(c->server);
                c->server = NULL;
        }
        bufferevent_write(c->client, response, (size_t) length);
}

static void relay_readable(struct bufferevent *from, void *data);
static void relay_writable(struct bufferevent *to, void *data);
static void relay_event(struct bufferevent *side, short what, void *data);

static struct bufferevent *other_side(const connection *c, const struct bufferevent *side)
{
        return side == c->client ? c->server : c->client;
}

/* Moves what `from` holds to the other side (a forwarded request's client: its body only). */
static void relay_move(connection *c, struct bufferevent *from)
{
        struct bufferevent *to = other_side(c, from);
        struct evbuffer *input = bufferevent_get_input(from);
        size_t available = evbuffer_get_length(input);

        if (from == c->client && c->body_limited) {
                size_t passed = available < c->body_left ? available : (size_t) c->body_left;
                evbuffer_remove_buffer(input, bufferevent_get_output(to), passed);
                c->body_left -= passed;
                /* One request per connection: what follows its body is never sent on. */
                evbuffer_drain(input, evbuffer_get_length(input));
        } else {
                evbuffer_add_buffer(bufferevent_get_output(to), input);
        }
        if (evbuffer_get_length(bufferevent_get_output(to)) >= RELAY_BUFFERED) {
                bufferevent_disable(from, EV_READ);
                bufferevent_setwatermark(to, EV_WRITE, RELAY_BUFFERED / 2, 0);
        }
}

/* After an end of stream: pass it on once the other side's output is flushed; free when both are done. */
static bool relay_settle(connection *c)
{
        if (c->client_eof && evbuffer_get_length(bufferevent_get_output(c->server)) == 0)
                shutdown(bufferevent_getfd(c->server), SHUT_WR);
        if (c->server_eof && evbuffer_get_length(bufferevent_get_output(c->client)) == 0)
                shutdown(bufferevent_getfd(c->client), SHUT_WR);
        if (c->client_eof && c->server_eof && evbuffer_get_length(bufferevent_get_output(c->client)) == 0 &&
            evbuffer_get_length(bufferevent_get_output(c->server)) == 0) {
                connection_free(c);
                return false;
        }
        return true;
}

static void relay_readable(struct bufferevent *from, void *data)
{
        relay_move(data, from);
}

static void relay_writable(struct bufferevent *to, void *data)
{
        connection *c = data;
        struct bufferevent *from = other_side(c, to);
        bool from_eof = from == c->client ? c->client_eof : c->server_eof;

        if (!from_eof && evbuffer_get_length(bufferevent_get_output(to)) < RELAY_BUFFERED / 2) {
                bufferevent_setwatermark(to, EV_WRITE, 0, 0);
                bufferevent_enable(from, EV_READ);
        }
        relay_settle(c);
}

static void relay_event(struct bufferevent *side, short what, void *data)
{
        connection *c = data;

        if (what & (BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) {
                connection_free(c);
                return;
        }
        if (!(what & BEV_EVENT_EOF))
                return;
        relay_move(c, side);
        if (side == c->client)
                c->client_eof = true;
        else
                c->server_eof = true;
        bufferevent_disable(side, EV_READ);
        relay_settle(c);
}

static void relay_start(connection *c)
{
        c->stage = STAGE_RELAY;
        bufferevent_set_timeouts(c->client, NULL, NULL);
        bufferevent_set_timeouts(c->server, NULL, NULL);
        bufferevent_setcb(c->client, relay_readable, relay_writable, relay_event, c);
        bufferevent_setcb(c->server, relay_readable, relay_writable, relay_event, c);
        bufferevent_enable(c->client, EV_READ | EV_WRITE);
        bufferevent_enable(c->server, EV_READ | EV_WRITE);
        if (evbuffer_get_length(bufferevent_get_input(c->client)) > 0)
                relay_move(c, c->client);
}

static void client_readable(struct bufferevent *client, void *data);
static void client_writable(struct bufferevent *client, void *data);
static void client_event(struct bufferevent *client, short what, void *data);

/* The server is connected: pass on what was decided, in the form decided. */
static void server_connected(connection *c)
{
        struct evbuffer *input = bufferevent_get_input(c->client);
        static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        const struct timeval idle = { FIRST_BYTES_SECONDS, 0 };

        switch (c->forward) {
        case FORWARD_TUNNEL:
                evbuffer_drain(input, c->head.length);
                bufferevent_write(c->client, established, sizeof(established) - 1);
                c->stage = STAGE_TUNNEL_HELLO;
                bufferevent_setwatermark(c->client, EV_READ, 0, DSH_TLS_HELLO_MAX);
                bufferevent_set_timeouts(c->client, &idle, NULL);
                bufferevent_disable(c->server, EV_READ);
                bufferevent_enable(c->client, EV_READ);
                if (evbuffer_get_length(input) > 0)
                        client_readable(c->client, c);
                return;
        case FORWARD_HEAD: {
                const char *head = (const char *) evbuffer_pullup(input, (ssize_t) c->head.length);
                size_t length = 0;
                char *forwarded = head ? dsh_http_head_forwarded(head, &c->head, &length) : NULL;
                if (forwarded == NULL) {
                        connection_free(c);
                        return;
                }
                bufferevent_write(c->server, forwarded, length);
                free(forwarded);
                evbuffer_drain(input, c->head.length);
                c->body_limited = true;
                c->body_left = c->head.content_length;
                break;
        }
        case FORWARD_RAW:
                break;
        }
        bufferevent_setwatermark(c->client, EV_READ, 0, 0);
        relay_start(c);
}

static void server_event(struct bufferevent *server, short what, void *data)
{
        connection *c = data;

        (void) server;
        if (what & BEV_EVENT_CONNECTED) {
                server_connected(c);
                return;
        }
        if (c->captured) {
                connection_free(c);
                return;
        }
        refuse_request(c, 502, c->host, c->port, DSH_NETWORK_RULE_BAD_REQUEST, false);
}

static int server_socket(const connection *c);

static void connect_server(connection *c)
{
        const struct timeval timeout = { CONNECT_SECONDS, 0 };

        c->stage = STAGE_CONNECTING;
        bufferevent_disable(c->client, EV_READ);
        int fd = server_socket(c);
        c->server = fd >= 0 ? bufferevent_socket_new(context_of(c)->base, fd, BEV_OPT_CLOSE_ON_FREE) : NULL;
        if (c->server == NULL) {
                if (fd >= 0)
                        close(fd);
                connection_free(c);
                return;
        }
        bufferevent_setcb(c->server, NULL, NULL, server_event, c);
        bufferevent_set_timeouts(c->server, &timeout, &timeout);
        if (bufferevent_socket_connect(c->server, (struct sockaddr *) &c->destination,
                                       (int) c->destination_length) != 0)
                server_event(c->server, BEV_EVENT_ERROR, c);
}

static void set_destination(connection *c, int family, const void *address, unsigned short port)
{
        memset(&c->destination, 0, sizeof(c->destination));
        if (family == AF_INET) {
                struct sockaddr_in *in = (struct sockaddr_in *) &c->destination;
                in->sin_family = AF_INET;
                in->sin_port = htons(port);
                memcpy(&in->sin_addr, address, 4);
                c->destination_length = sizeof(*in);
        } else {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &c->destination;
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons(port);
                memcpy(&in6->sin6_addr, address, 16);
                c->destination_length = sizeof(*in6);
        }
}

static void resolved(void *data, dsh_dns_resolution_status status, const dsh_dns_answer *answer)
{
        connection *c = data;

        c->resolution = NULL;           /* freed by the resolution once this returns */
        switch (status) {
        case DSH_DNS_RESOLVED:
                /* Checked as the stub checks an answer (no metadata address): kept in the book as the stub keeps it. */
                for (size_t i = 0; i < answer->address_count; i++)
                        for (size_t n = 0; n < answer->name_count; n++)
                                dsh_address_book_add(context_of(c)->book, answer->names[n], answer->addresses[i].family,
                                                     answer->addresses[i].bytes, answer->addresses[i].ttl);
                set_destination(c, answer->addresses[0].family, answer->addresses[0].bytes, c->port);
                connect_server(c);
                return;
        case DSH_DNS_METADATA:
                refuse_request(c, 403, c->host, c->port, DSH_NETWORK_RULE_METADATA_ADDRESS, true);
                return;
        case DSH_DNS_UNRESOLVED:
                refuse_request(c, 502, c->host, c->port, DSH_NETWORK_RULE_BAD_REQUEST, false);
                return;
        }
}

/* A fresh non-blocking, close-on-exec socket for `c`'s destination (libevent's own lacks close-on-exec). */
static int server_socket(const connection *c)
{
        return socket(c->destination.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

static bool literal_bytes(const char *host, int *family, unsigned char bytes[16])
{
        if (inet_pton(AF_INET, host, bytes) == 1) {
                *family = AF_INET;
                return true;
        }
        if (inet_pton(AF_INET6, host, bytes) == 1) {
                *family = AF_INET6;
                return true;
        }
        return false;
}

/* A proxy request's authority: an allowed literal is connected, an allowed name resolved, the rest refused. */
static void decide_authority(connection *c)
{
        dsh_network_context *context = context_of(c);
        unsigned char bytes[16];
        int family;

        if (c->host_is_literal && literal_bytes(c->host, &family, bytes)) {
                if (dsh_host_patterns_allow_address(context->patterns, context->pattern_count, family, bytes,
                                                    c->port)) {
                        set_destination(c, family, bytes, c->port);
                        connect_server(c);
                } else {
                        refuse_request(c, 403, c->host, c->port,
                                       dsh_address_is_metadata(family, bytes) ? DSH_NETWORK_RULE_METADATA_ADDRESS
                                                                              : DSH_NETWORK_RULE_HOST_NOT_ALLOWED,
                                       true);
                }
                return;
        }
        if (!dsh_host_patterns_allow(context->patterns, context->pattern_count, c->host, c->port)) {
                refuse_request(c, 403, c->host, c->port, DSH_NETWORK_RULE_HOST_NOT_ALLOWED, true);
                return;
        }
        /* A name resolved a moment ago (by the stub for the command, or by the proxy itself): its address again. */
        if (dsh_address_book_find(context->book, c->host, &family, bytes)) {
                set_destination(c, family, bytes, c->port);
                connect_server(c);
                return;
        }
        c->stage = STAGE_RESOLVING;
        bufferevent_disable(c->client, EV_READ);
        c->resolution = dsh_dns_resolve(context, c->host, resolved, c);
        if (c->resolution == NULL)
                refuse_request(c, 502, c->host, c->port, DSH_NETWORK_RULE_BAD_REQUEST, false);
}

static void read_proxy_head(connection *c, const char *data, size_t length)
{
        switch (dsh_http_head_read(data, length, &c->head)) {
        case DSH_HTTP_HEAD_INCOMPLETE:
                if (length >= DSH_HTTP_HEAD_MAX)
                        refuse_request(c, 400, "", 0, DSH_NETWORK_RULE_BAD_REQUEST, true);
                return;
        case DSH_HTTP_HEAD_MALFORMED:
                refuse_request(c, 400, "", 0, DSH_NETWORK_RULE_BAD_REQUEST, true);
                return;
        case DSH_HTTP_HEAD_COMPLETE:
                break;
        }
        strcpy(c->host, c->head.host);
        c->port = c->head.port;
        c->host_is_literal = c->head.host_is_literal;
        /* An origin-form request names no server (this is no web server), and a chunked body has no bound. */
        if (c->head.target == DSH_HTTP_TARGET_ORIGIN || c->head.chunked) {
                refuse_request(c, 400, c->host, c->port, DSH_NETWORK_RULE_BAD_REQUEST, true);
                return;
        }
        c->forward = c->head.target == DSH_HTTP_TARGET_AUTHORITY ? FORWARD_TUNNEL : FORWARD_HEAD;
        decide_authority(c);
}

/* A captured connection's name: allowed for the original port, and given out by the stub for that address. */
static void decide_captured(connection *c, const char *name)
{
        dsh_network_context *context = context_of(c);
        char text[INET6_ADDRSTRLEN];
        unsigned short port;
        const void *address = c->destination.ss_family == AF_INET
                                      ? (const void *) &((struct sockaddr_in *) &c->destination)->sin_addr
                                      : (const void *) &((struct sockaddr_in6 *) &c->destination)->sin6_addr;

        dsh_network_address_text((struct sockaddr *) &c->destination, text, &port);
        if (!dsh_host_patterns_allow(context->patterns, context->pattern_count, name, port)) {
                refuse_captured(c, name, DSH_NETWORK_RULE_HOST_NOT_ALLOWED);
                return;
        }
        if (!dsh_address_book_has(context->book, name, c->destination.ss_family, address)) {
                refuse_captured(c, name, DSH_NETWORK_RULE_ADDRESS_NOT_RESOLVED);
                return;
        }
        connect_server(c);
}

static void read_captured(connection *c, const char *data, size_t length)
{
        char sni[DSH_TLS_HELLO_NAME_SIZE];

        if ((unsigned char) data[0] == 22) {
                switch (dsh_tls_hello_read((const uint8_t *) data, length, sni)) {
                case DSH_TLS_HELLO_INCOMPLETE:
                        if (length >= DSH_TLS_HELLO_MAX)
                                refuse_captured(c, NULL, DSH_NETWORK_RULE_SNI_MISMATCH);
                        return;
                case DSH_TLS_HELLO_NOT_TLS:
                case DSH_TLS_HELLO_MALFORMED:
                        refuse_captured(c, NULL, DSH_NETWORK_RULE_SNI_MISMATCH);
                        return;
                case DSH_TLS_HELLO_COMPLETE:
                        break;
                }
                if (sni[0] == '\0') {
                        refuse_captured(c, NULL, DSH_NETWORK_RULE_SNI_MISMATCH);
                        return;
                }
                c->forward = FORWARD_RAW;
                decide_captured(c, sni);
                return;
        }
        switch (dsh_http_head_read(data, length, &c->head)) {
        case DSH_HTTP_HEAD_INCOMPLETE:
                if (length >= DSH_TLS_HELLO_MAX)
                        refuse_captured(c, NULL, DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED);
                return;
        case DSH_HTTP_HEAD_MALFORMED:
                refuse_captured(c, NULL, DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED);
                return;
        case DSH_HTTP_HEAD_COMPLETE:
                break;
        }
        if (c->head.target == DSH_HTTP_TARGET_AUTHORITY || c->head.host[0] == '\0' || c->head.chunked) {
                refuse_captured(c, c->head.host[0] ? c->head.host : NULL, DSH_NETWORK_RULE_BAD_REQUEST);
                return;
        }
        c->forward = FORWARD_HEAD;
        decide_captured(c, c->head.host);
}

/* After CONNECT's 200: the tunnel opens with a ClientHello naming the host, or it is closed. */
static void read_tunnel_hello(connection *c, const char *data, size_t length)
{
        char sni[DSH_TLS_HELLO_NAME_SIZE];
        dsh_network_rule rule = DSH_NETWORK_RULE_SNI_MISMATCH;

        switch (dsh_tls_hello_read((const uint8_t *) data, length, sni)) {
        case DSH_TLS_HELLO_INCOMPLETE:
                if (length < DSH_TLS_HELLO_MAX)
                        return;
                break;
        case DSH_TLS_HELLO_NOT_TLS:
                rule = DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED;   /* a relayed CONNECT, plain bytes */
                break;
        case DSH_TLS_HELLO_MALFORMED:
                break;
        case DSH_TLS_HELLO_COMPLETE:
                if (c->host_is_literal || strcmp(sni, c->host) == 0) {
                        bufferevent_setwatermark(c->client, EV_READ, 0, 0);
                        relay_start(c);
                        return;
                }
                break;
        }
        dsh_network_record(context_of(c), DSH_NETWORK_SOURCE_PROXY, DSH_NETWORK_OP_HTTP, sni[0] ? sni : c->host,
                           c->port, rule);
        connection_free(c);
}

static void client_readable(struct bufferevent *client, void *data)
{
        connection *c = data;
        struct evbuffer *input = bufferevent_get_input(client);
        size_t length = evbuffer_get_length(input);
        const char *bytes = length ? (const char *) evbuffer_pullup(input, -1) : NULL;

        if (bytes == NULL)
                return;
        switch (c->stage) {
        case STAGE_HEAD:
                read_proxy_head(c, bytes, length);
                return;
        case STAGE_CAPTURED:
                read_captured(c, bytes, length);
                return;
        case STAGE_TUNNEL_HELLO:
                read_tunnel_hello(c, bytes, length);
                return;
        case STAGE_RESOLVING:
        case STAGE_CONNECTING:
        case STAGE_RELAY:
        case STAGE_CLOSING:
                return;
        }
}

static void client_writable(struct bufferevent *client, void *data)
{
        connection *c = data;

        if (c->stage == STAGE_CLOSING && evbuffer_get_length(bufferevent_get_output(client)) == 0)
                connection_free(c);
}

static void client_event(struct bufferevent *client, short what, void *data)
{
        connection *c = data;

        (void) client;
        /* A captured connection that ended or went quiet before it named a host: what it sent is no protocol we take. */
        if (c->captured && c->stage == STAGE_CAPTURED && (what & (BEV_EVENT_TIMEOUT | BEV_EVENT_EOF)) &&
            ((what & BEV_EVENT_TIMEOUT) || evbuffer_get_length(bufferevent_get_input(c->client)) > 0)) {
                refuse_captured(c, NULL, DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED);
                return;
        }
        if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
                connection_free(c);
}

static void accepted(struct evconnlistener *listener, evutil_socket_t fd, struct sockaddr *peer, int peer_length,
                     void *data)
{
        const struct timeval idle = { FIRST_BYTES_SECONDS, 0 };
        dsh_http_proxy *proxy = data;
        dsh_network_context *context = proxy->context;
        connection *c = proxy->count < PROXY_CONNECTIONS ? calloc(1, sizeof(*c)) : NULL;

        (void) listener;
        if (c == NULL) {
                close(fd);
                return;
        }
        c->proxy = proxy;
        c->client = bufferevent_socket_new(context->base, fd, BEV_OPT_CLOSE_ON_FREE);
        if (c->client == NULL) {
                close(fd);
                free(c);
                return;
        }
        LIST_INSERT_HEAD(&proxy->connections, c, link);
        proxy->count++;
        c->captured = dsh_captures_take(context->captures, peer, (socklen_t) peer_length, &c->destination,
                                        &c->destination_length);
        bufferevent_setcb(c->client, client_readable, client_writable, client_event, c);
        bufferevent_set_timeouts(c->client, &idle, &idle);
        bufferevent_setwatermark(c->client, EV_READ, 0, c->captured ? DSH_TLS_HELLO_MAX : DSH_HTTP_HEAD_MAX);
        c->stage = c->captured ? STAGE_CAPTURED : STAGE_HEAD;
        if (c->captured) {
                char text[INET6_ADDRSTRLEN];
                unsigned char bytes[16];
                int family;
                dsh_network_address_text((struct sockaddr *) &c->destination, text, &c->port);
                /* An allowed IP literal needs no name: relayed as it comes (the server may speak first). */
                if (literal_bytes(text, &family, bytes) &&
                    dsh_host_patterns_allow_address(context->patterns, context->pattern_count, family, bytes,
                                                    c->port)) {
                        c->forward = FORWARD_RAW;
                        connect_server(c);
                        return;
                }
        }
        bufferevent_enable(c->client, EV_READ | EV_WRITE);
}

int dsh_http_proxy_start(dsh_network_context *context, dsh_http_proxy **proxy_out, char **reason)
{
        dsh_http_proxy *proxy = calloc(1, sizeof(*proxy));
        int fds[2] = { -1, -1 };
        int result;

        if (proxy == NULL)
                return -ENOMEM;
        proxy->context = context;
        LIST_INIT(&proxy->connections);
        result = dsh_network_listen(SOCK_STREAM, "the proxy", &context->proxy, fds, reason);
        for (int i = 0; i < 2 && result == 0; i++) {
                if (fds[i] < 0)
                        continue;
                proxy->listeners[i] = evconnlistener_new(context->base, accepted, proxy,
                                                         LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fds[i]);
                if (proxy->listeners[i] == NULL)
                        result = -ENOMEM;
                else
                        fds[i] = -1;
        }
        for (int i = 0; i < 2; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
        if (result != 0) {
                if (*reason == NULL)
                        *reason = strdup("the proxy could not start: out of memory");
                dsh_http_proxy_free(proxy);
                return result;
        }
        *proxy_out = proxy;
        return 0;
}

void dsh_http_proxy_free(dsh_http_proxy *proxy)
{
        if (proxy == NULL)
                return;
        while (!LIST_EMPTY(&proxy->connections))
                connection_free(LIST_FIRST(&proxy->connections));
        for (int i = 0; i < 2; i++)
                if (proxy->listeners[i])
                        evconnlistener_free(proxy->listeners[i]);
        free(proxy);
}
