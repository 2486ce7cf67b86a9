/* provider_util.h on its own, as strict C99, run against a fake host table
 * of two attributes, so the type checks and defaults are exercised here and
 * not only through the bundled providers. */
#include "tessera/provider_util.h"

#include <stdio.h>

typedef struct fake_attr {
    const char *name;
    int32_t type;
    int64_t i;
    const int64_t *ints;
    size_t count;
} fake_attr;

static const int64_t fake_ints[] = {1, 2, 3};
static const fake_attr fake_attrs[] = {{"axis", TSR_ATTR_INT, 3, NULL, 0}, {"pads", TSR_ATTR_INTS, 0, fake_ints, 3}};

static const fake_attr *fa(const tsr_attr *a) { return (const fake_attr *)(const void *)a; }

static const tsr_attr *f_find(const tsr_node *node, const char *name) {
    (void)node;
    for (size_t k = 0; k < sizeof fake_attrs / sizeof fake_attrs[0]; k++)
        if (strcmp(fake_attrs[k].name, name) == 0) return (const tsr_attr *)(const void *)&fake_attrs[k];
    return NULL;
}
static int32_t f_type(const tsr_attr *a) { return fa(a)->type; }
static int64_t f_int(const tsr_attr *a) { return fa(a)->i; }
static const int64_t *f_ints(const tsr_attr *a) { return fa(a)->ints; }
static size_t f_list_size(const tsr_attr *a) { return fa(a)->count; }
static size_t f_input_count(const tsr_node *node) {
    (void)node;
    return 1;
}
static const tsr_value_info *f_input(const tsr_node *node, size_t i) {
    (void)i;
    return (const tsr_value_info *)(const void *)node;
}

static tsr_status *try_ok(void) { return NULL; }
static tsr_status *use_try(int *reached) {
    TSR_TRY(try_ok());
    *reached = 1;
    return NULL;
}

int abi_c99_provider_util_check(void) {
    tsr_host_api h;
    memset(&h, 0, sizeof h);
    h.struct_size = sizeof h;
    h.node_attr_find = f_find;
    h.attr_type = f_type;
    h.attr_int = f_int;
    h.attr_ints = f_ints;
    h.attr_list_size = f_list_size;
    h.node_input_count = f_input_count;
    h.node_input = f_input;
    static const int node_storage = 0;
    const tsr_node *node = (const tsr_node *)(const void *)&node_storage;
    size_t count = 9;
    const int64_t *pads = tsr_util_attr_ints(&h, node, "pads", &count);
    int reached = 0;
    int bad = tsr_util_attr_int(&h, node, "axis", -1) != 3 ||
        tsr_util_attr_int(&h, node, "pads", -1) != -1 || /* wrong type: the default */
        tsr_util_attr_int(&h, node, "group", 1) != 1 || !pads || count != 3 || pads[2] != 3 ||
        tsr_util_attr_ints(&h, node, "axis", &count) != NULL || count != 0 || !tsr_util_attr_has(&h, node, "axis") ||
        tsr_util_attr_has(&h, node, "group") || tsr_util_node_input(&h, node, 0) == NULL ||
        tsr_util_node_input(&h, node, 1) != NULL || use_try(&reached) != NULL || !reached;
    if (bad) fprintf(stderr, "provider_util.h: helper checks failed\n");
    return bad;
}
