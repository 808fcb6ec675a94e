/* SPDX-License-Identifier: MIT */
/*
 * Outcome classification: did the runner fail before the command ran, or did
 * the sandbox deny the command a file effect?  Both are read from stderr in
 * the backend's own dialect (docs/backends.md, "the runner-failure rule"); exit status alone proves neither.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "provider/classify.h"
#include "dsh-sandbox/sandbox.h"

/* Case-insensitive substring search within [line, line + length). */
static bool line_contains(const char *line, size_t length, const char *needle)
{
        size_t needle_length = strlen(needle);
        int first;

        if (needle_length == 0 || needle_length > length)
                return false;
        first = tolower((unsigned char) needle[0]);
        /* The first byte alone rules out almost every start: a stream's whole stderr goes through here. */
        for (size_t start = 0; start + needle_length <= length; start++)
                if (tolower((unsigned char) line[start]) == first &&
                    strncasecmp(line + start, needle, needle_length) == 0)
                        return true;
        return false;
}

static bool line_is_informational(const char *line, size_t length, char *const *informational_lines)
{
        for (; informational_lines && *informational_lines; informational_lines++)
                if (strlen(*informational_lines) == length && strncasecmp(line, *informational_lines, length) == 0)
                        return true;
        return false;
}

static bool exit_code_allowed(const dsh_runner_failure_rule *rule, int exit_code)
{
        if (rule->allowed_exit_code_count == 0)
                return true;
        for (size_t i = 0; i < rule->allowed_exit_code_count; i++)
                if (rule->allowed_exit_codes[i] == exit_code)
                        return true;
        return false;
}

/* Returns the first stderr line that proves `rule`, or NULL; *length receives its length. */
static const char *find_fatal_line(const dsh_runner_failure_rule *rule, const char *stderr_text, size_t *length)
{
        const char *line = stderr_text;

        while (line && *line) {
                const char *end = strchr(line, '\n');
                size_t line_length = end ? (size_t) (end - line) : strlen(line);
                size_t content_length = line_length;

                if (content_length > 0 && line[content_length - 1] == '\r')
                        content_length--;
                if (!line_is_informational(line, content_length, rule->informational_lines))
                        for (char **signature = rule->fatal_signatures; signature && *signature; signature++)
                                if (line_contains(line, content_length, *signature)) {
                                        *length = content_length;
                                        return line;
                                }
                line = end ? end + 1 : NULL;
        }
        return NULL;
}

bool dsh_runner_failed(const dsh_runner_failure_rule *rules, size_t rule_count,
                       int exit_code, const char *stderr_text, char **matched_line)
{
        if (exit_code == 0 || !stderr_text)
                return false;
        for (size_t i = 0; i < rule_count; i++) {
                const char *line;
                size_t length = 0;

                if (!exit_code_allowed(&rules[i], exit_code))
                        continue;
                line = find_fatal_line(&rules[i], stderr_text, &length);
                if (!line)
                        continue;
                if (matched_line)
                        *matched_line = strndup(line, length);
                return true;
        }
        return false;
}

bool dsh_text_has_signature(char *const *signatures, const char *text, size_t length)
{
        for (; signatures && *signatures; signatures++)
                if (line_contains(text, length, *signatures))
                        return true;
        return false;
}

size_t dsh_signatures_longest(char *const *signatures)
{
        size_t longest = 0;

        for (; signatures && *signatures; signatures++)
                if (strlen(*signatures) > longest)
                        longest = strlen(*signatures);
        return longest;
}

bool dsh_is_denial(char *const *denial_signatures, int exit_code, const char *stderr_text)
{
        if (exit_code == 0 || !stderr_text)
                return false;
        return dsh_text_has_signature(denial_signatures, stderr_text, strlen(stderr_text));
}
