/*
 * tessera — the command line: `tessera SUBCOMMAND ...`.
 * This file only dispatches; each subcommand lives in its own cmd_*.c.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_reduce(int argc, char **argv);  /* cmd_reduce.c */
int cmd_compose(int argc, char **argv); /* cmd_compose.c */

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"providers", cmd_providers, "list the provider plugins found and their devices"},
    {"run", cmd_run, "run a model once and print (or save) its outputs"},
    {"partition", cmd_partition, "show the pieces, providers, copies and declines, without running"},
    {"test", cmd_test, "run ONNX backend test cases and compare with expected outputs"},
    {"bench", cmd_bench, "measure a model's latency, session creation time and peak memory"},
    {"compare", cmd_compare, "run a model on several provider sets and compare the results"},
    {"reduce", cmd_reduce, "shrink a model that differs or fails on a provider set to a small test case"},
    {"check-provider", cmd_check_provider, "check a provider plugin: load, op conformance, errors, threads, copies"},
    {"compose", cmd_compose, "merge a chain of models (pre-processing, model, ...) into one ONNX file"},
};

static void print_help(FILE *f) {
    fprintf(f,
            "usage: tessera [--version] [--help] COMMAND [ARGS]\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-15s %s\n", commands[i].name, commands[i].summary);
    fprintf(f,
            "\n"
            "`tessera COMMAND --help` describes each command.\n"
            "Exit status: 0 success, 1 failure, 2 usage error.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        print_help(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        /* `tessera help run` reads more naturally than `tessera run --help`. */
        if (strcmp(name, "help") == 0 && argc > 2) {
            for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
                if (strcmp(argv[2], commands[i].name) == 0) {
                    char *sub[] = {argv[2], (char *)"--help", NULL};
                    return commands[i].fn(2, sub);
                }
            }
            return cli_usage_error(NULL, "unknown command '%s'", argv[2]);
        }
        print_help(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("tessera %s\n", tsr_version());
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0) return commands[i].fn(argc - 1, argv + 1);
    cli_usage_error(NULL, "unknown command '%s'", name);
    print_help(stderr);
    return CLI_EXIT_USAGE;
}
