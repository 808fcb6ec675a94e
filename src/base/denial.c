/* SPDX-License-Identifier: MIT */
/*
 * The typed denial's vocabulary and its ownership (dsh-sandbox/denial.h):
 * the names, the bounded list, and the one line a person or a model reads.
 * Deciding a denial and its grant is src/denial/'s; this is only the value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/denial.h"
#include "base/denial-value.h"
#include "base/json-core.h"
#include "base/util.h"

static const char *const op_names[] = { "write", "metadata", "read", "connect", "dns", "http", NULL };
static const char *const source_names[] = { "supervisor", "proxy", "file-guard", "cleanup", "kernel-audit", "policy",
                                            NULL };
static const char *const grant_names[] = { "none", "writable-root", "allowed-host", "unix-socket", "local-port", "mode",
                                           NULL };

static int parse_name(const char *const *names, const char *name, int *index_out)
{
        for (int i = 0; name && names[i]; i++)
                if (strcmp(names[i], name) == 0) {
                        *index_out = i;
                        return 0;
                }
        return -EINVAL;
}

const char *dsh_denial_op_name(dsh_denial_op op)
{
        return (unsigned) op < DSH_DENIAL_OP_COUNT ? op_names[op] : "invalid";
}

int dsh_denial_op_parse(const char *name, dsh_denial_op *op_out)
{
        int index, result = parse_name(op_names, name, &index);

        if (result == 0)
                *op_out = (dsh_denial_op) index;
        return result;
}

const char *dsh_denial_source_name(dsh_denial_source source)
{
        return (unsigned) source <= DSH_DENIAL_SOURCE_POLICY ? source_names[source] : "invalid";
}

int dsh_denial_source_parse(const char *name, dsh_denial_source *source_out)
{
        int index, result = parse_name(source_names, name, &index);

        if (result == 0)
                *source_out = (dsh_denial_source) index;
        return result;
}

const char *dsh_grant_kind_name(dsh_grant_kind kind)
{
        return (unsigned) kind <= DSH_GRANT_MODE ? grant_names[kind] : "invalid";
}

int dsh_grant_kind_parse(const char *name, dsh_grant_kind *kind_out)
{
        int index, result = parse_name(grant_names, name, &index);

        if (result == 0)
                *kind_out = (dsh_grant_kind) index;
        return result;
}

/* ---------------------------------------------------------- ownership -- */

void dsh_denial_clear(dsh_denial *denial)
{
        if (!denial)
                return;
        free(denial->call);
        free(denial->path);
        free(denial->host);
        free(denial->rule);
        free(denial->grant.target);
        *denial = (dsh_denial) DSH_DENIAL_INIT;
}

void dsh_denials_clear(dsh_denials *denials)
{
        if (!denials)
                return;
        for (size_t i = 0; i < denials->count; i++)
                dsh_denial_clear(&denials->items[i]);
        free(denials->items);
        *denials = (dsh_denials) DSH_DENIALS_INIT;
}

/* A copy of `text` into `*out`; NULL stays NULL.  0 or -ENOMEM. */
static int copy_text(char **out, const char *text)
{
        *out = text ? strdup(text) : NULL;
        return text && !*out ? -ENOMEM : 0;
}

int dsh_grant_copy(dsh_grant *out, const dsh_grant *in)
{
        *out = *in;
        return copy_text(&out->target, in->target);
}

int dsh_denial_copy(dsh_denial *out, const dsh_denial *in)
{
        *out = *in;
        out->call = out->path = out->host = out->rule = out->grant.target = NULL;
        if (copy_text(&out->call, in->call) < 0 || copy_text(&out->path, in->path) < 0 ||
            copy_text(&out->host, in->host) < 0 || copy_text(&out->rule, in->rule) < 0 ||
            copy_text(&out->grant.target, in->grant.target) < 0) {
                dsh_denial_clear(out);
                return -ENOMEM;
        }
        return 0;
}

static bool same_text(const char *a, const char *b)
{
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The same refusal: a retry loop's second attempt adds nothing a reader needs. */
bool dsh_denial_same_refusal(const dsh_denial *a, const dsh_denial *b)
{
        return a->op == b->op && a->port == b->port && a->source == b->source && same_text(a->call, b->call) &&
               same_text(a->path, b->path) && same_text(a->host, b->host) && same_text(a->rule, b->rule);
}

int dsh_denials_take(dsh_denials *denials, dsh_denial *denial, size_t limit)
{
        dsh_denial *grown;

        if (denials->count > 0 && dsh_denial_same_refusal(&denials->items[denials->count - 1], denial)) {
                dsh_denial_clear(denial);
                return 0;
        }
        if (denials->count >= limit) {
                denials->dropped++;
                dsh_denial_clear(denial);
                return 0;
        }
        grown = realloc(denials->items, (denials->count + 1) * sizeof(*grown));
        if (!grown) {
                denials->dropped++;
                dsh_denial_clear(denial);
                return -ENOMEM;
        }
        denials->items = grown;
        denials->items[denials->count++] = *denial;
        *denial = (dsh_denial) DSH_DENIAL_INIT;
        return 0;
}

/* ----------------------------------------------------------- the line -- */

/*
 * A name as a reader is shown it, one line whatever it holds: a control
 * byte (a line break would start a line of its own, one that can read as
 * another denial: a socket, a file or a host is named by whoever made it)
 * the backslash (so a name holding the four characters "\x0a" does not
 * look like one holding a line break) and the double quote (which would
 * close the quoted path early) are written \xNN first, then what is
 * not UTF-8 (dsh_json_utf8_escaped()).  A new string, or NULL.
 */
static char *shown_escaped(const char *text)
{
        size_t length = strlen(text);
        dsh_autofree char *plain = length <= (SIZE_MAX - 1) / 4 ? malloc(length * 4 + 1) : NULL;
        size_t used = 0;

        if (!plain)
                return NULL;
        for (const unsigned char *byte = (const unsigned char *) text; *byte; byte++) {
                if (*byte < 0x20 || *byte == 0x7f || *byte == '\\' || *byte == '"')
                        used += (size_t) snprintf(plain + used, 5, "\\x%02x", *byte);
                else
                        plain[used++] = (char) *byte;
        }
        plain[used] = '\0';
        return dsh_json_utf8_escaped(plain);
}

/*
 * What was refused, as a reader names it: a path quoted (it may hold
 * spaces), a destination as host:port (an IPv6 address bracketed).
 */
static char *describe_target(const dsh_denial *denial)
{
        dsh_autofree char *path = denial->path ? shown_escaped(denial->path) : NULL;
        dsh_autofree char *host = denial->host ? shown_escaped(denial->host) : NULL;
        bool bracket = host && strchr(host, ':') && host[0] != '[';
        char *text = NULL;
        int length;

        if ((denial->path && !path) || (denial->host && !host))
                return NULL;
        if (path)
                length = asprintf(&text, "\"%s\"", path);
        else if (host && denial->port > 0)
                length = asprintf(&text, bracket ? "[%s]:%d" : "%s:%d", host, denial->port);
        else
                length = asprintf(&text, "%s", host ? host : "(unnamed)");
        return length < 0 ? NULL : text;
}

/* The grant, as the flags that would carry it (or why there is none). */
static char *describe_grant(const dsh_grant *grant)
{
        dsh_autofree char *target = grant->target ? shown_escaped(grant->target) : NULL;
        dsh_autofree char *widen = NULL;
        char *text = NULL;
        int length = 0;

        if (grant->target && !target)
                return NULL;
        if (grant->kind != DSH_GRANT_NONE && grant->kind != DSH_GRANT_MODE && grant->widens &&
            asprintf(&widen, "--sandbox-permissions %s ", dsh_mode_name(grant->mode)) < 0)
                return NULL;
        switch (grant->kind) {
        case DSH_GRANT_NONE:
                length = asprintf(&text, "no grant: only the user can allow it");
                break;
        case DSH_GRANT_WRITABLE_ROOT:
                length = asprintf(&text, "grant %s--additional-write %s", widen ? widen : "", target);
                break;
        case DSH_GRANT_ALLOWED_HOST:
                length = asprintf(&text, "grant %s--additional-host %s", widen ? widen : "", target);
                break;
        case DSH_GRANT_UNIX_SOCKET:
                length = asprintf(&text, "the user can allow it with --allow-unix-socket %s", target);
                break;
        case DSH_GRANT_LOCAL_PORT:
                length = asprintf(&text, "the user can allow it with --allow-local-port %s", target);
                break;
        case DSH_GRANT_MODE:
                length = asprintf(&text, "grant --sandbox-permissions %s", dsh_mode_name(grant->mode));
                break;
        }
        return length < 0 ? NULL : text;
}

char *dsh_denial_describe(const dsh_denial *denial)
{
        dsh_autofree char *target = describe_target(denial);
        dsh_autofree char *rule = denial->rule ? shown_escaped(denial->rule) : strdup("refused");
        dsh_autofree char *grant = describe_grant(&denial->grant);
        char *text = NULL;

        if (!target || !rule || !grant)
                return NULL;
        if (asprintf(&text, "%s %s (%s): %s", dsh_denial_op_name(denial->op), target, rule, grant) < 0)
                return NULL;
        return text;
}
