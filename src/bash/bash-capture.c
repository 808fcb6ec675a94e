/* SPDX-License-Identifier: MIT */
/* Bounded capture of a command's output stream: see bash-capture.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bash/bash-capture.h"

#define HEAD_INITIAL_CAPACITY 4096

void dsh_capture_init(dsh_capture *capture, size_t limit)
{
        *capture = (dsh_capture) DSH_CAPTURE_INIT;
        if (limit < 2)
                limit = 2;
        capture->head_limit = limit / 2;
        capture->tail_limit = limit - capture->head_limit;
}

/* Grows the head buffer to hold `needed` bytes, doubling, never past the head limit. */
static int reserve_head(dsh_capture *capture, size_t needed)
{
        size_t capacity = capture->head_capacity ? capture->head_capacity : HEAD_INITIAL_CAPACITY;
        char *grown;

        if (needed <= capture->head_capacity)
                return 0;
        while (capacity < needed)
                capacity *= 2;
        if (capacity > capture->head_limit)
                capacity = capture->head_limit;
        grown = realloc(capture->head, capacity);
        if (!grown)
                return -ENOMEM;
        capture->head = grown;
        capture->head_capacity = capacity;
        return 0;
}

/* The last bytes, into the ring: only the newest tail_limit of them can survive. */
static void append_tail(dsh_capture *capture, const char *data, size_t length)
{
        if (length >= capture->tail_limit) {
                memcpy(capture->tail, data + length - capture->tail_limit, capture->tail_limit);
                capture->tail_start = 0;
                capture->tail_used = capture->tail_limit;
                return;
        }
        while (length > 0) {
                size_t end = (capture->tail_start + capture->tail_used) % capture->tail_limit;
                size_t piece = capture->tail_limit - end < length ? capture->tail_limit - end : length;

                memcpy(capture->tail + end, data, piece);
                data += piece;
                length -= piece;
                if (capture->tail_used + piece <= capture->tail_limit) {
                        capture->tail_used += piece;
                } else {
                        /* Full: the oldest bytes make room. */
                        size_t overflow = capture->tail_used + piece - capture->tail_limit;

                        capture->tail_start = (capture->tail_start + overflow) % capture->tail_limit;
                        capture->tail_used = capture->tail_limit;
                }
        }
}

int dsh_capture_append(dsh_capture *capture, const char *data, size_t length)
{
        size_t to_head = 0;

        capture->total += length;
        if (capture->head_used < capture->head_limit) {
                to_head = capture->head_limit - capture->head_used;
                if (to_head > length)
                        to_head = length;
                if (reserve_head(capture, capture->head_used + to_head) < 0)
                        return -ENOMEM;
                memcpy(capture->head + capture->head_used, data, to_head);
                capture->head_used += to_head;
        }
        if (to_head == length)
                return 0;
        if (!capture->tail) {
                capture->tail = malloc(capture->tail_limit);
                if (!capture->tail)
                        return -ENOMEM;
        }
        append_tail(capture, data + to_head, length - to_head);
        return 0;
}

/* The length of the UTF-8 sequence `lead` starts (1 for ASCII or a byte that leads none). */
static size_t sequence_length(unsigned char lead)
{
        if (lead >= 0xf0 && lead <= 0xf4)
                return 4;
        if (lead >= 0xe0)
                return lead <= 0xef ? 3 : 1;
        if (lead >= 0xc2)
                return 2;
        return 1;
}

/* Where to cut the head so that no character is split: before a sequence its last bytes leave incomplete. */
static size_t head_cut(const char *head, size_t length)
{
        for (size_t back = 1; back <= 3 && back <= length; back++) {
                unsigned char byte = (unsigned char) head[length - back];

                if ((byte & 0xc0) == 0x80)
                        continue;   /* a continuation byte: look further back for its lead */
                return sequence_length(byte) > back ? length - back : length;
        }
        return length;
}

int dsh_capture_finish(dsh_capture *capture, dsh_bash_output *output)
{
        size_t head_length = capture->head_used, skip = 0, kept, omitted, used = 0;
        char note[96];
        int note_length = 0;
        char *text;

        *output = (dsh_bash_output) { NULL, 0, false, capture->total };
        output->truncated = capture->total > capture->head_used + capture->tail_used;
        if (output->truncated) {
                head_length = head_cut(capture->head, capture->head_used);
                /* The tail starts after any continuation bytes whose lead fell out of the ring. */
                while (skip < 3 && skip < capture->tail_used &&
                       (capture->tail[(capture->tail_start + skip) % capture->tail_limit] & 0xc0) == 0x80)
                        skip++;
        }
        kept = head_length + capture->tail_used - skip;
        omitted = (size_t) (capture->total - kept);
        if (output->truncated)
                note_length = snprintf(note, sizeof(note), "\n[... %zu bytes omitted ...]\n", omitted);
        text = malloc(kept + (size_t) note_length + 1);
        if (!text)
                return -ENOMEM;
        if (head_length > 0)
                memcpy(text, capture->head, head_length);
        used = head_length;
        memcpy(text + used, note, (size_t) note_length);
        used += (size_t) note_length;
        for (size_t i = skip; i < capture->tail_used; i++)
                text[used++] = capture->tail[(capture->tail_start + i) % capture->tail_limit];
        text[used] = '\0';
        output->text = text;
        output->length = used;
        return 0;
}

char *dsh_capture_head_text(const dsh_capture *capture)
{
        return strndup(capture->head ? capture->head : "", capture->head_used);
}

void dsh_capture_clear(dsh_capture *capture)
{
        free(capture->head);
        free(capture->tail);
        *capture = (dsh_capture) DSH_CAPTURE_INIT;
}
