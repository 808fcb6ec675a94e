/* SPDX-License-Identifier: MIT */
/*
 * Bounded capture of one output stream of a command, for the bash tool: the
 * first and the last bytes within a limit, and the count of everything.
 * Memory is at most the limit, whatever the command writes.  Nothing here
 * reads the text for meaning: what the command printed decides nothing
 * about a denial (docs/bash-tool.md, "Attribution": records, not text).
 */
#ifndef DSH_SANDBOX_BASH_CAPTURE_H
#define DSH_SANDBOX_BASH_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "dsh-sandbox/bash-tool.h"
#include "base/util.h"

typedef struct dsh_capture {
        size_t head_limit;              /* the first bytes kept, as they came */
        char *head;
        size_t head_used;
        size_t head_capacity;
        size_t tail_limit;              /* the last bytes kept: a ring, allocated once the head is full */
        char *tail;
        size_t tail_start;              /* the oldest byte of the ring */
        size_t tail_used;
        unsigned long long total;
} dsh_capture;

#define DSH_CAPTURE_INIT { 0, NULL, 0, 0, 0, NULL, 0, 0, 0 }

/* Sets up a capture keeping `limit` bytes (at least 2). */
DSH_INTERNAL void dsh_capture_init(dsh_capture *capture, size_t limit);

/* Takes `length` more bytes of the stream.  Returns 0 or -ENOMEM (what was kept so far stays). */
DSH_INTERNAL int dsh_capture_append(dsh_capture *capture, const char *data, size_t length);

/*
 * The stream as kept, into `output` (which it owns from then on): the
 * whole of it, or head, "\n[... N bytes omitted ...]\n" and tail, cut on
 * UTF-8 boundaries.  Returns 0 or -ENOMEM.
 */
DSH_INTERNAL int dsh_capture_finish(dsh_capture *capture, dsh_bash_output *output);

/*
 * The first bytes kept, NUL-terminated in a new string (caller frees; NULL
 * when out of memory): what a runner said before it could have run the
 * command, for the runner-failure rules.
 */
DSH_INTERNAL char *dsh_capture_head_text(const dsh_capture *capture);

DSH_INTERNAL void dsh_capture_clear(dsh_capture *capture);

#endif
