/* SPDX-License-Identifier: MIT */
/*
 * The statically linked dsh-sandbox resolves no name through the C
 * library: the allow-list's DNS stub and proxy (src/network/) speak DNS to
 * their upstream themselves.  libevent's utility object still refers to
 * the C library's name-service functions, which in a static program would
 * need the shared NSS modules of the very glibc it was linked with (the
 * linker warns so).  These definitions take their place in the static
 * program only (meson.build): anything that calls them is told the service
 * is unavailable, never answered from a mismatched module.
 */
#include <errno.h>
#include <netdb.h>
#include <stddef.h>

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **result)
{
        (void) node;
        (void) service;
        (void) hints;
        *result = NULL;
        errno = ENOSYS;
        return EAI_SYSTEM;
}

struct protoent *getprotobynumber(int protocol)
{
        (void) protocol;
        return NULL;
}

struct servent *getservbyname(const char *name, const char *protocol)
{
        (void) name;
        (void) protocol;
        return NULL;
}

void freeaddrinfo(struct addrinfo *list)
{
        (void) list;
}
