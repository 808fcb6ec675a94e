/* SPDX-License-Identifier: MIT */
/* What the fuzz targets share: turning an input into an argv, and checking an invariant. */
#ifndef DSH_SANDBOX_FUZZ_SUPPORT_H
#define DSH_SANDBOX_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry points, defined by each target. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/*
 * The input as a command line: `program` is argv[0], then every NUL-terminated
 * piece of `data` is one argument (the bytes after the last NUL too, when
 * there are any).  Each argument is its own allocation, so that ASan sees a
 * read past the end of any one of them.  argv[argc] is NULL.  Free with
 * fuzz_argv_free().
 */
char **fuzz_argv_new(const char *program, const uint8_t *data, size_t size, int *argc_out);
void fuzz_argv_free(char **argv);

/* True when `pointer` lies inside one of the argv strings (its terminator included). */
int fuzz_argv_contains(char *const *argv, const char *pointer);

/*
 * An error message reads as one line on a terminal: no C0 control character
 * (newline, carriage return, escape, ...) from the input made it in.  A
 * message that breaks this is a crash whose summary shows it, escaped.
 */
void fuzz_check_one_printable_line(const char *message);

/* A broken invariant is a crash for libFuzzer: the summary names it, the stack trace says where. */
#define FUZZ_CHECK(condition) \
        ((condition) ? (void) 0 : fuzz_check_failed(#condition, __FILE__, __LINE__))

__attribute__((noreturn)) void fuzz_check_failed(const char *condition, const char *file, int line);

#endif
