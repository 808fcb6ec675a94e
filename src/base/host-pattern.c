/* SPDX-License-Identifier: MIT */
/*
 * TEMPORARY: part A's (issue 21).  A minimal implementation of
 * base/host-pattern.h so that src/network/ links and its tests run with
 * real patterns on branch h21-C; the lead takes part A's file instead.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/host-pattern.h"

static bool parse_port(const char *text, unsigned short *port)
{
        char *end = NULL;
        long value;

        if (*text < '0' || *text > '9')
                return false;
        value = strtol(text, &end, 10);
        if (*end != '\0' || value < 1 || value > 65535)
                return false;
        *port = (unsigned short) value;
        return true;
}

static bool name_is_valid(const char *name)
{
        size_t length = strlen(name), label = 0;

        if (length == 0 || length > 253 || strchr(name, '.') == NULL)
                return false;
        for (const char *c = name; *c; c++) {
                if (*c == '.') {
                        if (label == 0)
                                return false;
                        label = 0;
                        continue;
                }
                if (!isalnum((unsigned char) *c) && *c != '-' && *c != '_')
                        return false;
                if (++label > 63)
                        return false;
        }
        return label > 0;
}

int dsh_host_pattern_parse(const char *text, dsh_host_pattern *out, const char **reason)
{
        char host[300];
        const char *colon;
        size_t length;

        memset(out, 0, sizeof(*out));
        if (text[0] == '[') {
                const char *close = strchr(text, ']');
                if (close == NULL || (size_t) (close - text - 1) >= sizeof(host))
                        goto bad;
                memcpy(host, text + 1, (size_t) (close - text - 1));
                host[close - text - 1] = '\0';
                if (close[1] == ':' && !parse_port(close + 2, &out->port))
                        goto bad;
                if (close[1] != '\0' && close[1] != ':')
                        goto bad;
                if (inet_pton(AF_INET6, host, &out->ipv6) != 1)
                        goto bad;
                out->kind = DSH_HOST_PATTERN_IPV6;
                return 0;
        }
        colon = strchr(text, ':');
        length = colon ? (size_t) (colon - text) : strlen(text);
        if (length >= sizeof(host))
                goto bad;
        memcpy(host, text, length);
        host[length] = '\0';
        if (colon && !parse_port(colon + 1, &out->port))
                goto bad;
        if (inet_pton(AF_INET, host, &out->ipv4) == 1) {
                out->kind = DSH_HOST_PATTERN_IPV4;
                return 0;
        }
        out->kind = DSH_HOST_PATTERN_NAME;
        if (strncmp(host, "*.", 2) == 0) {
                out->kind = DSH_HOST_PATTERN_SUBDOMAINS;
                memmove(host, host + 2, strlen(host + 2) + 1);
        }
        if (length && host[strlen(host) - 1] == '.')
                host[strlen(host) - 1] = '\0';
        if (!name_is_valid(host))
                goto bad;
        for (char *c = host; *c; c++)
                *c = (char) tolower((unsigned char) *c);
        strcpy(out->name, host);
        return 0;
bad:
        if (reason)
                *reason = "not a host pattern";
        return -EINVAL;
}

static bool name_matches(const dsh_host_pattern *pattern, const char *host)
{
        size_t length = strlen(host), own = strlen(pattern->name);

        if (length && host[length - 1] == '.')
                length--;
        if (pattern->kind == DSH_HOST_PATTERN_NAME)
                return length == own && strncasecmp(host, pattern->name, own) == 0;
        return length > own + 1 && host[length - own - 1] == '.' &&
               strncasecmp(host + length - own, pattern->name, own) == 0;
}

bool dsh_host_pattern_matches(const dsh_host_pattern *pattern, const char *host, unsigned short port)
{
        struct in6_addr six;
        struct in_addr four;

        if (pattern->port != 0 && port != 0 && pattern->port != port)
                return false;
        switch (pattern->kind) {
        case DSH_HOST_PATTERN_NAME:
        case DSH_HOST_PATTERN_SUBDOMAINS:
                return name_matches(pattern, host);
        case DSH_HOST_PATTERN_IPV4:
                return inet_pton(AF_INET, host, &four) == 1 && four.s_addr == pattern->ipv4.s_addr;
        case DSH_HOST_PATTERN_IPV6:
                return inet_pton(AF_INET6, host, &six) == 1 && memcmp(&six, &pattern->ipv6, sizeof(six)) == 0;
        }
        return false;
}

bool dsh_host_patterns_allow(const dsh_host_pattern *patterns, size_t count, const char *host, unsigned short port)
{
        for (size_t i = 0; i < count; i++)
                if (dsh_host_pattern_matches(&patterns[i], host, port))
                        return true;
        return false;
}

bool dsh_host_patterns_allow_address(const dsh_host_pattern *patterns, size_t count, int family,
                                     const void *address, unsigned short port)
{
        struct in_addr four;

        if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *) address)) {
                memcpy(&four, (const unsigned char *) address + 12, 4);
                family = AF_INET;
                address = &four;
        }
        for (size_t i = 0; i < count; i++) {
                const dsh_host_pattern *pattern = &patterns[i];
                if (pattern->port != 0 && port != 0 && pattern->port != port)
                        continue;
                if (family == AF_INET && pattern->kind == DSH_HOST_PATTERN_IPV4 &&
                    memcmp(address, &pattern->ipv4, 4) == 0)
                        return true;
                if (family == AF_INET6 && pattern->kind == DSH_HOST_PATTERN_IPV6 &&
                    memcmp(address, &pattern->ipv6, 16) == 0)
                        return true;
        }
        return false;
}

bool dsh_address_is_metadata(int family, const void *address)
{
        static const unsigned char ec2[16] = { 0xfd, 0x00, 0x0e, 0xc2, [15] = 0x54, [14] = 0x02 };
        const unsigned char *bytes = address;

        if (family == AF_INET)
                return bytes[0] == 169 && bytes[1] == 254;
        if (family != AF_INET6)
                return false;
        if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *) address))
                return bytes[12] == 169 && bytes[13] == 254;
        return (bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80) || memcmp(bytes, ec2, 16) == 0;
}

static const char *const no_sets[] = { NULL };

const char *const *dsh_host_named_sets(void)
{
        return no_sets;
}

const char *const *dsh_host_named_set(const char *name)
{
        (void) name;
        return NULL;
}
