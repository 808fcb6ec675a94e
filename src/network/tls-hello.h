/* SPDX-License-Identifier: MIT */
/*
 * The server name a TLS client asks for (the ClientHello's server_name
 * extension, RFC 6066), read from the first bytes of a connection the proxy
 * holds before it lets anything through (docs/network.md, "What is
 * captured").  Pure and bounded: it reads at most DSH_TLS_HELLO_MAX bytes of
 * handshake records, never allocates, and copes with a ClientHello split
 * over several records.  What it returns is checked as a host name (the
 * characters a pattern can name), so a hostile name cannot reach the
 * matcher in a form the patterns do not speak.
 */
#ifndef DSH_SANDBOX_TLS_HELLO_H
#define DSH_SANDBOX_TLS_HELLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

/* The most the proxy reads before it decides: a ClientHello larger than this is refused. */
#define DSH_TLS_HELLO_MAX (16 * 1024)

typedef enum dsh_tls_hello_status {
        DSH_TLS_HELLO_INCOMPLETE,       /* a ClientHello so far: read more */
        DSH_TLS_HELLO_NOT_TLS,          /* the first byte is no TLS handshake record */
        DSH_TLS_HELLO_MALFORMED,        /* a handshake that is no well-formed ClientHello, or too large */
        DSH_TLS_HELLO_COMPLETE,         /* a whole ClientHello: `sni` says what it named */
} dsh_tls_hello_status;

/*
 * Reads the ClientHello at the start of `data` (`length` bytes read so far).
 * On COMPLETE, `sni` (DSH_TLS_HELLO_NAME_SIZE bytes) holds the host name in
 * lower case without a trailing dot, or "" when the hello names none.
 */
#define DSH_TLS_HELLO_NAME_SIZE 254
DSH_INTERNAL dsh_tls_hello_status dsh_tls_hello_read(const uint8_t *data, size_t length,
                                                     char sni[DSH_TLS_HELLO_NAME_SIZE]);

#endif
