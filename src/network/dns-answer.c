/* SPDX-License-Identifier: MIT */
/*
 * DNS messages (dns-answer.h).  Every length is checked against the bytes
 * left before it is used; a compressed name may only point backwards (to
 * before the pointer itself), so a name is read in at most as many steps
 * as the message has bytes and no pointer loop can hold the stub.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "network/dns-answer.h"

enum {
        HEADER = 12,
        FLAG_QR = 0x80,                 /* in byte 2 */
        FLAG_TC = 0x02,                 /* in byte 2 */
        FLAG_RD = 0x01,                 /* in byte 2 */
        FLAG_RA = 0x80,                 /* in byte 3 */
        OPCODE_MASK = 0x78,             /* in byte 2 */
};

static uint16_t read16(const uint8_t *at)
{
        return (uint16_t) (at[0] << 8 | at[1]);
}

static uint32_t read32(const uint8_t *at)
{
        return (uint32_t) at[0] << 24 | (uint32_t) at[1] << 16 | (uint32_t) at[2] << 8 | at[3];
}

static void write16(uint8_t *at, uint16_t value)
{
        at[0] = (uint8_t) (value >> 8);
        at[1] = (uint8_t) value;
}

static bool host_char(uint8_t c)
{
        return isalnum(c) || c == '-' || c == '_';
}

/*
 * Reads the name at `*offset` into `out` (lower case, dots between labels),
 * `*offset` moved past it where it appears.  A byte no host name holds
 * becomes '?' when `strict` is false (no such name equals a name a client
 * checked), and fails the read when it is true.
 */
static bool read_name(const uint8_t *message, size_t length, size_t *offset, bool strict,
                      char out[DSH_DNS_NAME_SIZE])
{
        size_t at = *offset, written = 0;
        bool jumped = false;

        for (;;) {
                if (at >= length)
                        return false;
                uint8_t label = message[at];
                if ((label & 0xc0) == 0xc0) {
                        if (at + 1 >= length)
                                return false;
                        size_t target = (size_t) (label & 0x3f) << 8 | message[at + 1];
                        if (target >= at)
                                return false;   /* only backwards: no loop */
                        if (!jumped)
                                *offset = at + 2;
                        jumped = true;
                        at = target;
                        continue;
                }
                if (label & 0xc0)
                        return false;
                if (label == 0)
                        break;
                if (at + 1 + label > length || written + label + 1 >= DSH_DNS_NAME_SIZE)
                        return false;
                if (written)
                        out[written++] = '.';
                for (size_t i = 0; i < label; i++) {
                        uint8_t c = message[at + 1 + i];
                        if (!host_char(c) && strict)
                                return false;
                        out[written++] = host_char(c) ? (char) tolower(c) : '?';
                }
                at += 1 + (size_t) label;
        }
        out[written] = '\0';
        if (!jumped)
                *offset = at + 1;
        return true;
}

dsh_dns_query_status dsh_dns_query_read(const uint8_t *message, size_t length, dsh_dns_question *question)
{
        size_t offset = HEADER;

        memset(question, 0, sizeof(*question));
        if (length < HEADER || (message[2] & FLAG_QR))
                return DSH_DNS_QUERY_DROP;
        question->id = read16(message);
        if ((message[2] & OPCODE_MASK) != 0 || read16(message + 4) != 1 || read16(message + 6) != 0 ||
            read16(message + 8) != 0 || read16(message + 10) > 1)
                return DSH_DNS_QUERY_MALFORMED;
        /* A query names its question plainly: a compression pointer there is refused with the rest. */
        for (size_t at = offset; at < length && message[at] != 0; at += 1 + (size_t) message[at])
                if (message[at] & 0xc0)
                        return DSH_DNS_QUERY_MALFORMED;
        if (!read_name(message, length, &offset, true, question->name) || offset + 4 > length)
                return DSH_DNS_QUERY_MALFORMED;
        question->type = read16(message + offset);
        question->qclass = read16(message + offset + 2);
        question->end = offset + 4;
        return DSH_DNS_QUERY_OK;
}

static bool on_chain(const dsh_dns_answer *answer, const char *name)
{
        for (size_t i = 0; i < answer->name_count; i++)
                if (strcmp(answer->names[i], name) == 0)
                        return true;
        return false;
}

static void note_metadata(dsh_dns_answer *answer, int family, const uint8_t *bytes,
                          const dsh_host_pattern *patterns, size_t pattern_count)
{
        if (answer->metadata_address[0] != '\0' || !dsh_address_is_metadata(family, bytes) ||
            dsh_host_patterns_allow_address(patterns, pattern_count, family, bytes, 0))
                return;
        inet_ntop(family, bytes, answer->metadata_address, sizeof(answer->metadata_address));
}

typedef struct record {
        char owner[DSH_DNS_NAME_SIZE];
        uint16_t type;
        uint16_t rclass;
        uint32_t ttl;
        size_t data;                    /* the offset of its RDATA */
        uint16_t data_length;
} record;

static bool read_record(const uint8_t *message, size_t length, size_t *offset, record *out)
{
        if (!read_name(message, length, offset, false, out->owner) || *offset + 10 > length)
                return false;
        out->type = read16(message + *offset);
        out->rclass = read16(message + *offset + 2);
        out->ttl = read32(message + *offset + 4);
        out->data_length = read16(message + *offset + 8);
        out->data = *offset + 10;
        if (out->data + out->data_length > length)
                return false;
        *offset = out->data + out->data_length;
        return true;
}

/* One record of the answer section: a CNAME that extends the chain, an address owned by the chain. */
static bool take_answer_record(const uint8_t *message, size_t length, const record *rr, dsh_dns_answer *answer)
{
        if (rr->rclass != DSH_DNS_CLASS_IN)
                return true;
        if (rr->type == DSH_DNS_TYPE_CNAME && on_chain(answer, rr->owner)) {
                size_t at = rr->data;
                char target[DSH_DNS_NAME_SIZE];
                if (!read_name(message, length, &at, false, target) || at != rr->data + rr->data_length)
                        return false;
                if (!on_chain(answer, target) && answer->name_count < DSH_DNS_ANSWER_NAMES_MAX)
                        memcpy(answer->names[answer->name_count++], target, sizeof(target));
                return true;
        }
        bool four = rr->type == DSH_DNS_TYPE_A && rr->data_length == 4;
        bool six = rr->type == DSH_DNS_TYPE_AAAA && rr->data_length == 16;
        if (!(four || six) || !on_chain(answer, rr->owner) || answer->address_count == DSH_DNS_ANSWER_ADDRESSES_MAX)
                return true;
        dsh_dns_address *address = &answer->addresses[answer->address_count++];
        address->family = four ? AF_INET : AF_INET6;
        memset(address->bytes, 0, sizeof(address->bytes));
        memcpy(address->bytes, message + rr->data, rr->data_length);
        address->ttl = rr->ttl;
        return true;
}

dsh_dns_answer_status dsh_dns_answer_scan(const uint8_t *message, size_t length, const dsh_dns_question *question,
                                          const dsh_host_pattern *patterns, size_t pattern_count,
                                          dsh_dns_answer *answer)
{
        dsh_dns_question echoed;
        size_t offset = HEADER, answers, records;

        memset(answer, 0, sizeof(*answer));
        if (length < HEADER || read16(message) != question->id || !(message[2] & FLAG_QR) ||
            read16(message + 4) != 1)
                return DSH_DNS_ANSWER_NOT_OURS;
        if (!read_name(message, length, &offset, false, echoed.name) || offset + 4 > length)
                return DSH_DNS_ANSWER_MALFORMED;
        if (strcmp(echoed.name, question->name) != 0 || read16(message + offset) != question->type ||
            read16(message + offset + 2) != question->qclass)
                return DSH_DNS_ANSWER_NOT_OURS;
        offset += 4;
        answer->rcode = message[3] & 0x0f;
        answer->truncated = (message[2] & FLAG_TC) != 0;
        memcpy(answer->names[answer->name_count++], question->name, sizeof(question->name));
        answers = read16(message + 6);
        records = answers + read16(message + 8) + read16(message + 10);
        /* Every section is read (and its addresses checked for metadata); only the answer section fills the book. */
        for (size_t i = 0; i < records; i++) {
                record rr;
                if (!read_record(message, length, &offset, &rr))
                        return answer->truncated ? DSH_DNS_ANSWER_OK : DSH_DNS_ANSWER_MALFORMED;
                if ((rr.type == DSH_DNS_TYPE_A && rr.data_length == 4) ||
                    (rr.type == DSH_DNS_TYPE_AAAA && rr.data_length == 16))
                        note_metadata(answer, rr.type == DSH_DNS_TYPE_A ? AF_INET : AF_INET6, message + rr.data,
                                      patterns, pattern_count);
                if (i < answers && !take_answer_record(message, length, &rr, answer))
                        return DSH_DNS_ANSWER_MALFORMED;
        }
        return DSH_DNS_ANSWER_OK;
}

size_t dsh_dns_reply_refusal(const uint8_t *query, size_t length, const dsh_dns_question *question, uint8_t rcode,
                             uint8_t *out, size_t size)
{
        size_t question_length = question ? question->end - HEADER : 0;

        if (length < HEADER || size < HEADER + question_length)
                return 0;
        memset(out, 0, HEADER);
        memcpy(out, query, 2);
        out[2] = (uint8_t) (FLAG_QR | (query[2] & (OPCODE_MASK | FLAG_RD)));
        out[3] = (uint8_t) (FLAG_RA | (rcode & 0x0f));
        if (question) {
                write16(out + 4, 1);
                memcpy(out + HEADER, query + HEADER, question_length);
        }
        return HEADER + question_length;
}

size_t dsh_dns_query_build(const char *name, uint16_t type, uint16_t id, uint8_t *out, size_t size)
{
        size_t at = HEADER, name_length = strlen(name);

        if (name_length == 0 || name_length >= DSH_DNS_NAME_SIZE || size < HEADER + name_length + 2 + 4)
                return 0;
        memset(out, 0, HEADER);
        write16(out, id);
        out[2] = FLAG_RD;
        write16(out + 4, 1);
        for (const char *label = name; *label;) {
                const char *dot = strchr(label, '.');
                size_t label_length = dot ? (size_t) (dot - label) : strlen(label);
                if (label_length == 0 || label_length > 63)
                        return 0;
                for (size_t i = 0; i < label_length; i++)
                        if (!host_char((uint8_t) label[i]))
                                return 0;
                out[at++] = (uint8_t) label_length;
                memcpy(out + at, label, label_length);
                at += label_length;
                label += label_length + (dot ? 1 : 0);
                if (dot && *label == '\0')
                        break;
        }
        out[at++] = 0;
        write16(out + at, type);
        write16(out + at + 2, DSH_DNS_CLASS_IN);
        return at + 4;
}
