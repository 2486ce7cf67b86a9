/*
 * RegexFullMatch: whether each string of X matches `pattern` as a whole.
 *
 * ONNX specifies RE2 syntax; PCRE2 accepts a superset of it, so we compile
 * with options that give RE2's meaning where the two differ: UTF-8 text and
 * `$` only at the very end. ANCHORED plus ENDANCHORED make every match a
 * full match.
 *
 * RE2 never backtracks; PCRE2 does, so a pattern like (a+)+b can take
 * exponential time on some inputs. PCRE2's match limit stops that (about
 * ten million steps, well under a second) and we report it as an error
 * naming the element. (PCRE2's DFA matcher avoids backtracking but was
 * tried and found quadratic or worse on the same patterns.) Invalid UTF-8
 * matches nothing rather than failing.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <string.h>

#include "ref_text.h"

static const uint32_t compile_options =
    PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_DOLLAR_ENDONLY;

/* Compiles the node's pattern; on failure writes why into `why`. */
static pcre2_code *compile_pattern(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    const tsr_attr *a = host->node_attr_find(node, "pattern");
    if (!a) {
        snprintf(why, why_size, "the pattern attribute is missing");
        return NULL;
    }
    size_t len;
    const char *pat = host->attr_string(a, &len);
    int err;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, len, compile_options, &err, &off, NULL);
    if (!re) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(err, msg, sizeof msg);
        snprintf(why, why_size, "pattern '%.*s' does not compile at offset %zu: %s", (int)(len < 60 ? len : 60), pat,
                 (size_t)off, (const char *)msg);
    }
    return re;
}

int ref_text_check_regex(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    pcre2_code *re = compile_pattern(host, node, why, why_size);
    if (!re) return TSR_DECLINE_ATTRIBUTE;
    pcre2_code_free(re);
    return 0;
}

tsr_status *ref_text_regex_full_match(ref_ctx *c) {
    const tsr_tensor *X;
    const tsr_string *xs;
    tsr_status *st = ref_text_in_strings(c, 0, &X, &xs);
    if (st) return st;
    char why[300];
    pcre2_code *re = compile_pattern(c->host, c->node, why, sizeof why);
    if (!re) return ref_err(c, TSR_ERR_INVALID_MODEL, "%s", why);
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    tsr_tensor *Y;
    if (!md) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    } else if (!(st = ref_out(c, 0, TSR_BOOL, X->rank, X->dims, &Y))) {
        uint8_t *y = Y->data;
        size_t n = (size_t)ref_numel(X);
        for (size_t i = 0; i < n; i++) {
            const char *s = xs[i].data ? xs[i].data : "";
            int r = pcre2_match(re, (PCRE2_SPTR)s, xs[i].size, 0, 0, md, NULL);
            if (r < 0 && r != PCRE2_ERROR_NOMATCH) {
                PCRE2_UCHAR msg[160];
                pcre2_get_error_message(r, msg, sizeof msg);
                st = ref_err(c, TSR_ERR_RUNTIME, "matching element %zu failed: %s", i, (const char *)msg);
                break;
            }
            y[i] = r >= 0;
        }
    }
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return st;
}
