/* SPDX-License-Identifier: MIT */
/*
 * One call's network service (network-service.h): the context its parts
 * share, the loop thread, and the gate the supervisor asks.
 *
 * The gate's security argument (core/network-gate.h has the whole one):
 *   - port 53, TCP or UDP, to any address goes to the stub: the command
 *     names whatever resolver it likes and still only ever talks to ours;
 *   - the stub's and the proxy's own addresses are reached directly;
 *   - any other TCP destination goes to the proxy, attached, only when the
 *     stub gave it out for some allowed name (the proxy then checks which
 *     name the connection carries) or the allow-list names it as a literal;
 *   - everything else, UDP to any other port included, is refused and
 *     recorded.
 * The gate never blocks (table lookups under short locks) and reads only
 * what was set before the loop started, or what is locked.
 *
 * Failing closed: the service starts whole or not at all; a start that
 * cannot find an upstream, bind a listener or start its thread returns the
 * reason and the caller runs nothing.  libevent's log goes nowhere (the
 * library prints nothing); its fatal callback escapes back to the start
 * while the event base is made (new_event_base()), and otherwise, for an
 * internal error libevent cannot return from, aborts rather than exit() the
 * harness with a status that reads as the command's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "network/dns-stub.h"
#include "network/http-proxy.h"
#include "network/network-context.h"
#include "network/network-service.h"

struct dsh_network_service {
        dsh_network_context context;
        dsh_network_gate gate;
        dsh_dns_stub *stub;
        dsh_http_proxy *proxy;
        int stop_fd;
        struct event *stop_event;
        pthread_t thread;
        bool thread_started;
        char proxy_url[40];
};

static char *reason_printf(const char *format, ...) __attribute__((format(printf, 1, 2)));

static char *reason_printf(const char *format, ...)
{
        char *text = NULL;
        va_list arguments;

        va_start(arguments, format);
        if (vasprintf(&text, format, arguments) < 0)
                text = NULL;
        va_end(arguments);
        return text;
}

void dsh_network_record(dsh_network_context *context, dsh_network_source source, dsh_network_op op,
                        const char *host, unsigned short port, dsh_network_rule rule)
{
        if (context->refusals)
                dsh_network_refusals_add(context->refusals, source, op, host, port, rule);
}

void dsh_network_address_text(const struct sockaddr *address, char text[INET6_ADDRSTRLEN], unsigned short *port)
{
        struct sockaddr_storage copy;   /* aligned: `address` may point anywhere */
        const struct sockaddr_in *in = (const struct sockaddr_in *) &copy;
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) &copy;

        text[0] = '\0';
        *port = 0;
        memset(&copy, 0, sizeof(copy));
        memcpy(&copy, address, address->sa_family == AF_INET6 ? sizeof(*in6) : sizeof(*in));
        if (copy.ss_family == AF_INET) {
                inet_ntop(AF_INET, &in->sin_addr, text, INET6_ADDRSTRLEN);
                *port = ntohs(in->sin_port);
        } else if (copy.ss_family == AF_INET6) {
                if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
                        inet_ntop(AF_INET, in6->sin6_addr.s6_addr + 12, text, INET6_ADDRSTRLEN);
                else
                        inet_ntop(AF_INET6, &in6->sin6_addr, text, INET6_ADDRSTRLEN);
                *port = ntohs(in6->sin6_port);
        }
}

static int listen_one(int family, int type, struct sockaddr *address, socklen_t length)
{
        int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int one = 1;

        if (fd < 0)
                return -errno;
        if (family == AF_INET6)
                (void) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        if (bind(fd, address, length) != 0 || (type == SOCK_STREAM && listen(fd, 128) != 0) ||
            getsockname(fd, address, &length) != 0) {
                int error = -errno;
                close(fd);
                return error;
        }
        return fd;
}

int dsh_network_listen(int type, const char *what, dsh_network_endpoint *endpoint, int fds[2], char **reason)
{
        memset(endpoint, 0, sizeof(*endpoint));
        endpoint->ipv4.sin_family = AF_INET;
        endpoint->ipv4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fds[0] = listen_one(AF_INET, type, (struct sockaddr *) &endpoint->ipv4, sizeof(endpoint->ipv4));
        if (fds[0] < 0) {
                int error = fds[0];
                fds[0] = -1;
                *reason = reason_printf("%s cannot listen on 127.0.0.1: %s", what, strerror(-error));
                return error;
        }
        /* ::1 is for the IPv6 sockets the gate redirects; a host without IPv6 loopback just has none. */
        endpoint->ipv6.sin6_family = AF_INET6;
        endpoint->ipv6.sin6_addr = in6addr_loopback;
        fds[1] = listen_one(AF_INET6, type, (struct sockaddr *) &endpoint->ipv6, sizeof(endpoint->ipv6));
        endpoint->has_ipv6 = fds[1] >= 0;
        if (fds[1] < 0)
                fds[1] = -1;
        return 0;
}

/* ------------------------------------------------------------ the policy -- */

static int add_pattern(dsh_network_context *context, size_t *capacity, const char *text, char **reason)
{
        const char *why = NULL;

        if (context->pattern_count == *capacity) {
                size_t grown = *capacity ? *capacity * 2 : 8;
                dsh_host_pattern *patterns = reallocarray(context->patterns, grown, sizeof(*patterns));
                if (patterns == NULL)
                        return -ENOMEM;
                context->patterns = patterns;
                *capacity = grown;
        }
        if (dsh_host_pattern_parse(text, &context->patterns[context->pattern_count], &why) != 0) {
                *reason = reason_printf("the allow-list entry \"%s\" is no host pattern: %s", text,
                                        why ? why : "refused");
                return -EINVAL;
        }
        context->pattern_count++;
        return 0;
}

/* The entries as patterns; a named set not yet expanded (the policy unprepared) is expanded here. */
static int read_patterns(dsh_network_context *context, const dsh_network_policy *network, char **reason)
{
        size_t capacity = 0;

        for (char **entry = network->allow_hosts; entry && *entry; entry++) {
                const char *const *set = (*entry)[0] == '@' ? dsh_host_named_set(*entry) : NULL;
                int result = 0;
                if ((*entry)[0] == '@' && set == NULL) {
                        *reason = reason_printf("the allow-list entry \"%s\" names no set", *entry);
                        return -EINVAL;
                }
                for (; set && *set && result == 0; set++)
                        result = add_pattern(context, &capacity, *set, reason);
                if (set == NULL)
                        result = add_pattern(context, &capacity, *entry, reason);
                if (result != 0)
                        return result;
        }
        return 0;
}

/* "IPV4:PORT" or "[IPV6]:PORT". */
static bool parse_upstream(const char *text, struct sockaddr_storage *address, socklen_t *length)
{
        char host[INET6_ADDRSTRLEN + 2];
        const char *port_text;
        char *end = NULL;
        long port;

        memset(address, 0, sizeof(*address));
        if (text[0] == '[') {
                const char *close = strchr(text, ']');
                if (close == NULL || close[1] != ':' || (size_t) (close - text - 1) >= sizeof(host))
                        return false;
                memcpy(host, text + 1, (size_t) (close - text - 1));
                host[close - text - 1] = '\0';
                port_text = close + 2;
        } else {
                const char *colon = strchr(text, ':');
                if (colon == NULL || (size_t) (colon - text) >= sizeof(host))
                        return false;
                memcpy(host, text, (size_t) (colon - text));
                host[colon - text] = '\0';
                port_text = colon + 1;
        }
        port = strtol(port_text, &end, 10);
        if (*port_text < '0' || *port_text > '9' || *end != '\0' || port < 1 || port > 65535)
                return false;
        struct sockaddr_in *in = (struct sockaddr_in *) address;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) address;
        if (text[0] != '[' && inet_pton(AF_INET, host, &in->sin_addr) == 1) {
                in->sin_family = AF_INET;
                in->sin_port = htons((unsigned short) port);
                *length = sizeof(*in);
                return true;
        }
        if (text[0] == '[' && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons((unsigned short) port);
                *length = sizeof(*in6);
                return true;
        }
        return false;
}

/* The first "nameserver" of /etc/resolv.conf, port 53. */
static bool host_upstream(struct sockaddr_storage *address, socklen_t *length)
{
        FILE *file = fopen("/etc/resolv.conf", "re");
        char line[512], host[INET6_ADDRSTRLEN + 8], text[INET6_ADDRSTRLEN + 16];
        bool found = false;

        if (file == NULL)
                return false;
        while (!found && fgets(line, sizeof(line), file)) {
                if (sscanf(line, " nameserver %" "53" "s", host) != 1)
                        continue;
                host[strcspn(host, "%")] = '\0';        /* a scope id: the loopback and global addresses need none */
                snprintf(text, sizeof(text), strchr(host, ':') ? "[%s]:53" : "%s:53", host);
                found = parse_upstream(text, address, length);
        }
        fclose(file);
        return found;
}

/* -------------------------------------------------------------- the gate -- */

typedef struct inet_view {
        int socket_family;              /* the destination's own: what a redirect must be given in */
        int family;                     /* AF_INET for an IPv4-mapped IPv6 address */
        uint8_t address[16];
        unsigned short port;
} inet_view;

/* The destination's address and port, copied (the supervisor's copy may lie at any alignment). */
static bool view_of(const struct sockaddr *destination, socklen_t length, inet_view *view)
{
        struct sockaddr_storage copy;
        const struct sockaddr_in *in = (const struct sockaddr_in *) &copy;
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) &copy;

        memset(view, 0, sizeof(*view));
        memset(&copy, 0, sizeof(copy));
        memcpy(&copy, destination, length < sizeof(copy) ? length : sizeof(copy));
        view->socket_family = copy.ss_family;
        if (copy.ss_family == AF_INET && length >= sizeof(*in)) {
                view->family = AF_INET;
                memcpy(view->address, &in->sin_addr, 4);
                view->port = ntohs(in->sin_port);
                return true;
        }
        if (copy.ss_family != AF_INET6 || length < sizeof(*in6))
                return false;
        bool mapped = IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr);
        view->family = mapped ? AF_INET : AF_INET6;
        memcpy(view->address, in6->sin6_addr.s6_addr + (mapped ? 12 : 0), mapped ? 4 : 16);
        view->port = ntohs(in6->sin6_port);
        return true;
}

static bool is_endpoint(const dsh_network_endpoint *endpoint, const inet_view *view)
{
        if (view->family == AF_INET)
                return memcmp(view->address, &endpoint->ipv4.sin_addr, 4) == 0 &&
                       view->port == ntohs(endpoint->ipv4.sin_port);
        return endpoint->has_ipv6 && memcmp(view->address, &endpoint->ipv6.sin6_addr, 16) == 0 &&
               view->port == ntohs(endpoint->ipv6.sin6_port);
}

/* Where to send a socket of `family` (its destination's) for `endpoint`: its own family's address. */
static void route_to(const dsh_network_endpoint *endpoint, int family, bool attach, dsh_network_route *route)
{
        route->verdict = DSH_NETWORK_REDIRECT;
        route->attach = attach;
        memset(&route->address, 0, sizeof(route->address));
        if (family == AF_INET) {
                memcpy(&route->address, &endpoint->ipv4, sizeof(endpoint->ipv4));
                route->length = sizeof(endpoint->ipv4);
                return;
        }
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &route->address;
        if (endpoint->has_ipv6) {
                *in6 = endpoint->ipv6;
        } else {
                /* No ::1 on this host: the IPv4 listener through its mapped address (refused by a V6ONLY socket). */
                in6->sin6_family = AF_INET6;
                in6->sin6_port = endpoint->ipv4.sin_port;
                in6->sin6_addr.s6_addr[10] = in6->sin6_addr.s6_addr[11] = 0xff;
                memcpy(in6->sin6_addr.s6_addr + 12, &endpoint->ipv4.sin_addr, 4);
        }
        route->length = sizeof(*in6);
}

static void route_refuse(dsh_network_context *context, const inet_view *view, dsh_network_rule rule,
                         dsh_network_route *route)
{
        char text[INET6_ADDRSTRLEN] = "-";

        if (view)
                inet_ntop(view->family, view->address, text, sizeof(text));
        /* The supervisor's connect or send, refused by the route it asked for: the supervisor's refusal. */
        dsh_network_record(context, DSH_NETWORK_SOURCE_SUPERVISOR, DSH_NETWORK_OP_CONNECT, text, view ? view->port : 0,
                           rule);
        route->verdict = DSH_NETWORK_REFUSE;
        route->error = EACCES;
}

static void gate_route(void *data, int type, const struct sockaddr *destination, socklen_t length,
                       dsh_network_route *route)
{
        dsh_network_context *context = data;
        inet_view view;

        memset(route, 0, sizeof(*route));
        /* Not an inet address the supervisor could have copied whole: nothing to route, refused. */
        if (!view_of(destination, length, &view)) {
                route_refuse(context, NULL, DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED, route);
                return;
        }
        if (view.port == 53) {
                route_to(type == SOCK_STREAM ? &context->stub_tcp : &context->stub_udp, view.socket_family,
                         false, route);
                return;
        }
        if (is_endpoint(&context->proxy, &view) || is_endpoint(&context->stub_tcp, &view) ||
            is_endpoint(&context->stub_udp, &view)) {
                route->verdict = DSH_NETWORK_DIRECT;
                return;
        }
        if (dsh_address_is_metadata(view.family, view.address) &&
            !dsh_host_patterns_allow_address(context->patterns, context->pattern_count, view.family, view.address,
                                             view.port)) {
                route_refuse(context, &view, DSH_NETWORK_RULE_METADATA_ADDRESS, route);
                return;
        }
        if (type != SOCK_STREAM) {
                route_refuse(context, &view, DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED, route);
                return;
        }
        if (dsh_address_book_knows(context->book, view.family, view.address) ||
            dsh_host_patterns_allow_address(context->patterns, context->pattern_count, view.family, view.address,
                                            view.port)) {
                route_to(&context->proxy, view.socket_family, true, route);
                return;
        }
        route_refuse(context, &view, DSH_NETWORK_RULE_ADDRESS_NOT_RESOLVED, route);
}

static int gate_attach(void *data, const struct sockaddr *source, socklen_t source_length,
                       const struct sockaddr *destination, socklen_t destination_length)
{
        dsh_network_context *context = data;

        return dsh_captures_add(context->captures, source, source_length, destination, destination_length);
}

static void gate_detach(void *data, const struct sockaddr *source, socklen_t source_length)
{
        dsh_network_context *context = data;

        dsh_captures_remove(context->captures, source, source_length);
}

/* --------------------------------------------------------- the thread -- */

static void quiet_log(int severity, const char *message)
{
        (void) severity;
        (void) message;
}

/* Set while this thread makes an event base: libevent's fatal path then returns through it (below). */
static __thread jmp_buf *fatal_escape;

static void fatal_error(int error)
{
        (void) error;
        if (fatal_escape)
                longjmp(*fatal_escape, 1);
        abort();
}

static void libevent_setup(void)
{
        event_set_log_callback(quiet_log);
        event_set_fatal_callback(fatal_error);
}

/* Whether `count` more descriptors can be had now (each is closed again at once). */
static bool descriptors_available(int count)
{
        int fds[8];
        int made = 0;

        while (made < count && (fds[made] = fcntl(0, F_DUPFD_CLOEXEC, 3)) >= 0)
                made++;
        if (made < count && errno == EBADF) {
                /* No fd 0 to copy: ask for fresh ones instead. */
                while (made < count && (fds[made] = eventfd(0, EFD_CLOEXEC)) >= 0)
                        made++;
        }
        for (int i = 0; i < made; i++)
                close(fds[i]);
        return made == count;
}

/*
 * libevent's event_base_new() treats a descriptor it cannot get for its
 * signal pipe (EMFILE) as fatal and would exit the harness; out of
 * descriptors is a reason to refuse the call, not to end the process.  So
 * the start first makes sure the three descriptors the base takes (epoll,
 * the signal pipe's two ends) can be had, and the fatal callback escapes
 * back here while the base is made, for another thread that took them in
 * between: that half-made base is leaked (its memory and its epoll
 * descriptor) and the start fails with its reason.
 */
static struct event_base *new_event_base(void)
{
        jmp_buf escape;
        struct event_base *volatile base = NULL;

        if (!descriptors_available(4))
                return NULL;
        if (setjmp(escape) == 0) {
                fatal_escape = &escape;
                base = event_base_new();
        }
        fatal_escape = NULL;
        return base;
}

static void stop_requested(evutil_socket_t fd, short what, void *data)
{
        dsh_network_service *service = data;

        (void) fd;
        (void) what;
        event_base_loopbreak(service->context.base);
}

static void *service_loop(void *data)
{
        dsh_network_service *service = data;

        event_base_loop(service->context.base, EVLOOP_NO_EXIT_ON_EMPTY);
        return NULL;
}

/* The loop thread takes no signal: they are the harness's, whichever thread it meant them for. */
static int start_thread(dsh_network_service *service)
{
        sigset_t all, saved;
        int result;

        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &saved);
        result = -pthread_create(&service->thread, NULL, service_loop, service);
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
        service->thread_started = result == 0;
        return result;
}

/* ------------------------------------------------------------ the service -- */

static int service_prepare(dsh_network_service *service, const dsh_network_policy *network, char **reason)
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        dsh_network_context *context = &service->context;
        int result;

        pthread_once(&once, libevent_setup);
        result = read_patterns(context, network, reason);
        if (result != 0)
                return result;
        if (network->dns_upstream ? !parse_upstream(network->dns_upstream, &context->upstream,
                                                    &context->upstream_length)
                                  : !host_upstream(&context->upstream, &context->upstream_length)) {
                *reason = network->dns_upstream
                                  ? reason_printf("the upstream resolver \"%s\" is no IP:PORT", network->dns_upstream)
                                  : strdup("no upstream resolver: /etc/resolv.conf names none; set dnsUpstream");
                return -EINVAL;
        }
        context->book = dsh_address_book_new();
        context->captures = dsh_captures_new();
        context->base = new_event_base();
        service->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (context->book == NULL || context->captures == NULL || context->base == NULL || service->stop_fd < 0) {
                *reason = strdup("the network service could not start: out of memory or descriptors");
                return -ENOMEM;
        }
        service->stop_event = event_new(context->base, service->stop_fd, EV_READ, stop_requested, service);
        if (service->stop_event == NULL || event_add(service->stop_event, NULL) != 0) {
                *reason = strdup("the network service could not start: out of memory");
                return -ENOMEM;
        }
        result = dsh_dns_stub_start(context, &service->stub, reason);
        if (result == 0)
                result = dsh_http_proxy_start(context, &service->proxy, reason);
        return result;
}

int dsh_network_service_start(const dsh_network_policy *network, dsh_network_refusals *refusals,
                              dsh_network_service **service_out, char **reason)
{
        dsh_network_service *service = calloc(1, sizeof(*service));
        int result;

        *reason = NULL;
        *service_out = NULL;
        if (service == NULL) {
                *reason = strdup("the network service could not start: out of memory");
                return -ENOMEM;
        }
        service->stop_fd = -1;
        service->context.refusals = refusals;
        if (network->mode != DSH_NETWORK_ALLOW_LIST) {
                *reason = strdup("the network service serves the allow-list only");
                dsh_network_service_stop(service);
                return -EINVAL;
        }
        result = service_prepare(service, network, reason);
        if (result == 0) {
                result = start_thread(service);
                if (result != 0)
                        *reason = reason_printf("the network service's thread could not start: %s",
                                                strerror(-result));
        }
        if (result != 0) {
                if (*reason == NULL)
                        *reason = strdup("the network service could not start");
                dsh_network_service_stop(service);
                return result;
        }
        service->gate = (dsh_network_gate) { &service->context, gate_route, gate_attach, gate_detach };
        snprintf(service->proxy_url, sizeof(service->proxy_url), "http://127.0.0.1:%u",
                 ntohs(service->context.proxy.ipv4.sin_port));
        *service_out = service;
        return 0;
}

const dsh_network_gate *dsh_network_service_gate(dsh_network_service *service)
{
        return &service->gate;
}

const char *dsh_network_service_proxy_url(const dsh_network_service *service)
{
        return service->proxy_url;
}

void dsh_network_service_stop(dsh_network_service *service)
{
        dsh_network_context *context;

        if (service == NULL)
                return;
        context = &service->context;
        if (service->thread_started) {
                uint64_t one = 1;
                /* An eventfd write cannot fail short of an overflow no one reaches: the loop wakes and breaks. */
                (void) !write(service->stop_fd, &one, sizeof(one));
                pthread_join(service->thread, NULL);
        }
        dsh_http_proxy_free(service->proxy);
        dsh_dns_stub_free(service->stub);
        if (service->stop_event)
                event_free(service->stop_event);
        if (context->base)
                event_base_free(context->base);
        if (service->stop_fd >= 0)
                close(service->stop_fd);
        dsh_address_book_free(context->book);
        dsh_captures_free(context->captures);
        free(context->patterns);
        free(service);
}
