/* A provider with memory of its own, as a GPU's would be: tensors of its
 * pieces are handles the host cannot read, and every crossing goes through
 * its copy functions, which count themselves. It runs Relu, Add (equal
 * shapes) and Reshape as one-node pieces, with options
 *   ops=Relu,Add,Reshape   what it claims
 *   cost=SECONDS           the estimate it gives per node (default: none)
 *   devices=2              two devices: Add runs on device 1, the rest on 0
 *                          (claim_piece_on); every buffer knows its device,
 *                          a piece given another device's tensor fails, and
 *                          copy_between_devices counts itself
 * so tests can steer the placement policies. */
#include "plugin_common.h"

#define DEV_MAGIC 0x44455643u /* "DEVC" */
#define MAX_OPS 8

typedef struct dev_buf {
    uint32_t magic;
    int32_t device;
    size_t nbytes;
    unsigned char bytes[];
} dev_buf;

typedef struct dev_state {
    char ops[MAX_OPS][32];
    size_t n_ops;
    double cost;
    int32_t devices;
} dev_state;

/* Copies between devices made by copy_between_devices, over all instances. */
static size_t between_copies;

static tsr_status *dev_create(const tsr_provider_config *config, void **state) {
    dev_state *s = calloc(1, sizeof *s);
    if (!s) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    const char *ops = "Relu,Add,Reshape";
    s->cost = -1.0;
    s->devices = 1;
    for (size_t i = 0; i < config->option_count; i++) {
        const char *k = config->option_keys[i], *v = config->option_values[i];
        if (strcmp(k, "ops") == 0) ops = v;
        else if (strcmp(k, "cost") == 0) s->cost = atof(v);
        else if (strcmp(k, "devices") == 0 && (strcmp(v, "1") == 0 || strcmp(v, "2") == 0)) s->devices = atoi(v);
        else {
            free(s);
            return tp_error(TSR_ERR_INVALID_ARGUMENT, "device test provider has no option '%s'", k);
        }
    }
    for (const char *p = ops; *p && s->n_ops < MAX_OPS;) {
        size_t n = strcspn(p, ",");
        snprintf(s->ops[s->n_ops++], sizeof s->ops[0], "%.*s", (int)n, p);
        p += n + (p[n] == ',');
    }
    *state = s;
    return NULL;
}

static size_t dev_count(void *state) { return (size_t)((const dev_state *)state)->devices; }

static tsr_status *dev_info(void *state, size_t index, tsr_device_info *info) {
    if (index >= dev_count(state)) return host->status_new(TSR_ERR_INVALID_ARGUMENT, "no such device");
    info->name = index ? "test device 1" : "test device";
    info->vendor = "Tessera tests";
    if (TSR_HAS_MEMBER(info, tsr_device_info, details)) info->details = "memory of its own";
    info->kind = TSR_DEVICE_ACCELERATOR;
    info->memory_kind = TSR_MEMORY_DEVICE;
    info->memory_bytes = 1u << 30;
    return NULL;
}

/* Add runs on equal shapes only (no broadcasting). */
static bool same_shapes(const tsr_node *node) {
    const tsr_value_info *a = host->node_input(node, 0), *b = host->node_input(node, 1);
    int32_t r = a ? host->value_rank(a) : -1;
    if (!b || r < 0 || host->value_rank(b) != r) return false;
    for (int32_t d = 0; d < r; d++)
        if (host->value_dim(a, d) != host->value_dim(b, d) || host->value_dim(a, d) < 0) return false;
    return true;
}

static bool claims(const dev_state *s, const tsr_node *node) {
    if (host->node_domain(node)[0]) return false;
    if (strcmp(host->node_op_type(node), "Add") == 0 && !same_shapes(node)) return false;
    for (size_t i = 0; i < s->n_ops; i++)
        if (strcmp(s->ops[i], host->node_op_type(node)) == 0) return true;
    return false;
}

static tsr_status *dev_claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    const dev_state *s = state;
    size_t n = host->graph_node_count(graph);
    for (size_t i = 0; i < n; i++) {
        const tsr_node *node = host->graph_node(graph, i);
        if (!claims(s, node)) {
            host->decline_node(sink, node, TSR_DECLINE_OP, "not in the device's ops option");
            continue;
        }
        int32_t device = s->devices > 1 && strcmp(host->node_op_type(node), "Add") == 0 ? 1 : 0;
        tsr_status *st =
            device ? host->claim_piece_on(sink, &node, 1, s->cost, device) : host->claim_piece(sink, &node, 1, s->cost);
        if (st) return st;
    }
    return NULL;
}

typedef struct dev_piece {
    char op[32];
    char name[128];
    int in[2];
    int out;
    int32_t device;
} dev_piece;

static tsr_status *dev_compile(void *state, const tsr_graph *piece, void **piece_state) {
    (void)state;
    if (host->graph_node_count(piece) != 1)
        return host->status_new(TSR_ERR_NOT_SUPPORTED, "device pieces hold one node");
    const tsr_node *node = host->graph_node(piece, 0);
    dev_piece *p = calloc(1, sizeof *p);
    if (!p) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    snprintf(p->op, sizeof p->op, "%s", host->node_op_type(node));
    snprintf(p->name, sizeof p->name, "%s", host->node_name(node));
    size_t nin = host->node_input_count(node);
    p->in[0] = tp_index(piece, host->node_input(node, 0), false);
    p->in[1] = nin > 1 ? tp_index(piece, host->node_input(node, 1), false) : -1;
    p->out = tp_index(piece, host->node_output(node, 0), true);
    p->device = host->graph_device(piece);
    *piece_state = p;
    return NULL;
}

static const dev_buf *buf_of(const tsr_tensor *t) {
    const dev_buf *b = t ? t->data : NULL;
    return b && t->memory_kind == TSR_MEMORY_DEVICE && b->magic == DEV_MAGIC ? b : NULL;
}

static tsr_status *dev_run(void *piece_state, tsr_run_context *ctx) {
    const dev_piece *p = piece_state;
    const tsr_tensor *a = host->run_input(ctx, (size_t)p->in[0]);
    const tsr_tensor *b = p->in[1] >= 0 ? host->run_input(ctx, (size_t)p->in[1]) : NULL;
    const dev_buf *ab = buf_of(a), *bb = b ? buf_of(b) : NULL;
    bool reshape = strcmp(p->op, "Reshape") == 0;
#ifdef DEVICE_HOST_CONSTANTS
    /* The promise of TSR_PROVIDER_HOST_CONSTANTS: the constant shape comes
     * in host memory, as it is; this device reads it there. */
    const void *shape = reshape && b && b->memory_kind == TSR_MEMORY_HOST ? b->data : NULL;
    if (reshape && !shape) return tp_error(TSR_ERR_RUNTIME, "node '%s': constant shape not in host memory", p->name);
    if (reshape) bb = NULL;
#else
    const void *shape = bb ? bb->bytes : NULL;
#endif
    /* The host must have copied everything else into this device's memory first. */
    if (!ab || (b && !bb && !shape) || a->elem_type != TSR_FLOAT)
        return tp_error(TSR_ERR_RUNTIME, "node '%s': input not in device memory", p->name);
    if (ab->device != p->device || a->device_index != p->device || (bb && bb->device != p->device))
        return tp_error(TSR_ERR_RUNTIME, "node '%s' on device %d: an input is on another device", p->name,
                        (int)p->device);
    int32_t rank = a->rank;
    int64_t dims[8];
    if (reshape) {
        /* The new shape, read from device memory like any input. */
        if (!shape || b->rank != 1 || b->dims[0] > 8 || b->elem_type != TSR_INT64)
            return tp_error(TSR_ERR_NOT_SUPPORTED, "node '%s': shape input", p->name);
        rank = (int32_t)b->dims[0];
        memcpy(dims, shape, sizeof(int64_t) * (size_t)rank);
        int64_t known = 1, infer = -1;
        for (int32_t i = 0; i < rank; i++) {
            if (dims[i] == 0) dims[i] = a->dims[i];
            if (dims[i] == -1) infer = i;
            else known *= dims[i];
        }
        if (infer >= 0) dims[infer] = known ? (int64_t)tp_count(a) / known : 0;
    } else {
        if (rank > 8) return tp_error(TSR_ERR_NOT_SUPPORTED, "rank");
        memcpy(dims, a->dims, sizeof(int64_t) * (size_t)rank);
        if (b && tp_count(b) != tp_count(a))
            return tp_error(TSR_ERR_NOT_SUPPORTED, "node '%s': Add needs equal shapes", p->name);
    }
    tsr_tensor *out;
    tsr_status *s = host->run_alloc_output(ctx, p->out >= 0 ? (size_t)p->out : (size_t)-1, TSR_FLOAT, rank, dims, &out);
    if (s) return s;
    dev_buf *ob = out->data;
    if (out->memory_kind != TSR_MEMORY_DEVICE || !ob || ob->magic != DEV_MAGIC || ob->device != p->device)
        return tp_error(TSR_ERR_RUNTIME, "node '%s': output not in its device's memory", p->name);
    const float *x = (const float *)ab->bytes;
    float *z = (float *)ob->bytes;
    size_t n = tp_count(a);
    for (size_t i = 0; i < n; i++) {
        if (reshape) z[i] = x[i];
        else if (bb) z[i] = x[i] + ((const float *)bb->bytes)[i];
        else z[i] = x[i] > 0 ? x[i] : 0.0f;
    }
    return NULL;
}

static tsr_status *dev_alloc(void *state, int32_t device, size_t nbytes, void **handle) {
    if (device < 0 || (size_t)device >= dev_count(state))
        return host->status_new(TSR_ERR_INVALID_ARGUMENT, "no such device");
    dev_buf *b = malloc(sizeof *b + nbytes + 1);
    if (!b) return host->status_new(TSR_ERR_NO_MEMORY, "device out of memory");
    b->magic = DEV_MAGIC;
    b->device = device;
    b->nbytes = nbytes;
    *handle = b;
    return NULL;
}

static void dev_free(void *state, int32_t device, void *handle) {
    (void)state;
    dev_buf *b = handle;
    if (b && b->device != device) abort(); /* a host bug the test must not miss */
    if (b) b->magic = 0;
    free(b);
}

static TP_UNUSED tsr_status *dev_to_device(void *state, int32_t device, void *dst, const void *src, size_t nbytes) {
    (void)state;
    dev_buf *b = dst;
    if (!b || b->magic != DEV_MAGIC || nbytes > b->nbytes || b->device != device)
        return host->status_new(TSR_ERR_RUNTIME, "bad device buffer");
    memcpy(b->bytes, src, nbytes);
    return NULL;
}

static TP_UNUSED tsr_status *dev_to_host(void *state, int32_t device, void *dst, const void *src, size_t nbytes) {
    (void)state;
    const dev_buf *b = src;
    if (!b || b->magic != DEV_MAGIC || nbytes > b->nbytes || b->device != device)
        return host->status_new(TSR_ERR_RUNTIME, "bad device buffer");
    memcpy(dst, b->bytes, nbytes);
    return NULL;
}

static TP_UNUSED tsr_status *dev_between(void *state, int32_t dst_device, void *dst, int32_t src_device,
                                         const void *src, size_t nbytes) {
    (void)state;
    dev_buf *d = dst;
    const dev_buf *b = src;
    if (!d || !b || d->magic != DEV_MAGIC || b->magic != DEV_MAGIC || d->device != dst_device ||
        b->device != src_device || nbytes > b->nbytes || nbytes > d->nbytes)
        return host->status_new(TSR_ERR_RUNTIME, "bad device buffer");
    memcpy(d->bytes, b->bytes, nbytes);
    between_copies++;
    return NULL;
}

/* For tests: copy_between_devices calls so far (exported by name). */
TSR_EXPORT size_t plugin_device_between_copies(void) { return between_copies; }

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
#if defined(DEVICE_NO_COPY)
    .name = "device_no_copy",
#elif defined(DEVICE_HOST_CONSTANTS)
    .name = "device_host_consts",
#else
    .name = "device",
#endif
    .vendor = "Tessera tests",
    .version = "0",
    .create = dev_create,
    .destroy = tp_destroy,
    .device_count = dev_count,
    .device_info = dev_info,
    .claim = dev_claim,
    .compile = dev_compile,
    .run = dev_run,
    .release = tp_release,
    .mem_alloc = dev_alloc,
    .mem_free = dev_free,
#ifndef DEVICE_NO_COPY
    .copy_to_device = dev_to_device,
    .copy_to_host = dev_to_host,
    .copy_between_devices = dev_between,
#endif
#ifdef DEVICE_HOST_CONSTANTS
    .flags = TSR_PROVIDER_HOST_CONSTANTS,
#endif
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
