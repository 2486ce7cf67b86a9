/*
 * tessera compose MODEL MODEL... -o OUT.onnx — a chain of models merged
 * into one ONNX file exactly as `tessera run MODEL MODEL...` merges them
 * (tsr_model_compose): onnx.compose.merge_models's rules, for any number of
 * models, without Python.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: tessera compose MODEL MODEL... -o OUT.onnx [options]\n"
            "\n"
            "Merges a chain of models (a pre-processing graph, a model, a\n"
            "post-processing graph) into one model, as `tessera run MODEL MODEL...`\n"
            "runs them, and writes it. Weights are written inline.\n"
            "\n"
            "  -o, --output FILE      the merged model (required)\n");
    cli_print_chain_help(f);
}

int cmd_compose(int argc, char **argv) {
    cli_common common;
    cli_common_init(&common);
    const char *first = NULL, *output = NULL;
    int rc = CLI_EXIT_OK;
    for (int i = 1; i < argc && rc == CLI_EXIT_OK; i++) {
        const char *arg = argv[i], *v;
        bool bad = false;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            help(stdout);
            cli_common_free(&common);
            return CLI_EXIT_OK;
        }
        int r = cli_parse_chain(&common, argc, argv, &i);
        if (r < 0) rc = CLI_EXIT_USAGE;
        if (r) continue;
        if ((v = cli_option_value(argc, argv, &i, "-o", "--output", &bad))) output = v;
        else if (bad) rc = CLI_EXIT_USAGE;
        else if (arg[0] == '-' && arg[1]) rc = cli_usage_error("compose", "unknown option '%s'", arg);
        else if (first) cli_add_stage(&common, arg);
        else first = arg;
    }
    if (rc == CLI_EXIT_OK && !first) rc = cli_usage_error("compose", "no MODEL given");
    if (rc == CLI_EXIT_OK && !output) rc = cli_usage_error("compose", "no -o OUT.onnx given");
    if (rc != CLI_EXIT_OK) {
        cli_common_free(&common);
        return rc;
    }
    tsr_session_options *opts = NULL;
    void *bytes = NULL;
    size_t size = 0;
    tsr_status *st = cli_make_session_options(&common, &opts);
    if (st) cli_report_status("chain options", st);
    else if ((st = tsr_model_compose(opts, first, &bytes, &size))) cli_report_status("compose", st);
    rc = CLI_EXIT_FAIL;
    if (!st && !tio_write_file(output, bytes, size))
        fprintf(stderr, "tessera: cannot write %s: %s\n", output, strerror(errno));
    else if (!st) {
        printf("%s: %zu bytes, %zu model%s\n", output, size, common.stage_count + 1, common.stage_count ? "s" : "");
        rc = CLI_EXIT_OK;
    }
    free(bytes);
    tsr_session_options_free(opts);
    cli_common_free(&common);
    return rc;
}
