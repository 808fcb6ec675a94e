/* SPDX-License-Identifier: MIT */
/*
 * Allow-list entries: parsed once, matched by the DNS stub, the proxy and
 * the gate (host-pattern.h, docs/network.md "Patterns").
 *
 * What an entry may say is narrow on purpose.  An entry is a grant to reach
 * the outside, so every form that could grant more than it reads is refused
 * rather than interpreted:
 *   - "*" alone, and a bare top-level name ("com", "*.com"): the whole
 *     internet, or a whole registry of it;
 *   - a wildcard anywhere but as the whole first label ("*foo.com",
 *     "a.*.com"): no one reads those the same way twice;
 *   - a scheme, a path, a query, user info: a URL pasted where a host goes;
 *     what it seemed to restrict (a path, a scheme) would not be held;
 *   - a top-level label of digits only ("127.1", "10.0.0.010"): the C
 *     library's inet_aton() reads those as addresses, so a "name" would
 *     grant an address nobody wrote down;
 *   - an unbracketed or zoned IPv6 literal, a port outside 1..65535.
 * Matching is as strict: a host that is not a well-formed name or address
 * is allowed by nothing, and "*.domain" never allows domain itself.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/host-pattern.h"

#define HOST_NAME_MAX_LENGTH 253
#define HOST_LABEL_MAX_LENGTH 63

/* ------------------------------------------------------------- names -- */

static bool is_name_character(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static bool all_digits(const char *text, size_t length)
{
        for (size_t i = 0; i < length; i++)
                if (text[i] < '0' || text[i] > '9')
                        return false;
        return length > 0;
}

/*
 * Copies `text` (`length` bytes, one trailing dot allowed) into `out` in
 * lower case without the dot, checking every label.  Returns the number of
 * labels, or -EINVAL with `*reason`.
 */
static int normalize_name(const char *text, size_t length, char out[HOST_NAME_MAX_LENGTH + 1], const char **reason)
{
        size_t label = 0;
        int labels = 1;

        if (length > 0 && text[length - 1] == '.')
                length--;
        if (length == 0) {
                *reason = "a pattern must name a host";
                return -EINVAL;
        }
        if (length > HOST_NAME_MAX_LENGTH) {
                *reason = "a host name is at most 253 characters";
                return -EINVAL;
        }
        for (size_t i = 0; i < length; i++) {
                if (text[i] == '.') {
                        if (label == 0) {
                                *reason = "a host name has no empty label (\"..\", or a leading dot)";
                                return -EINVAL;
                        }
                        label = 0;
                        labels++;
                        out[i] = '.';
                        continue;
                }
                if (!is_name_character(text[i])) {
                        *reason = text[i] == '*' ? "a wildcard stands alone as the first label (\"*.domain\")"
                                                 : "a host name holds only letters, digits, '-' and '_'";
                        return -EINVAL;
                }
                if (++label > HOST_LABEL_MAX_LENGTH) {
                        *reason = "a label of a host name is at most 63 characters";
                        return -EINVAL;
                }
                out[i] = (char) tolower((unsigned char) text[i]);
        }
        if (label == 0) {
                *reason = "a host name has no empty label (\"..\", or a leading dot)";
                return -EINVAL;
        }
        out[length] = '\0';
        return labels;
}

/* The last label of a normalized name. */
static const char *top_label(const char *name)
{
        const char *dot = strrchr(name, '.');

        return dot ? dot + 1 : name;
}

/* ------------------------------------------------------------- ports -- */

/* ":PORT" or nothing: the port, 0 for none, or -EINVAL with `*reason`. */
static int parse_port(const char *text, unsigned short *port, const char **reason)
{
        unsigned long value = 0;

        *port = 0;
        if (*text == '\0')
                return 0;
        if (*text != ':' || text[1] == '\0') {
                *reason = "a port follows one ':' and is a number from 1 to 65535";
                return -EINVAL;
        }
        for (const char *digit = text + 1; *digit; digit++) {
                if (*digit < '0' || *digit > '9' || value > 65535) {
                        *reason = "a port follows one ':' and is a number from 1 to 65535";
                        return -EINVAL;
                }
                value = value * 10 + (unsigned long) (*digit - '0');
        }
        if (value < 1 || value > 65535) {
                *reason = "a port is a number from 1 to 65535";
                return -EINVAL;
        }
        *port = (unsigned short) value;
        return 0;
}

/* ----------------------------------------------------------- parsing -- */

/* What a URL or a user's mistake looks like, said before anything else is judged. */
static const char *url_reason(const char *text)
{
        if (strstr(text, "://"))
                return "a pattern names a host, not a URL: no scheme (\"https://\")";
        if (strchr(text, '/'))
                return "a pattern names a host, not a URL: no path";
        if (strchr(text, '?') || strchr(text, '#'))
                return "a pattern names a host, not a URL: no query or fragment";
        if (text[0] == '@')
                return "a named set (\"@npm\") is expanded before patterns are parsed";
        if (strchr(text, '@'))
                return "a pattern names a host, not a URL: no user info";
        return NULL;
}

static int parse_ipv6(const char *text, dsh_host_pattern *out, const char **reason)
{
        const char *close = strchr(text, ']');
        char address[INET6_ADDRSTRLEN + 1];
        size_t length;

        if (!close) {
                *reason = "an IPv6 literal is closed by ']'";
                return -EINVAL;
        }
        length = (size_t) (close - text - 1);
        if (length == 0 || length >= sizeof(address)) {
                *reason = "not an IPv6 address between '[' and ']'";
                return -EINVAL;
        }
        memcpy(address, text + 1, length);
        address[length] = '\0';
        if (inet_pton(AF_INET6, address, &out->ipv6) != 1) {
                *reason = strchr(address, '%') ? "an IPv6 literal carries no zone (\"%eth0\")"
                                               : "not an IPv6 address between '[' and ']'";
                return -EINVAL;
        }
        out->kind = DSH_HOST_PATTERN_IPV6;
        return parse_port(close + 1, &out->port, reason);
}

/* "host[:port]", "*.domain[:port]" or "IPV4[:port]". */
static int parse_name_or_ipv4(const char *text, dsh_host_pattern *out, const char **reason)
{
        const char *colon = strchr(text, ':');
        size_t length = colon ? (size_t) (colon - text) : strlen(text);
        char ipv4[INET_ADDRSTRLEN + 1];
        bool wildcard = false;
        int labels;

        if (colon && strchr(colon + 1, ':')) {
                *reason = "an IPv6 literal is written in brackets (\"[::1]:443\")";
                return -EINVAL;
        }
        if (length < sizeof(ipv4)) {
                memcpy(ipv4, text, length);
                ipv4[length] = '\0';
                if (inet_pton(AF_INET, ipv4, &out->ipv4) == 1) {
                        out->kind = DSH_HOST_PATTERN_IPV4;
                        return parse_port(text + length, &out->port, reason);
                }
        }
        if (length == 1 && text[0] == '*') {
                *reason = "a pattern must name a domain (\"*\" alone allows everything)";
                return -EINVAL;
        }
        if (length > 2 && text[0] == '*' && text[1] == '.') {
                wildcard = true;
                text += 2;
                length -= 2;
        }
        labels = normalize_name(text, length, out->name, reason);
        if (labels < 0)
                return labels;
        if (all_digits(top_label(out->name), strlen(top_label(out->name)))) {
                *reason = "not an IPv4 address, and a host name's last label is not all digits";
                return -EINVAL;
        }
        if (labels < 2) {
                *reason = wildcard ? "a wildcard names subdomains of a domain, not of a top-level name (\"*.com\")"
                                   : "a pattern names a host beneath a domain, not a bare top-level name";
                return -EINVAL;
        }
        out->kind = wildcard ? DSH_HOST_PATTERN_SUBDOMAINS : DSH_HOST_PATTERN_NAME;
        return parse_port(text + length, &out->port, reason);
}

int dsh_host_pattern_parse(const char *text, dsh_host_pattern *out, const char **reason)
{
        const char *unused = NULL;
        int result;

        if (!reason)
                reason = &unused;
        *reason = NULL;
        memset(out, 0, sizeof(*out));
        if (!text || text[0] == '\0') {
                *reason = "a pattern must name a host";
                return -EINVAL;
        }
        *reason = url_reason(text);
        if (*reason)
                return -EINVAL;
        result = text[0] == '[' ? parse_ipv6(text, out, reason) : parse_name_or_ipv4(text, out, reason);
        if (result < 0)
                memset(out, 0, sizeof(*out));
        return result;
}

/* ---------------------------------------------------------- addresses -- */

/*
 * An address as the allow-list compares it: an IPv4-mapped IPv6 address
 * (::ffff:a.b.c.d) is the IPv4 address it carries, so that neither form
 * reaches what the other is refused.  Returns the family to compare in.
 */
static int canonical_address(int family, const void *address, struct in_addr *ipv4, struct in6_addr *ipv6)
{
        if (family == AF_INET) {
                memcpy(ipv4, address, sizeof(*ipv4));
                return AF_INET;
        }
        if (family != AF_INET6)
                return AF_UNSPEC;
        memcpy(ipv6, address, sizeof(*ipv6));
        if (IN6_IS_ADDR_V4MAPPED(ipv6)) {
                memcpy(ipv4, &ipv6->s6_addr[12], sizeof(*ipv4));
                return AF_INET;
        }
        return AF_INET6;
}

static bool port_matches(unsigned short pattern_port, unsigned short port)
{
        return pattern_port == 0 || port == 0 || pattern_port == port;
}

static bool pattern_is_address(const dsh_host_pattern *pattern, int family, const void *address, unsigned short port)
{
        struct in_addr ipv4, pattern_ipv4;
        struct in6_addr ipv6, pattern_ipv6;
        int compared, pattern_family;

        if (pattern->kind != DSH_HOST_PATTERN_IPV4 && pattern->kind != DSH_HOST_PATTERN_IPV6)
                return false;
        if (!port_matches(pattern->port, port))
                return false;
        compared = canonical_address(family, address, &ipv4, &ipv6);
        pattern_family = pattern->kind == DSH_HOST_PATTERN_IPV4
                                 ? canonical_address(AF_INET, &pattern->ipv4, &pattern_ipv4, &pattern_ipv6)
                                 : canonical_address(AF_INET6, &pattern->ipv6, &pattern_ipv4, &pattern_ipv6);
        if (compared != pattern_family)
                return false;
        if (compared == AF_INET)
                return ipv4.s_addr == pattern_ipv4.s_addr;
        return compared == AF_INET6 && memcmp(&ipv6, &pattern_ipv6, sizeof(ipv6)) == 0;
}

/* `host` in text form as an address ("1.2.3.4", "::1", "[::1]"): its family, or AF_UNSPEC for a name. */
static int host_as_address(const char *host, struct in_addr *ipv4, struct in6_addr *ipv6)
{
        char bracketed[INET6_ADDRSTRLEN + 1];
        size_t length = strlen(host);

        if (inet_pton(AF_INET, host, ipv4) == 1)
                return AF_INET;
        if (inet_pton(AF_INET6, host, ipv6) == 1)
                return AF_INET6;
        if (length > 2 && length - 2 < sizeof(bracketed) && host[0] == '[' && host[length - 1] == ']') {
                memcpy(bracketed, host + 1, length - 2);
                bracketed[length - 2] = '\0';
                if (inet_pton(AF_INET6, bracketed, ipv6) == 1)
                        return AF_INET6;
        }
        return AF_UNSPEC;
}

static bool name_matches(const dsh_host_pattern *pattern, const char *name)
{
        size_t name_length, pattern_length;

        if (pattern->kind == DSH_HOST_PATTERN_NAME)
                return strcmp(pattern->name, name) == 0;
        if (pattern->kind != DSH_HOST_PATTERN_SUBDOMAINS)
                return false;
        /* Beneath the domain only: "x.example.com" for "*.example.com", never "example.com" nor "xexample.com". */
        name_length = strlen(name);
        pattern_length = strlen(pattern->name);
        return name_length > pattern_length + 1 && name[name_length - pattern_length - 1] == '.' &&
               strcmp(name + name_length - pattern_length, pattern->name) == 0;
}

bool dsh_host_pattern_matches(const dsh_host_pattern *pattern, const char *host, unsigned short port)
{
        char name[HOST_NAME_MAX_LENGTH + 1];
        const char *reason = NULL;
        struct in_addr ipv4;
        struct in6_addr ipv6;
        int family;

        if (!pattern || !host)
                return false;
        family = host_as_address(host, &ipv4, &ipv6);
        if (family == AF_INET)
                return pattern_is_address(pattern, AF_INET, &ipv4, port);
        if (family == AF_INET6)
                return pattern_is_address(pattern, AF_INET6, &ipv6, port);
        /* A host that is no well-formed name (a space, a wildcard, an empty label) is allowed by nothing. */
        if (normalize_name(host, strlen(host), name, &reason) < 0)
                return false;
        return port_matches(pattern->port, port) && name_matches(pattern, name);
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
        if (!address)
                return false;
        for (size_t i = 0; i < count; i++)
                if (pattern_is_address(&patterns[i], family, address, port))
                        return true;
        return false;
}

/*
 * The addresses a cloud hands its instance credentials on, and link-local
 * space in general: 169.254.0.0/16 (AWS, GCP, Azure, OpenStack's
 * 169.254.169.254), Alibaba's 100.100.100.200, fe80::/10, AWS's
 * fd00:ec2::254; an IPv6 address carrying one of the IPv4 ones in the
 * mapped (::ffff:0:0/96) or the NAT64 (64:ff9b::/96) form counts as it.
 */
static bool ipv4_is_metadata(const struct in_addr *address)
{
        uint32_t host = ntohl(address->s_addr);

        /* 0.0.0.0/8 too: a connect there reaches the host itself, and blocking resolvers answer 0.0.0.0. */
        return (host & 0xffff0000u) == 0xa9fe0000u || host == 0x646464c8u || (host & 0xff000000u) == 0;
}

bool dsh_address_is_metadata(int family, const void *address)
{
        static const uint8_t aws_ipv6[16] = { 0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54 };
        static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };
        struct in_addr ipv4;
        struct in6_addr ipv6;
        int compared;

        if (!address)
                return false;
        compared = canonical_address(family, address, &ipv4, &ipv6);
        if (compared == AF_INET)
                return ipv4_is_metadata(&ipv4);
        if (compared != AF_INET6)
                return false;
        if (IN6_IS_ADDR_LINKLOCAL(&ipv6) || IN6_IS_ADDR_UNSPECIFIED(&ipv6) ||
            memcmp(ipv6.s6_addr, aws_ipv6, sizeof(aws_ipv6)) == 0)
                return true;
        if (memcmp(ipv6.s6_addr, nat64, sizeof(nat64)) == 0) {
                memcpy(&ipv4, &ipv6.s6_addr[12], sizeof(ipv4));
                return ipv4_is_metadata(&ipv4);
        }
        return false;
}

/* -------------------------------------------------------- named sets -- */

static const char *const npm_set[] = { "registry.npmjs.org", "registry.yarnpkg.com", NULL };
static const char *const pypi_set[] = { "pypi.org", "files.pythonhosted.org", NULL };
static const char *const github_set[] = { "github.com", "*.github.com", "*.githubusercontent.com", NULL };
static const char *const gitlab_set[] = { "gitlab.com", "*.gitlab.com", NULL };
static const char *const crates_set[] = { "crates.io", "*.crates.io", NULL };
static const char *const go_set[] = { "proxy.golang.org", "sum.golang.org", "*.golang.org", NULL };
static const char *const debian_set[] = { "deb.debian.org", "security.debian.org", NULL };

/* Each name with its patterns at the same index (docs/network.md lists them). */
static const char *const named_set_names[] = { "@npm", "@pypi", "@github", "@gitlab", "@crates", "@go", "@debian",
                                               NULL };
static const char *const *const named_set_patterns[] = { npm_set,    pypi_set, github_set, gitlab_set,
                                                         crates_set, go_set,   debian_set };

_Static_assert(sizeof(named_set_names) / sizeof(named_set_names[0]) - 1 ==
                       sizeof(named_set_patterns) / sizeof(named_set_patterns[0]),
               "every named set has its patterns");

const char *const *dsh_host_named_sets(void)
{
        return named_set_names;
}

const char *const *dsh_host_named_set(const char *name)
{
        if (!name)
                return NULL;
        for (size_t i = 0; named_set_names[i]; i++)
                if (strcmp(named_set_names[i], name) == 0)
                        return named_set_patterns[i];
        return NULL;
}
