/* SPDX-License-Identifier: MIT */
/*
 * A message the command sends (sendto, sendmsg, one of sendmmsg's), copied
 * out of its memory once, bounded, before the supervisor decides or
 * performs anything (inet-call.c).  The decoder reads the command only
 * through a reader it is handed, so that a fuzz target can drive it over a
 * made-up memory (fuzz/fuzz-inet-message.c).  Every length is hostile:
 *   - the name is cut to a sockaddr_storage, as the kernel cuts it, and a
 *     NULL name is no name whatever its length;
 *   - at most DSH_INET_IOV_LIMIT iovecs (the kernel's UIO_MAXIOV:
 *     EMSGSIZE past it), each length a signed size (EINVAL when negative);
 *   - at most DSH_INET_DATA_LIMIT bytes of data are copied: more is
 *     `truncated` (a stream socket then sends a short count, which is
 *     legal; a datagram is refused with EMSGSIZE by the caller);
 *   - at most DSH_INET_CONTROL_LIMIT bytes of control data (ENOBUFS past
 *     it, the kernel's answer for control data over its option memory);
 *   - SCM_RIGHTS is found by the kernel's own walk (CMSG_OK: a header that
 *     does not fit is EINVAL), so that no descriptor number the walk here
 *     missed can reach the kernel as one of the supervisor's own.
 * libc only.
 */
#ifndef DSH_SANDBOX_INET_MESSAGE_H
#define DSH_SANDBOX_INET_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define DSH_INET_DATA_LIMIT (256 * 1024)
#define DSH_INET_CONTROL_LIMIT (64 * 1024)
#define DSH_INET_IOV_LIMIT 1024
/* The kernel's SCM_MAX_FD: descriptors one message may carry. */
#define DSH_INET_RIGHTS_LIMIT 253

/* Copies `size` bytes at the command's `address` into `buffer`: 0, or a negative errno (EFAULT). */
typedef int (*dsh_command_reader)(void *data, uint64_t address, void *buffer, size_t size);

typedef struct dsh_inet_message {
        struct sockaddr_storage name;
        socklen_t name_length;          /* 0: no name */
        unsigned char *data;            /* owned (NULL when empty) */
        size_t data_length;
        size_t data_capacity;           /* what was allocated: the size asked, at most DSH_INET_DATA_LIMIT */
        bool truncated;                 /* the command asked to send more than was copied */
        unsigned char *control;         /* owned (NULL when none) */
        size_t control_length;
        int flags;                      /* msg_flags as given (ignored by the kernel for sendmsg) */
} dsh_inet_message;

/* The struct msghdr at `address`: 0 or a negative errno (then `*message` holds nothing to free). */
int dsh_inet_message_copy(dsh_command_reader read, void *reader_data, uint64_t address, dsh_inet_message *message);

/* sendto's buffer, length, address and address length, as a message: 0 or a negative errno. */
int dsh_inet_message_from_sendto(dsh_command_reader read, void *reader_data, uint64_t buffer, uint64_t length,
                                 uint64_t address, uint64_t address_length, dsh_inet_message *message);

/*
 * Replaces each descriptor of every SCM_RIGHTS of the control data with
 * take(data, fd) (a descriptor of the caller's own, or a negative errno,
 * which is returned), storing each taken one in `taken` (room for
 * DSH_INET_RIGHTS_LIMIT) and their number in `*taken_count`: the caller
 * closes them after the send, also on failure.  Returns 0, -EINVAL for a
 * malformed header or too many descriptors, or take()'s error.
 */
int dsh_inet_message_take_rights(dsh_inet_message *message, int (*take)(void *data, int fd), void *take_data,
                                 int *taken, size_t *taken_count);

/*
 * Whether the control data chooses where an inet packet goes by itself: an
 * IPv4 option (IP_RETOPTS: a source route), an IPv6 routing header
 * (IPV6_RTHDR, IPV6_2292RTHDR) or next hop (IPV6_NEXTHOP), or a packet
 * info (IP_PKTINFO, IPV6_PKTINFO) naming an interface but loopback (the
 * datagram would leave by it, its loopback destination kept).
 * Such a send is refused: the destination the supervisor approved would not
 * be where the packet goes, and the supervisor's own credentials would
 * answer the capability checks some of them make.  Also true for a
 * malformed header (the kernel refuses it anyway).
 */
bool dsh_inet_message_routes(const dsh_inet_message *message);

/* A struct msghdr over the copy (one iovec), for sendmsg(). */
void dsh_inet_message_header(dsh_inet_message *message, struct iovec *data, struct msghdr *header);

void dsh_inet_message_clear(dsh_inet_message *message);

#endif
