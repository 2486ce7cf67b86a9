/*
 * tessera test PATH... — run ONNX backend test cases (CASE/model.onnx plus
 * CASE/test_data_set_K/{input,output}_N.pb) and compare the outputs.
 *
 * Each case runs in a forked child: while the library is young a case may
 * crash or hang, and that must cost one FAIL line, not the whole run. The
 * same children give -j parallelism. The parent never calls into the
 * library, so no library thread or lock exists at fork time. Results are
 * printed in case order as soon as every earlier case has finished, so the
 * output is identical whatever -j is.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define REASON_MAX 2048

static void help(FILE *f) {
    fprintf(f,
            "usage: tessera test [options] PATH...\n"
            "\n"
            "Runs ONNX backend test cases. A PATH is a case folder (holding model.onnx\n"
            "and test_data_set_*/) or a folder of case folders. Prints PASS, FAIL or\n"
            "SKIP per case (SKIP: test data this tool cannot read, e.g. a sequence),\n"
            "then a count. Exit status 0 only when no case failed.\n"
            "\n"
            "  --rtol R               relative tolerance for floats (default 1e-3)\n"
            "  --atol A               absolute tolerance for floats (default 1e-5)\n"
            "  -j, --jobs N           cases run at once (default: number of CPUs)\n"
            "  --timeout SECONDS      per case; a case past it FAILs (default 120)\n"
            "  --filter GLOB          only cases whose name matches (repeatable)\n"
            "  --no-fork              run cases in this process, one by one (for a\n"
            "                         debugger; a crash then ends the run)\n"
            "  -v, --verbose          also print what each non-passing case wrote to\n"
            "                         stderr (library log lines, notes)\n");
    cli_print_common_help(f, true);
}

typedef struct test_case {
    char *name;
    char *dir;
} test_case;

typedef struct test_args {
    cli_common common;
    cmp_tolerance tol;
    long jobs;
    double timeout;
    bool fork;
    bool verbose;
    char **filters;
    size_t filter_count;
    test_case *cases;
    size_t case_count;
} test_args;

/* --- finding cases ------------------------------------------------------- */
static bool is_dir(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static bool is_file(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static char *join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", a, b);
    return p;
}

static bool has_model(const char *dir) {
    char *m = join(dir, "model.onnx");
    bool yes = m && is_file(m);
    free(m);
    return yes;
}

static bool wanted(const test_args *a, const char *name) {
    if (a->filter_count == 0) return true;
    for (size_t i = 0; i < a->filter_count; i++)
        if (fnmatch(a->filters[i], name, 0) == 0) return true;
    return false;
}

static bool add_case(test_args *a, const char *dir) {
    char *d = strdup(dir);
    if (!d) return false;
    /* The name is the folder's last component, without trailing slashes. */
    size_t n = strlen(d);
    while (n > 1 && d[n - 1] == '/') d[--n] = '\0';
    const char *slash = strrchr(d, '/');
    const char *base = slash ? slash + 1 : d;
    if (!wanted(a, base)) {
        free(d);
        return true;
    }
    test_case *grown = realloc(a->cases, (a->case_count + 1) * sizeof *grown);
    if (!grown) {
        free(d);
        return false;
    }
    a->cases = grown;
    char *name = strdup(base);
    if (!name) {
        free(d);
        return false;
    }
    a->cases[a->case_count].name = name;
    a->cases[a->case_count++].dir = d;
    return true;
}

static int only_dirs(const struct dirent *e) { return e->d_name[0] != '.'; }

/* A case folder, or a folder of case folders (one level, sorted by name). */
static int collect(test_args *a, const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) return cli_usage_error("test", "'%s': %s", path, strerror(errno));
    if (!S_ISDIR(sb.st_mode)) {
        /* CASE/model.onnx names its case; other files come from globs
         * (a README beside the case folders) and are passed over. */
        const char *slash = strrchr(path, '/');
        if (strcmp(slash ? slash + 1 : path, "model.onnx") == 0) {
            char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
            bool ok = dir && add_case(a, dir);
            free(dir);
            return ok ? 0 : CLI_EXIT_FAIL;
        }
        fprintf(stderr, "tessera test: note: '%s' is not a test case folder\n", path);
        return 0;
    }
    if (has_model(path)) return add_case(a, path) ? 0 : CLI_EXIT_FAIL;
    struct dirent **list;
    int n = scandir(path, &list, only_dirs, alphasort);
    if (n < 0) {
        fprintf(stderr, "tessera test: cannot list %s: %s\n", path, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    int found = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        char *sub = join(path, list[i]->d_name);
        if (sub && is_dir(sub) && has_model(sub)) {
            found++;
            if (!rc && !add_case(a, sub)) rc = CLI_EXIT_FAIL;
        }
        free(sub);
        free(list[i]);
    }
    free(list);
    /* Only a note: `tessera test suite/` + `*` may sweep up a folder of other
     * files (onnx-tests/onnxruntime-1.30), and that should not stop the run.
     * No case at all is still an error (cmd_test). */
    if (!rc && !found)
        fprintf(stderr, "tessera test: note: '%s' holds no model.onnx and no case folders\n", path);
    return rc;
}

/* --- one case ------------------------------------------------------------ */
typedef enum { R_PASS = 'P', R_FAIL = 'F', R_SKIP = 'S' } result_kind;

static int data_set_filter(const struct dirent *e) {
    return strncmp(e->d_name, "test_data_set_", 14) == 0;
}

/* Number of consecutive PREFIX_0.pb, PREFIX_1.pb, ... in dir. */
static size_t count_pbs(const char *dir, const char *prefix) {
    size_t n = 0;
    for (;;) {
        char file[64];
        snprintf(file, sizeof file, "%s_%zu.pb", prefix, n);
        char *p = join(dir, file);
        bool yes = p && is_file(p);
        free(p);
        if (!yes) return n;
        n++;
    }
}

/*
 * Loads dir/PREFIX_k.pb. A file the tool cannot read as a tensor — the
 * library says "not supported" (a SequenceProto, an OptionalProto) or the
 * model declares that value as a non-tensor — is a SKIP: the test is fine,
 * this tool just cannot feed or check it. Any other failure is the
 * library's, so a FAIL.
 */
static result_kind load_pb(const char *dir, const char *prefix, size_t k, int32_t declared_type,
                           int32_t kind, tsr_value **out, char **name, char *reason, size_t size) {
    char file[64];
    snprintf(file, sizeof file, "%s_%zu.pb", prefix, k);
    char *path = join(dir, file);
    void *bytes = NULL;
    size_t n = 0;
    if (!path || !tio_read_file(path, &bytes, &n)) {
        snprintf(reason, size, "cannot read %s: %s", file, tio_file_error(errno));
        free(path);
        return R_FAIL;
    }
    free(path);
    tsr_status *st = tsr_value_from_onnx(bytes, n, kind, out, name);
    free(bytes);
    if (!st) return R_PASS;
    result_kind r = tsr_status_code(st) == TSR_ERR_NOT_SUPPORTED ||
                            (declared_type == TSR_UNDEFINED && kind == TSR_VALUE_NONE)
                        ? R_SKIP
                        : R_FAIL;
    snprintf(reason, size, "%s is not a readable value: %s", file, tsr_status_message(st));
    tsr_status_free(st);
    return r;
}

typedef struct data_set {
    size_t nin, nexp, nout;
    tsr_value **inputs, **expected, **outputs;
} data_set;

static void free_data_set(data_set *d) {
    for (size_t i = 0; d->inputs && i < d->nin; i++) tsr_value_free(d->inputs[i]);
    for (size_t i = 0; d->expected && i < d->nexp; i++) tsr_value_free(d->expected[i]);
    for (size_t i = 0; d->outputs && i < d->nout; i++) tsr_value_free(d->outputs[i]);
    free(d->inputs);
    free(d->expected);
    free(d->outputs);
    memset(d, 0, sizeof *d);
}

static result_kind run_data_set(tsr_session *s, const test_args *a, const char *dir,
                                char *reason, size_t size) {
    size_t model_in = tsr_session_input_count(s), model_out = tsr_session_output_count(s);
    data_set d = {0};
    result_kind r = R_FAIL;
    const char **names = NULL;
    tsr_status *st;

    d.nin = count_pbs(dir, "input");
    d.nexp = count_pbs(dir, "output");
    d.nout = model_out;
    if (d.nin > model_in) {
        snprintf(reason, size, "%zu input files, but the model has %zu inputs", d.nin, model_in);
        return R_FAIL;
    }
    if (d.nexp > model_out) {
        snprintf(reason, size, "%zu output files, but the model has %zu outputs", d.nexp,
                 model_out);
        return R_FAIL;
    }
    d.inputs = calloc(d.nin + 1, sizeof *d.inputs);
    d.expected = calloc(d.nexp + 1, sizeof *d.expected);
    d.outputs = calloc(d.nout + 1, sizeof *d.outputs);
    names = calloc(d.nin + 1, sizeof *names);
    if (!d.inputs || !d.expected || !d.outputs || !names) {
        snprintf(reason, size, "out of memory");
        goto done;
    }

    /* Everything is read before running, so data the tool cannot read is a
     * SKIP even when running would also have failed. */
    for (size_t k = 0; k < d.nin; k++) {
        tsr_io_info info = {.struct_size = sizeof info};
        if ((st = tsr_session_input_info(s, k, &info))) {
            snprintf(reason, size, "input info %zu: %s", k, tsr_status_message(st));
            tsr_status_free(st);
            goto done;
        }
        char *stored = NULL;
        if ((r = load_pb(dir, "input", k, info.elem_type, info.kind, &d.inputs[k], &stored, reason,
                         size)) != R_PASS)
            goto done;
        r = R_FAIL;
        /* Files are matched by position; the stored name only cross-checks
         * that the library lists inputs in graph order. */
        if (stored && *stored && strcmp(stored, info.name) != 0)
            fprintf(stderr, "note: input_%zu.pb is named '%s' but model input %zu is '%s'\n", k,
                    stored, k, info.name);
        free(stored);
        names[k] = info.name;
    }
    for (size_t k = 0; k < d.nexp; k++) {
        tsr_io_info info = {.struct_size = sizeof info};
        if ((st = tsr_session_output_info(s, k, &info))) {
            snprintf(reason, size, "output info %zu: %s", k, tsr_status_message(st));
            tsr_status_free(st);
            goto done;
        }
        if ((r = load_pb(dir, "output", k, info.elem_type, info.kind, &d.expected[k], NULL, reason,
                         size)) != R_PASS)
            goto done;
        r = R_FAIL;
    }

    if ((st = tsr_session_run_values(s, d.nin, names, (const tsr_value *const *)d.inputs, d.nout,
                                     NULL, d.outputs))) {
        snprintf(reason, size, "run: %s", tsr_status_message(st));
        tsr_status_free(st);
        goto done;
    }
    for (size_t k = 0; k < d.nexp; k++) {
        tsr_io_info info = {.struct_size = sizeof info};
        const char *oname = "?";
        if (!(st = tsr_session_output_info(s, k, &info))) oname = info.name;
        tsr_status_free(st);
        if (!d.outputs[k]) {
            snprintf(reason, size, "output %zu '%s': no value returned", k, oname);
            goto done;
        }
        char why[REASON_MAX - 256];
        if (!cmp_values(d.outputs[k], d.expected[k], a->tol, why, sizeof why)) {
            snprintf(reason, size, "output %zu '%s': %s", k, oname, why);
            goto done;
        }
    }
    r = R_PASS;
done:
    free(names);
    free_data_set(&d);
    return r;
}

/* Runs every data set of one case. Cleans up fully before returning, so a
 * crash in the library's teardown is caught as a crash, not a PASS. */
static result_kind run_case(const test_args *a, const test_case *c, char *reason, size_t size) {
    tsr_session_options *opts = NULL;
    tsr_session *s = NULL;
    struct dirent **sets = NULL;
    int nsets = 0;
    result_kind r = R_FAIL;
    tsr_status *st;
    char *model = join(c->dir, "model.onnx");
    reason[0] = '\0';

    if (!model) {
        snprintf(reason, size, "out of memory");
        goto done;
    }
    if ((st = cli_make_session_options(&a->common, &opts))) {
        snprintf(reason, size, "session options: %s", tsr_status_message(st));
        tsr_status_free(st);
        goto done;
    }
    if ((st = tsr_session_create(opts, model, &s))) {
        snprintf(reason, size, "load: %s", tsr_status_message(st));
        tsr_status_free(st);
        goto done;
    }
    nsets = scandir(c->dir, &sets, data_set_filter, alphasort);
    if (nsets <= 0) {
        snprintf(reason, size, "no test_data_set_* folders");
        r = R_SKIP;
        goto done;
    }
    for (int i = 0; i < nsets; i++) {
        char *dir = join(c->dir, sets[i]->d_name);
        char why[REASON_MAX - 64] = "out of memory";
        r = dir ? run_data_set(s, a, dir, why, sizeof why) : R_FAIL;
        free(dir);
        if (r != R_PASS) {
            /* Name the data set only when there is a choice of them. A long
             * reason is cut: the line is for people, the start says enough. */
            if (nsets > 1) cli_format(reason, size, "%s: %s", sets[i]->d_name, why);
            else cli_format(reason, size, "%s", why);
            break;
        }
    }
done:
    for (int i = 0; i < nsets; i++) free(sets[i]);
    free(sets);
    tsr_session_free(s);
    tsr_session_options_free(opts);
    free(model);
    return r;
}

/* --- running cases in children ------------------------------------------- */
typedef struct slot {
    pid_t pid;
    size_t case_index;
    int fd;      /* read end of the result pipe */
    FILE *log;   /* the child's stdout and stderr */
    double deadline;
    bool killed;
    size_t len;
    char msg[REASON_MAX + 8];
} slot;

typedef struct result {
    char kind; /* 0 while pending */
    char *reason;
    char *log;
} result;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* What a child wrote to stdout/stderr, for -v and for the last words of a
 * crashed child. */
static char *slurp_log(FILE *log) {
    if (!log) return NULL;
    fflush(log);
    long n = ftell(log);
    if (n <= 0) return NULL;
    /* Keep the tail: the end of a long log is where a crash explains itself. */
    long keep = n > 65536 ? 65536 : n;
    char *buf = malloc((size_t)keep + 1);
    if (!buf) return NULL;
    fseek(log, n - keep, SEEK_SET);
    size_t got = fread(buf, 1, (size_t)keep, log);
    buf[got] = '\0';
    return buf;
}

/* The line that best says why a child died: a sanitizer's SUMMARY line
 * when there is one (its report ends in "ABORTING", which says nothing),
 * else the last line written. */
static void last_line(const char *log, char *out, size_t size) {
    out[0] = '\0';
    if (!log) return;
    const char *summary = strstr(log, "SUMMARY: ");
    if (summary && (summary == log || summary[-1] == '\n')) {
        size_t n = strcspn(summary, "\n");
        snprintf(out, size, "%.*s", (int)n, summary);
        return;
    }
    size_t end = strlen(log);
    while (end && (log[end - 1] == '\n' || log[end - 1] == ' ')) end--;
    size_t start = end;
    while (start && log[start - 1] != '\n') start--;
    if (end > start) snprintf(out, size, "%.*s", (int)(end - start), log + start);
}

static void print_result(const test_case *c, const result *r, bool verbose) {
    const char *word = r->kind == R_PASS ? "PASS" : r->kind == R_SKIP ? "SKIP" : "FAIL";
    if (r->kind == R_PASS) printf("%s %s\n", word, c->name);
    else printf("%s %s: %s\n", word, c->name, r->reason ? r->reason : "(no reason)");
    if (verbose && r->kind != R_PASS && r->log && *r->log) {
        /* Indented so a script reading "PASS|FAIL|SKIP name" lines is not
         * confused by log text. */
        for (const char *p = r->log; *p;) {
            const char *nl = strchr(p, '\n');
            int n = nl ? (int)(nl - p) : (int)strlen(p);
            printf("    | %.*s\n", n, p);
            p += n + (nl ? 1 : 0);
        }
    }
    fflush(stdout);
}

/* One result is one line: a library message with newlines or tabs would
 * break the "PASS|FAIL|SKIP name: reason" lines scripts read. */
static void one_line(char *s) {
    for (; *s; s++)
        if (*s == '\n' || *s == '\r' || *s == '\t') *s = ' ';
}

static pid_t start_child(const test_args *a, size_t index, slot *sl) {
    int fds[2];
    FILE *log = tmpfile();
    if (pipe(fds) != 0) {
        if (log) fclose(log);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        if (log) fclose(log);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        if (log) {
            dup2(fileno(log), STDOUT_FILENO);
            dup2(fileno(log), STDERR_FILENO);
        }
        char reason[REASON_MAX];
        result_kind r = run_case(a, &a->cases[index], reason, sizeof reason);
        one_line(reason);
        char msg[REASON_MAX + 2];
        int n = snprintf(msg, sizeof msg, "%c%s", (char)r, r == R_PASS ? "" : reason);
        if (n > (int)sizeof msg - 1) n = (int)sizeof msg - 1;
        for (int off = 0; off < n;) {
            ssize_t w = write(fds[1], msg + off, (size_t)(n - off));
            if (w <= 0 && errno != EINTR) break;
            if (w > 0) off += (int)w;
        }
        fflush(stdout);
        fflush(stderr);
        /* _exit: the parent's atexit handlers and stdio buffers are not ours. */
        _exit(0);
    }
    close(fds[1]);
    memset(sl, 0, sizeof *sl);
    sl->pid = pid;
    sl->case_index = index;
    sl->fd = fds[0];
    sl->log = log;
    sl->deadline = a->timeout > 0 ? now_seconds() + a->timeout : 0;
    return pid;
}

/* The child closed its pipe: reap it and turn what it said into a result. */
static void finish_child(const test_args *a, slot *sl, result *res) {
    int status = 0;
    while (waitpid(sl->pid, &status, 0) < 0 && errno == EINTR) {
    }
    close(sl->fd);
    sl->msg[sl->len] = '\0';
    res->log = slurp_log(sl->log);
    if (sl->log) fclose(sl->log);
    char buf[REASON_MAX + 256], tail[512];
    last_line(res->log, tail, sizeof tail);
    const char *said = tail[0] ? "; last output: " : "";
    if (sl->killed) {
        res->kind = R_FAIL;
        snprintf(buf, sizeof buf, "timed out after %g s%s%s", a->timeout, said, tail);
    } else if (WIFSIGNALED(status)) {
        res->kind = R_FAIL;
        snprintf(buf, sizeof buf, "crashed (signal %d, %s)%s%s", WTERMSIG(status),
                 strsignal(WTERMSIG(status)), said, tail);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        res->kind = R_FAIL;
        snprintf(buf, sizeof buf, "exited with status %d%s%s", WEXITSTATUS(status), said, tail);
    } else if (sl->len == 0 || !sl->msg[0] || !strchr("PFS", sl->msg[0])) {
        res->kind = R_FAIL;
        snprintf(buf, sizeof buf, "ended without a result%s%s", said, tail);
    } else {
        res->kind = sl->msg[0];
        snprintf(buf, sizeof buf, "%s", sl->msg + 1);
    }
    one_line(buf);
    res->reason = strdup(buf);
    sl->pid = 0;
}

static void run_forked(const test_args *a, result *results) {
    size_t jobs = (size_t)a->jobs, next = 0, printed = 0, running = 0;
    slot *slots = calloc(jobs, sizeof *slots);
    struct pollfd *pfds = calloc(jobs, sizeof *pfds);
    if (!slots || !pfds) {
        fprintf(stderr, "tessera test: out of memory\n");
        exit(CLI_EXIT_FAIL);
    }
    while (printed < a->case_count) {
        for (size_t k = 0; k < jobs && next < a->case_count; k++) {
            if (slots[k].pid) continue;
            if (start_child(a, next, &slots[k]) < 0) {
                results[next].kind = R_FAIL;
                results[next].reason = strdup("could not start a child process");
            } else {
                running++;
            }
            next++;
        }
        double now = now_seconds(), wait = 1.0;
        size_t nfds = 0;
        for (size_t k = 0; k < jobs; k++) {
            if (!slots[k].pid) continue;
            if (slots[k].deadline && now >= slots[k].deadline && !slots[k].killed) {
                kill(slots[k].pid, SIGKILL);
                slots[k].killed = true;
            }
            if (slots[k].deadline && !slots[k].killed && slots[k].deadline - now < wait)
                wait = slots[k].deadline - now;
            pfds[nfds].fd = slots[k].fd;
            pfds[nfds].events = POLLIN;
            pfds[nfds].revents = 0;
            nfds++;
        }
        if (nfds && poll(pfds, nfds, (int)(wait * 1000) + 1) > 0) {
            for (size_t k = 0, f = 0; k < jobs; k++) {
                if (!slots[k].pid) continue;
                short ev = pfds[f++].revents;
                if (!ev) continue;
                slot *sl = &slots[k];
                ssize_t got = read(sl->fd, sl->msg + sl->len, REASON_MAX + 4 - sl->len);
                if (got > 0) {
                    sl->len += (size_t)got;
                    if (sl->len < REASON_MAX + 4) continue;
                }
                if (got < 0 && errno == EINTR) continue;
                /* EOF (or a full buffer): the child is done talking. */
                finish_child(a, sl, &results[sl->case_index]);
                running--;
            }
        }
        while (printed < a->case_count && results[printed].kind) {
            print_result(&a->cases[printed], &results[printed], a->verbose);
            printed++;
        }
    }
    (void)running;
    free(slots);
    free(pfds);
}

static void run_in_process(const test_args *a, result *results) {
    for (size_t i = 0; i < a->case_count; i++) {
        char reason[REASON_MAX];
        results[i].kind = (char)run_case(a, &a->cases[i], reason, sizeof reason);
        one_line(reason);
        results[i].reason = strdup(reason);
        print_result(&a->cases[i], &results[i], false);
    }
}

/* --- arguments ----------------------------------------------------------- */
static int parse_args(int argc, char **argv, test_args *a, char ***paths, size_t *npaths) {
    cli_common_init(&a->common);
    a->tol.rtol = 1e-3;
    a->tol.atol = 1e-5;
    a->jobs = sysconf(_SC_NPROCESSORS_ONLN);
    if (a->jobs < 1) a->jobs = 1;
    a->timeout = 120;
    a->fork = true;
    *paths = calloc((size_t)argc, sizeof **paths);
    a->filters = calloc((size_t)argc, sizeof *a->filters);
    if (!*paths || !a->filters) return CLI_EXIT_FAIL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        bool bad = false;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            help(stdout);
            return -1;
        }
        int r = cli_parse_common(&a->common, argc, argv, &i, true);
        if (r < 0) return CLI_EXIT_USAGE;
        if (r > 0) continue;
        if ((v = cli_option_value(argc, argv, &i, NULL, "--rtol", &bad))) {
            if (!cli_parse_double(v, &a->tol.rtol) || a->tol.rtol < 0)
                return cli_usage_error("test", "--rtol wants a number >= 0, not '%s'", v);
            continue;
        }
        if ((v = cli_option_value(argc, argv, &i, NULL, "--atol", &bad))) {
            if (!cli_parse_double(v, &a->tol.atol) || a->tol.atol < 0)
                return cli_usage_error("test", "--atol wants a number >= 0, not '%s'", v);
            continue;
        }
        if ((v = cli_option_value(argc, argv, &i, "-j", "--jobs", &bad))) {
            int64_t n;
            if (!cli_parse_int64(v, &n) || n < 1 || n > 4096)
                return cli_usage_error("test", "-j wants a number from 1 to 4096, not '%s'", v);
            a->jobs = (long)n;
            continue;
        }
        if ((v = cli_option_value(argc, argv, &i, NULL, "--timeout", &bad))) {
            if (!cli_parse_double(v, &a->timeout) || a->timeout < 0)
                return cli_usage_error("test", "--timeout wants seconds >= 0 (0: none), not '%s'", v);
            continue;
        }
        if ((v = cli_option_value(argc, argv, &i, NULL, "--filter", &bad))) {
            a->filters[a->filter_count++] = (char *)v;
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if (strcmp(arg, "--no-fork") == 0) {
            a->fork = false;
            continue;
        }
        if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
            a->verbose = true;
            continue;
        }
        if (strncmp(arg, "-j", 2) == 0 && arg[2]) { /* -j8, as make spells it */
            int64_t n;
            if (!cli_parse_int64(arg + 2, &n) || n < 1 || n > 4096)
                return cli_usage_error("test", "-j wants a number from 1 to 4096, not '%s'", arg + 2);
            a->jobs = (long)n;
            continue;
        }
        if (arg[0] == '-' && arg[1]) return cli_usage_error("test", "unknown option '%s'", arg);
        (*paths)[(*npaths)++] = argv[i];
    }
    if (*npaths == 0) return cli_usage_error("test", "no PATH given");
    return 0;
}

int cmd_test(int argc, char **argv) {
    test_args a = {0};
    char **paths = NULL;
    size_t npaths = 0;
    result *results = NULL;
    int rc = parse_args(argc, argv, &a, &paths, &npaths);
    if (rc) {
        rc = rc < 0 ? CLI_EXIT_OK : rc;
        goto done;
    }
    for (size_t i = 0; i < npaths && !rc; i++) rc = collect(&a, paths[i]);
    if (rc) goto done;
    if (a.case_count == 0) {
        rc = a.filter_count ? (fprintf(stderr, "tessera test: no case matches --filter\n"),
                               CLI_EXIT_FAIL)
                            : cli_usage_error("test", "no test cases found");
        goto done;
    }
    if ((size_t)a.jobs > a.case_count) a.jobs = (long)a.case_count;
    results = calloc(a.case_count, sizeof *results);
    if (!results) {
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    if (a.fork) run_forked(&a, results);
    else run_in_process(&a, results);

    size_t pass = 0, fail = 0, skip = 0;
    for (size_t i = 0; i < a.case_count; i++) {
        if (results[i].kind == R_PASS) pass++;
        else if (results[i].kind == R_SKIP) skip++;
        else fail++;
    }
    printf("%zu passed, %zu failed, %zu skipped\n", pass, fail, skip);
    rc = fail ? CLI_EXIT_FAIL : CLI_EXIT_OK;

done:
    for (size_t i = 0; results && i < a.case_count; i++) {
        free(results[i].reason);
        free(results[i].log);
    }
    free(results);
    for (size_t i = 0; i < a.case_count; i++) {
        free(a.cases[i].name);
        free(a.cases[i].dir);
    }
    free(a.cases);
    free(a.filters);
    free(paths);
    cli_common_free(&a.common);
    return rc;
}
