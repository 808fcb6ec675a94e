/* SPDX-License-Identifier: MIT */
/* The remote provider's frames: writing, reading, and the queue in front of a non-blocking fd. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "remote/remote-frame.h"

/* Lengths and credits are 4 bytes, big-endian. */
static void encode_u32(unsigned char out[4], uint32_t value)
{
        out[0] = (unsigned char) (value >> 24);
        out[1] = (unsigned char) (value >> 16);
        out[2] = (unsigned char) (value >> 8);
        out[3] = (unsigned char) value;
}

static uint32_t decode_u32(const unsigned char in[4])
{
        return (uint32_t) in[0] << 24 | (uint32_t) in[1] << 16 | (uint32_t) in[2] << 8 | in[3];
}

/* The header of a frame of `length` payload bytes; -EINVAL for a payload above the bound. */
static int encode_header(unsigned char header[DSH_FRAME_HEADER_SIZE], char type, size_t length)
{
        if (length > DSH_FRAME_MAX_PAYLOAD)
                return -EINVAL;
        header[0] = (unsigned char) type;
        encode_u32(header + 1, (uint32_t) length);
        return 0;
}

void dsh_frame_credit_encode(unsigned char payload[DSH_FRAME_CREDIT_SIZE], size_t count)
{
        encode_u32(payload, (uint32_t) count);
}

int dsh_frame_credit_decode(const unsigned char *payload, size_t length, size_t *count_out)
{
        uint32_t count;

        if (length != DSH_FRAME_CREDIT_SIZE)
                return -EPROTO;
        count = decode_u32(payload);
        if (count == 0 || count > DSH_REMOTE_STDIN_WINDOW)
                return -EPROTO;
        *count_out = count;
        return 0;
}

/* One writev(2) per try: a frame usually leaves in one system call, header and payload together. */
int dsh_frame_write(int fd, char type, const void *payload, size_t length)
{
        unsigned char header[DSH_FRAME_HEADER_SIZE];
        struct iovec parts[2] = { { header, sizeof(header) }, { (void *) payload, length } };
        struct iovec *next = parts;
        int remaining = length > 0 ? 2 : 1;

        if (encode_header(header, type, length) < 0)
                return -EINVAL;
        while (remaining > 0) {
                ssize_t written = writev(fd, next, remaining);

                if (written < 0 && errno == EINTR)
                        continue;
                if (written < 0)
                        return -errno;
                for (; remaining > 0 && (size_t) written >= next->iov_len; remaining--, next++)
                        written -= (ssize_t) next->iov_len;
                if (remaining > 0) {
                        next->iov_base = (unsigned char *) next->iov_base + written;
                        next->iov_len -= (size_t) written;
                }
        }
        return 0;
}

void dsh_frame_reader_clear(dsh_frame_reader *reader)
{
        free(reader->buffer);
        *reader = (dsh_frame_reader) DSH_FRAME_READER_INIT;
}

/* Drops the frame handed out last. */
static void drop_consumed(dsh_frame_reader *reader)
{
        if (reader->consumed == 0)
                return;
        memmove(reader->buffer, reader->buffer + reader->consumed, reader->used - reader->consumed);
        reader->used -= reader->consumed;
        reader->consumed = 0;
}

ssize_t dsh_frame_reader_fill(dsh_frame_reader *reader, int fd)
{
        ssize_t got;

        drop_consumed(reader);
        if (reader->capacity - reader->used < DSH_FRAME_CHUNK) {
                size_t capacity = reader->used + 2 * DSH_FRAME_CHUNK;
                unsigned char *grown = realloc(reader->buffer, capacity);

                if (!grown)
                        return -ENOMEM;
                reader->buffer = grown;
                reader->capacity = capacity;
        }
        do
                got = read(fd, reader->buffer + reader->used, reader->capacity - reader->used);
        while (got < 0 && errno == EINTR);
        if (got < 0)
                return -errno;
        reader->used += (size_t) got;
        return got;
}

int dsh_frame_reader_next(dsh_frame_reader *reader, char *type, const unsigned char **payload, size_t *length)
{
        const unsigned char *header;
        size_t payload_length;

        drop_consumed(reader);
        if (reader->used < DSH_FRAME_HEADER_SIZE)
                return 0;
        header = reader->buffer;
        payload_length = decode_u32(header + 1);
        if (payload_length > DSH_FRAME_MAX_PAYLOAD)
                return -EPROTO;
        if (reader->used - DSH_FRAME_HEADER_SIZE < payload_length)
                return 0;
        *type = (char) header[0];
        *payload = header + DSH_FRAME_HEADER_SIZE;
        *length = payload_length;
        reader->consumed = DSH_FRAME_HEADER_SIZE + payload_length;
        return 1;
}

void dsh_byte_queue_clear(dsh_byte_queue *queue)
{
        free(queue->data);
        *queue = (dsh_byte_queue) DSH_BYTE_QUEUE_INIT;
}

size_t dsh_byte_queue_pending(const dsh_byte_queue *queue)
{
        return queue->used - queue->start;
}

int dsh_byte_queue_append(dsh_byte_queue *queue, const void *data, size_t length)
{
        if (length == 0)
                return 0;
        if (queue->start > 0) {
                memmove(queue->data, queue->data + queue->start, queue->used - queue->start);
                queue->used -= queue->start;
                queue->start = 0;
        }
        if (queue->capacity - queue->used < length) {
                size_t capacity = queue->used + length + DSH_FRAME_CHUNK;
                unsigned char *grown = realloc(queue->data, capacity);

                if (!grown)
                        return -ENOMEM;
                queue->data = grown;
                queue->capacity = capacity;
        }
        memcpy(queue->data + queue->used, data, length);
        queue->used += length;
        return 0;
}

int dsh_byte_queue_append_frame(dsh_byte_queue *queue, char type, const void *payload, size_t length)
{
        unsigned char header[DSH_FRAME_HEADER_SIZE];
        int result = encode_header(header, type, length);

        if (result == 0)
                result = dsh_byte_queue_append(queue, header, sizeof(header));
        return result < 0 ? result : dsh_byte_queue_append(queue, payload, length);
}

int dsh_byte_queue_flush(dsh_byte_queue *queue, int fd)
{
        while (queue->start < queue->used) {
                ssize_t written = write(fd, queue->data + queue->start, queue->used - queue->start);

                if (written < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == EAGAIN ? 0 : -errno;
                }
                queue->start += (size_t) written;
        }
        queue->start = queue->used = 0;
        return 0;
}
