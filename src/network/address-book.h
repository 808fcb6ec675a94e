/* SPDX-License-Identifier: MIT */
/*
 * What the DNS stub gave out, name by address (docs/network.md, "DNS"): the
 * gate sends a TCP connect to the proxy only when its destination is here,
 * and the proxy lets a captured connection through only when the name it
 * carries (SNI, Host) is the name the destination was given out for.  An
 * entry lives min(TTL, 300 s), at least 60 s (a client may connect a while
 * after it resolved).  Bounded (DSH_ADDRESS_BOOK_MAX entries; when full, the
 * entry closest to expiry makes room).  Locked: the stub's loop adds, the
 * supervisor's threads and the proxy read.  An IPv4-mapped IPv6 address is
 * kept and looked up as its IPv4 form.
 */
#ifndef DSH_SANDBOX_ADDRESS_BOOK_H
#define DSH_SANDBOX_ADDRESS_BOOK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/util.h"

#define DSH_ADDRESS_BOOK_MAX 1024

typedef struct dsh_address_book dsh_address_book;

/* Returns a new empty book, or NULL when out of memory. */
DSH_INTERNAL dsh_address_book *dsh_address_book_new(void);
DSH_INTERNAL void dsh_address_book_free(dsh_address_book *book);

/* Records that `name` resolved to `address` (AF_INET: 4 bytes, AF_INET6: 16) for `ttl` seconds. */
DSH_INTERNAL void dsh_address_book_add(dsh_address_book *book, const char *name, int family, const void *address,
                                       uint32_t ttl);

/* Whether `name` (lower case) was given out `address` and the entry has not expired. */
DSH_INTERNAL bool dsh_address_book_has(dsh_address_book *book, const char *name, int family, const void *address);

/*
 * An unexpired address `name` was given out (the latest-expiring one), into
 * *family and `address` (16 bytes; 4 used for AF_INET).  Returns whether
 * there is one: the proxy's cache of its own resolutions.
 */
DSH_INTERNAL bool dsh_address_book_find(dsh_address_book *book, const char *name, int *family, uint8_t address[16]);

/* Whether any name was given out `address` and its entry has not expired. */
DSH_INTERNAL bool dsh_address_book_knows(dsh_address_book *book, int family, const void *address);

/*
 * Which connections the gate attached (core/network-gate.h): the source the
 * command's socket was bound at, and the destination it asked for.  The
 * proxy takes an entry when it accepts the connection from that source.
 * Bounded (DSH_CAPTURES_MAX; full: attach refused, so the connect is
 * refused) and locked; an entry never taken expires after 60 s.  An entry
 * only ever holds a destination the gate already sent to the proxy, so a
 * socket that claims another's source (SO_REUSEPORT) gains nothing the
 * gate had not granted: its bytes are still read and checked.
 */
#define DSH_CAPTURES_MAX 1024

typedef struct dsh_captures dsh_captures;

DSH_INTERNAL dsh_captures *dsh_captures_new(void);
DSH_INTERNAL void dsh_captures_free(dsh_captures *captures);
/* Returns 0, -EINVAL for a source that is no inet address, -ENOSPC when full. */
DSH_INTERNAL int dsh_captures_add(dsh_captures *captures, const struct sockaddr *source, socklen_t source_length,
                                  const struct sockaddr *destination, socklen_t destination_length);
DSH_INTERNAL void dsh_captures_remove(dsh_captures *captures, const struct sockaddr *source, socklen_t length);
/* Takes (and forgets) the destination attached to `source`.  Returns whether there was one. */
DSH_INTERNAL bool dsh_captures_take(dsh_captures *captures, const struct sockaddr *source, socklen_t length,
                                    struct sockaddr_storage *destination, socklen_t *destination_length);

#endif
