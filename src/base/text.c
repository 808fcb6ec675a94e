/* SPDX-License-Identifier: MIT */
/* Text the library and its tools must write into JSON: the UTF-8 check. */
#include "dsh-sandbox/sandbox.h"

/* The length of the sequence a lead byte starts, or 0 for a byte that cannot lead one. */
static size_t sequence_length(unsigned char lead)
{
        if (lead < 0x80)
                return 1;
        if (lead >= 0xc2 && lead <= 0xdf)
                return 2;
        if (lead >= 0xe0 && lead <= 0xef)
                return 3;
        if (lead >= 0xf0 && lead <= 0xf4)
                return 4;
        return 0;   /* a continuation byte, an overlong lead (0xc0, 0xc1), or beyond U+10FFFF */
}

/*
 * RFC 3629, as jansson applies it to json_string(): no overlong forms, no
 * UTF-16 surrogates (U+D800..U+DFFF), nothing above U+10FFFF.
 */
bool dsh_text_is_utf8(const char *text, size_t length, size_t *invalid_offset)
{
        const unsigned char *bytes = (const unsigned char *) text;
        size_t offset = 0;

        while (offset < length) {
                size_t size = sequence_length(bytes[offset]);
                unsigned char lead = bytes[offset];

                if (size == 0 || size > length - offset)
                        goto invalid;
                for (size_t i = 1; i < size; i++)
                        if ((bytes[offset + i] & 0xc0) != 0x80)
                                goto invalid;
                /* The second byte's range excludes what the lead alone cannot: overlongs, surrogates, > U+10FFFF. */
                if ((lead == 0xe0 && bytes[offset + 1] < 0xa0) || (lead == 0xed && bytes[offset + 1] > 0x9f) ||
                    (lead == 0xf0 && bytes[offset + 1] < 0x90) || (lead == 0xf4 && bytes[offset + 1] > 0x8f))
                        goto invalid;
                offset += size;
        }
        return true;
invalid:
        if (invalid_offset)
                *invalid_offset = offset;
        return false;
}
