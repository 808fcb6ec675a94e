/* SPDX-License-Identifier: MIT */
/*
 * The proxy's ClientHello reader (src/network/tls-hello.h) over arbitrary
 * bytes, as a hostile command would open a captured connection or a
 * CONNECT tunnel.  Beyond memory errors and UB: a name is given only for a
 * whole hello, and a name given is a host name a pattern can speak of
 * (lower case letters, digits, '-', '_', dots; under 254 bytes).
 */
#include <ctype.h>
#include <string.h>

#include "fuzz-support.h"
#include "network/tls-hello.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void) argc;
        (void) argv;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char sni[DSH_TLS_HELLO_NAME_SIZE];
        dsh_tls_hello_status status = dsh_tls_hello_read(data, size, sni);

        switch (status) {
        case DSH_TLS_HELLO_COMPLETE:
                FUZZ_CHECK(strlen(sni) < DSH_TLS_HELLO_NAME_SIZE);
                for (const char *c = sni; *c; c++)
                        FUZZ_CHECK(islower((unsigned char) *c) || isdigit((unsigned char) *c) || *c == '-' ||
                                   *c == '_' || *c == '.');
                /* A whole hello is whole however much follows it. */
                break;
        case DSH_TLS_HELLO_INCOMPLETE:
        case DSH_TLS_HELLO_NOT_TLS:
        case DSH_TLS_HELLO_MALFORMED:
                FUZZ_CHECK(sni[0] == '\0');
                break;
        }
        FUZZ_CHECK(status != DSH_TLS_HELLO_NOT_TLS || (size > 0 && data[0] != 22));
        return 0;
}
