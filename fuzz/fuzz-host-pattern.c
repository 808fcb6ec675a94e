/* SPDX-License-Identifier: MIT */
/*
 * Allow-list entries over arbitrary text (base/host-pattern.c).  Beyond
 * memory errors and UB it checks the parser's promises: a refusal gives a
 * reason and leaves the pattern zeroed; an accepted name is lower case,
 * without a trailing dot, of two labels or more, and allows itself (or, for
 * "*.domain", a name beneath it) but never the bare domain of a wildcard;
 * an accepted address allows itself.  The input is also matched, as a host,
 * against a fixed allow-list, and its first bytes judged as addresses.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/host-pattern.h"
#include "fuzz-support.h"

static void check_accepted(const dsh_host_pattern *pattern)
{
        char beneath[300];

        switch (pattern->kind) {
        case DSH_HOST_PATTERN_NAME:
        case DSH_HOST_PATTERN_SUBDOMAINS:
                FUZZ_CHECK(pattern->name[0] != '\0' && strchr(pattern->name, '.'));
                FUZZ_CHECK(pattern->name[strlen(pattern->name) - 1] != '.');
                for (const char *c = pattern->name; *c; c++)
                        FUZZ_CHECK(!(*c >= 'A' && *c <= 'Z') && *c != '*' && *c != ':');
                snprintf(beneath, sizeof(beneath), "x.%s", pattern->name);
                if (pattern->kind == DSH_HOST_PATTERN_NAME) {
                        FUZZ_CHECK(dsh_host_pattern_matches(pattern, pattern->name, pattern->port));
                } else {
                        FUZZ_CHECK(!dsh_host_pattern_matches(pattern, pattern->name, pattern->port));
                        FUZZ_CHECK(strlen(beneath) > 253 ||
                                   dsh_host_pattern_matches(pattern, beneath, pattern->port));
                }
                break;
        case DSH_HOST_PATTERN_IPV4:
                FUZZ_CHECK(dsh_host_patterns_allow_address(pattern, 1, AF_INET, &pattern->ipv4, pattern->port));
                break;
        case DSH_HOST_PATTERN_IPV6:
                FUZZ_CHECK(dsh_host_patterns_allow_address(pattern, 1, AF_INET6, &pattern->ipv6, pattern->port));
                break;
        }
}

static void check_as_host(const char *text)
{
        static const char *const entries[] = { "example.com", "*.example.com:443", "10.0.0.1", "[2001:db8::1]:80" };
        dsh_host_pattern patterns[4];

        for (size_t i = 0; i < 4; i++)
                FUZZ_CHECK(dsh_host_pattern_parse(entries[i], &patterns[i], NULL) == 0);
        (void) dsh_host_patterns_allow(patterns, 4, text, 0);
        (void) dsh_host_patterns_allow(patterns, 4, text, 443);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void) argc;
        (void) argv;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const dsh_host_pattern zero;
        char *text = malloc(size + 1);
        dsh_host_pattern pattern;
        const char *reason = NULL;
        uint8_t address[16] = { 0 };

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (dsh_host_pattern_parse(text, &pattern, &reason) == 0) {
                FUZZ_CHECK(reason == NULL);
                check_accepted(&pattern);
        } else {
                FUZZ_CHECK(reason != NULL);
                fuzz_check_one_printable_line(reason);
                FUZZ_CHECK(memcmp(&pattern, &zero, sizeof(pattern)) == 0);
        }
        check_as_host(text);
        memcpy(address, data, size < sizeof(address) ? size : sizeof(address));
        (void) dsh_address_is_metadata(AF_INET, address);
        (void) dsh_address_is_metadata(AF_INET6, address);
        free(text);
        return 0;
}
