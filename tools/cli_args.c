/*
 * Argument parsing shared by the subcommands, and turning the shared options
 * into tsr_session_options.
 *
 * Hand-rolled rather than getopt_long: options may follow positional
 * arguments (`tessera run model.onnx -p reference`), both `--opt V` and
 * `--opt=V` are accepted, and each subcommand adds its own options, which
 * is simpler to express as "try the shared parser, then my own" than as one
 * getopt table per command.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Indexed by tsr_log_level. */
static const char *const log_level_names[] = {
    [TSR_LOG_ERROR] = "error",
    [TSR_LOG_WARNING] = "warning",
    [TSR_LOG_INFO] = "info",
    [TSR_LOG_DEBUG] = "debug",
};

void cli_common_init(cli_common *c) {
    memset(c, 0, sizeof *c);
    c->threads = -1;
    c->log_level = -1;
    c->policy = -1;
}

void cli_common_free(cli_common *c) {
    for (size_t i = 0; i < c->provider_count; i++) free(c->providers[i]);
    free(c->providers);
    for (size_t i = 0; i < c->provider_option_count; i++) {
        free(c->provider_options[i].provider);
        free(c->provider_options[i].key);
        free(c->provider_options[i].value);
    }
    free(c->provider_options);
    for (size_t i = 0; i < c->dim_count; i++) free(c->dims[i].symbol);
    free(c->dims);
    for (size_t i = 0; i < c->assign_count; i++) {
        free(c->assigns[i].key);
        free(c->assigns[i].value);
    }
    free(c->assigns);
    free(c->fallback);
    free(c->cache_dir);
    for (size_t i = 0; i < c->limit_count; i++) free(c->limits[i].symbol);
    free(c->limits);
    cli_chain_free(c);
    cli_common_init(c);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    if (cmd) fprintf(stderr, "tessera %s: ", cmd);
    else fputs("tessera: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (cmd) fprintf(stderr, "(see `tessera %s --help`)\n", cmd);
    return CLI_EXIT_USAGE;
}

void cli_format(char *buf, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

void cli_report_status(const char *what, tsr_status *st) {
    fprintf(stderr, "tessera: %s: %s\n", what, tsr_status_message(st));
    tsr_status_free(st);
}

bool cli_parse_int64(const char *s, int64_t *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return false;
    *out = (int64_t)v;
    return true;
}

bool cli_parse_double(const char *s, double *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v)) return false;
    *out = v;
    return true;
}

const char *cli_option_value(int argc, char **argv, int *i, const char *shortname, const char *longname, bool *bad) {
    const char *a = argv[*i];
    if ((shortname && strcmp(a, shortname) == 0) || (longname && strcmp(a, longname) == 0)) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "tessera: option %s needs a value\n", a);
            *bad = true;
            return NULL;
        }
        return argv[++*i];
    }
    if (longname) {
        size_t n = strlen(longname);
        if (strncmp(a, longname, n) == 0 && a[n] == '=') return a + n + 1;
    }
    return NULL;
}

static char *xstrndup(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (!p) {
        fprintf(stderr, "tessera: out of memory\n");
        exit(CLI_EXIT_FAIL);
    }
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static void *xgrow(void *p, size_t count, size_t elem) {
    p = realloc(p, (count + 1) * elem);
    if (!p) {
        fprintf(stderr, "tessera: out of memory\n");
        exit(CLI_EXIT_FAIL);
    }
    return p;
}

/* "a,b,c": empty items are a mistake (a trailing comma), not "default". */
static int add_provider_list(cli_common *c, const char *list) {
    if (strcmp(list, "auto") == 0) { /* every plugin found, placed by cost */
        c->policy = TSR_POLICY_COST;
        return 1;
    }
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 0) {
            fprintf(stderr, "tessera: empty provider name in '%s'\n", list);
            return -1;
        }
        c->providers = xgrow(c->providers, c->provider_count, sizeof *c->providers);
        c->providers[c->provider_count++] = xstrndup(p, n);
        if (!comma) return 1;
        p = comma + 1;
    }
}

bool cli_split_providers(const char *cmd, const char *list, char ***entries, size_t *count) {
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 0) {
            cli_usage_error(cmd, "empty provider name in '%s'", list);
            return false;
        }
        char **e = realloc(*entries, (*count + 1) * sizeof *e);
        if (!e) return false;
        *entries = e;
        if (!(e[*count] = strndup(p, n))) return false;
        (*count)++;
        if (!comma) return true;
        p = comma + 1;
    }
}

/* PROVIDER:KEY=VALUE. The provider ends at the first ':' and the key at the
 * first '=' after it; the value is the rest, so it may hold ':' and '='
 * (paths, nested settings). */
static int add_provider_option(cli_common *c, const char *spec) {
    const char *colon = strchr(spec, ':');
    const char *eq = colon ? strchr(colon + 1, '=') : NULL;
    if (!colon || colon == spec || !eq || eq == colon + 1) {
        fprintf(stderr, "tessera: --provider-option wants PROVIDER:KEY=VALUE, not '%s'\n", spec);
        return -1;
    }
    c->provider_options = xgrow(c->provider_options, c->provider_option_count, sizeof *c->provider_options);
    cli_provider_option *o = &c->provider_options[c->provider_option_count++];
    o->provider = xstrndup(spec, (size_t)(colon - spec));
    o->key = xstrndup(colon + 1, (size_t)(eq - colon - 1));
    o->value = xstrndup(eq + 1, strlen(eq + 1));
    return 1;
}

static int add_dim(cli_common *c, const char *spec) {
    const char *eq = strrchr(spec, '=');
    int64_t v;
    if (!eq || eq == spec || !cli_parse_int64(eq + 1, &v) || v < 0) {
        fprintf(stderr, "tessera: --dim wants NAME=VALUE with VALUE >= 0, not '%s'\n", spec);
        return -1;
    }
    /* A later --dim for the same symbol wins, as with most tools. */
    for (size_t i = 0; i < c->dim_count; i++) {
        if (strlen(c->dims[i].symbol) == (size_t)(eq - spec) &&
            strncmp(c->dims[i].symbol, spec, (size_t)(eq - spec)) == 0) {
            c->dims[i].value = v;
            return 1;
        }
    }
    c->dims = xgrow(c->dims, c->dim_count, sizeof *c->dims);
    c->dims[c->dim_count].symbol = xstrndup(spec, (size_t)(eq - spec));
    c->dims[c->dim_count++].value = v;
    return 1;
}

static int add_limit(cli_common *c, const char *spec) {
    const char *eq = strchr(spec, '=');
    int64_t v;
    if (!eq || eq == spec || !cli_parse_int64(eq + 1, &v) || v <= 0) {
        fprintf(stderr, "tessera: --limit wants NAME=VALUE with VALUE > 0, not '%s'\n", spec);
        return -1;
    }
    c->limits = xgrow(c->limits, c->limit_count, sizeof *c->limits);
    c->limits[c->limit_count].symbol = xstrndup(spec, (size_t)(eq - spec));
    c->limits[c->limit_count++].value = v;
    return 1;
}

static int parse_log_level(const char *s, int32_t *out) {
    for (int32_t i = 0; i < (int32_t)(sizeof log_level_names / sizeof log_level_names[0]); i++) {
        if (strcmp(s, log_level_names[i]) == 0) {
            *out = i;
            return 1;
        }
    }
    if (strcmp(s, "warn") == 0) {
        *out = TSR_LOG_WARNING;
        return 1;
    }
    int64_t v;
    if (cli_parse_int64(s, &v) && v >= TSR_LOG_ERROR && v <= TSR_LOG_DEBUG) {
        *out = (int32_t)v;
        return 1;
    }
    fprintf(stderr, "tessera: --log-level wants error, warning, info, debug or 0-3, not '%s'\n", s);
    return -1;
}

static int add_assign(cli_common *c, const char *spec) {
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1]) {
        fprintf(stderr, "tessera: --assign wants NODE_OR_OP=PROVIDER, not '%s'\n", spec);
        return -1;
    }
    c->assigns = xgrow(c->assigns, c->assign_count, sizeof *c->assigns);
    cli_provider_option *a = &c->assigns[c->assign_count++];
    a->provider = NULL;
    a->key = xstrndup(spec, (size_t)(eq - spec));
    a->value = xstrndup(eq + 1, strlen(eq + 1));
    return 1;
}

int cli_parse_common(cli_common *c, int argc, char **argv, int *i, bool accept_dim) {
    bool bad = false;
    const char *v;
    if ((v = cli_option_value(argc, argv, i, "-p", "--providers", &bad)) ||
        (v = cli_option_value(argc, argv, i, NULL, "--provider", &bad)))
        return add_provider_list(c, v);
    if (bad) return -1;
    if ((v = cli_option_value(argc, argv, i, NULL, "--provider-option", &bad))) return add_provider_option(c, v);
    if (bad) return -1;
    if ((v = cli_option_value(argc, argv, i, "-t", "--threads", &bad))) {
        int64_t n;
        if (!cli_parse_int64(v, &n) || n < 0 || n > INT32_MAX) {
            fprintf(stderr, "tessera: --threads wants a number >= 0, not '%s'\n", v);
            return -1;
        }
        c->threads = (int32_t)n;
        return 1;
    }
    if (bad) return -1;
    if ((v = cli_option_value(argc, argv, i, NULL, "--log-level", &bad))) return parse_log_level(v, &c->log_level);
    if (bad) return -1;
    if ((v = cli_option_value(argc, argv, i, NULL, "--assign", &bad))) return add_assign(c, v);
    if (bad) return -1;
    if ((v = cli_option_value(argc, argv, i, NULL, "--policy", &bad))) {
        if (strcmp(v, "order") == 0) c->policy = TSR_POLICY_ORDER;
        else if (strcmp(v, "cost") == 0) c->policy = TSR_POLICY_COST;
        else if (strcmp(v, "first") == 0) c->policy = TSR_POLICY_FIRST;
        else {
            fprintf(stderr, "tessera: --policy wants order, cost or first, not '%s'\n", v);
            return -1;
        }
        return 1;
    }
    if (bad) return -1;
    if ((v = cli_option_value(argc, argv, i, NULL, "--fallback", &bad))) {
        if (!*v) {
            fprintf(stderr, "tessera: --fallback wants a provider name\n");
            return -1;
        }
        free(c->fallback);
        c->fallback = xstrndup(v, strlen(v));
        return 1;
    }
    if (bad) return -1;
    if ((v = cli_option_value(argc, argv, i, NULL, "--cache-dir", &bad))) {
        free(c->cache_dir);
        c->cache_dir = xstrndup(v, strlen(v));
        return 1;
    }
    if (bad) return -1;
    if ((v = cli_option_value(argc, argv, i, NULL, "--limit", &bad))) return add_limit(c, v);
    if (bad) return -1;
    if (accept_dim) {
        if ((v = cli_option_value(argc, argv, i, NULL, "--dim", &bad))) return add_dim(c, v);
        if (bad) return -1;
    }
    return 0;
}

void cli_print_common_help(FILE *f, bool with_dim) {
    fprintf(f,
            "  -p, --providers LIST   providers in priority order, comma-separated names\n"
            "                         or .so paths (default: every plugin found);\n"
            "                         'auto': every plugin found, placed by --policy cost\n"
            "  --policy order|cost|first\n"
            "                         place a node on the first provider in the list that\n"
            "                         claims it, cheap nodes next to their neighbours'\n"
            "                         memory (order, default); where estimated time\n"
            "                         including copies between memories is least (cost);\n"
            "                         or on the first that claims it, copies or not (first)\n"
            "  --fallback PROVIDER    runs only what no other provider claims (added to the\n"
            "                         list if absent); its nodes are named in a warning\n"
            "  --cache-dir DIR        keep compiled pieces of providers that can export\n"
            "                         them in DIR, and import them next time instead of\n"
            "                         compiling (a stale or foreign file is ignored)\n"
            "  --provider-option PROVIDER:KEY=VALUE\n"
            "                         an option for one provider (repeatable)\n"
            "  -t, --threads N        threads per operator (0: the provider chooses)\n"
            "  --log-level LEVEL      error, warning, info or debug\n"
            "  --assign NODE_OR_OP=PROVIDER\n"
            "                         run that node (by name) or op type on that provider\n"
            "                         only (repeatable)\n"
            "  --limit NAME=VALUE     a resource limit (repeatable; VALUE > 0, in bytes for\n"
            "                         the *_bytes ones):\n"
            "                           tensor_bytes    the largest tensor a run may\n"
            "                                           allocate (default 16 GiB)\n"
            "                           working_bytes   the tensors a run holds at once, all\n"
            "                                           together (default 64 GiB)\n"
            "                           model_bytes     the .onnx file (default 4 GiB)\n"
            "                           external_bytes  its external data, all files\n"
            "                                           together (default 64 GiB)\n"
            "                           graph_depth     subgraph nesting (default 64, at\n"
            "                                           most 256)\n"
            "                           function_nodes  nodes that expanding function ops\n"
            "                                           may make (default 1000000)\n"
            "                           function_depth  function ops inside expanded\n"
            "                                           bodies (default 64, at most 1024)\n"
            "                           fold_bytes      the most a node computed once at\n"
            "                                           load (all inputs constant) may\n"
            "                                           make (default 256 MiB; 1: none)\n");
    if (with_dim) fprintf(f, "  --dim NAME=VALUE       fix a symbolic dimension (repeatable)\n");
}

tsr_status *cli_make_session_options(const cli_common *c, tsr_session_options **out) {
    tsr_session_options *o;
    tsr_status *st = tsr_session_options_create(&o);
    if (st) return st;
    for (size_t i = 0; !st && i < c->provider_count; i++) st = tsr_session_options_add_provider(o, c->providers[i]);
    for (size_t i = 0; !st && i < c->provider_option_count; i++)
        st = tsr_session_options_set_provider_option(o, c->provider_options[i].provider, c->provider_options[i].key,
                                                     c->provider_options[i].value);
    if (!st && c->threads >= 0) st = tsr_session_options_set_threads(o, c->threads);
    if (!st && c->log_level >= 0) st = tsr_session_options_set_log_level(o, c->log_level);
    for (size_t i = 0; !st && i < c->dim_count; i++)
        st = tsr_session_options_set_dim(o, c->dims[i].symbol, c->dims[i].value);
    for (size_t i = 0; !st && i < c->assign_count; i++)
        st = tsr_session_options_assign(o, c->assigns[i].key, c->assigns[i].value);
    if (!st && c->policy >= 0) st = tsr_session_options_set_policy(o, c->policy);
    if (!st && c->fallback) st = tsr_session_options_set_fallback(o, c->fallback);
    if (!st && c->cache_dir) st = tsr_session_options_set_cache_dir(o, c->cache_dir);
    for (size_t i = 0; !st && i < c->limit_count; i++)
        st = tsr_session_options_set_limit(o, c->limits[i].symbol, c->limits[i].value);
    if (!st) st = cli_chain_apply(c, o);
    if (st) {
        tsr_session_options_free(o);
        return st;
    }
    *out = o;
    return NULL;
}
