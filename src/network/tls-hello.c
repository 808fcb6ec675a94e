/* SPDX-License-Identifier: MIT */
/*
 * The ClientHello reader (tls-hello.h).  The handshake message is gathered
 * from the payloads of consecutive handshake records (a ClientHello may be
 * fragmented) into a bounded buffer, then walked field by field, every
 * length checked against what is left before it is used: a hostile client
 * controls every byte here.  Two server_name extensions, a name of another
 * type than host_name, or a name that is no host name make the hello
 * MALFORMED: the proxy refuses rather than guess which name the server
 * will act on.
 */
#include <ctype.h>
#include <string.h>

#include "network/tls-hello.h"

enum {
        RECORD_HEADER = 5,
        RECORD_HANDSHAKE = 22,
        HANDSHAKE_CLIENT_HELLO = 1,
        EXTENSION_SERVER_NAME = 0,
        SERVER_NAME_HOST = 0,
};

typedef struct cursor {
        const uint8_t *at;
        size_t left;
} cursor;

static bool take(cursor *c, size_t count, const uint8_t **out)
{
        if (c->left < count)
                return false;
        if (out)
                *out = c->at;
        c->at += count;
        c->left -= count;
        return true;
}

static bool take_number(cursor *c, size_t bytes, size_t *value)
{
        const uint8_t *at;

        if (!take(c, bytes, &at))
                return false;
        *value = 0;
        for (size_t i = 0; i < bytes; i++)
                *value = (*value << 8) | at[i];
        return true;
}

/* A vector with a `bytes`-wide length prefix, as a cursor of its own. */
static bool take_vector(cursor *c, size_t bytes, cursor *vector)
{
        size_t length;

        if (!take_number(c, bytes, &length) || !take(c, length, &vector->at))
                return false;
        vector->left = length;
        return true;
}

/* The name as a host name a pattern can speak of: letters, digits, '-', '_' and dots; lower-cased. */
static bool copy_host_name(const uint8_t *name, size_t length, char out[DSH_TLS_HELLO_NAME_SIZE])
{
        if (length > 0 && name[length - 1] == '.')
                length--;
        if (length == 0 || length >= DSH_TLS_HELLO_NAME_SIZE)
                return false;
        for (size_t i = 0; i < length; i++) {
                unsigned char c = name[i];
                if (!isalnum(c) && c != '-' && c != '_' && c != '.')
                        return false;
                out[i] = (char) tolower(c);
        }
        out[length] = '\0';
        return true;
}

static bool read_server_name(cursor extension, char sni[DSH_TLS_HELLO_NAME_SIZE])
{
        cursor list, name;
        const uint8_t *type;

        if (!take_vector(&extension, 2, &list) || extension.left != 0)
                return false;
        /* One entry only: a list of several names leaves the server to choose, so it is refused. */
        if (!take(&list, 1, &type) || *type != SERVER_NAME_HOST || !take_vector(&list, 2, &name) ||
            list.left != 0)
                return false;
        return copy_host_name(name.at, name.left, sni);
}

static bool read_extensions(cursor extensions, char sni[DSH_TLS_HELLO_NAME_SIZE])
{
        bool seen = false;

        while (extensions.left > 0) {
                size_t type;
                cursor body;

                if (!take_number(&extensions, 2, &type) || !take_vector(&extensions, 2, &body))
                        return false;
                if (type != EXTENSION_SERVER_NAME)
                        continue;
                if (seen || !read_server_name(body, sni))
                        return false;
                seen = true;
        }
        return true;
}

static bool read_client_hello(cursor hello, char sni[DSH_TLS_HELLO_NAME_SIZE])
{
        cursor session, suites, compressions, extensions;

        sni[0] = '\0';
        if (!take(&hello, 2 + 32, NULL) || !take_vector(&hello, 1, &session) || session.left > 32 ||
            !take_vector(&hello, 2, &suites) || suites.left == 0 || suites.left % 2 != 0 ||
            !take_vector(&hello, 1, &compressions) || compressions.left == 0)
                return false;
        if (hello.left == 0)
                return true;            /* no extensions: no name */
        if (!take_vector(&hello, 2, &extensions) || hello.left != 0)
                return false;
        return read_extensions(extensions, sni);
}

dsh_tls_hello_status dsh_tls_hello_read(const uint8_t *data, size_t length, char sni[DSH_TLS_HELLO_NAME_SIZE])
{
        uint8_t message[DSH_TLS_HELLO_MAX];
        size_t gathered = 0, offset = 0, needed = 0;

        sni[0] = '\0';
        if (length == 0)
                return DSH_TLS_HELLO_INCOMPLETE;
        if (data[0] != RECORD_HANDSHAKE)
                return DSH_TLS_HELLO_NOT_TLS;
        while (offset + RECORD_HEADER <= length) {
                const uint8_t *record = data + offset;
                size_t payload = (size_t) record[3] << 8 | record[4];

                /* Every record of the hello is a handshake record of TLS 1.x (3.1 to 3.4 on the wire, 3.0 tolerated). */
                if (record[0] != RECORD_HANDSHAKE || record[1] != 3 || payload == 0 || payload > 16384)
                        return DSH_TLS_HELLO_MALFORMED;
                if (offset + RECORD_HEADER + payload > length)
                        break;
                if (gathered + payload > sizeof(message))
                        return DSH_TLS_HELLO_MALFORMED;
                memcpy(message + gathered, record + RECORD_HEADER, payload);
                gathered += payload;
                offset += RECORD_HEADER + payload;
                if (gathered >= 4) {
                        if (message[0] != HANDSHAKE_CLIENT_HELLO)
                                return DSH_TLS_HELLO_MALFORMED;
                        needed = 4 + ((size_t) message[1] << 16 | (size_t) message[2] << 8 | message[3]);
                        if (needed > sizeof(message))
                                return DSH_TLS_HELLO_MALFORMED;
                        if (gathered >= needed)
                                break;
                }
        }
        /* The caller bounds what it reads (DSH_TLS_HELLO_MAX): a hello never completed is refused there. */
        if (needed == 0 || gathered < needed)
                return DSH_TLS_HELLO_INCOMPLETE;
        if (!read_client_hello((cursor) { message + 4, needed - 4 }, sni)) {
                sni[0] = '\0';
                return DSH_TLS_HELLO_MALFORMED;
        }
        return DSH_TLS_HELLO_COMPLETE;
}
