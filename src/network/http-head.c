/* SPDX-License-Identifier: MIT */
/*
 * The request head reader (http-head.h).  The blank line is found first and
 * only the head is handed to http_parser, so a body is never parsed; the
 * parser's callbacks record spans into `data`.  The authority is split and
 * checked here: what leaves this file as a host is a name or an address a
 * pattern can name, or the head is MALFORMED.  Two Host headers, user info
 * in a URI, a scheme other than http, an HTTP version other than 1.x: all
 * MALFORMED, since each lets two readers of the request disagree on where
 * it goes.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <http_parser.h>

#include "network/http-head.h"

typedef struct head_reader {
        const char *data;
        dsh_http_head *head;
        dsh_http_span url;
        bool in_value;
        bool overflow;
        bool complete;
} head_reader;

static size_t offset_of(const head_reader *reader, const char *at)
{
        return (size_t) (at - reader->data);
}

static int on_url(http_parser *parser, const char *at, size_t length)
{
        head_reader *reader = parser->data;

        if (reader->url.length != 0 && reader->url.offset + reader->url.length != offset_of(reader, at))
                return 1;
        if (reader->url.length == 0)
                reader->url.offset = offset_of(reader, at);
        reader->url.length += length;
        return 0;
}

static int on_header_field(http_parser *parser, const char *at, size_t length)
{
        head_reader *reader = parser->data;
        dsh_http_head *head = reader->head;

        if (reader->in_value || head->header_count == 0) {
                if (head->header_count == DSH_HTTP_HEAD_HEADERS_MAX) {
                        reader->overflow = true;
                        return 1;
                }
                head->headers[head->header_count++] =
                        (dsh_http_header) { { offset_of(reader, at), 0 }, { offset_of(reader, at), 0 } };
                reader->in_value = false;
        }
        head->headers[head->header_count - 1].name.length += length;
        return 0;
}

static int on_header_value(http_parser *parser, const char *at, size_t length)
{
        head_reader *reader = parser->data;
        dsh_http_header *header = &reader->head->headers[reader->head->header_count - 1];

        /* A value given in pieces (a folded line) is refused: its bytes are not one span of the head. */
        if (reader->in_value && header->value.offset + header->value.length != offset_of(reader, at))
                return 1;
        if (!reader->in_value)
                header->value.offset = offset_of(reader, at);
        header->value.length += length;
        reader->in_value = true;
        return 0;
}

static int on_headers_complete(http_parser *parser)
{
        head_reader *reader = parser->data;

        reader->complete = true;
        return 0;
}

static bool name_char(unsigned char c)
{
        return isalnum(c) || c == '-' || c == '_' || c == '.';
}

/* "host", "host:port", "[v6]", "[v6]:port" into the head's host and port. */
static bool read_authority(const char *text, size_t length, bool port_required, dsh_http_head *head)
{
        const char *host = text, *port_text = NULL;
        size_t host_length = length, port_length = 0;
        char literal[INET6_ADDRSTRLEN];
        struct in6_addr six;
        struct in_addr four;
        unsigned long port = 80;

        if (length > 0 && text[0] == '[') {
                const char *close = memchr(text, ']', length);
                if (close == NULL)
                        return false;
                host = text + 1;
                host_length = (size_t) (close - host);
                if (close + 1 < text + length) {
                        if (close[1] != ':')
                                return false;
                        port_text = close + 2;
                        port_length = (size_t) (text + length - port_text);
                }
                if (host_length >= sizeof(literal))
                        return false;
                memcpy(literal, host, host_length);
                literal[host_length] = '\0';
                if (inet_pton(AF_INET6, literal, &six) != 1)
                        return false;
                head->host_is_literal = true;
        } else {
                const char *colon = memchr(text, ':', length);
                if (colon) {
                        host_length = (size_t) (colon - text);
                        port_text = colon + 1;
                        port_length = (size_t) (text + length - port_text);
                }
                for (size_t i = 0; i < host_length; i++)
                        if (!name_char((unsigned char) host[i]))
                                return false;
        }
        if (host_length == 0 || host_length >= DSH_HTTP_HOST_SIZE || (port_required && port_text == NULL))
                return false;
        if (port_text) {
                if (port_length == 0 || port_length > 5)
                        return false;
                port = 0;
                for (size_t i = 0; i < port_length; i++) {
                        if (!isdigit((unsigned char) port_text[i]))
                                return false;
                        port = port * 10 + (unsigned long) (port_text[i] - '0');
                }
                if (port == 0 || port > 65535)
                        return false;
        }
        for (size_t i = 0; i < host_length; i++)
                head->host[i] = (char) tolower((unsigned char) host[i]);
        head->host[host_length] = '\0';
        if (head->host[host_length - 1] == '.')
                head->host[host_length - 1] = '\0';
        if (!head->host_is_literal && inet_pton(AF_INET, head->host, &four) == 1)
                head->host_is_literal = true;
        head->port = (unsigned short) port;
        return head->host[0] != '\0';
}

/* "http://authority[/path?query]": the authority checked, the rest kept as the origin form. */
static bool read_absolute(const char *data, dsh_http_span url, dsh_http_head *head)
{
        static const char scheme[] = "http://";
        const char *text = data + url.offset, *end = text + url.length, *rest;

        if (url.length < sizeof(scheme) - 1 || strncasecmp(text, scheme, sizeof(scheme) - 1) != 0)
                return false;
        text += sizeof(scheme) - 1;
        for (rest = text; rest < end && *rest != '/' && *rest != '?' && *rest != '#'; rest++)
                if (*rest == '@')
                        return false;   /* user info: refused */
        if (!read_authority(text, (size_t) (rest - text), false, head))
                return false;
        /* A fragment is the client's own business: never sent on. */
        const char *fragment = memchr(rest, '#', (size_t) (end - rest));
        head->origin = (dsh_http_span) { (size_t) (rest - data), (size_t) ((fragment ? fragment : end) - rest) };
        return true;
}

static bool header_is(const char *data, const dsh_http_header *header, const char *name)
{
        return header->name.length == strlen(name) && strncasecmp(data + header->name.offset, name,
                                                                   header->name.length) == 0;
}

/* The Host header: exactly one for an origin-form request (none leaves the host ""); at most one otherwise. */
static bool read_host_header(const char *data, dsh_http_head *head)
{
        const dsh_http_header *host = NULL;

        for (size_t i = 0; i < head->header_count; i++) {
                if (!header_is(data, &head->headers[i], "host"))
                        continue;
                if (host)
                        return false;
                host = &head->headers[i];
        }
        if (head->target != DSH_HTTP_TARGET_ORIGIN || host == NULL)
                return true;
        return read_authority(data + host->value.offset, host->value.length, false, head);
}

/* A header name of token characters, a value of visible characters, spaces and tabs: no NUL, no stray CR. */
static bool header_is_plain(const char *data, const dsh_http_header *header)
{
        static const char token_marks[] = "!#$%&'*+-.^_`|~";

        if (header->name.length == 0)
                return false;
        for (size_t i = 0; i < header->name.length; i++) {
                unsigned char c = (unsigned char) data[header->name.offset + i];
                if (!isalnum(c) && (c == '\0' || strchr(token_marks, c) == NULL))
                        return false;
        }
        for (size_t i = 0; i < header->value.length; i++) {
                unsigned char c = (unsigned char) data[header->value.offset + i];
                if ((c < 0x20 && c != '\t') || c == 0x7f)
                        return false;
        }
        return true;
}

/* Every header plain (the head is sent on: a server must read it as we did), and the body's framing. */
static bool read_headers(const char *data, dsh_http_head *head)
{
        for (size_t i = 0; i < head->header_count; i++) {
                if (!header_is_plain(data, &head->headers[i]))
                        return false;
                if (header_is(data, &head->headers[i], "transfer-encoding"))
                        head->chunked = true;
        }
        return true;
}

static bool read_target(const char *data, const head_reader *reader, const http_parser *parser,
                        dsh_http_head *head)
{
        const char *url = data + reader->url.offset;

        head->method = http_method_str((enum http_method) parser->method);
        if (reader->url.length == 0)
                return false;
        if (parser->method == HTTP_CONNECT) {
                head->target = DSH_HTTP_TARGET_AUTHORITY;
                return read_authority(url, reader->url.length, true, head);
        }
        if (url[0] == '/' || (reader->url.length == 1 && url[0] == '*')) {
                head->target = DSH_HTTP_TARGET_ORIGIN;
                head->origin = reader->url;
                return true;
        }
        head->target = DSH_HTTP_TARGET_ABSOLUTE;
        return read_absolute(data, reader->url, head);
}

dsh_http_head_status dsh_http_head_read(const char *data, size_t length, dsh_http_head *head)
{
        static const http_parser_settings settings = {
                .on_url = on_url,
                .on_header_field = on_header_field,
                .on_header_value = on_header_value,
                .on_headers_complete = on_headers_complete,
        };
        size_t searched = length < DSH_HTTP_HEAD_MAX ? length : DSH_HTTP_HEAD_MAX;
        const char *blank = memmem(data, searched, "\r\n\r\n", 4);
        head_reader reader = { .data = data, .head = head };
        http_parser parser;
        size_t parsed;

        memset(head, 0, sizeof(*head));
        if (blank == NULL)
                return length >= DSH_HTTP_HEAD_MAX ? DSH_HTTP_HEAD_MALFORMED : DSH_HTTP_HEAD_INCOMPLETE;
        head->length = (size_t) (blank - data) + 4;
        http_parser_init(&parser, HTTP_REQUEST);
        parser.data = &reader;
        parsed = http_parser_execute(&parser, &settings, data, head->length);
        if (parsed != head->length || HTTP_PARSER_ERRNO(&parser) != HPE_OK || !reader.complete ||
            parser.http_major != 1 || parser.http_minor > 1)
                return DSH_HTTP_HEAD_MALFORMED;
        head->minor_version = parser.http_minor;
        if (parser.content_length != ULLONG_MAX && (parser.flags & F_CONTENTLENGTH))
                head->content_length = parser.content_length;
        if (!read_target(data, &reader, &parser, head) || !read_host_header(data, head) || !read_headers(data, head))
                return DSH_HTTP_HEAD_MALFORMED;
        return DSH_HTTP_HEAD_COMPLETE;
}

static bool hop_by_hop(const char *data, const dsh_http_header *header)
{
        static const char *const names[] = { "host", "connection", "proxy-connection", "keep-alive",
                                             "proxy-authorization", "te", "upgrade" };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (header_is(data, header, names[i]))
                        return true;
        return false;
}

char *dsh_http_head_forwarded(const char *data, const dsh_http_head *head, size_t *length_out)
{
        bool bracket = strchr(head->host, ':') != NULL;
        char *text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);

        if (out == NULL)
                return NULL;
        fprintf(out, "%s ", head->method);
        if (head->origin.length == 0)
                fputs("/", out);
        else
                fwrite(data + head->origin.offset, 1, head->origin.length, out);
        fprintf(out, " HTTP/1.%d\r\nHost: %s%s%s", head->minor_version, bracket ? "[" : "", head->host,
                bracket ? "]" : "");
        if (head->port != 80)
                fprintf(out, ":%u", head->port);
        fputs("\r\n", out);
        for (size_t i = 0; i < head->header_count; i++) {
                const dsh_http_header *header = &head->headers[i];
                if (hop_by_hop(data, header))
                        continue;
                fwrite(data + header->name.offset, 1, header->name.length, out);
                fputs(": ", out);
                fwrite(data + header->value.offset, 1, header->value.length, out);
                fputs("\r\n", out);
        }
        fputs("Connection: close\r\n\r\n", out);
        if (fclose(out) != 0) {
                free(text);
                return NULL;
        }
        *length_out = size;
        return text;
}
