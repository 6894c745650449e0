/* Small JSON and text-token writers for vtrace's output. */
#include "tools/tools.h"

#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p, 0 when invalid. */
static size_t utf8_len(const unsigned char *p)
{
    size_t n;
    unsigned c = p[0];
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        cp = (cp << 6) | (p[i] & 0x3fu);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return n;
}

void vt__json_str(FILE *out, const char *s)
{
    putc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                fprintf(out, "\\u%04x", *p);
            } else if (*p >= 0x80) {
                size_t n = utf8_len(p);
                if (n == 0) {
                    fprintf(out, "\\u%04x", *p); /* not UTF-8: the byte as Latin-1 */
                } else {
                    fwrite(p, 1, n, out);
                    p += n;
                    continue;
                }
            } else {
                putc(*p, out);
            }
        }
        p++;
    }
    putc('"', out);
}

void vt__json_key(FILE *out, int *first, const char *key)
{
    if (!*first)
        putc(',', out);
    *first = 0;
    vt__json_str(out, key);
    putc(':', out);
}

void vt__text_token(FILE *out, const char *s)
{
    if (!*s) {
        fputs("\"\"", out);
        return;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p <= 0x20 || *p == 0x7f || *p == '\\' || *p == '"')
            fprintf(out, "\\x%02x", *p);
        else
            putc(*p, out);
    }
}
