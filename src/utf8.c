/*
 * utf8.c - UTF-8 lengths, validity and cutting (see utf8.h).
 */
#include "utf8.h"

#include <string.h>

size_t utf8_seq_len(const unsigned char *s, size_t n) {
    if (n == 0) {
        return 0;
    }
    if (s[0] < 0x80) {
        return 1;
    }
    size_t len = 0;
    unsigned int min = 0;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        min = 0x80;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        min = 0x800;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (len > n) {
        return 0;
    }
    unsigned int cp = s[0] & (0x7fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        return 0;
    }
    return len;
}

size_t utf8_char_len(const unsigned char *s, size_t n, bool multiline) {
    if (n > 0 && s[0] < 0x80) {
        if (s[0] >= 0x20 && s[0] != 0x7f) {
            return 1;
        }
        return multiline && (s[0] == '\n' || s[0] == '\t') ? 1 : 0;
    }
    return utf8_seq_len(s, n);
}

bool utf8_valid(const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t len = utf8_seq_len((const unsigned char *)s + i, n - i);
        if (len == 0) {
            return false;
        }
        i += len;
    }
    return true;
}

size_t utf8_boundary(const char *s, size_t n) {
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) {
        n--;
    }
    return n;
}

void utf8_cut(char *s, size_t max) {
    size_t n = strlen(s);
    if (n > max) {
        s[utf8_boundary(s, max)] = '\0';
    }
}

size_t utf8_count(const char *s, size_t n) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (((unsigned char)s[i] & 0xc0) != 0x80) {
            count++;
        }
    }
    return count;
}

void utf8_sanitize(char *s) {
    size_t n = strlen(s);
    size_t i = 0;
    while (i < n) {
        size_t len = utf8_char_len((const unsigned char *)s + i, n - i, false);
        if (len == 0) {
            s[i] = '?';
            len = 1;
        }
        i += len;
    }
}

size_t utf8_encode(uint32_t cp, unsigned char out[4]) {
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}
