/*
 * tessera providers [PATH...] — what plugins the library finds, and their
 * devices; a plugin that fails to load is listed with the reason, because
 * "why isn't my provider used?" is the question this command answers.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: tessera providers [PATH...]\n"
            "\n"
            "Lists the provider plugins found beside libtessera.so, in its\n"
            "tessera/providers subdirectory and on TESSERA_PROVIDER_PATH, plus each\n"
            "PATH (a plugin file or a directory),\n"
            "with their devices, or why a plugin failed to load.\n"
            "Exit status 1 when some plugin failed to load.\n");
}

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

int cmd_providers(int argc, char **argv) {
    const char **paths = calloc((size_t)argc, sizeof *paths);
    size_t npaths = 0;
    if (!paths) return CLI_EXIT_FAIL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help(stdout);
            free(paths);
            return CLI_EXIT_OK;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            free(paths);
            return cli_usage_error("providers", "unknown option '%s'", argv[i]);
        }
        paths[npaths++] = argv[i];
    }

    tsr_provider_list *list;
    tsr_status *st = tsr_providers_discover(npaths ? paths : NULL, npaths, &list);
    free(paths);
    if (st) {
        cli_report_status("discovering providers", st);
        return CLI_EXIT_FAIL;
    }
    size_t n = tsr_provider_list_size(list);
    int rc = CLI_EXIT_OK;
    if (n == 0)
        printf("no providers found (searched beside libtessera.so, its tessera/providers and TESSERA_PROVIDER_PATH)\n");
    for (size_t i = 0; i < n; i++) {
        tsr_provider_desc d = {.struct_size = sizeof d};
        if ((st = tsr_provider_list_get(list, i, &d))) {
            cli_report_status("reading the provider list", st);
            rc = CLI_EXIT_FAIL;
            continue;
        }
        if (i) putchar('\n');
        if (d.error) {
            printf("%s: failed to load\n  path: %s\n  error: %s\n", or_dash(d.name), or_dash(d.path), d.error);
            rc = CLI_EXIT_FAIL;
            continue;
        }
        printf("%s %s\n  vendor: %s\n  ABI version: %" PRIu32 "\n  path: %s\n", or_dash(d.name), or_dash(d.version),
               or_dash(d.vendor), d.abi_version, or_dash(d.path));
        for (size_t k = 0; k < d.device_count; k++) {
            tsr_device_desc dev = {.struct_size = sizeof dev};
            if ((st = tsr_provider_list_device(list, i, k, &dev))) {
                cli_report_status("reading a device", st);
                rc = CLI_EXIT_FAIL;
                continue;
            }
            cli_print_device(stdout, "  ", k, &dev);
        }
        if (d.device_count == 0) printf("  no devices\n");
    }
    tsr_provider_list_free(list);
    return rc;
}
