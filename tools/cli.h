/*
 * The `tessera` command: declarations shared by its files.
 *
 * The command is an ordinary client of libtessera.so: it includes only the
 * public header, so everything it does is something an application can do.
 * Module prefixes: cli_ (arguments, options), tio_ (tensor files, generated
 * inputs, summaries), cmp_ (comparing outputs), cmd_ (the subcommands).
 */
#ifndef TESSERA_TOOLS_CLI_H
#define TESSERA_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tessera/tessera.h"

/* Exit statuses: 1 for "ran, but something failed", 2 for "you called me
 * wrongly" (the convention of grep, diff and friends, so scripts can tell a
 * failed test run from a typo). */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

/* --- options every model-running subcommand shares ------------------------ */
typedef struct cli_provider_option {
    char *provider, *key, *value;
} cli_provider_option;

typedef struct cli_dim {
    char *symbol;
    int64_t value;
} cli_dim;

typedef struct cli_common {
    char **providers; /* in priority order; none = let the library choose */
    size_t provider_count;
    cli_provider_option *provider_options;
    size_t provider_option_count;
    cli_dim *dims;
    size_t dim_count;
    int32_t threads;   /* -1: not given */
    int32_t log_level; /* -1: not given */
    cli_provider_option *assigns; /* --assign NODE_OR_OP=PROVIDER: key = node/op, value = provider */
    size_t assign_count;
    int32_t policy;  /* tsr_policy; -1: not given */
    char *fallback;  /* --fallback PROVIDER, or NULL */
    cli_dim *limits; /* --limit NAME=VALUE (symbol = the limit's name) */
    size_t limit_count;
} cli_common;

void cli_common_init(cli_common *c);
void cli_common_free(cli_common *c);

/*
 * Tries to consume the option at argv[*i] (and its value) as a shared option.
 * Returns 1 when consumed (*i then points at the last word used), 0 when the
 * option is not a shared one, -1 on a usage error (message already printed).
 * `accept_dim` says whether --dim is meaningful for this subcommand.
 */
int cli_parse_common(cli_common *c, int argc, char **argv, int *i, bool accept_dim);

/* Help text for the shared options, for the per-command --help. */
void cli_print_common_help(FILE *f, bool with_dim);

/* Session options from the shared options; the caller frees them. */
tsr_status *cli_make_session_options(const cli_common *c, tsr_session_options **out);

/* The value of an option written as `--name VALUE` or `--name=VALUE`.
 * Returns NULL when argv[*i] is not this option; sets *bad (and prints a
 * message) when the value is missing. Advances *i past a separate value. */
const char *cli_option_value(int argc, char **argv, int *i, const char *shortname,
                             const char *longname, bool *bad);

/* Prints "tessera: <what>: <library message>" to stderr and frees `st`. */
void cli_report_status(const char *what, tsr_status *st);

/* Prints a usage error to stderr; always returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* snprintf for messages that may be cut short on purpose (a reason line
 * holding a library message of any length): the same, minus gcc's
 * -Wformat-truncation, which cannot know the cut is wanted. */
void cli_format(char *buf, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

bool cli_parse_int64(const char *s, int64_t *out);
bool cli_parse_double(const char *s, double *out);

/* --- tensors ------------------------------------------------------------- */
/* Whole file into a malloc'd buffer. Returns false and sets errno on failure. */
/* Files the command reads whole (models, TensorProto inputs, test data)
 * are regular files of at most this many bytes (16 GiB); anything else
 * fails with errno EINVAL (not a regular file) or EFBIG. */
#define TIO_MAX_FILE_BYTES ((uint64_t)16 << 30)
bool tio_read_file(const char *path, void **bytes, size_t *size);
/* Why tio_read_file failed, from its errno. */
const char *tio_file_error(int errnum);
bool tio_write_file(const char *path, const void *bytes, size_t size);
/* mkdir -p. */
bool tio_make_dirs(const char *path);

/* Number of elements of a tensor descriptor (1 for a scalar). */
size_t tio_element_count(int32_t rank, const int64_t *dims);

/* Element types whose values are compared with a tolerance. */
bool tio_is_float_type(int32_t elem_type);
bool tio_is_complex_type(int32_t elem_type);
bool tio_is_signed_int_type(int32_t elem_type);
bool tio_is_unsigned_int_type(int32_t elem_type);

/* Decodes element `index` (for complex types: component `index`, real and
 * imaginary interleaved) of a numeric or bool tensor as a double. False for
 * strings and unknown types. */
bool tio_element_as_double(const tsr_tensor *t, size_t index, double *out);
/* Exact integer value of element `index` of an integer or bool tensor. */
bool tio_element_as_int(const tsr_tensor *t, size_t index, int64_t *s, uint64_t *u);
/* Number of scalar components: elements, times two for complex types. */
size_t tio_component_count(const tsr_tensor *t);

/* "[2,3,4]" into buf. */
void tio_format_shape(char *buf, size_t size, int32_t rank, const int64_t *dims);
/* One element as text (strings quoted and truncated). */
void tio_format_element(char *buf, size_t size, const tsr_tensor *t, size_t index);

/* Prints "  values: ...; min ... max ... mean ..." for a tensor. */
void tio_print_summary(FILE *f, const tsr_tensor *t, size_t show);

/* What a made-up integer input is for (model_scan.c finds out). */
typedef struct tio_int_hint {
    int64_t index_bound; /* -1: not indices; else indices into an axis of this size (0: unknown) */
    bool mask;           /* the input's name contains "mask" (any case) */
} tio_int_hint;

/* Fills a zero-initialised value deterministically (tensor_fill.c). */
tsr_status *tio_fill_generated(tsr_value *value, uint64_t seed, tio_int_hint hint);
/* Sets every element of a numeric or bool tensor to x; false (reason in
 * `why`) when the type cannot hold x (0.5 for an int, 300 for a uint8) or is
 * not numeric. */
bool tio_fill_constant(tsr_value *value, double x, char *why, size_t why_size);

/* For each of `names` (graph inputs), whether the model uses it as indices
 * (Gather*, Scatter*, their input 1): -1 not, else the size of the indexed
 * axis, 0 when unknown (the smallest when several). False, with every
 * bound -1, when the file cannot be read as an ONNX model (model_scan.c). */
bool ms_index_bounds(const char *model_path, size_t count, const char *const *names, int64_t *bounds);

/* --- feeding a model's inputs (run, bench) ------------------------------- */
/* -i NAME=FILE.pb / -i FILE.pb, or --fill NAME=VALUE. */
typedef struct cli_input_spec {
    char *name;  /* NULL for -i FILE.pb: the name stored in the file */
    char *file;  /* NULL for --fill */
    double fill; /* the constant, for --fill */
} cli_input_spec;

typedef struct cli_inputs_args {
    cli_input_spec *specs;
    size_t spec_count;
    char *case_dir; /* --case DIR, or MODEL given as a case folder */
    char *model;    /* the model's path, once cli_inputs_resolve_model has run */
} cli_inputs_args;

/* Consumes -i/--input, --fill and --case at argv[*i]: 1 when consumed, 0
 * when not one of them, -1 on a usage error (message printed). */
int cli_inputs_parse(cli_inputs_args *a, const char *cmd, int argc, char **argv, int *i);
/* Sets a->model from the positional MODEL (may be NULL): a folder holding
 * model.onnx is a test case (inputs from its test_data_set_0 unless --case
 * names another); without MODEL, --case DIR's model.onnx. Returns 0 or
 * CLI_EXIT_USAGE (message printed). */
int cli_inputs_resolve_model(cli_inputs_args *a, const char *cmd, const char *model);
void cli_inputs_free(cli_inputs_args *a);
void cli_print_inputs_help(FILE *f);

/* One value per session input, in session order: given (-i, --case),
 * constant (--fill) or made up from `seed` (input k: seed + k). */
typedef struct cli_feed {
    size_t count;
    const char **names; /* copies */
    tsr_value **values;
    tsr_tensor *views;
    const tsr_tensor **tensors;
} cli_feed;

/* Errors (an unknown input name, a file that is not a TensorProto, a type or
 * shape the model does not take) are printed, naming the input and file. */
bool cli_feed_make(tsr_session *s, const cli_inputs_args *a, const cli_common *c, uint64_t seed,
                   const char *cmd, cli_feed *out);
void cli_feed_free(cli_feed *f);

/* "a/b:c" -> "a_b:c", so an output name can be a file name. malloc'd. */
char *tio_sanitize_name(const char *name);

/* --- comparing ----------------------------------------------------------- */
typedef struct cmp_tolerance {
    double rtol, atol;
} cmp_tolerance;

/* Compares `got` with `expected`. Returns true when they match; otherwise
 * writes a one-line reason (without the output's name) into `reason`. */
bool cmp_tensors(const tsr_tensor *got, const tsr_tensor *expected, cmp_tolerance tol,
                 char *reason, size_t reason_size);
/* The same for values of any kind: kinds, lengths, then items in turn. */
bool cmp_values(const tsr_value *got, const tsr_value *expected, cmp_tolerance tol, char *reason,
                size_t reason_size);

/* --- subcommands --------------------------------------------------------- */
/* Each gets argv starting at the subcommand's name. */
int cmd_providers(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_test(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_partition(int argc, char **argv);

#endif
