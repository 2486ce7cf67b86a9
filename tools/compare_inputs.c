/*
 * The inputs `tessera compare` feeds every provider set: files given with
 * -i, the rest made up exactly as `tessera run` makes them (cli_inputs.c:
 * the same seed per input index, symbolic dimensions from --dim or 1), so a
 * comparison can be reproduced with `tessera run -o` on each set.
 */
#include <stdlib.h>
#include <string.h>

#include "compare_tool.h"

/* cmd_run.c's RUN_SEED: the same made-up data as `tessera run`. */
#define COMPARE_SEED 0x7e55e7a5eedull

bool cmpx_inputs_make(tsr_session *s, const char *model, const cmpx_input_spec *given, size_t given_count,
                      const cli_common *common, cmpx_inputs *in) {
    memset(in, 0, sizeof *in);
    cli_inputs_args a = {0};
    bool ok = (a.model = strdup(model)) != NULL;
    for (size_t g = 0; ok && g < given_count; g++) {
        cli_input_spec *grown = realloc(a.specs, (a.spec_count + 1) * sizeof *grown);
        ok = grown != NULL;
        if (!ok) break;
        a.specs = grown;
        cli_input_spec *sp = &a.specs[a.spec_count++];
        *sp = (cli_input_spec){.name = given[g].name ? strdup(given[g].name) : NULL, .file = strdup(given[g].file)};
        ok = sp->file && (sp->name || !given[g].name);
    }
    if (!ok) fprintf(stderr, "tessera compare: out of memory\n");
    cli_feed f = {0};
    ok = ok && cli_feed_make(s, &a, common, COMPARE_SEED, "compare", &f);
    cli_inputs_free(&a);
    /* The same layout: the feed's arrays become ours (freed either way). */
    *in = (cmpx_inputs){f.count, f.names, f.values, f.views, f.tensors};
    return ok;
}

void cmpx_inputs_free(cmpx_inputs *in) {
    cli_feed f = {in->count, in->names, in->values, in->views, in->tensors};
    cli_feed_free(&f);
    memset(in, 0, sizeof *in);
}
