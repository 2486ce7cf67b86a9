/*
 * Upper- and lower-casing of UTF-8 text for StringNormalizer.
 *
 * The C library knows the Unicode case tables, but only through a locale;
 * setlocale would change it for the whole process (and every other thread),
 * so we keep our own locale object (newlocale) and use the *_l functions,
 * which take it explicitly. Where no UTF-8 locale exists at all, built-in
 * rules cover ASCII and the Latin-1 supplement.
 */
#define _POSIX_C_SOURCE 200809L

#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "ref_text.h"

struct ref_text_case {
    locale_t loc; /* (locale_t)0 when only the built-in rules apply */
};

/* Opens a LC_CTYPE locale by name, or returns (locale_t)0. */
static locale_t open_ctype(const char *name) { return newlocale(LC_CTYPE_MASK, name, (locale_t)0); }

ref_text_case *ref_text_case_open(const char *locale_name) {
    ref_text_case *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    /* ONNX names locales like "en_US"; the C library wants an encoding too.
     * A name that is long or odd is simply not tried. */
    if (locale_name && locale_name[0] && strlen(locale_name) < 64 && !strchr(locale_name, '/')) {
        char name[80];
        snprintf(name, sizeof name, "%s.UTF-8", locale_name);
        m->loc = open_ctype(name);
        if (!m->loc && (strstr(locale_name, "UTF-8") || strstr(locale_name, "utf8"))) m->loc = open_ctype(locale_name);
    }
    if (!m->loc) m->loc = open_ctype("C.UTF-8");
    if (!m->loc) m->loc = open_ctype("C.utf8");
    return m;
}

void ref_text_case_close(ref_text_case *m) {
    if (!m) return;
    if (m->loc) freelocale(m->loc);
    free(m);
}

/* Decodes one code point from s[0..n) (n >= 1) into *cp; returns its length
 * in bytes, or 0 when the bytes are not valid UTF-8 (overlong forms,
 * surrogates and values past U+10FFFF included). */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
    unsigned char b = s[0];
    size_t len;
    uint32_t v, min;
    if (b < 0x80) {
        *cp = b;
        return 1;
    } else if ((b & 0xe0) == 0xc0) {
        len = 2, v = b & 0x1f, min = 0x80;
    } else if ((b & 0xf0) == 0xe0) {
        len = 3, v = b & 0x0f, min = 0x800;
    } else if ((b & 0xf8) == 0xf0) {
        len = 4, v = b & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return len;
}

static size_t utf8_length(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

static void utf8_encode(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    switch (utf8_length(cp)) {
    case 1: o[0] = (unsigned char)cp; break;
    case 2:
        o[0] = (unsigned char)(0xc0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3f));
        break;
    case 3:
        o[0] = (unsigned char)(0xe0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (unsigned char)(0x80 | (cp & 0x3f));
        break;
    default:
        o[0] = (unsigned char)(0xf0 | (cp >> 18));
        o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
        o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        o[3] = (unsigned char)(0x80 | (cp & 0x3f));
        break;
    }
}

/* ASCII and Latin-1 supplement rules, for systems without a UTF-8 locale. */
static uint32_t builtin_map(uint32_t cp, bool upper) {
    if (upper) {
        if ((cp >= 'a' && cp <= 'z') || (cp >= 0xe0 && cp <= 0xfe && cp != 0xf7)) return cp - 0x20;
        if (cp == 0xff) return 0x178; /* ÿ -> Ÿ */
        if (cp == 0xb5) return 0x39c; /* micro sign -> Greek capital mu */
    } else {
        if ((cp >= 'A' && cp <= 'Z') || (cp >= 0xc0 && cp <= 0xde && cp != 0xd7)) return cp + 0x20;
        if (cp == 0x178) return 0xff;
    }
    return cp;
}

static uint32_t map_one(const ref_text_case *m, uint32_t cp, bool upper) {
    if (!m->loc) return builtin_map(cp, upper);
    wint_t r = upper ? towupper_l((wint_t)cp, m->loc) : towlower_l((wint_t)cp, m->loc);
    /* Never let the library turn valid text into something unencodable. */
    if ((uint32_t)r > 0x10ffff || ((uint32_t)r >= 0xd800 && (uint32_t)r <= 0xdfff)) return cp;
    return (uint32_t)r;
}

int ref_text_case_map(const ref_text_case *m, bool upper, const char *s, size_t n, char **out, size_t *out_n) {
    const unsigned char *u = (const unsigned char *)s;
    /* First pass: validate and measure (a mapped code point may need more
     * or fewer bytes than the original). */
    size_t total = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        size_t len = utf8_decode(u + i, n - i, &cp);
        if (!len) return -1;
        total += utf8_length(map_one(m, cp, upper));
        i += len;
    }
    char *buf = malloc(total + 1);
    if (!buf) return -2;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        size_t len = utf8_decode(u + i, n - i, &cp);
        uint32_t mapped = map_one(m, cp, upper);
        utf8_encode(mapped, buf + o);
        o += utf8_length(mapped);
        i += len;
    }
    buf[o] = 0;
    *out = buf;
    *out_n = o;
    return 0;
}
