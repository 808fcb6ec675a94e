/* SPDX-License-Identifier: MIT */
/* Addresses and /proc/net lines, judged (inet-address.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/inet-address.h"

static const uint8_t mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
static const uint8_t zeros[16];

static dsh_inet_kind kind_of_v4(const uint8_t *bytes)
{
        if (memcmp(bytes, zeros, 4) == 0)
                return DSH_INET_WILDCARD;
        return bytes[0] == 127 ? DSH_INET_LOOPBACK : DSH_INET_OTHER;
}

static dsh_inet_kind classify_v6(const struct sockaddr_in6 *in6, dsh_inet_endpoint *endpoint)
{
        const uint8_t *bytes = in6->sin6_addr.s6_addr;
        static const uint8_t loopback[16] = { [15] = 1 };

        endpoint->port = ntohs(in6->sin6_port);
        if (memcmp(bytes, mapped_prefix, sizeof(mapped_prefix)) == 0) {
                endpoint->v4 = true;
                memcpy(endpoint->address, bytes + 12, 4);
                return kind_of_v4(bytes + 12);
        }
        endpoint->v4 = false;
        memcpy(endpoint->address, bytes, 16);
        if (memcmp(bytes, zeros, 16) == 0)
                return DSH_INET_WILDCARD;
        return memcmp(bytes, loopback, 16) == 0 ? DSH_INET_LOOPBACK : DSH_INET_OTHER;
}

dsh_inet_kind dsh_inet_classify(const struct sockaddr_storage *address, socklen_t length,
                                dsh_inet_endpoint *endpoint)
{
        dsh_inet_endpoint ignored;

        if (!endpoint)
                endpoint = &ignored;
        memset(endpoint, 0, sizeof(*endpoint));
        if (length < sizeof(sa_family_t))
                return DSH_INET_INVALID;
        if (address->ss_family == AF_UNSPEC)
                return DSH_INET_UNSPEC;
        if (address->ss_family == AF_INET && length >= sizeof(struct sockaddr_in)) {
                const struct sockaddr_in *in = (const struct sockaddr_in *) address;

                endpoint->v4 = true;
                endpoint->port = ntohs(in->sin_port);
                memcpy(endpoint->address, &in->sin_addr, 4);
                return kind_of_v4(endpoint->address);
        }
        if (address->ss_family == AF_INET6 && length >= 24)
                return classify_v6((const struct sockaddr_in6 *) address, endpoint);
        return DSH_INET_INVALID;
}

void dsh_inet_wildcard_to_loopback(struct sockaddr_storage *address, socklen_t length)
{
        if (dsh_inet_classify(address, length, NULL) != DSH_INET_WILDCARD)
                return;
        if (address->ss_family == AF_INET) {
                ((struct sockaddr_in *) address)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        } else {
                uint8_t *bytes = ((struct sockaddr_in6 *) address)->sin6_addr.s6_addr;

                if (memcmp(bytes, mapped_prefix, sizeof(mapped_prefix)) == 0)
                        bytes[12] = 127, bytes[15] = 1;
                else
                        bytes[15] = 1;
        }
}

socklen_t dsh_inet_loopback_address(int family, uint16_t port, struct sockaddr_storage *address)
{
        memset(address, 0, sizeof(*address));
        if (family == AF_INET) {
                struct sockaddr_in *in = (struct sockaddr_in *) address;

                in->sin_family = AF_INET;
                in->sin_port = htons(port);
                in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                return sizeof(*in);
        }
        if (family == AF_INET6) {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) address;

                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons(port);
                in6->sin6_addr = in6addr_loopback;
                return sizeof(*in6);
        }
        return 0;
}

void dsh_inet_endpoint_text(const dsh_inet_endpoint *endpoint, char *text, size_t size)
{
        if (!inet_ntop(endpoint->v4 ? AF_INET : AF_INET6, endpoint->address, text, (socklen_t) size) && size > 0)
                text[0] = '\0';
}

/* `count` hexadecimal digits at `*cursor` into `*value`; the cursor moves past them. */
static bool parse_hex(const char **cursor, size_t count, unsigned long *value)
{
        unsigned long result = 0;

        for (size_t i = 0; i < count; i++) {
                char digit = (*cursor)[i];
                unsigned int nibble;

                if (digit >= '0' && digit <= '9')
                        nibble = (unsigned int) (digit - '0');
                else if (digit >= 'A' && digit <= 'F')
                        nibble = (unsigned int) (digit - 'A' + 10);
                else if (digit >= 'a' && digit <= 'f')
                        nibble = (unsigned int) (digit - 'a' + 10);
                else
                        return false;
                result = (result << 4) | nibble;
        }
        *cursor += count;
        *value = result;
        return true;
}

static const char *skip_spaces(const char *cursor)
{
        while (*cursor == ' ')
                cursor++;
        return cursor;
}

/*
 * "ADDR:PORT": the kernel prints each 32-bit word of the address as the
 * host-order value of its memory (%08X), so storing the word back in host
 * order gives the bytes in network order again.
 */
static bool parse_endpoint(const char **cursor, bool ipv6, uint8_t *bytes, uint16_t *port)
{
        unsigned long word, value;

        for (size_t i = 0; i < (ipv6 ? 4U : 1U); i++) {
                uint32_t host_word;

                if (!parse_hex(cursor, 8, &word))
                        return false;
                host_word = (uint32_t) word;
                memcpy(bytes + 4 * i, &host_word, 4);
        }
        if (**cursor != ':')
                return false;
        (*cursor)++;
        if (!parse_hex(cursor, 4, &value) || **cursor != ' ')
                return false;
        *port = (uint16_t) value;
        return true;
}

/* Skips `count` blank-separated fields. */
static const char *skip_fields(const char *cursor, int count)
{
        for (int i = 0; i < count && cursor; i++) {
                cursor = skip_spaces(cursor);
                if (*cursor == '\0' || *cursor == '\n')
                        return NULL;
                while (*cursor && *cursor != ' ' && *cursor != '\n')
                        cursor++;
        }
        return cursor;
}

bool dsh_proc_net_parse_line(const char *line, bool ipv6, dsh_proc_net_entry *entry)
{
        const char *cursor = skip_spaces(line);
        uint8_t bytes[16] = { 0 }, remote[16];
        uint16_t remote_port;
        unsigned long state;
        char *end;

        memset(entry, 0, sizeof(*entry));
        /* "sl:" */
        while (*cursor >= '0' && *cursor <= '9')
                cursor++;
        if (cursor == skip_spaces(line) || *cursor != ':')
                return false;
        cursor = skip_spaces(cursor + 1);
        if (!parse_endpoint(&cursor, ipv6, bytes, &entry->local.port))
                return false;
        cursor = skip_spaces(cursor);
        if (!parse_endpoint(&cursor, ipv6, remote, &remote_port))
                return false;
        cursor = skip_spaces(cursor);
        if (!parse_hex(&cursor, 2, &state) || *cursor != ' ')
                return false;
        entry->state = (unsigned int) state;
        /* tx_queue:rx_queue tr:tm->when retrnsmt uid timeout, then the inode */
        cursor = skip_fields(cursor, 5);
        if (!cursor)
                return false;
        cursor = skip_spaces(cursor);
        if (*cursor < '0' || *cursor > '9')
                return false;
        entry->inode = strtoul(cursor, &end, 10);
        if (end == cursor || (*end != ' ' && *end != '\n' && *end != '\0'))
                return false;
        if (!ipv6) {
                entry->local.v4 = true;
                memcpy(entry->local.address, bytes, 4);
                entry->wildcard = memcmp(bytes, zeros, 4) == 0;
        } else if (memcmp(bytes, mapped_prefix, sizeof(mapped_prefix)) == 0) {
                entry->local.v4 = true;
                memcpy(entry->local.address, bytes + 12, 4);
                entry->wildcard = memcmp(bytes + 12, zeros, 4) == 0;
        } else {
                memcpy(entry->local.address, bytes, 16);
                entry->wildcard = entry->any_family = memcmp(bytes, zeros, 16) == 0;
        }
        return true;
}

bool dsh_proc_net_entry_serves(const dsh_proc_net_entry *entry, const dsh_inet_endpoint *destination)
{
        if (entry->local.port != destination->port)
                return false;
        if (entry->any_family)
                return true;
        if (entry->local.v4 != destination->v4)
                return false;
        return entry->wildcard || memcmp(entry->local.address, destination->address, destination->v4 ? 4 : 16) == 0;
}
