/* SPDX-License-Identifier: MIT */
/*
 * The remote provider's frames (docs/remote.md): a type byte, the payload's
 * length as 4 bytes big-endian, the payload.  Both ends of the SSH channel
 * are this library, so every byte on it is inside a frame: a command's
 * output is a payload, never a header, and cannot forge a final record.
 */
#ifndef DSH_SANDBOX_REMOTE_FRAME_H
#define DSH_SANDBOX_REMOTE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/util.h"

/* Frame types.  Client to helper: */
#define DSH_FRAME_REQUEST 'Q'       /* JSON: {"protocol":2,"operation":...,"argv":[...],...} */
#define DSH_FRAME_STDIN 'I'         /* bytes for the command's stdin */
#define DSH_FRAME_STDIN_EOF 'Z'     /* the local stdin ended */
#define DSH_FRAME_SIGNAL 'K'        /* one byte: a signal number for the command's process group */
/* Helper to client: */
#define DSH_FRAME_HELLO 'H'         /* JSON: {"protocol":2,"version":"..."}, the helper's first frame */
#define DSH_FRAME_STDOUT 'O'        /* bytes the command wrote to its stdout */
#define DSH_FRAME_STDERR 'E'        /* bytes it (or the remote sandbox) wrote to stderr */
#define DSH_FRAME_STDIN_CREDIT 'C'  /* 4 bytes big-endian: stdin bytes taken by the command (or dropped) */
#define DSH_FRAME_FINAL 'F'         /* JSON: the final record, the last frame */

#define DSH_FRAME_HEADER_SIZE 5
/* A payload above this is a protocol error: data frames are cut well below it. */
#define DSH_FRAME_MAX_PAYLOAD (1024 * 1024)
/* What one read of a stream becomes: one data frame. */
#define DSH_FRAME_CHUNK 65536

/*
 * Stdin flow control.  The caller keeps at most this many stdin bytes
 * sent but not yet credited back; the helper credits the bytes the
 * command's stdin took (or that were dropped, the command having closed
 * it).  A command that never reads its stdin so holds the caller's stdin
 * still, as a pipe would locally, and the helper's queue stays within the
 * window: more than that from the caller is a protocol error, never a
 * bigger queue.  Signal and stdin-end frames are outside the window.
 */
#define DSH_REMOTE_STDIN_WINDOW (1024 * 1024)
#define DSH_FRAME_CREDIT_SIZE 4

/* A credit frame's payload for `count` bytes, 1..DSH_REMOTE_STDIN_WINDOW. */
DSH_INTERNAL void dsh_frame_credit_encode(unsigned char payload[DSH_FRAME_CREDIT_SIZE], size_t count);

/* Reads a credit frame's payload: 0 with *count_out, or -EPROTO for another size, 0, or more than the window. */
DSH_INTERNAL int dsh_frame_credit_decode(const unsigned char *payload, size_t length, size_t *count_out);

/* Writes one whole frame to a blocking `fd` (retrying EINTR and short writes).  Returns 0 or a negative errno. */
DSH_INTERNAL int dsh_frame_write(int fd, char type, const void *payload, size_t length);

/* Frames arriving on a stream, buffered until whole. */
typedef struct dsh_frame_reader {
        unsigned char *buffer;
        size_t used, capacity;
        size_t consumed;            /* bytes of the last frame handed out, dropped on the next call */
} dsh_frame_reader;

#define DSH_FRAME_READER_INIT { NULL, 0, 0, 0 }

DSH_INTERNAL void dsh_frame_reader_clear(dsh_frame_reader *reader);

/* One read(2) of `fd` into the reader.  Returns the bytes read (0 at EOF) or a negative errno (-EAGAIN too). */
DSH_INTERNAL ssize_t dsh_frame_reader_fill(dsh_frame_reader *reader, int fd);

/*
 * The next whole frame: returns 1 with *type, *payload (inside the reader,
 * valid until the next call) and *length; 0 when more bytes are needed;
 * -EPROTO for a payload above DSH_FRAME_MAX_PAYLOAD.
 */
DSH_INTERNAL int dsh_frame_reader_next(dsh_frame_reader *reader, char *type, const unsigned char **payload,
                                       size_t *length);

/* Bytes waiting for a non-blocking fd to take them. */
typedef struct dsh_byte_queue {
        unsigned char *data;
        size_t start, used, capacity;
} dsh_byte_queue;

#define DSH_BYTE_QUEUE_INIT { NULL, 0, 0, 0 }

DSH_INTERNAL void dsh_byte_queue_clear(dsh_byte_queue *queue);

/* The bytes not yet written. */
DSH_INTERNAL size_t dsh_byte_queue_pending(const dsh_byte_queue *queue);

/* Appends `length` bytes.  Returns 0 or -ENOMEM. */
DSH_INTERNAL int dsh_byte_queue_append(dsh_byte_queue *queue, const void *data, size_t length);

/* Appends a frame (header and payload).  Returns 0, -ENOMEM, or -EINVAL for a payload that is too long. */
DSH_INTERNAL int dsh_byte_queue_append_frame(dsh_byte_queue *queue, char type, const void *payload, size_t length);

/* Writes what `fd` takes now.  Returns 0 (EAGAIN included) or a negative errno (-EPIPE: the reader is gone). */
DSH_INTERNAL int dsh_byte_queue_flush(dsh_byte_queue *queue, int fd);

#endif
