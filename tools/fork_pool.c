/*
 * Jobs in forked children, a few at a time (`tessera test`'s cases,
 * `tessera check-provider`'s cases and checks).
 *
 * A job may crash or hang — the code under test is young, or a vendor's —
 * and that must cost one failed result, not the whole run. Each job runs in
 * a child whose stdout and stderr go to a temporary file (kept for -v and
 * for a crashed child's last words) and which answers through a pipe: one
 * kind letter, then a message. The parent never calls into the library, so
 * no library thread or lock exists at fork time; callers keep it so.
 * Results are handed back in job order as soon as every earlier job has
 * finished, so output is identical whatever the number of jobs.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

typedef struct slot {
    pid_t pid;
    size_t index;
    int fd;    /* read end of the result pipe */
    FILE *log; /* the child's stdout and stderr */
    double deadline;
    bool killed;
    size_t len;
    char msg[FP_MESSAGE_MAX + 8];
} slot;

double fp_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void fp_one_line(char *s) {
    for (; *s; s++)
        if (*s == '\n' || *s == '\r' || *s == '\t') *s = ' ';
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

/* Runs job `index` here and returns its kind; `msg` gets its message. */
static char run_here(const fp_pool *p, size_t index, char *msg, size_t size) {
    msg[0] = '\0';
    char kind = p->job(index, p->user, msg, size);
    return kind ? kind : FP_FAILED;
}

static pid_t start_child(const fp_pool *p, size_t index, slot *sl) {
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
        static char msg[FP_MESSAGE_MAX + 1];
        msg[0] = run_here(p, index, msg + 1, sizeof msg - 1);
        size_t n = strlen(msg + 1) + 1;
        for (size_t off = 0; off < n;) {
            ssize_t w = write(fds[1], msg + off, n - off);
            if (w <= 0 && errno != EINTR) break;
            if (w > 0) off += (size_t)w;
        }
        fflush(stdout);
        fflush(stderr);
        /* _exit: the parent's atexit handlers and stdio buffers are not ours. */
        _exit(0);
    }
    close(fds[1]);
    memset(sl, 0, sizeof *sl);
    sl->pid = pid;
    sl->index = index;
    sl->fd = fds[0];
    sl->log = log;
    sl->deadline = p->timeout > 0 ? fp_now() + p->timeout : 0;
    return pid;
}

/* The child closed its pipe: reap it and turn what it said into a result. */
static void finish_child(const fp_pool *p, slot *sl, fp_result *res) {
    int status = 0;
    while (waitpid(sl->pid, &status, 0) < 0 && errno == EINTR) {}
    close(sl->fd);
    sl->msg[sl->len] = '\0';
    res->log = slurp_log(sl->log);
    if (sl->log) fclose(sl->log);
    char buf[FP_MESSAGE_MAX + 256], tail[512];
    last_line(res->log, tail, sizeof tail);
    fp_one_line(tail);
    const char *said = tail[0] ? "; last output: " : "";
    res->died = true;
    res->kind = FP_FAILED;
    if (sl->killed) {
        snprintf(buf, sizeof buf, "timed out after %g s%s%s", p->timeout, said, tail);
    } else if (WIFSIGNALED(status)) {
        snprintf(buf, sizeof buf, "crashed (signal %d, %s)%s%s", WTERMSIG(status), strsignal(WTERMSIG(status)), said,
                 tail);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        snprintf(buf, sizeof buf, "exited with status %d%s%s", WEXITSTATUS(status), said, tail);
    } else if (sl->len == 0 || !sl->msg[0]) {
        snprintf(buf, sizeof buf, "ended without a result%s%s", said, tail);
    } else {
        res->died = false;
        res->kind = sl->msg[0];
        snprintf(buf, sizeof buf, "%s", sl->msg + 1);
    }
    res->text = strdup(buf);
    sl->pid = 0;
}

static void run_forked(const fp_pool *p, fp_result *results) {
    size_t jobs = p->jobs ? p->jobs : 1, next = 0, reported = 0;
    if (jobs > p->count) jobs = p->count;
    slot *slots = calloc(jobs, sizeof *slots);
    struct pollfd *pfds = calloc(jobs, sizeof *pfds);
    if (!slots || !pfds) {
        fprintf(stderr, "tessera: out of memory\n");
        exit(CLI_EXIT_FAIL);
    }
    while (reported < p->count) {
        for (size_t k = 0; k < jobs && next < p->count; k++) {
            if (slots[k].pid) continue;
            if (start_child(p, next, &slots[k]) < 0) {
                results[next].kind = FP_FAILED;
                results[next].died = true;
                results[next].text = strdup("could not start a child process");
            }
            next++;
        }
        double now = fp_now(), wait = 1.0;
        size_t nfds = 0;
        for (size_t k = 0; k < jobs; k++) {
            if (!slots[k].pid) continue;
            if (slots[k].deadline && now >= slots[k].deadline && !slots[k].killed) {
                kill(slots[k].pid, SIGKILL);
                slots[k].killed = true;
            }
            if (slots[k].deadline && !slots[k].killed && slots[k].deadline - now < wait) wait = slots[k].deadline - now;
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
                ssize_t got = read(sl->fd, sl->msg + sl->len, FP_MESSAGE_MAX + 4 - sl->len);
                if (got > 0) {
                    sl->len += (size_t)got;
                    if (sl->len < FP_MESSAGE_MAX + 4) continue;
                }
                if (got < 0 && errno == EINTR) continue;
                /* EOF (or a full buffer): the child is done talking. */
                finish_child(p, sl, &results[sl->index]);
            }
        }
        while (reported < p->count && results[reported].kind) {
            p->done(reported, &results[reported], p->user);
            free(results[reported].text);
            free(results[reported].log);
            results[reported].text = results[reported].log = NULL;
            reported++;
        }
    }
    free(slots);
    free(pfds);
}

void fp_run(const fp_pool *p) {
    if (!p->count) return;
    fp_result *results = calloc(p->count, sizeof *results);
    if (!results) {
        fprintf(stderr, "tessera: out of memory\n");
        exit(CLI_EXIT_FAIL);
    }
    if (p->fork) {
        run_forked(p, results);
    } else {
        static char msg[FP_MESSAGE_MAX];
        for (size_t i = 0; i < p->count; i++) {
            fp_result r = {.kind = run_here(p, i, msg, sizeof msg), .text = msg};
            p->done(i, &r, p->user);
        }
    }
    free(results);
}
