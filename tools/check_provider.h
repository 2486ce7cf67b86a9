/*
 * `tessera check-provider PLUGIN.so`: declarations shared by
 * cmd_check_provider.c and its helpers (check_provider_*.c). Prefix cp_.
 *
 * Every check that calls into the library runs as a job of fork_pool.c, in
 * a child: a vendor's plugin may crash or hang, and that must cost a FAIL
 * line, not the report. The parent only keeps the results, so it never
 * holds a library thread (an OpenMP pool, an OpenCL driver's workers) when
 * it forks the next child.
 */
#ifndef TESSERA_TOOLS_CHECK_PROVIDER_H
#define TESSERA_TOOLS_CHECK_PROVIDER_H

#include "cli.h"

/* Check 4: threads, and runs per thread. */
#define CP_THREADS 2
#define CP_RUNS 20

typedef struct cp_device {
    char *name, *vendor, *details;
    int32_t kind, memory_kind;
    uint64_t memory_bytes;
} cp_device;

/* What check 1 learnt about the plugin. */
typedef struct cp_plugin {
    bool loaded;
    char *name, *vendor, *version;
    uint32_t abi_version;
    cp_device *devices;
    size_t device_count;
} cp_plugin;

typedef struct cp_check {
    const char *name;
    char status; /* TC_PASS, TC_FAIL, TC_SKIP */
    char *detail;
    double seconds;
} cp_check;

/* A case the plugin passed in check 2, and how many nodes it ran there. */
typedef struct cp_passed {
    size_t index, claimed;
} cp_passed;

/* Check 2's counts and failures. */
typedef struct cp_op_tally {
    size_t cases, sampled_from; /* cases run; before --max-cases */
    size_t passed, failed, skipped, not_claimed;
    size_t broke_load; /* of failed: sessions only the plugin's presence broke */
    char **failures;   /* "test_x: reason", one per failed case */
    size_t failure_count;
    cp_passed *passed_cases; /* most claimed nodes first: checks 3-5 reuse them */
    size_t passed_count;
} cp_op_tally;

/* Lines a check keeps for the report: one per attempt, or per failure. */
typedef struct cp_lines {
    char **lines;
    size_t count;
} cp_lines;

/* model_round_trip's counts and failures. */
typedef struct cp_model_tally {
    size_t models; /* in --models DIR */
    size_t ran;    /* with a heavy op on the plugin (or that crashed) */
    size_t heavy;  /* heavy nodes on the plugin, over the models run */
    size_t passed, failed, skipped, no_heavy;
    cp_lines failures, skips; /* "model: reason" */
} cp_model_tally;

#define CP_MAX_CHECKS 12

typedef struct cp_run {
    /* arguments */
    char *plugin;     /* as given */
    char *cases_path; /* the suite's node folder */
    char **ops;       /* --ops, split */
    size_t op_count;
    size_t max_cases;    /* 0: all */
    char *models_path;   /* --models DIR, or NULL */
    char *expected_path; /* --expected-pass FILE, or NULL */
    char **expected;     /* its case names (the part after the last '/'), sorted */
    size_t expected_count;
    size_t jobs;
    double timeout;
    bool fork, json, verbose;
    cmp_tolerance tol;
    cli_common common; /* --provider-option, --threads, --log-level, ... */

    /* results */
    cp_plugin plugin_info;
    tc_list cases;
    cp_op_tally ops_tally;
    cp_lines negotiation; /* one line per host range offered */
    tc_list models;       /* the cases of --models */
    cp_model_tally models_tally;
    cp_check checks[CP_MAX_CHECKS];
    size_t check_count;
} cp_run;

/* --- sessions (check_provider_session.c) --------------------------------- */
/* Whether the plugin is the reference provider itself: then it runs alone,
 * with no reference to fall back on or compare with. */
bool cp_is_reference(const cp_run *r);
/* Options for a session on the plugin: [PLUGIN, reference] (or the plugin
 * alone, when it is reference) under policy "first", so the plugin gets
 * every node it claims; plus the user's shared options. */
tsr_status *cp_plugin_options(const cp_run *r, tsr_session_options **out);
/* Options for reference alone, the baseline. */
tsr_status *cp_reference_options(const cp_run *r, tsr_session_options **out);
/* The case's session with `o`; NULL and a reason on failure. */
tsr_session *cp_open_case(const tsr_session_options *o, const char *case_dir, char *reason, size_t size);
/* How many of the session's main-graph nodes the plugin runs. */
size_t cp_claimed_nodes(const cp_run *r, const tsr_session *s);
/* The first data set folder of a case (malloc'd), or NULL. */
char *cp_first_data_set(const char *case_dir);
/* The case on reference alone (check_provider_ops.c): TC_PASS when it
 * passes there (only when it loads, with `load_only`). A plugin's failure
 * that reference shares is the case's, not the plugin's. */
tc_kind cp_baseline(const cp_run *r, const char *dir, bool load_only, char *reason, size_t size);
/* Appends a copy of `text`; false when out of memory. */
bool cp_push_text(char ***list, size_t *count, const char *text);

/* --- the checks ---------------------------------------------------------- */
/* Check 1 (check_provider_load.c): loads the plugin and fills
 * r->plugin_info; returns the check's line. */
void cp_check_load(cp_run *r, cp_check *out);
/* The plugin's entry answering host ranges older and newer than this
 * host's (check_provider_negotiate.c). */
void cp_check_negotiation(cp_run *r, cp_check *out);
/* Whole models of --models on the plugin (check_provider_models.c). */
void cp_check_models(cp_run *r, cp_check *out);
/* Check 2 (check_provider_ops.c): every selected case on the plugin. */
void cp_check_ops(cp_run *r, cp_check *out);
/* Picks the cases for check 2 from r->cases_path (--ops, --max-cases);
 * returns 0 or a CLI exit status (message printed). */
int cp_select_cases(cp_run *r);
/* Checks 3-5 (check_provider_errors.c, _threads.c, _copies.c) run as jobs
 * in one pool: each fills `msg` with its detail and returns its status. */
char cp_job_unknown_option(const cp_run *r, char *msg, size_t size);
char cp_job_wrong_shape(const cp_run *r, char *msg, size_t size);
char cp_job_sessions_threads(const cp_run *r, char *msg, size_t size);
char cp_job_shared_session(const cp_run *r, char *msg, size_t size);
char cp_job_device_copies(const cp_run *r, char *msg, size_t size);
/* Check 8 (check_provider_cache.c): pieces exported, imported, still right. */
char cp_job_compiled_cache(const cp_run *r, char *msg, size_t size);

/* --- the report (check_provider_report.c) -------------------------------- */
void cp_print_check(const cp_run *r, const cp_check *c);
void cp_print_plugin(const cp_run *r);
void cp_print_json(const cp_run *r, double seconds);
void cp_print_summary(const cp_run *r, double seconds);

#endif
