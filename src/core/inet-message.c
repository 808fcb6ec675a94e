/* SPDX-License-Identifier: MIT */
/* A message of the command's, copied out bounded (inet-message.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/uio.h>

#include "core/inet-message.h"

void dsh_inet_message_clear(dsh_inet_message *message)
{
        free(message->data);
        free(message->control);
        memset(message, 0, sizeof(*message));
}

static int copy_name(dsh_command_reader read, void *reader_data, uint64_t address, uint64_t length,
                     dsh_inet_message *message)
{
        /* A socklen_t is an int to the kernel: a negative one is EINVAL; a longer one is cut. */
        if ((int32_t) length < 0)
                return -EINVAL;
        if (address == 0 || length == 0)
                return 0;
        message->name_length = (socklen_t) (length > sizeof(message->name) ? sizeof(message->name) : length);
        return read(reader_data, address, &message->name, message->name_length);
}

/* Room for `asked` bytes of data, at most DSH_INET_DATA_LIMIT (beyond it the copy is `truncated`). */
static int allocate_data(dsh_inet_message *message, uint64_t asked)
{
        message->data_capacity = asked > DSH_INET_DATA_LIMIT ? DSH_INET_DATA_LIMIT : (size_t) asked;
        message->data = malloc(message->data_capacity > 0 ? message->data_capacity : 1);
        return message->data ? 0 : -ENOMEM;
}

/* One data range appended to the copy, bounded by the room allocated. */
static int copy_data(dsh_command_reader read, void *reader_data, uint64_t address, uint64_t length,
                     dsh_inet_message *message)
{
        size_t room = message->data_capacity - message->data_length;
        size_t taken = length > room ? room : (size_t) length;
        int result;

        if (length > room)
                message->truncated = true;
        if (taken == 0)
                return 0;
        result = read(reader_data, address, message->data + message->data_length, taken);
        if (result == 0)
                message->data_length += taken;
        return result;
}

/*
 * The iovecs (at most DSH_INET_IOV_LIMIT, read whole first), then the data
 * they name, into a buffer of the size asked (bounded by DSH_INET_DATA_LIMIT):
 * a small send costs a small copy.
 */
static int copy_iovecs(dsh_command_reader read, void *reader_data, uint64_t address, uint64_t count,
                       dsh_inet_message *message)
{
        struct iovec *vectors;
        uint64_t total = 0;
        int result;

        if (count > DSH_INET_IOV_LIMIT)
                return -EMSGSIZE;
        if (count == 0)
                return 0;
        vectors = calloc((size_t) count, sizeof(*vectors));
        if (!vectors)
                return -ENOMEM;
        result = read(reader_data, address, vectors, (size_t) count * sizeof(*vectors));
        for (size_t i = 0; result == 0 && i < count; i++) {
                if ((int64_t) vectors[i].iov_len < 0)
                        result = -EINVAL;
                else if (total < DSH_INET_DATA_LIMIT)
                        total += vectors[i].iov_len;
        }
        if (result == 0)
                result = allocate_data(message, total);
        for (size_t i = 0; result == 0 && i < count; i++)
                result = copy_data(read, reader_data, (uint64_t) (uintptr_t) vectors[i].iov_base,
                                   vectors[i].iov_len, message);
        free(vectors);
        return result;
}

static int copy_control(dsh_command_reader read, void *reader_data, uint64_t address, uint64_t length,
                        dsh_inet_message *message)
{
        if (address == 0 || length == 0)
                return 0;
        if (length > DSH_INET_CONTROL_LIMIT)
                return -ENOBUFS;
        message->control = malloc((size_t) length);
        if (!message->control)
                return -ENOMEM;
        message->control_length = (size_t) length;
        return read(reader_data, address, message->control, (size_t) length);
}


int dsh_inet_message_copy(dsh_command_reader read, void *reader_data, uint64_t address, dsh_inet_message *message)
{
        struct msghdr header;
        int result;

        memset(message, 0, sizeof(*message));
        result = read(reader_data, address, &header, sizeof(header));
        if (result == 0)
                result = copy_name(read, reader_data, (uint64_t) (uintptr_t) header.msg_name, header.msg_namelen,
                                   message);
        if (result == 0)
                result = copy_iovecs(read, reader_data, (uint64_t) (uintptr_t) header.msg_iov, header.msg_iovlen,
                                     message);
        if (result == 0)
                result = copy_control(read, reader_data, (uint64_t) (uintptr_t) header.msg_control,
                                      header.msg_controllen, message);
        message->flags = header.msg_flags;
        if (result < 0)
                dsh_inet_message_clear(message);
        return result;
}

int dsh_inet_message_from_sendto(dsh_command_reader read, void *reader_data, uint64_t buffer, uint64_t length,
                                 uint64_t address, uint64_t address_length, dsh_inet_message *message)
{
        int result;

        memset(message, 0, sizeof(*message));
        result = copy_name(read, reader_data, address, address_length, message);
        if (result == 0)
                result = allocate_data(message, length);
        /* sendto's length is a size_t the kernel cuts to MAX_RW_COUNT: past our bound it is truncated anyway. */
        if (result == 0)
                result = copy_data(read, reader_data, buffer, length, message);
        if (result < 0)
                dsh_inet_message_clear(message);
        return result;
}

/* The kernel's CMSG_OK: the header fits, and its length stays inside the control data. */
static bool header_fits(const dsh_inet_message *message, const struct cmsghdr *header)
{
        size_t offset = (size_t) ((const unsigned char *) header - message->control);

        return header->cmsg_len >= sizeof(struct cmsghdr) && header->cmsg_len <= message->control_length - offset;
}

static int take_header_rights(struct cmsghdr *header, int (*take)(void *data, int fd), void *take_data, int *taken,
                              size_t *taken_count)
{
        size_t count;
        unsigned char *fds = CMSG_DATA(header);

        if (header->cmsg_len < CMSG_LEN(0))
                return -EINVAL;
        count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        if (*taken_count + count > DSH_INET_RIGHTS_LIMIT)
                return -EINVAL;
        for (size_t i = 0; i < count; i++) {
                int fd, mine;

                memcpy(&fd, fds + i * sizeof(int), sizeof(int));
                mine = take(take_data, fd);
                if (mine < 0)
                        return mine;
                taken[(*taken_count)++] = mine;
                memcpy(fds + i * sizeof(int), &mine, sizeof(int));
        }
        return 0;
}

/*
 * The kernel's walk (for_each_cmsghdr over __cmsg_nxthdr), not glibc's
 * CMSG_NXTHDR, which also stops before a last header whose aligned length
 * overruns the buffer: the kernel would still read that one, and an
 * SCM_RIGHTS there, missed here, would name the supervisor's own
 * descriptors.
 */
static struct cmsghdr *next_header(const dsh_inet_message *message, const struct cmsghdr *header)
{
        size_t offset = (size_t) ((const unsigned char *) header - message->control) + CMSG_ALIGN(header->cmsg_len);

        if (offset > message->control_length || message->control_length - offset < sizeof(struct cmsghdr))
                return NULL;
        /* Through void *: the buffer is malloc'd and each header starts at a CMSG_ALIGN'd offset. */
        return (struct cmsghdr *) (void *) (message->control + offset);
}

int dsh_inet_message_take_rights(dsh_inet_message *message, int (*take)(void *data, int fd), void *take_data,
                                 int *taken, size_t *taken_count)
{
        *taken_count = 0;
        if (message->control_length < sizeof(struct cmsghdr))
                return 0;  /* the kernel's CMSG_FIRSTHDR finds no header in less */
        for (struct cmsghdr *cmsg = (struct cmsghdr *) (void *) message->control; cmsg;
             cmsg = next_header(message, cmsg)) {
                int result;

                if (!header_fits(message, cmsg))
                        return -EINVAL;
                if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
                        continue;
                result = take_header_rights(cmsg, take, take_data, taken, taken_count);
                if (result < 0)
                        return result;
        }
        return 0;
}

/*
 * A packet-info header's interface: none (0) or the loopback device (the
 * kernel's LOOPBACK_IFINDEX, 1 in every namespace) keeps a datagram for
 * loopback on loopback; any other sends it out of that device, its
 * loopback destination kept, onto the device's link.  A header too short
 * to hold one counts as another (the kernel refuses it anyway).
 */
static bool names_another_interface(const struct cmsghdr *header, size_t size, size_t index_offset)
{
        int index;

        if (header->cmsg_len < CMSG_LEN(size))
                return true;
        memcpy(&index, CMSG_DATA(header) + index_offset, sizeof(index));
        return index != 0 && index != 1;
}

static bool header_routes(const struct cmsghdr *header)
{
        if (header->cmsg_level == SOL_IP)
                return header->cmsg_type == IP_RETOPTS ||
                       (header->cmsg_type == IP_PKTINFO &&
                        names_another_interface(header, sizeof(struct in_pktinfo),
                                                offsetof(struct in_pktinfo, ipi_ifindex)));
        return header->cmsg_level == SOL_IPV6 &&
               (header->cmsg_type == IPV6_RTHDR || header->cmsg_type == IPV6_2292RTHDR ||
                header->cmsg_type == IPV6_NEXTHOP ||
                (header->cmsg_type == IPV6_PKTINFO &&
                 names_another_interface(header, sizeof(struct in6_pktinfo),
                                         offsetof(struct in6_pktinfo, ipi6_ifindex))));
}

bool dsh_inet_message_routes(const dsh_inet_message *message)
{
        if (message->control_length < sizeof(struct cmsghdr))
                return false;  /* no header: the kernel's CMSG_FIRSTHDR finds none either */
        for (const struct cmsghdr *cmsg = (const struct cmsghdr *) (const void *) message->control; cmsg;
             cmsg = next_header(message, cmsg))
                if (!header_fits(message, cmsg) || header_routes(cmsg))
                        return true;
        return false;
}

void dsh_inet_message_header(dsh_inet_message *message, struct iovec *data, struct msghdr *header)
{
        *data = (struct iovec) { message->data, message->data_length };
        *header = (struct msghdr) {
                .msg_name = message->name_length > 0 ? &message->name : NULL,
                .msg_namelen = message->name_length,
                .msg_iov = data,
                .msg_iovlen = 1,
                .msg_control = message->control,
                .msg_controllen = message->control_length,
        };
}
