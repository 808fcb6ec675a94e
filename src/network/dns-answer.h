/* SPDX-License-Identifier: MIT */
/*
 * DNS messages as the stub reads and writes them (docs/network.md, "DNS"):
 * a query checked before anything is decided (one question, a QNAME that is
 * a host name), an upstream answer scanned before it is relayed (its A and
 * AAAA addresses for the address book, the CNAME chain that leads to them,
 * a link-local or metadata address no entry names), the stub's own refusals
 * and the proxy's own queries.  Pure (RFC 1035 wire format, name
 * compression followed backwards only) and bounded; no I/O.  Written here
 * rather than with ldns: the few fields the stub needs do not justify a
 * library whose static archive pulls OpenSSL into the statically linked
 * dsh-sandbox.
 */
#ifndef DSH_SANDBOX_DNS_ANSWER_H
#define DSH_SANDBOX_DNS_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/host-pattern.h"
#include "base/util.h"

#define DSH_DNS_NAME_SIZE 254
#define DSH_DNS_MESSAGE_MAX 65535
#define DSH_DNS_ANSWER_ADDRESSES_MAX 64
#define DSH_DNS_ANSWER_NAMES_MAX 16

enum {
        DSH_DNS_TYPE_A = 1,
        DSH_DNS_TYPE_CNAME = 5,
        DSH_DNS_TYPE_AAAA = 28,
        DSH_DNS_CLASS_IN = 1,
        DSH_DNS_RCODE_NOERROR = 0,
        DSH_DNS_RCODE_FORMERR = 1,
        DSH_DNS_RCODE_SERVFAIL = 2,
        DSH_DNS_RCODE_REFUSED = 5,
};

typedef struct dsh_dns_question {
        uint16_t id;
        char name[DSH_DNS_NAME_SIZE];   /* lower case, no trailing dot; "" for the root */
        uint16_t type;
        uint16_t qclass;
        size_t end;                     /* the offset just past the question */
} dsh_dns_question;

typedef enum dsh_dns_query_status {
        DSH_DNS_QUERY_DROP,             /* no header to answer, or a response: nothing is sent back */
        DSH_DNS_QUERY_MALFORMED,        /* answered FORMERR, never forwarded */
        DSH_DNS_QUERY_OK,
} dsh_dns_query_status;

/*
 * Checks a query from the command: a standard query (opcode 0, QR clear)
 * with exactly one question, no answer or authority records, at most one
 * additional record (EDNS), and a QNAME whose labels hold only letters,
 * digits, '-' and '_' (anything else could not be named by a pattern, and
 * could carry data out under a name no one allowed).
 */
DSH_INTERNAL dsh_dns_query_status dsh_dns_query_read(const uint8_t *message, size_t length,
                                                     dsh_dns_question *question);

typedef struct dsh_dns_address {
        int family;                     /* AF_INET or AF_INET6 */
        uint8_t bytes[16];
        uint32_t ttl;
} dsh_dns_address;

typedef struct dsh_dns_answer {
        uint8_t rcode;
        bool truncated;                 /* TC: ask again over TCP */
        /* The QNAME, then each CNAME target on the chain from it, in order. */
        char names[DSH_DNS_ANSWER_NAMES_MAX][DSH_DNS_NAME_SIZE];
        size_t name_count;
        /* The answer section's A and AAAA records owned by a name of the chain (past the bound: ignored). */
        dsh_dns_address addresses[DSH_DNS_ANSWER_ADDRESSES_MAX];
        size_t address_count;
        /* A link-local or metadata address anywhere in the message that no entry names: its text, else "". */
        char metadata_address[46];
} dsh_dns_answer;

typedef enum dsh_dns_answer_status {
        DSH_DNS_ANSWER_NOT_OURS,        /* another id or another question: not the answer to this query */
        DSH_DNS_ANSWER_MALFORMED,
        DSH_DNS_ANSWER_OK,
} dsh_dns_answer_status;

/* Scans an upstream's answer to `question`; `patterns` decide which metadata addresses are named. */
DSH_INTERNAL dsh_dns_answer_status dsh_dns_answer_scan(const uint8_t *message, size_t length,
                                                       const dsh_dns_question *question,
                                                       const dsh_host_pattern *patterns, size_t pattern_count,
                                                       dsh_dns_answer *answer);

/*
 * The stub's own answer to `query`: the same id, opcode and RD, RA set,
 * `rcode`, the question echoed (none when `question` is NULL), no records.
 * Returns its length (at most `size`), or 0 when the query has no header.
 */
DSH_INTERNAL size_t dsh_dns_reply_refusal(const uint8_t *query, size_t length, const dsh_dns_question *question,
                                          uint8_t rcode, uint8_t *out, size_t size);

/* A recursive query for `name`'s `type` records with `id`.  Returns its length, or 0 when `name` is no host name. */
DSH_INTERNAL size_t dsh_dns_query_build(const char *name, uint16_t type, uint16_t id, uint8_t *out, size_t size);

#endif
