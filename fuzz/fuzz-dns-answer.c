/* SPDX-License-Identifier: MIT */
/*
 * The DNS stub's readers (src/network/dns-answer.h) over arbitrary bytes:
 * the input as a query from the command, then as the upstream's answer to
 * a fixed query whose id is the input's first two bytes.  Beyond memory
 * errors and UB: a query read OK has one question inside the input and a
 * QNAME of host-name characters; the refusal built for it echoes its id
 * and question; a scanned answer's chain and addresses stay in bounds and
 * its chain starts with the question's name.
 */
#include <ctype.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz-support.h"
#include "network/dns-answer.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void) argc;
        (void) argv;
        return 0;
}

static void check_query(const uint8_t *data, size_t size)
{
        dsh_dns_question question;
        uint8_t reply[512];
        size_t length;

        if (dsh_dns_query_read(data, size, &question) != DSH_DNS_QUERY_OK)
                return;
        FUZZ_CHECK(question.end <= size);
        for (const char *c = question.name; *c; c++)
                FUZZ_CHECK(islower((unsigned char) *c) || isdigit((unsigned char) *c) || *c == '-' || *c == '_' ||
                           *c == '.');
        length = dsh_dns_reply_refusal(data, size, &question, DSH_DNS_RCODE_REFUSED, reply, sizeof(reply));
        if (length == 0)
                return;         /* a question too long for the refusal's buffer */
        FUZZ_CHECK(length == question.end && memcmp(reply, data, 2) == 0 && (reply[3] & 0x0f) == 5);
        FUZZ_CHECK(memcmp(reply + 12, data + 12, length - 12) == 0);
}

static void check_answer(const uint8_t *data, size_t size)
{
        static dsh_dns_answer answer;
        dsh_dns_question question;
        uint8_t query[512];
        size_t length;

        if (size < 2)
                return;
        length = dsh_dns_query_build("allowed.dsh.test", DSH_DNS_TYPE_A, (uint16_t) (data[0] << 8 | data[1]),
                                     query, sizeof(query));
        FUZZ_CHECK(length > 0 && dsh_dns_query_read(query, length, &question) == DSH_DNS_QUERY_OK);
        if (dsh_dns_answer_scan(data, size, &question, NULL, 0, &answer) != DSH_DNS_ANSWER_OK)
                return;
        FUZZ_CHECK(answer.name_count >= 1 && answer.name_count <= DSH_DNS_ANSWER_NAMES_MAX);
        FUZZ_CHECK(strcmp(answer.names[0], "allowed.dsh.test") == 0);
        FUZZ_CHECK(answer.address_count <= DSH_DNS_ANSWER_ADDRESSES_MAX);
        for (size_t i = 0; i < answer.address_count; i++)
                FUZZ_CHECK(answer.addresses[i].family == AF_INET || answer.addresses[i].family == AF_INET6);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        check_query(data, size);
        check_answer(data, size);
        return 0;
}
