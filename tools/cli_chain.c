/*
 * Chains of models on the command line: `tessera run pre.onnx model.onnx
 * [post.onnx] [--connect [K:]OUT=IN]... [--prefix P0,P1,...]`, made one
 * model by the library (tsr_session_options_add_stage).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void *grow(void *p, size_t count, size_t elem) {
    p = realloc(p, (count + 1) * elem);
    if (!p) {
        fprintf(stderr, "tessera: out of memory\n");
        exit(CLI_EXIT_FAIL);
    }
    return p;
}

static char *dup_n(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (!p) {
        fprintf(stderr, "tessera: out of memory\n");
        exit(CLI_EXIT_FAIL);
    }
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

void cli_add_stage(cli_common *c, const char *path) {
    c->stages = grow(c->stages, c->stage_count, sizeof *c->stages);
    c->stages[c->stage_count++] = dup_n(path, strlen(path));
}

/* [K:]OUT=IN. K (digits, then ':') names the stage IN belongs to; without
 * it the library finds the one stage with an input IN. A value name that
 * itself starts with digits and ':' therefore needs the K: form. */
static int add_connect(cli_common *c, const char *spec) {
    const char *p = spec, *stage = NULL;
    size_t digits = strspn(p, "0123456789");
    if (digits && digits < 10 && p[digits] == ':') {
        stage = p;
        p += digits + 1;
    }
    if (stage && strtoul(stage, NULL, 10) == 0) {
        fprintf(stderr, "tessera: --connect '%s': model 0 is fed by nothing before it (K is 1 or more)\n", spec);
        return -1;
    }
    const char *eq = strchr(p, '=');
    if (!eq || eq == p || !eq[1]) {
        fprintf(stderr,
                "tessera: --connect wants [K:]OUT=IN (an output of an earlier model, an "
                "input of model K), not '%s'\n",
                spec);
        return -1;
    }
    c->connects = grow(c->connects, c->connect_count, sizeof *c->connects);
    cli_provider_option *l = &c->connects[c->connect_count++];
    l->provider = stage ? dup_n(stage, digits) : NULL;
    l->key = dup_n(p, (size_t)(eq - p));
    l->value = dup_n(eq + 1, strlen(eq + 1));
    return 1;
}

/* P0,P1,...: one per model in order; an empty one leaves that model's
 * names alone (",cls_" prefixes only the second). */
static int set_prefixes(cli_common *c, const char *list) {
    for (size_t i = 0; i < c->prefix_count; i++) free(c->prefixes[i]);
    c->prefix_count = 0;
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        c->prefixes = grow(c->prefixes, c->prefix_count, sizeof *c->prefixes);
        c->prefixes[c->prefix_count++] = dup_n(p, n);
        if (!comma) return 1;
        p = comma + 1;
    }
}

int cli_parse_chain(cli_common *c, int argc, char **argv, int *i) {
    bool bad = false;
    const char *v;
    if ((v = cli_option_value(argc, argv, i, NULL, "--connect", &bad))) return add_connect(c, v);
    if (bad) return -1;
    if ((v = cli_option_value(argc, argv, i, NULL, "--prefix", &bad))) return set_prefixes(c, v);
    if (bad) return -1;
    return 0;
}

void cli_print_chain_help(FILE *f) {
    fprintf(f,
            "  MODEL MODEL...         a chain: each model's outputs feed the next one's\n"
            "                         inputs in order, and the chain runs as one graph\n"
            "                         (providers may fuse across the seams), as\n"
            "                         onnx.compose.merge_models would merge them\n"
            "  --connect [K:]OUT=IN   instead, output OUT of an earlier model feeds input\n"
            "                         IN of model K (0 is the first; without K: the one\n"
            "                         model with an input IN); names as in their own files;\n"
            "                         repeatable; a model with one takes only its own\n"
            "  --prefix P0,P1,...     prefix every name of model K with PK (values, nodes,\n"
            "                         functions; onnx.compose.add_prefix), when names clash;\n"
            "                         an empty PK leaves model K's names alone\n");
}

void cli_chain_free(cli_common *c) {
    for (size_t i = 0; i < c->stage_count; i++) free(c->stages[i]);
    free(c->stages);
    for (size_t i = 0; i < c->connect_count; i++) {
        free(c->connects[i].provider);
        free(c->connects[i].key);
        free(c->connects[i].value);
    }
    free(c->connects);
    for (size_t i = 0; i < c->prefix_count; i++) free(c->prefixes[i]);
    free(c->prefixes);
}

tsr_status *cli_chain_apply(const cli_common *c, tsr_session_options *o) {
    tsr_status *st = NULL;
    for (size_t i = 0; !st && i < c->stage_count; i++) st = tsr_session_options_add_stage(o, c->stages[i]);
    for (size_t i = 0; !st && i < c->prefix_count; i++)
        if (c->prefixes[i][0]) st = tsr_session_options_set_stage_prefix(o, i, c->prefixes[i]);
    for (size_t i = 0; !st && i < c->connect_count; i++) {
        const cli_provider_option *l = &c->connects[i];
        size_t stage = l->provider ? (size_t)strtoull(l->provider, NULL, 10) : 0; /* 0: find it */
        st = tsr_session_options_connect(o, stage, l->key, l->value);
    }
    return st;
}
