/* SPDX-License-Identifier: MIT */
/*
 * The proxy's request-head reader (src/network/http-head.h) and the head it
 * sends on, over arbitrary bytes.  Beyond memory errors and UB: a complete
 * head lies inside the input; its host is a host name or an address
 * literal, never anything else; the head sent on starts with the method,
 * names that host and ends "Connection: close" and a blank line, with no
 * stray CR or LF a server could read as a second request.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-support.h"
#include "network/http-head.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void) argc;
        (void) argv;
        return 0;
}

static void check_forwarded(const char *data, const dsh_http_head *head)
{
        size_t length = 0;
        char *forwarded = dsh_http_head_forwarded(data, head, &length);
        static const char tail[] = "Connection: close\r\n\r\n";

        FUZZ_CHECK(forwarded != NULL);
        FUZZ_CHECK(strncmp(forwarded, head->method, strlen(head->method)) == 0);
        FUZZ_CHECK(length >= sizeof(tail) - 1 && strcmp(forwarded + length - (sizeof(tail) - 1), tail) == 0);
        FUZZ_CHECK(strstr(forwarded, "\r\n\r\n") == forwarded + length - 4);
        for (size_t i = 0; i < length; i++)
                if (forwarded[i] == '\n')
                        FUZZ_CHECK(i > 0 && forwarded[i - 1] == '\r');
        FUZZ_CHECK(strstr(forwarded, head->host) != NULL);
        free(forwarded);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static dsh_http_head head;
        const char *text = (const char *) data;

        switch (dsh_http_head_read(text, size, &head)) {
        case DSH_HTTP_HEAD_COMPLETE:
                FUZZ_CHECK(head.length <= size);
                for (const char *c = head.host; *c; c++)
                        FUZZ_CHECK(islower((unsigned char) *c) || isdigit((unsigned char) *c) || *c == '-' ||
                                   *c == '_' || *c == '.' || (head.host_is_literal && *c == ':'));
                if (head.target != DSH_HTTP_TARGET_ORIGIN)
                        FUZZ_CHECK(head.host[0] != '\0' && head.port != 0);
                if (head.target != DSH_HTTP_TARGET_AUTHORITY && head.host[0] != '\0')
                        check_forwarded(text, &head);
                break;
        case DSH_HTTP_HEAD_INCOMPLETE:
                FUZZ_CHECK(size < DSH_HTTP_HEAD_MAX);
                break;
        case DSH_HTTP_HEAD_MALFORMED:
                break;
        }
        return 0;
}
