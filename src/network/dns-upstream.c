/* SPDX-License-Identifier: MIT */
/*
 * The upstream exchange and the proxy's resolution (dns-upstream.h).  The
 * UDP socket is connected to the upstream, so the kernel drops datagrams
 * from anyone else; a reply whose id is not the query's is ignored, and the
 * caller checks the question again (dsh_dns_answer_scan()).  The exchange's
 * deadline covers the TCP retry too.
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "network/dns-upstream.h"

struct dsh_dns_exchange {
        dsh_network_context *context;
        uint8_t *query;
        size_t query_length;
        int fd;
        struct event *udp_readable;
        struct bufferevent *tcp;
        struct event *deadline;
        dsh_dns_exchange_done *done;
        void *data;
};

static void exchange_free(dsh_dns_exchange *exchange)
{
        if (exchange->udp_readable)
                event_free(exchange->udp_readable);
        if (exchange->deadline)
                event_free(exchange->deadline);
        if (exchange->tcp)
                bufferevent_free(exchange->tcp);
        if (exchange->fd >= 0)
                close(exchange->fd);
        free(exchange->query);
        free(exchange);
}

/* Calls `done` once, then frees the exchange (the answer lives until then). */
static void exchange_finish(dsh_dns_exchange *exchange, const uint8_t *answer, size_t length)
{
        exchange->done(exchange->data, answer, length);
        exchange_free(exchange);
}

static bool is_reply(const dsh_dns_exchange *exchange, const uint8_t *answer, size_t length)
{
        return length >= 12 && memcmp(answer, exchange->query, 2) == 0 && (answer[2] & 0x80);
}

static void tcp_readable(struct bufferevent *tcp, void *data)
{
        dsh_dns_exchange *exchange = data;
        struct evbuffer *input = bufferevent_get_input(tcp);
        uint8_t prefix[2];
        size_t length;

        if (evbuffer_copyout(input, prefix, 2) != 2)
                return;
        length = (size_t) prefix[0] << 8 | prefix[1];
        if (evbuffer_get_length(input) < 2 + length)
                return;
        const uint8_t *message = evbuffer_pullup(input, (ssize_t) (2 + length));
        if (message == NULL || !is_reply(exchange, message + 2, length)) {
                exchange_finish(exchange, NULL, 0);
                return;
        }
        exchange_finish(exchange, message + 2, length);
}

static void tcp_event(struct bufferevent *tcp, short what, void *data)
{
        (void) tcp;
        if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
                exchange_finish(data, NULL, 0);
}

/* A truncated UDP reply: the same query over TCP, with its two-byte length. */
static bool exchange_retry_tcp(dsh_dns_exchange *exchange)
{
        dsh_network_context *context = exchange->context;
        uint8_t prefix[2] = { (uint8_t) (exchange->query_length >> 8), (uint8_t) exchange->query_length };

        event_del(exchange->udp_readable);
        /* A socket of our own: libevent's lacks close-on-exec, and the harness spawns commands meanwhile. */
        int fd = socket(context->upstream.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return false;
        exchange->tcp = bufferevent_socket_new(context->base, fd, BEV_OPT_CLOSE_ON_FREE);
        if (exchange->tcp == NULL) {
                close(fd);
                return false;
        }
        bufferevent_setcb(exchange->tcp, tcp_readable, NULL, tcp_event, exchange);
        if (bufferevent_socket_connect(exchange->tcp, (struct sockaddr *) &context->upstream,
                                       (int) context->upstream_length) != 0)
                return false;
        bufferevent_write(exchange->tcp, prefix, 2);
        bufferevent_write(exchange->tcp, exchange->query, exchange->query_length);
        return bufferevent_enable(exchange->tcp, EV_READ) == 0;
}

static void udp_readable(evutil_socket_t fd, short what, void *data)
{
        dsh_dns_exchange *exchange = data;
        uint8_t answer[DSH_DNS_MESSAGE_MAX];
        ssize_t length;

        (void) what;
        length = recv(fd, answer, sizeof(answer), 0);
        if (length < 0)
                return;         /* an ICMP error, or nothing after all: the deadline decides */
        if (!is_reply(exchange, answer, (size_t) length))
                return;
        if (answer[2] & 0x02) {
                if (!exchange_retry_tcp(exchange))
                        exchange_finish(exchange, NULL, 0);
                return;
        }
        exchange_finish(exchange, answer, (size_t) length);
}

static void deadline_passed(evutil_socket_t fd, short what, void *data)
{
        (void) fd;
        (void) what;
        exchange_finish(data, NULL, 0);
}

dsh_dns_exchange *dsh_dns_exchange_start(dsh_network_context *context, const uint8_t *query, size_t length,
                                         dsh_dns_exchange_done *done, void *data)
{
        const struct timeval timeout = { DSH_DNS_UPSTREAM_TIMEOUT_SECONDS, 0 };
        dsh_dns_exchange *exchange = calloc(1, sizeof(*exchange));

        if (exchange == NULL)
                return NULL;
        *exchange = (dsh_dns_exchange) { .context = context, .fd = -1, .done = done, .data = data };
        exchange->query = malloc(length);
        if (exchange->query == NULL)
                goto fail;
        memcpy(exchange->query, query, length);
        exchange->query_length = length;
        exchange->fd = socket(context->upstream.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (exchange->fd < 0 ||
            connect(exchange->fd, (struct sockaddr *) &context->upstream, context->upstream_length) != 0 ||
            send(exchange->fd, query, length, 0) != (ssize_t) length)
                goto fail;
        exchange->udp_readable = event_new(context->base, exchange->fd, EV_READ | EV_PERSIST, udp_readable, exchange);
        exchange->deadline = evtimer_new(context->base, deadline_passed, exchange);
        if (exchange->udp_readable == NULL || exchange->deadline == NULL ||
            event_add(exchange->udp_readable, NULL) != 0 || evtimer_add(exchange->deadline, &timeout) != 0)
                goto fail;
        return exchange;
fail:
        exchange_free(exchange);
        return NULL;
}

void dsh_dns_exchange_cancel(dsh_dns_exchange *exchange)
{
        if (exchange)
                exchange_free(exchange);
}

struct dsh_dns_resolution {
        dsh_network_context *context;
        char name[DSH_DNS_NAME_SIZE];
        dsh_dns_question question;
        dsh_dns_exchange *exchange;
        dsh_dns_answer answer;
        dsh_dns_resolution_done *done;
        void *data;
};

static bool resolution_ask(dsh_dns_resolution *resolution, uint16_t type);

static void resolution_finish(dsh_dns_resolution *resolution, dsh_dns_resolution_status status)
{
        resolution->done(resolution->data, status, &resolution->answer);
        free(resolution);
}

static void resolution_answered(void *data, const uint8_t *answer, size_t length)
{
        dsh_dns_resolution *resolution = data;
        dsh_dns_resolution_status status = DSH_DNS_UNRESOLVED;

        resolution->exchange = NULL;    /* freed by the exchange itself once this returns */
        if (answer && dsh_dns_answer_scan(answer, length, &resolution->question, resolution->context->patterns,
                                          resolution->context->pattern_count,
                                          &resolution->answer) == DSH_DNS_ANSWER_OK) {
                if (resolution->answer.metadata_address[0] != '\0')
                        status = DSH_DNS_METADATA;
                else if (resolution->answer.address_count > 0)
                        status = DSH_DNS_RESOLVED;
                else if (resolution->question.type == DSH_DNS_TYPE_A && resolution_ask(resolution, DSH_DNS_TYPE_AAAA))
                        return;
        }
        resolution_finish(resolution, status);
}

static bool resolution_ask(dsh_dns_resolution *resolution, uint16_t type)
{
        uint8_t query[512];
        uint16_t id;
        size_t length;

        if (getrandom(&id, sizeof(id), 0) != sizeof(id))
                return false;
        length = dsh_dns_query_build(resolution->name, type, id, query, sizeof(query));
        if (length == 0 || dsh_dns_query_read(query, length, &resolution->question) != DSH_DNS_QUERY_OK)
                return false;
        resolution->exchange = dsh_dns_exchange_start(resolution->context, query, length, resolution_answered,
                                                      resolution);
        return resolution->exchange != NULL;
}

dsh_dns_resolution *dsh_dns_resolve(dsh_network_context *context, const char *name, dsh_dns_resolution_done *done,
                                    void *data)
{
        dsh_dns_resolution *resolution = calloc(1, sizeof(*resolution));

        if (resolution == NULL || strlen(name) >= sizeof(resolution->name)) {
                free(resolution);
                return NULL;
        }
        resolution->context = context;
        resolution->done = done;
        resolution->data = data;
        strcpy(resolution->name, name);
        if (!resolution_ask(resolution, DSH_DNS_TYPE_A)) {
                free(resolution);
                return NULL;
        }
        return resolution;
}

void dsh_dns_resolution_cancel(dsh_dns_resolution *resolution)
{
        if (resolution == NULL)
                return;
        dsh_dns_exchange_cancel(resolution->exchange);
        free(resolution);
}
