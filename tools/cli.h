/*
 * The `tessera` command: declarations shared by its files.
 *
 * The command is an ordinary client of libtessera.so: it includes only the
 * public header, so everything it does is something an application can do.
 * Module prefixes: cli_ (arguments, options, device descriptions), tio_
 * (tensor files, generated inputs, summaries), cmp_ (comparing outputs),
 * tc_ (ONNX backend test cases), fp_ (jobs in forked children), cmd_ (the
 * subcommands).
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
    int32_t threads;              /* -1: not given */
    int32_t log_level;            /* -1: not given */
    cli_provider_option *assigns; /* --assign NODE_OR_OP=PROVIDER: key = node/op, value = provider */
    size_t assign_count;
    int32_t policy;  /* tsr_policy; -1: not given */
    char *fallback;  /* --fallback PROVIDER, or NULL */
    char *cache_dir; /* --cache-dir DIR, or NULL */
    cli_dim *limits; /* --limit NAME=VALUE (symbol = the limit's name) */
    size_t limit_count;
    /* A chain of models (run A.onnx B.onnx ...; cli_parse_chain): */
    char **stages; /* the models after the first, in order */
    size_t stage_count;
    cli_provider_option *connects; /* --connect [K:]OUT=IN: key OUT, value IN, provider K or NULL */
    size_t connect_count;
    char **prefixes; /* --prefix P0,P1,...: by stage, "" for none */
    size_t prefix_count;
} cli_common;

/* Appends the names of a comma-separated provider list ("a,b,c") to
 * *entries (malloc'd strings); false on an empty name (a usage error naming
 * cmd, printed) or out of memory. */
bool cli_split_providers(const char *cmd, const char *list, char ***entries, size_t *count);
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

/* Chains of models, for the commands that run one (run, partition, bench,
 * compose): cli_parse_chain consumes --connect and --prefix as
 * cli_parse_common does its options; cli_add_stage appends a model given
 * after the first. cli_make_session_options applies them. */
int cli_parse_chain(cli_common *c, int argc, char **argv, int *i);
void cli_add_stage(cli_common *c, const char *path);
void cli_print_chain_help(FILE *f);
/* For cli_common_free and cli_make_session_options (tools/cli_chain.c). */
void cli_chain_free(cli_common *c);
tsr_status *cli_chain_apply(const cli_common *c, tsr_session_options *o);

/* Session options from the shared options; the caller frees them. */
tsr_status *cli_make_session_options(const cli_common *c, tsr_session_options **out);

/* The value of an option written as `--name VALUE` or `--name=VALUE`.
 * Returns NULL when argv[*i] is not this option; sets *bad (and prints a
 * message) when the value is missing. Advances *i past a separate value. */
const char *cli_option_value(int argc, char **argv, int *i, const char *shortname, const char *longname, bool *bad);

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
/* `run --info` (model_info.c): metadata, opsets, declared inputs and
 * outputs on stdout; a CLI exit status. */
int cli_print_model_info(const tsr_session *s);
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
bool cli_feed_make(tsr_session *s, const cli_inputs_args *a, const cli_common *c, uint64_t seed, const char *cmd,
                   cli_feed *out);
void cli_feed_free(cli_feed *f);

/* "a/b:c" -> "a_b:c", so an output name can be a file name. malloc'd. */
char *tio_sanitize_name(const char *name);

/* --- comparing ----------------------------------------------------------- */
typedef struct cmp_tolerance {
    double rtol, atol;
} cmp_tolerance;

/* Compares `got` with `expected`. Returns true when they match; otherwise
 * writes a one-line reason (without the output's name) into `reason`. */
bool cmp_tensors(const tsr_tensor *got, const tsr_tensor *expected, cmp_tolerance tol, char *reason,
                 size_t reason_size);
/* The same for values of any kind: kinds, lengths, then items in turn. */
bool cmp_values(const tsr_value *got, const tsr_value *expected, cmp_tolerance tol, char *reason, size_t reason_size);

/* --- plugins' devices in words (provider_desc.c) ------------------------- */
/* "cpu", "gpu", "accelerator", "other"; static. */
const char *cli_device_kind_name(int32_t kind);
/* "host", "device" ("unknown" for other numbers); static. */
const char *cli_memory_kind_name(int32_t kind);
/* "1.5 GiB"; "unknown" for 0. */
void cli_format_bytes(char *buf, size_t size, uint64_t bytes);
/* "device K: NAME" then kind, vendor, memory and details lines, each line
 * starting with `indent`, as `tessera providers` lists them. */
void cli_print_device(FILE *f, const char *indent, size_t index, const tsr_device_desc *dev);

/* --- ONNX backend test cases (test_case.c; test, check-provider) ---------- */
/* A reason line is cut to this many bytes. */
#define TC_REASON_MAX 2048

typedef enum tc_kind { TC_PASS = 'P', TC_FAIL = 'F', TC_SKIP = 'S' } tc_kind;

typedef struct tc_case {
    char *name; /* the folder's last component: "test_relu" */
    char *dir;
} tc_case;

typedef struct tc_list {
    tc_case *items;
    size_t count;
} tc_list;

/* Whether to keep the case called `name`. */
typedef bool (*tc_filter)(const char *name, void *user);

/* "a/b", malloc'd (NULL when out of memory). */
char *tc_join(const char *a, const char *b);
/* Whether `path` is a directory (following links). */
bool tc_is_dir(const char *path);
/* Whether `dir` holds a model.onnx. */
bool tc_is_case(const char *dir);
/* Appends the cases `path` names, those `want` keeps (NULL: all): a case
 * folder, CASE/model.onnx, or a folder of case folders (one level, sorted
 * by name). Returns 0, CLI_EXIT_USAGE (no such path; message printed as
 * `cmd`'s) or CLI_EXIT_FAIL. Finding no case is only a note on stderr. */
int tc_collect(tc_list *l, const char *cmd, const char *path, tc_filter want, void *user);
void tc_list_free(tc_list *l);

/* One test_data_set_K read for session `s`: inputs by position (names
 * borrowed from the session) and expected outputs. */
typedef struct tc_data {
    size_t nin, nexp;
    const char **names;
    tsr_value **inputs, **expected;
} tc_data;

/* TC_SKIP for data this tool cannot read (a sequence the model declares as
 * a tensor, ...), TC_FAIL with a reason otherwise; *d is then empty. */
tc_kind tc_load_data_set(tsr_session *s, const char *dir, tc_data *d, char *reason, size_t size);
void tc_data_free(tc_data *d);
/* outputs[k] (every session output, in order) against d's expected ones. */
tc_kind tc_check_outputs(tsr_session *s, const tc_data *d, tsr_value *const *outputs, cmp_tolerance tol, char *reason,
                         size_t size);
/* Runs `s` once on d's inputs and checks the outputs. */
tc_kind tc_run_data(tsr_session *s, const tc_data *d, cmp_tolerance tol, char *reason, size_t size);
/* The case's data set folders, sorted, as a NULL-terminated malloc'd array
 * (tc_free_names); returns how many, -1 when out of memory. */
int tc_data_sets(const char *case_dir, char ***names);
void tc_free_names(char **names);
/* Every data set of the case in turn on `s`: PASS, or the first that does
 * not pass (named when there are several). SKIP when there is none. */
tc_kind tc_run_case(tsr_session *s, const char *case_dir, cmp_tolerance tol, char *reason, size_t size);

/* --- jobs in forked children (fork_pool.c; test, check-provider) --------- */
/* The longest message a job hands back. */
#define FP_MESSAGE_MAX 16384
/* The kind of a job whose child died, timed out or could not start. */
#define FP_FAILED 'F'

typedef struct fp_result {
    char kind;  /* what the job returned, or FP_FAILED when `died` */
    bool died;  /* crashed, timed out, exited or never started; text says which */
    char *text; /* the job's message, or why the child failed; borrowed */
    char *log;  /* the tail of what the child wrote to stdout/stderr, or NULL */
} fp_result;

typedef struct fp_pool {
    size_t count;   /* jobs 0..count-1 */
    size_t jobs;    /* children at once */
    double timeout; /* seconds per job; 0: none */
    bool fork;      /* false: run the jobs here, one by one (for a debugger) */
    /* In the child: does job `index`, writes a message (NUL-terminated, at
     * most `size` bytes) and returns a kind letter other than 0. */
    char (*job)(size_t index, void *user, char *msg, size_t size);
    /* In this process, in job order, as soon as the job and every earlier
     * one are done; the result lives for the call. */
    void (*done)(size_t index, const fp_result *result, void *user);
    void *user;
} fp_pool;

/* Runs every job. The caller must not have called into the library before
 * (a forked child inherits no library threads, and so no held lock). */
void fp_run(const fp_pool *p);
/* Newlines and tabs to spaces: one result, one line. */
void fp_one_line(char *s);
/* Seconds on the monotonic clock the pool's timeouts use. */
double fp_now(void);

/* --- subcommands --------------------------------------------------------- */
/* Each gets argv starting at the subcommand's name. */
int cmd_providers(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_test(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_partition(int argc, char **argv);
int cmd_check_provider(int argc, char **argv);

#endif
