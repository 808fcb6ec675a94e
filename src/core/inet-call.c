/* SPDX-License-Identifier: MIT */
/*
 * bind, listen, sendto, sendmsg, sendmmsg and an inet connect's decision,
 * for the network policy (inet-call.h holds the security argument).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/inet-address.h"
#include "core/inet-call.h"
#include "core/inet-message.h"

/* Sockets the command bound through the supervisor, remembered; past this many, a bind is just not own. */
#define OWN_LIMIT 1024
/* sendmmsg: messages performed in one call (the kernel may send fewer than asked; the caller sends the rest). */
#define MULTIPLE_LIMIT 64
#define TCP_LISTEN_STATE 0x0AU

struct dsh_inet_calls {
        dsh_network_settings settings;
        ino_t own[OWN_LIMIT];           /* only the supervisor's thread reads and writes it */
        size_t own_count;
};

dsh_inet_calls *dsh_inet_calls_new(void)
{
        return calloc(1, sizeof(dsh_inet_calls));
}

void dsh_inet_calls_free(dsh_inet_calls *inet)
{
        free(inet);
}

int dsh_inet_calls_configure(dsh_inet_calls *inet, const dsh_network_settings *settings)
{
        switch (settings->filter) {
        case DSH_NETWORK_FILTER_ON:
                break;
        case DSH_NETWORK_FILTER_OFF:
                if (!settings->refusals)
                        return -EINVAL;
                break;
        case DSH_NETWORK_FILTER_ALLOW_LIST:
                if (!settings->refusals || !settings->gate || !settings->gate->route || !settings->gate->attach ||
                    !settings->gate->detach)
                        return -EINVAL;
                break;
        default:
                return -EINVAL;
        }
        if (settings->local_port_count > 0 && !settings->local_ports)
                return -EINVAL;
        inet->settings = *settings;
        return 0;
}

bool dsh_inet_calls_enforce(const dsh_inet_calls *inet)
{
        return inet && inet->settings.filter != DSH_NETWORK_FILTER_ON;
}

bool dsh_inet_call_is_ours(int nr)
{
        return nr == __NR_bind || nr == __NR_listen || nr == __NR_sendto || nr == __NR_sendmsg ||
               nr == __NR_sendmmsg;
}

/* -------------------------------------------------------------- own sockets -- */

static int socket_option(int fd, int option)
{
        int value = -1;
        socklen_t size = sizeof(value);

        return getsockopt(fd, SOL_SOCKET, option, &value, &size) < 0 ? -errno : value;
}

static void remember_own(dsh_inet_calls *inet, int fd)
{
        struct stat status;

        if (inet->own_count < OWN_LIMIT && fstat(fd, &status) == 0)
                inet->own[inet->own_count++] = status.st_ino;
}

static bool is_own(const dsh_inet_calls *inet, unsigned long inode)
{
        for (size_t i = 0; i < inet->own_count; i++)
                if ((unsigned long) inet->own[i] == inode)
                        return true;
        return false;
}

/*
 * Scans one /proc/thread-self/net table for the sockets that take what is
 * sent to `destination`: counts them in `*serving`, and returns false as
 * soon as one is not the command's own (or the table cannot be read).
 */
static bool table_all_own(const dsh_inet_calls *inet, const char *path, bool ipv6, bool listeners_only,
                          const dsh_inet_endpoint *destination, size_t *serving)
{
        FILE *table = fopen(path, "re");
        char *line = NULL;
        size_t capacity = 0;
        bool all_own = table != NULL;

        while (all_own && getline(&line, &capacity, table) > 0) {
                dsh_proc_net_entry entry;

                if (!dsh_proc_net_parse_line(line, ipv6, &entry))
                        continue;
                if (listeners_only && entry.state != TCP_LISTEN_STATE)
                        continue;
                if (!dsh_proc_net_entry_serves(&entry, destination))
                        continue;
                (*serving)++;
                all_own = is_own(inet, entry.inode);
        }
        free(line);
        if (table)
                fclose(table);
        return all_own;
}

/* Whether every socket that takes `destination` (loopback) is the command's own, and one does. */
static bool reaches_own(const dsh_inet_calls *inet, int type, const dsh_inet_endpoint *destination)
{
        bool stream = type == SOCK_STREAM;
        size_t serving = 0;

        if (!table_all_own(inet, stream ? "/proc/thread-self/net/tcp" : "/proc/thread-self/net/udp", false, stream,
                           destination, &serving))
                return false;
        if (!table_all_own(inet, stream ? "/proc/thread-self/net/tcp6" : "/proc/thread-self/net/udp6", true, stream,
                           destination, &serving))
                return false;
        return serving > 0;
}

static bool allowed_local_port(const dsh_inet_calls *inet, uint16_t port)
{
        for (size_t i = 0; i < inet->settings.local_port_count; i++)
                if (inet->settings.local_ports[i] == port)
                        return true;
        return false;
}

/* ---------------------------------------------------------------- deciding -- */

static void record(const dsh_inet_calls *inet, const dsh_inet_endpoint *destination, dsh_network_rule rule)
{
        char text[INET6_ADDRSTRLEN];

        dsh_inet_endpoint_text(destination, text, sizeof(text));
        dsh_network_refusals_add(inet->settings.refusals, DSH_NETWORK_SOURCE_SUPERVISOR, DSH_NETWORK_OP_CONNECT, text,
                                 destination->port, rule);
}

/*
 * Where a `type` socket's connect or send to `*address` goes: 0 to perform
 * it to `*address` (rewritten: the wildcard to the loopback, a redirect to
 * its route; `*attach` then says the gate must be told first), or a
 * negative errno, recorded.
 */
static int decide_destination(dsh_inet_calls *inet, int type, struct sockaddr_storage *address, socklen_t *length,
                              bool *attach)
{
        dsh_inet_endpoint destination;
        dsh_inet_kind kind = dsh_inet_classify(address, *length, &destination);
        dsh_network_route route = { .verdict = DSH_NETWORK_REFUSE, .error = EACCES };

        *attach = false;
        if (kind == DSH_INET_INVALID)
                return *length >= sizeof(sa_family_t) && address->ss_family != AF_INET && address->ss_family != AF_INET6
                               ? -EAFNOSUPPORT
                               : -EINVAL;
        if (kind == DSH_INET_UNSPEC)
                return 0;  /* a disconnect reaches nothing */
        if (kind == DSH_INET_WILDCARD) {
                dsh_inet_wildcard_to_loopback(address, *length);
                kind = dsh_inet_classify(address, *length, &destination);
        }
        if (kind == DSH_INET_LOOPBACK &&
            (inet->settings.loopback_private || allowed_local_port(inet, destination.port) ||
             reaches_own(inet, type, &destination)))
                return 0;
        if (inet->settings.filter != DSH_NETWORK_FILTER_ALLOW_LIST) {
                record(inet, &destination,
                       kind == DSH_INET_LOOPBACK ? DSH_NETWORK_RULE_LOCAL_PORT : DSH_NETWORK_RULE_NETWORK_OFF);
                return -EACCES;
        }
        inet->settings.gate->route(inet->settings.gate->data, type, (const struct sockaddr *) address, *length,
                                   &route);
        switch (route.verdict) {
        case DSH_NETWORK_DIRECT:
                return 0;
        case DSH_NETWORK_REDIRECT:
                if (route.length == 0 || route.length > sizeof(*address))
                        return -EACCES;
                memcpy(address, &route.address, route.length);
                *length = route.length;
                *attach = route.attach;
                return 0;
        case DSH_NETWORK_REFUSE:
                break;
        }
        return route.error > 0 ? -route.error : -EACCES;
}

/* A v4 route for a v6 socket, as the IPv4-mapped address it can reach. */
static void fit_route_to_family(int family, struct sockaddr_storage *address, socklen_t *length)
{
        struct sockaddr_in in;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) address;

        if (family != AF_INET6 || address->ss_family != AF_INET)
                return;
        memcpy(&in, address, sizeof(in));
        memset(address, 0, sizeof(*address));
        in6->sin6_family = AF_INET6;
        in6->sin6_port = in.sin_port;
        in6->sin6_addr.s6_addr[10] = 0xff;
        in6->sin6_addr.s6_addr[11] = 0xff;
        memcpy(&in6->sin6_addr.s6_addr[12], &in.sin_addr, 4);
        *length = sizeof(*in6);
}

/*
 * An IPv4-mapped address in its IPv4 form (the port kept): a v6 socket
 * redirected to the IPv4 proxy is its peer as 127.0.0.1, and the gate is
 * told the source the proxy will see.  Returns the new length.
 */
static socklen_t ipv4_form(struct sockaddr_storage *address, socklen_t length)
{
        dsh_inet_endpoint endpoint;
        struct sockaddr_in in = { .sin_family = AF_INET };

        if (address->ss_family != AF_INET6 || dsh_inet_classify(address, length, &endpoint) == DSH_INET_INVALID ||
            !endpoint.v4)
                return length;
        in.sin_port = htons(endpoint.port);
        memcpy(&in.sin_addr, endpoint.address, 4);
        memset(address, 0, sizeof(*address));
        memcpy(address, &in, sizeof(in));
        return sizeof(in);
}

/*
 * Before an attached redirect: the socket bound on loopback (of the route's
 * form: the proxy is there), its source address told to the gate with the
 * original destination.  0 or a negative errno.
 */
static int attach_socket(dsh_inet_calls *inet, int socket_fd, const struct sockaddr_storage *original,
                         socklen_t original_length, const struct sockaddr_storage *route,
                         dsh_inet_attachment *attachment)
{
        const dsh_network_gate *gate = inet->settings.gate;
        struct sockaddr_storage source;
        socklen_t source_length = sizeof(source);
        dsh_inet_endpoint bound;
        int result;

        if (getsockname(socket_fd, (struct sockaddr *) &source, &source_length) < 0)
                return -EACCES;
        if (dsh_inet_classify(&source, source_length, &bound) == DSH_INET_WILDCARD && bound.port == 0) {
                source = *route;
                if (source.ss_family == AF_INET)
                        ((struct sockaddr_in *) &source)->sin_port = 0;
                else
                        ((struct sockaddr_in6 *) &source)->sin6_port = 0;
                source_length = source.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
                if (bind(socket_fd, (struct sockaddr *) &source, source_length) < 0)
                        return -EACCES;
                source_length = sizeof(source);
                if (getsockname(socket_fd, (struct sockaddr *) &source, &source_length) < 0)
                        return -EACCES;
        }
        source_length = ipv4_form(&source, source_length);
        result = gate->attach(gate->data, (const struct sockaddr *) &source, source_length,
                              (const struct sockaddr *) original, original_length);
        if (result < 0)
                return result;
        *attachment = (dsh_inet_attachment) { gate, source, source_length };
        return 0;
}

void dsh_inet_attachment_forget(dsh_inet_attachment *attachment)
{
        if (!attachment->gate)
                return;
        attachment->gate->detach(attachment->gate->data, (const struct sockaddr *) &attachment->source,
                                 attachment->source_length);
        attachment->gate = NULL;
}

/*
 * A datagram socket sending to a loopback destination before any bind: the
 * kernel would bind it to the wildcard (where anything outside may send to
 * it), so it is bound on the loopback address of the destination's form
 * first, as a bind of the command's own would be.  0 or a negative errno.
 */
static int bind_unbound_on_loopback(dsh_inet_calls *inet, int socket_fd, const struct sockaddr_storage *toward,
                                    socklen_t toward_length)
{
        struct sockaddr_storage source;
        socklen_t length = sizeof(source);
        dsh_inet_endpoint bound;

        if (dsh_inet_classify(toward, toward_length, NULL) != DSH_INET_LOOPBACK)
                return 0;
        if (getsockname(socket_fd, (struct sockaddr *) &source, &length) < 0)
                return -errno;
        if (dsh_inet_classify(&source, length, &bound) != DSH_INET_WILDCARD || bound.port != 0)
                return 0;
        memcpy(&source, toward, toward_length);
        if (source.ss_family == AF_INET)
                ((struct sockaddr_in *) &source)->sin_port = 0;
        else
                ((struct sockaddr_in6 *) &source)->sin6_port = 0;
        if (bind(socket_fd, (struct sockaddr *) &source, toward_length) < 0)
                return -errno;
        remember_own(inet, socket_fd);
        return 0;
}

/* A destination decided for `socket_fd` (its family and type read from it), redirect and attachment done. */
static int decide_for_socket(dsh_inet_calls *inet, int socket_fd, struct sockaddr_storage *address,
                             socklen_t *length, dsh_inet_attachment *attachment)
{
        struct sockaddr_storage original = *address;
        socklen_t original_length = *length;
        int family = socket_option(socket_fd, SO_DOMAIN), type = socket_option(socket_fd, SO_TYPE);
        bool attach = false;
        int result;

        attachment->gate = NULL;
        if (family < 0 || type < 0)
                return family < 0 ? family : type;
        result = decide_destination(inet, type, address, length, &attach);
        if (result < 0)
                return result;
        fit_route_to_family(family, address, length);
        if (!attach)
                return 0;
        return attach_socket(inet, socket_fd, &original, original_length, address, attachment);
}

int dsh_inet_decide_connect(dsh_inet_calls *inet, int socket_fd, struct sockaddr_storage *address,
                            socklen_t *length, dsh_inet_attachment *attachment)
{
        attachment->gate = NULL;
        if (!dsh_inet_calls_enforce(inet))
                return 0;
        return decide_for_socket(inet, socket_fd, address, length, attachment);
}

/* ------------------------------------------------------------ bind, listen -- */

/* The command's socket `args[0]`, taken (pidfd_getfd only: a reopening through /proc is no socket). */
static int take_socket(dsh_metadata_call *c, uint64_t command_fd)
{
        int fd = dsh_metadata_acquire_descriptor(c, (int) command_fd, false);

        if (fd >= 0 && c->reopened) {
                close(fd);
                c->unreadable = true;
                return -EACCES;
        }
        return fd;
}

/*
 * An inet bind's address: the wildcard becomes the loopback of its form,
 * loopback stays, anything else is EADDRNOTAVAIL.  AF_UNSPEC with the
 * wildcard address is what inet_bind() takes as AF_INET's wildcard (an old
 * compatibility): it is bound as 127.0.0.1 too.
 */
static int decide_bind_address(int family, struct sockaddr_storage *address, socklen_t length)
{
        dsh_inet_kind kind;

        if (family == AF_INET && length >= sizeof(struct sockaddr_in) && address->ss_family == AF_UNSPEC &&
            ((struct sockaddr_in *) address)->sin_addr.s_addr == htonl(INADDR_ANY))
                address->ss_family = AF_INET;
        if (address->ss_family != family)
                return length < sizeof(sa_family_t) ? -EINVAL : -EAFNOSUPPORT;
        kind = dsh_inet_classify(address, length, NULL);
        if (kind == DSH_INET_INVALID)
                return -EINVAL;
        if (kind == DSH_INET_WILDCARD)
                dsh_inet_wildcard_to_loopback(address, length);
        else if (kind != DSH_INET_LOOPBACK)
                return -EADDRNOTAVAIL;
        return 0;
}

static int handle_bind(dsh_inet_calls *inet, dsh_metadata_call *c, const struct seccomp_notif *request, int fd,
                       int family, bool *let_through)
{
        struct sockaddr_storage address;
        int64_t length = (int32_t) request->data.args[2];
        int result;

        if (family != AF_INET && family != AF_INET6) {
                *let_through = true;  /* unix, netlink: not the network (inet-call.h says why it is safe) */
                return 0;
        }
        if (length < 0 || length > (int64_t) sizeof(address))
                return -EINVAL;
        memset(&address, 0, sizeof(address));
        result = dsh_metadata_copy_exact(c, request->data.args[1], &address, (size_t) length);
        if (result == 0)
                result = decide_bind_address(family, &address, (socklen_t) length);
        if (result == 0 && !dsh_metadata_call_still_valid(c))
                return 1;
        if (result == 0)
                result = bind(fd, (struct sockaddr *) &address, (socklen_t) length) < 0 ? -errno : 0;
        if (result == 0)
                remember_own(inet, fd);
        return result;
}

/* listen on an inet socket: bound on loopback first if unbound; refused when bound anywhere else. */
static int handle_listen(dsh_inet_calls *inet, const struct seccomp_notif *request, int fd, int family)
{
        struct sockaddr_storage address;
        socklen_t length = sizeof(address);
        dsh_inet_endpoint bound;
        dsh_inet_kind kind;

        if (family == AF_INET || family == AF_INET6) {
                if (getsockname(fd, (struct sockaddr *) &address, &length) < 0)
                        return -errno;
                kind = dsh_inet_classify(&address, length, &bound);
                if (kind == DSH_INET_WILDCARD && bound.port == 0) {
                        length = dsh_inet_loopback_address(family, 0, &address);
                        if (bind(fd, (struct sockaddr *) &address, length) < 0)
                                return -errno;
                        remember_own(inet, fd);
                } else if (kind != DSH_INET_LOOPBACK) {
                        record(inet, &bound, DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED);
                        return -EACCES;
                }
        }
        return listen(fd, (int) request->data.args[1]) < 0 ? -errno : 0;
}

/* ------------------------------------------------------------------ sending -- */

struct send_work {
        int socket_fd;
        int flags;
        dsh_inet_message message;
        int taken[DSH_INET_RIGHTS_LIMIT];       /* our copies of the SCM_RIGHTS descriptors */
        size_t taken_count;
        size_t already_sent;                    /* a stream send begun without waiting: what went out */
        bool connect_first;                     /* a TCP Fast Open redirected: connect, then send */
        struct sockaddr_storage connect_to;
        socklen_t connect_length;
        dsh_inet_attachment attachment;
};

static void send_work_release(void *data)
{
        struct send_work *work = data;

        for (size_t i = 0; i < work->taken_count; i++)
                close(work->taken[i]);
        if (work->socket_fd >= 0)
                close(work->socket_fd);
        dsh_inet_message_clear(&work->message);
        free(work);
}

static long send_work_perform(void *data)
{
        struct send_work *work = data;
        struct iovec vector;
        struct msghdr header;
        ssize_t sent;

        if (work->connect_first &&
            connect(work->socket_fd, (struct sockaddr *) &work->connect_to, work->connect_length) < 0 &&
            errno != EINPROGRESS) {
                int error = errno;

                dsh_inet_attachment_forget(&work->attachment);
                return -error;
        }
        dsh_inet_message_header(&work->message, &vector, &header);
        if (work->already_sent > 0) {
                /* The rest of a stream send begun here: its name and control data went with the first part. */
                vector.iov_base = work->message.data + work->already_sent;
                vector.iov_len = work->message.data_length - work->already_sent;
                header.msg_name = NULL;
                header.msg_namelen = 0;
                header.msg_control = NULL;
                header.msg_controllen = 0;
        }
        sent = sendmsg(work->socket_fd, &header, work->flags | MSG_NOSIGNAL);
        if (work->already_sent > 0)
                return sent < 0 ? (long) work->already_sent : (long) (work->already_sent + (size_t) sent);
        /*
         * MSG_NOSIGNAL is ours (the supervisor must not take SIGPIPE).  A
         * redirected Fast Open on a socket that does not wait answers what
         * the kernel's own Fast Open answers when the data could not ride the
         * handshake: EINPROGRESS, nothing sent (the caller sends it again).
         */
        if (sent < 0 && work->connect_first && errno == EAGAIN)
                return -EINPROGRESS;
        return sent < 0 ? -errno : (long) sent;
}

struct take_context {
        dsh_metadata_call *c;
};

static int take_right(void *data, int fd)
{
        struct take_context *context = data;
        int mine = dsh_metadata_acquire_descriptor(context->c, fd, false);

        if (mine >= 0 && context->c->reopened) {
                close(mine);
                return -EBADF;  /* a reopening through /proc is not the command's open file */
        }
        return mine;
}

static int reader(void *data, uint64_t address, void *buffer, size_t size)
{
        return dsh_metadata_copy_exact(data, address, buffer, size);
}

/* The message of a unix (or netlink) socket: its descriptors taken; no address for a unix datagram socket. */
static int prepare_local(dsh_metadata_call *c, struct send_work *work, int family, int type)
{
        struct take_context context = { c };

        if (family == AF_UNIX && type == SOCK_DGRAM && work->message.name_length > 0)
                return -EACCES;  /* to any pathname socket, by the supervisor outside every domain: never */
        return dsh_inet_message_take_rights(&work->message, take_right, &context, work->taken, &work->taken_count);
}

/* The message of an inet socket: its destination decided (a datagram, a Fast Open), else no address. */
static int prepare_inet(dsh_inet_calls *inet, struct send_work *work, int type)
{
        dsh_inet_message *message = &work->message;
        int result;

        if (message->truncated && type != SOCK_STREAM)
                return -EMSGSIZE;
        if (dsh_inet_message_routes(message))
                return -EPERM;  /* a source route or routing header: the packet would go elsewhere */
        if (message->name_length == 0)
                return 0;
        if (type == SOCK_STREAM && !(work->flags & MSG_FASTOPEN)) {
                message->name_length = 0;  /* ignored by the kernel but for Fast Open: dropped all the same */
                return 0;
        }
        result = decide_for_socket(inet, work->socket_fd, &message->name, &message->name_length, &work->attachment);
        if (result == 0 && type == SOCK_DGRAM && !work->attachment.gate)
                result = bind_unbound_on_loopback(inet, work->socket_fd, &message->name, message->name_length);
        if (result < 0 || !work->attachment.gate)
                return result;
        if (type != SOCK_STREAM) {
                dsh_inet_attachment_forget(&work->attachment);
                return -EACCES;  /* only a stream is captured by the proxy: a datagram is never attached */
        }
        /* A Fast Open redirected to the proxy: a plain connect there, then the data. */
        work->connect_first = true;
        work->connect_to = message->name;
        work->connect_length = message->name_length;
        message->name_length = 0;
        work->flags &= ~MSG_FASTOPEN;
        return 0;
}

static bool would_block(const struct send_work *work)
{
        int status = fcntl(work->socket_fd, F_GETFL);

        return !(work->flags & MSG_DONTWAIT) && (status < 0 || !(status & O_NONBLOCK));
}

/* Copies and decides one message for `socket_fd` (taken, and the work's from here).  0 or a negative errno. */
static int prepare_send(dsh_inet_calls *inet, dsh_metadata_call *c, struct send_work *work)
{
        int family = socket_option(work->socket_fd, SO_DOMAIN), type = socket_option(work->socket_fd, SO_TYPE);

        if (family < 0 || type < 0)
                return family < 0 ? family : type;
        if (family == AF_INET || family == AF_INET6)
                return prepare_inet(inet, work, type);
        return prepare_local(c, work, family, type);
}

static struct send_work *send_work_new(int socket_fd, int flags)
{
        struct send_work *work = calloc(1, sizeof(*work));

        if (!work)
                return NULL;
        work->socket_fd = socket_fd;
        work->flags = flags;
        return work;
}

/*
 * A send on a socket that waits: tried here without waiting first (a buffer
 * with room, the common case, costs no thread); what would wait — nothing
 * sent (EAGAIN), or the rest of a stream send — is a worker's, which
 * answers the call with the whole count.  Not a Fast Open: its connect may
 * wait too.  The work is taken.
 */
static bool send_may_block(dsh_call_workers *workers, dsh_metadata_call *c, struct send_work *work)
{
        dsh_call_work job = { send_work_perform, send_work_release, work };
        long sent = -EAGAIN;
        int result;

        /* A Fast Open would start its handshake and answer EINPROGRESS: the waiting kind is the worker's. */
        if (!work->connect_first && !(work->flags & MSG_FASTOPEN)) {
                work->flags |= MSG_DONTWAIT;
                sent = send_work_perform(work);
                work->flags &= ~MSG_DONTWAIT;
        }
        if (sent >= 0 && ((size_t) sent >= work->message.data_length ||
                          socket_option(work->socket_fd, SO_TYPE) != SOCK_STREAM)) {
                dsh_call_answer(c->listener, c->id, sent);
                send_work_release(work);
                return false;
        }
        if (sent < 0 && sent != -EAGAIN) {
                dsh_call_answer(c->listener, c->id, sent);
                send_work_release(work);
                return false;
        }
        if (sent > 0)
                work->already_sent = (size_t) sent;
        result = dsh_call_workers_run(workers, c->listener, c->id, &job);
        if (result < 0)
                dsh_call_answer(c->listener, c->id, sent > 0 ? sent : result);
        return false;
}

/* sendto and sendmsg: one message, performed here or by a worker; answered either way. */
static bool handle_send(dsh_inet_calls *inet, dsh_call_workers *workers, dsh_metadata_call *c,
                        const struct seccomp_notif *request, int fd)
{
        const __u64 *args = request->data.args;
        bool is_sendto = request->data.nr == __NR_sendto;
        struct send_work *work = send_work_new(fd, (int) (is_sendto ? args[3] : args[2]));
        int result;

        if (!work) {
                close(fd);
                dsh_call_answer(c->listener, c->id, -ENOMEM);
                return false;
        }
        result = is_sendto ? dsh_inet_message_from_sendto(reader, c, args[1], args[2], args[4], args[5], &work->message)
                           : dsh_inet_message_copy(reader, c, args[1], &work->message);
        if (result == 0)
                result = prepare_send(inet, c, work);
        if (result == 0 && !dsh_metadata_call_still_valid(c)) {
                dsh_inet_attachment_forget(&work->attachment);
                send_work_release(work);
                return false;
        }
        if (result == 0 && would_block(work))
                return send_may_block(workers, c, work);
        if (result == 0) {
                work->flags |= MSG_DONTWAIT;
                dsh_call_answer(c->listener, c->id, send_work_perform(work));
        } else {
                dsh_inet_attachment_forget(&work->attachment);
                dsh_call_answer(c->listener, c->id, c->unreadable ? -EACCES : result);
        }
        send_work_release(work);
        return c->unreadable;
}

/* msg_len of the command's mmsghdr `index`, written back (the command asked for it). */
static int write_sent_length(const dsh_metadata_call *c, uint64_t vector, size_t index, unsigned int length)
{
        struct iovec local = { &length, sizeof(length) };
        struct iovec remote = { (void *) (uintptr_t) (vector + index * sizeof(struct mmsghdr) +
                                                      offsetof(struct mmsghdr, msg_len)),
                                sizeof(length) };

        return process_vm_writev(c->tid, &local, 1, &remote, 1, 0) == (ssize_t) sizeof(length) ? 0 : -EFAULT;
}

/* One of sendmmsg's messages, decided and performed without waiting: its byte count or a negative errno. */
static long send_one_of_many(dsh_inet_calls *inet, dsh_metadata_call *c, int fd, uint64_t address, int flags)
{
        struct send_work *work;
        int taken = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        long result;

        if (taken < 0)
                return -errno;
        work = send_work_new(taken, flags | MSG_DONTWAIT);
        if (!work) {
                close(taken);
                return -ENOMEM;
        }
        result = dsh_inet_message_copy(reader, c, address + offsetof(struct mmsghdr, msg_hdr), &work->message);
        if (result == 0)
                result = prepare_send(inet, c, work);
        if (result == 0 && !dsh_metadata_call_still_valid(c))
                result = -ESRCH;
        if (result == 0)
                result = send_work_perform(work);
        else
                dsh_inet_attachment_forget(&work->attachment);
        send_work_release(work);
        return result;
}

/*
 * sendmmsg: each message as sendmsg, here and without waiting (inet-call.h
 * says what that leaves), at most MULTIPLE_LIMIT; the count sent, or the
 * first message's error, as the kernel answers.
 */
static bool handle_send_many(dsh_inet_calls *inet, dsh_metadata_call *c, const struct seccomp_notif *request, int fd)
{
        const __u64 *args = request->data.args;
        size_t count = (unsigned int) args[2] > MULTIPLE_LIMIT ? MULTIPLE_LIMIT : (unsigned int) args[2];
        long result = 0;
        size_t sent = 0;

        for (; sent < count; sent++) {
                result = send_one_of_many(inet, c, fd, args[1] + sent * sizeof(struct mmsghdr), (int) args[3]);
                if (result < 0)
                        break;
                if (write_sent_length(c, args[1], sent, (unsigned int) result) < 0) {
                        result = -EFAULT;
                        break;
                }
        }
        close(fd);
        if (result == -ESRCH && sent == 0)
                return false;  /* the thread is gone: nobody to answer */
        dsh_call_answer(c->listener, c->id, sent > 0 ? (long) sent : (c->unreadable ? -EACCES : result));
        return c->unreadable && sent == 0;
}

/* ---------------------------------------------------------------- handling -- */

bool dsh_inet_call_handle(dsh_inet_calls *inet, dsh_call_workers *workers, dsh_metadata_call *c,
                          const struct seccomp_notif *request)
{
        bool let_through = false;
        int fd, family, result;

        if (!dsh_metadata_find_thread_pidfd(c))
                return false;  /* the thread is gone: the tid may already name another */
        fd = c->pidfd < 0 ? -EACCES : take_socket(c, request->data.args[0]);
        if (c->pidfd < 0)
                c->unreadable = true;
        if (fd < 0) {
                dsh_call_answer(c->listener, c->id, c->unreadable ? -EACCES : fd);
                return c->unreadable;
        }
        family = socket_option(fd, SO_DOMAIN);
        if (family < 0) {
                close(fd);
                dsh_call_answer(c->listener, c->id, family);  /* ENOTSOCK: the kernel's answer */
                return false;
        }
        if (request->data.nr == __NR_sendto || request->data.nr == __NR_sendmsg)
                return handle_send(inet, workers, c, request, fd);
        if (request->data.nr == __NR_sendmmsg)
                return handle_send_many(inet, c, request, fd);
        result = request->data.nr == __NR_bind ? handle_bind(inet, c, request, fd, family, &let_through)
                                               : handle_listen(inet, request, fd, family);
        close(fd);
        if (result == 1)
                return false;  /* the thread is gone */
        if (let_through)
                dsh_metadata_call_let_through(c);
        else
                dsh_call_answer(c->listener, c->id, c->unreadable && result < 0 ? -EACCES : result);
        return c->unreadable && result < 0;
}
