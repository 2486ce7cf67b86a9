/*
 * tessera partition MODEL [-p LIST] [--assign NODE_OR_OP=PROVIDER]...
 *                   [--format text|json|dot] —
 * how a session would split MODEL: its pieces and providers, the copies
 * where pieces on different memories meet, function expansions and every
 * provider's declines, without running anything. Text for people, JSON for
 * tools (docs/partition.schema.json), DOT for Graphviz.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: tessera partition MODEL [MODEL...] [options]\n"
            "\n"
            "Creates a session for MODEL (providers claim, pieces compile) and prints\n"
            "the pieces with their providers, the copies between memories, the function\n"
            "ops expanded and why providers declined nodes. Runs nothing.\n"
            "\n"
            "  --format text|json|dot\n"
            "                         text: a table (default); json: one object for\n"
            "                         tools (docs/partition.schema.json); dot: a Graphviz\n"
            "                         graph coloured by provider, e.g.\n"
            "                         tessera partition m.onnx --format dot | dot -Tsvg > m.svg\n");
    cli_print_chain_help(f);
    cli_print_common_help(f, true);
}

int cmd_partition(int argc, char **argv) {
    cli_common common;
    cli_common_init(&common);
    const char *model = NULL;
    const char *format = "text";
    int rc = CLI_EXIT_OK;
    for (int i = 1; i < argc && rc == CLI_EXIT_OK; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            help(stdout);
            cli_common_free(&common);
            return CLI_EXIT_OK;
        }
        bool bad = false;
        const char *v = cli_option_value(argc, argv, &i, NULL, "--format", &bad);
        if (bad) {
            rc = CLI_EXIT_USAGE;
            continue;
        }
        if (v) {
            if (strcmp(v, "text") != 0 && strcmp(v, "json") != 0 && strcmp(v, "dot") != 0)
                rc = cli_usage_error("partition", "--format must be text, json or dot, not '%s'", v);
            format = v;
            continue;
        }
        int r = cli_parse_common(&common, argc, argv, &i, true);
        if (r == 0) r = cli_parse_chain(&common, argc, argv, &i);
        if (r < 0) rc = CLI_EXIT_USAGE;
        else if (r > 0) continue;
        else if (arg[0] == '-' && arg[1]) rc = cli_usage_error("partition", "unknown option '%s'", arg);
        else if (model) cli_add_stage(&common, arg); /* a chain (cli_chain.c) */
        else model = arg;
    }
    if (rc == CLI_EXIT_OK && !model) rc = cli_usage_error("partition", "no MODEL given");
    if (rc != CLI_EXIT_OK) {
        cli_common_free(&common);
        return rc;
    }
    tsr_session_options *opts = NULL;
    tsr_session *s = NULL;
    char *text = NULL;
    tsr_status *st = cli_make_session_options(&common, &opts);
    rc = st ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    if (st) {
        cli_report_status("session options", st);
    } else if ((st = tsr_session_create(opts, model, &s))) {
        rc = CLI_EXIT_FAIL;
        char what[1100];
        snprintf(what, sizeof what, "loading %s", model);
        cli_report_status(what, st);
    } else if ((st = format[0] == 'j'  ? tsr_session_assignment_json(s, &text)
                    : format[0] == 'd' ? tsr_session_assignment_dot(s, &text)
                                       : tsr_session_assignment_text(s, &text))) {
        rc = CLI_EXIT_FAIL;
        cli_report_status("assignment", st);
    } else {
        fputs(text, stdout);
        if (*text && text[strlen(text) - 1] != '\n') putchar('\n');
    }
    free(text);
    tsr_session_free(s);
    tsr_session_options_free(opts);
    cli_common_free(&common);
    return rc;
}
