/*
 * pretend_device.c: a Tessera provider for a pretend accelerator with
 * memory of its own. It is meant as the first thing a hardware vendor
 * copies; README.md in this folder walks through it.
 *
 * The "device" is host RAM in disguise, but the plugin treats it the way a
 * driver treats a real chip's memory: the plugin keeps its own heap of
 * buffers (a header with a magic number, then the bytes), tensors in it
 * are handles the host never reads, and every crossing goes through
 * copy_to_device / copy_to_host. Here those are memcpy calls; on real
 * hardware they would be DMA transfers. Kernels: float32 Relu, Add (equal
 * shapes), 2-D MatMul, and MatMul -> Add(bias) -> Relu fused into one
 * piece.
 *
 * Options (--provider-option pretend:KEY=VALUE):
 *   devices=1|2    pretend chips (default 1); with 2, pieces alternate
 *   gflops=N       pretend throughput for cost estimates (default 50)
 *
 * Threads (provider.h, "Threads"): the only mutable global, `host`, is
 * written once by the entry before any other call and only read after.
 * Everything else lives in an instance (one per session) or a piece, and
 * the host never calls one instance from two threads at once, so there is
 * nothing to lock.
 */
#include <tessera/provider.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRETEND_MAGIC 0x50524554u                /* "PRET": a live device buffer */
#define PRETEND_MAX_DEVICES 2                    /* the most `devices=` allows */
#define PRETEND_MEMORY_BYTES ((uint64_t)1 << 30) /* 1 GiB per pretend chip */
#define PRETEND_LAUNCH_SECONDS 5e-6              /* fixed cost of one kernel launch */

/* The host's table: borrowed, valid until the plugin is unloaded. */
static const tsr_host_api *host;

/* A status with a printf-style message. status_new copies the message;
 * whoever receives the status (the host) owns and frees it. */
static tsr_status *fail(int32_t code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return host->status_new(code, msg);
}

/* ---- 1. instances: one per session ---------------------------------- */

typedef struct pretend_state {
    int32_t devices;                      /* 1 or 2 */
    double flops_per_second;              /* pretend throughput */
    uint64_t in_use[PRETEND_MAX_DEVICES]; /* bytes allocated per chip */
} pretend_state;

static tsr_status *pretend_create(const tsr_provider_config *config, void **state) {
    pretend_state *s = calloc(1, sizeof *s);
    if (!s) return host->status_new(TSR_ERR_NO_MEMORY, "pretend: out of memory");
    s->devices = 1;
    s->flops_per_second = 50e9;
    /* Keys and values are borrowed for this call: parse them now. */
    for (size_t i = 0; i < config->option_count; i++) {
        const char *key = config->option_keys[i], *value = config->option_values[i];
        char *end = NULL;
        double gflops = strtod(value, &end);
        if (strcmp(key, "devices") == 0 && (strcmp(value, "1") == 0 || strcmp(value, "2") == 0)) {
            s->devices = value[0] - '0';
        } else if (strcmp(key, "gflops") == 0 && end != value && *end == '\0' && gflops > 0) {
            s->flops_per_second = gflops * 1e9;
        } else {
            /* The ABI: refuse an unknown key and name it, so a typo is
             * never silently ignored. A bad value is refused the same way. */
            int known = strcmp(key, "devices") == 0 || strcmp(key, "gflops") == 0;
            free(s);
            if (known) return fail(TSR_ERR_INVALID_ARGUMENT, "pretend: option '%s' cannot be '%s'", key, value);
            return fail(TSR_ERR_INVALID_ARGUMENT, "pretend: unknown option '%s' (known: devices, gflops)", key);
        }
    }
    host->log(TSR_LOG_DEBUG, "pretend", s->devices == 2 ? "two pretend chips" : "one pretend chip");
    *state = s; /* the plugin's; the host passes it back, then calls destroy */
    return NULL;
}

static void pretend_destroy(void *state) { free(state); }

static size_t pretend_device_count(void *state) { return (size_t)((pretend_state *)state)->devices; }

static tsr_status *pretend_device_info(void *state, size_t index, tsr_device_info *info) {
    if (index >= pretend_device_count(state)) return fail(TSR_ERR_INVALID_ARGUMENT, "pretend: no device %zu", index);
    /* The strings must live until destroy; literals live as long as the .so. */
    info->name = index == 0 ? "Pretend Accelerator 0" : "Pretend Accelerator 1";
    info->vendor = "Example Vendor";
    /* The host set struct_size: write an appended member only if it is there. */
    if (TSR_HAS_MEMBER(info, tsr_device_info, details)) info->details = "host RAM posing as device memory";
    info->kind = TSR_DEVICE_ACCELERATOR;
    info->memory_kind = TSR_MEMORY_DEVICE; /* tensors are handles; the host calls our copies */
    info->memory_bytes = PRETEND_MEMORY_BYTES;
    return NULL;
}

/* ---- 2. device memory ------------------------------------------------ */

/* One device buffer. A real driver hands out an opaque device address; the
 * pretend device hands out a pointer to this header, the bytes following.
 * The host only stores the handle in tsr_tensor.data and passes it back. */
typedef struct pretend_buffer {
    uint32_t magic; /* PRETEND_MAGIC while live, 0 once freed */
    int32_t device; /* the chip it is on */
    size_t nbytes;
    union {
        double d;
        int64_t i;
        void *p;
    } payload[]; /* aligned for any element type */
} pretend_buffer;

/* The buffer behind a handle, or NULL when it is not a live buffer on
 * `device`. A real driver would look the handle up in its allocation
 * table; the magic number is the pretend device's cheap stand-in. */
static pretend_buffer *buffer_of(const void *handle, int32_t device) {
    pretend_buffer *b = (pretend_buffer *)handle;
    return b && b->magic == PRETEND_MAGIC && b->device == device ? b : NULL;
}

static tsr_status *pretend_mem_alloc(void *state, int32_t device, size_t nbytes, void **handle) {
    pretend_state *s = state;
    pretend_buffer *b;
    if (device < 0 || device >= s->devices) return fail(TSR_ERR_INVALID_ARGUMENT, "pretend: no device %d", (int)device);
    if (nbytes > PRETEND_MEMORY_BYTES - s->in_use[device] || !(b = malloc(sizeof *b + nbytes)))
        return fail(TSR_ERR_NO_MEMORY, "pretend: device %d cannot hold %zu more bytes", (int)device, nbytes);
    /* Even a 0-byte tensor gets a header, so its handle passes run's checks. */
    b->magic = PRETEND_MAGIC;
    b->device = device;
    b->nbytes = nbytes;
    s->in_use[device] += nbytes;
    *handle = b; /* the host keeps the handle until mem_free */
    return NULL;
}

static void pretend_mem_free(void *state, int32_t device, void *handle) {
    pretend_state *s = state;
    pretend_buffer *b = buffer_of(handle, device);
    if (!b) return; /* never free what we did not hand out */
    /* The device is synchronous: no queued work can still read the buffer.
     * An asynchronous one would defer this (provider.h, "Completion"). */
    s->in_use[device] -= b->nbytes;
    b->magic = 0;
    free(b);
}

/* host -> device; `src_host` is borrowed for the call. */
static tsr_status *pretend_copy_to_device(void *state, int32_t device, void *dst_handle, const void *src_host,
                                          size_t nbytes) {
    pretend_buffer *b = buffer_of(dst_handle, device);
    (void)state;
    if (!b || nbytes > b->nbytes) return fail(TSR_ERR_RUNTIME, "pretend: copy_to_device into a bad handle");
    if (nbytes) memcpy(b->payload, src_host, nbytes);
    return NULL;
}

/* device -> host: the synchronisation point, so the bytes must be in
 * `dst_host` (borrowed) when it returns. */
static tsr_status *pretend_copy_to_host(void *state, int32_t device, void *dst_host, const void *src_handle,
                                        size_t nbytes) {
    const pretend_buffer *b = buffer_of(src_handle, device);
    (void)state;
    if (!b || nbytes > b->nbytes) return fail(TSR_ERR_RUNTIME, "pretend: copy_to_host from a bad handle");
    if (nbytes) memcpy(dst_host, b->payload, nbytes);
    return NULL;
}

/* Optional: chip to chip. Without it the host goes through host memory. */
static tsr_status *pretend_copy_between(void *state, int32_t dst_device, void *dst_handle, int32_t src_device,
                                        const void *src_handle, size_t nbytes) {
    pretend_buffer *d = buffer_of(dst_handle, dst_device);
    const pretend_buffer *b = buffer_of(src_handle, src_device);
    (void)state;
    if (!d || !b || nbytes > d->nbytes || nbytes > b->nbytes)
        return fail(TSR_ERR_RUNTIME, "pretend: copy_between_devices with a bad handle");
    if (nbytes) memcpy(d->payload, b->payload, nbytes);
    return NULL;
}

/* ---- 3. claim: which nodes, grouped how, at what cost ---------------- */
/* Every handle seen during claim is the host's and dies when claim returns. */

static int op_is(const tsr_node *node, const char *op) {
    return host->node_domain(node)[0] == '\0' && strcmp(host->node_op_type(node), op) == 0;
}

static int is_float(const tsr_value_info *v) { return v && host->value_elem_type(v) == TSR_FLOAT; }

/* ONNX graphs are in SSA form: two handles are the same edge when their
 * names match. */
static int same_value(const tsr_value_info *a, const tsr_value_info *b) {
    return a && b && (a == b || strcmp(host->value_name(a), host->value_name(b)) == 0);
}

/* Equal shapes, as far as the model says: each dimension known and equal,
 * or the same named symbol. */
static int same_shape(const tsr_value_info *a, const tsr_value_info *b) {
    int32_t rank = host->value_rank(a);
    if (rank < 0 || rank != host->value_rank(b)) return 0;
    for (int32_t d = 0; d < rank; d++) {
        int64_t x = host->value_dim(a, d);
        const char *sx = host->value_dim_symbol(a, d), *sy = host->value_dim_symbol(b, d);
        if (x == TSR_DIM_UNKNOWN ? !(sx && sy && strcmp(sx, sy) == 0) : x != host->value_dim(b, d)) return 0;
    }
    return 1;
}

/* Fills `why` with the text users will see and returns `reason`. */
static int32_t decline(int32_t reason, char *why, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return reason;
}

/* 0 when the device can run `node` alone, else a tsr_decline_reason. */
static int32_t why_not(const tsr_node *node, char *why, size_t size) {
    const char *op = host->node_op_type(node), *domain = host->node_domain(node);
    int relu = op_is(node, "Relu"), add = op_is(node, "Add"), matmul = op_is(node, "MatMul");
    size_t inputs = host->node_input_count(node);
    const tsr_value_info *a = inputs > 0 ? host->node_input(node, 0) : NULL;
    const tsr_value_info *b = inputs > 1 ? host->node_input(node, 1) : NULL;
    if (!relu && !add && !matmul)
        return decline(TSR_DECLINE_OP, why, size, "%s%s%s is not one of Relu, Add, MatMul", domain, *domain ? "." : "",
                       op);
    if (add && host->node_opset(node) < 7)
        return decline(TSR_DECLINE_OPSET, why, size, "Add before opset 7 (legacy broadcast attributes)");
    if (inputs != (relu ? 1u : 2u) || host->node_output_count(node) != 1)
        return decline(TSR_DECLINE_OTHER, why, size, "%s with %zu inputs", op, inputs);
    if (!is_float(a) || (!relu && !is_float(b)) || !is_float(host->node_output(node, 0)))
        return decline(TSR_DECLINE_TYPE, why, size, "%s runs on float32 only", op);
    if (matmul && (host->value_rank(a) != 2 || host->value_rank(b) != 2))
        return decline(TSR_DECLINE_SHAPE, why, size, "MatMul runs on 2-D inputs only");
    if (add && !same_shape(a, b))
        return decline(TSR_DECLINE_SHAPE, why, size, "Add without broadcasting only: shapes differ or are unknown");
    return 0;
}

/* The one node after index `from` that reads `v`; NULL when none or more
 * than one does. Claim sees only unclaimed nodes, so compile checks again
 * that nothing outside the piece reads an intermediate. */
static const tsr_node *sole_reader(const tsr_graph *graph, size_t from, const tsr_value_info *v, size_t *at) {
    const tsr_node *found = NULL;
    for (size_t i = from + 1; i < host->graph_node_count(graph); i++) {
        const tsr_node *node = host->graph_node(graph, i);
        for (size_t k = 0; k < host->node_input_count(node); k++) {
            if (!same_value(host->node_input(node, k), v)) continue;
            if (found) return NULL;
            found = node;
            *at = i;
            break;
        }
    }
    return found;
}

/* MatMul -> Add(bias) -> Relu from node `i`, the bias a 1-D constant as
 * long as the product's last dimension. Fills nodes[] and the Add's and
 * Relu's indices on a match. */
static int match_fused(const tsr_graph *graph, size_t i, const tsr_node *nodes[3], size_t at[3]) {
    char why[256];
    const tsr_value_info *product, *bias;
    nodes[0] = host->graph_node(graph, i);
    if (!op_is(nodes[0], "MatMul") || why_not(nodes[0], why, sizeof why)) return 0;
    product = host->node_output(nodes[0], 0);
    if (!product || host->value_rank(product) != 2) return 0;
    nodes[1] = sole_reader(graph, i, product, &at[1]);
    if (!nodes[1] || !op_is(nodes[1], "Add") || host->node_opset(nodes[1]) < 7 ||
        host->node_input_count(nodes[1]) != 2 || !is_float(host->node_output(nodes[1], 0)))
        return 0;
    /* Add is commutative: the bias is whichever input is not the product. */
    bias = host->node_input(nodes[1], same_value(host->node_input(nodes[1], 0), product) ? 1 : 0);
    if (!bias || !host->value_constant(bias) || !is_float(bias) || host->value_rank(bias) != 1 ||
        host->value_dim(product, 1) < 0 || host->value_dim(bias, 0) != host->value_dim(product, 1))
        return 0;
    nodes[2] = sole_reader(graph, at[1], host->node_output(nodes[1], 0), &at[2]);
    return nodes[2] && op_is(nodes[2], "Relu") && is_float(host->node_output(nodes[2], 0));
}

/* Claims `count` nodes as one piece with an estimated run time; the
 * pieces of one claim alternate between the chips. */
static tsr_status *claim(const pretend_state *s, tsr_claim_sink *sink, const tsr_node *const *nodes, size_t count,
                         size_t ordinal) {
    double seconds = -1.0, flops = 0.0; /* -1: unknown */
    int32_t device = (int32_t)(ordinal % (size_t)s->devices);
    /* node_flops was appended to the host table: check before calling. */
    if (TSR_HAS_MEMBER(host, tsr_host_api, node_flops)) {
        for (size_t k = 0; k < count && flops >= 0.0; k++) {
            double f = host->node_flops(nodes[k]);
            flops = f < 0.0 ? -1.0 : flops + f;
        }
        /* One launch per piece, however many nodes: why fusing pays. */
        if (flops >= 0.0) seconds = PRETEND_LAUNCH_SECONDS + flops / s->flops_per_second;
    }
    /* So was claim_piece_on; claim_piece means device 0. `nodes` is
     * borrowed, and a status the host returns is passed back to it. */
    if (device != 0 && TSR_HAS_MEMBER(host, tsr_host_api, claim_piece_on))
        return host->claim_piece_on(sink, nodes, count, seconds, device);
    return host->claim_piece(sink, nodes, count, seconds);
}

static tsr_status *pretend_claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    size_t n = host->graph_node_count(graph), pieces = 0;
    /* Nodes already in a fused piece: local, because claiming must not
     * change the instance (the host may ask twice per session). */
    unsigned char *taken = calloc(n ? n : 1, 1);
    tsr_status *st = NULL;
    if (!taken) return host->status_new(TSR_ERR_NO_MEMORY, "pretend: out of memory");
    for (size_t i = 0; i < n && !st; i++) {
        const tsr_node *node = host->graph_node(graph, i), *fused[3];
        size_t at[3];
        char why[256];
        int32_t reason;
        if (taken[i]) continue;
        if (match_fused(graph, i, fused, at)) {
            taken[at[1]] = taken[at[2]] = 1;
            st = claim(state, sink, fused, 3, pieces++);
        } else if ((reason = why_not(node, why, sizeof why)) != 0) {
            /* `why` is copied; users see it in `tessera partition`. */
            host->decline_node(sink, node, reason, why);
        } else {
            st = claim(state, sink, &node, 1, pieces++);
        }
    }
    free(taken);
    return st;
}

/* ---- 4. compile: a piece becomes a kernel and input positions --------- */

typedef enum pretend_kernel { K_RELU, K_ADD, K_MATMUL, K_FUSED } pretend_kernel;
static const char *const kernel_names[] = {"relu", "add", "matmul", "fused matmul_bias_relu"};

/* Plain numbers only: nothing here points into the host's handles. */
typedef struct pretend_piece {
    pretend_kernel kernel;
    int32_t device; /* the chip it was claimed on */
    size_t in[3];   /* run_input positions of A, B and (fused) the bias */
    char node[96];  /* the first node's name, for messages */
} pretend_piece;

/* Where `v` is among the piece's inputs (run_input order), or (size_t)-1. */
static size_t input_position(const tsr_graph *piece, const tsr_value_info *v) {
    for (size_t i = 0; i < host->graph_input_count(piece); i++)
        if (same_value(host->graph_input(piece, i), v)) return i;
    return (size_t)-1;
}

static tsr_status *pretend_compile(void *state, const tsr_graph *piece, void **piece_state) {
    size_t n = host->graph_node_count(piece), outputs = host->graph_output_count(piece);
    const tsr_node *first = n ? host->graph_node(piece, 0) : NULL, *last = n ? host->graph_node(piece, n - 1) : NULL;
    pretend_piece p, *copy;
    (void)state;
    memset(&p, 0, sizeof p);
    if (n == 3 && op_is(first, "MatMul") && op_is(host->graph_node(piece, 1), "Add") && op_is(last, "Relu"))
        p.kernel = K_FUSED;
    else if (n == 1 && (op_is(first, "Relu") || op_is(first, "Add") || op_is(first, "MatMul")))
        p.kernel = op_is(first, "Relu") ? K_RELU : op_is(first, "Add") ? K_ADD : K_MATMUL;
    else /* e.g. the host split a fused claim: failing hands the piece on */
        return fail(TSR_ERR_NOT_SUPPORTED, "pretend: no kernel for a piece of %zu nodes", n);
    snprintf(p.node, sizeof p.node, "%s", *host->node_name(first) ? host->node_name(first) : host->node_op_type(first));
    /* The fused kernel gives only the Relu's result. If the host needs an
     * intermediate too (a graph output, observe_all), refuse: the host then
     * offers the piece to the next provider. */
    if (outputs != 1 || !same_value(host->graph_output(piece, 0), host->node_output(last, 0)))
        return fail(TSR_ERR_NOT_SUPPORTED, "pretend: piece at '%s' has %zu outputs; its kernel gives only the last",
                    p.node, outputs);
    p.in[0] = input_position(piece, host->node_input(first, 0));
    if (p.kernel != K_RELU) p.in[1] = input_position(piece, host->node_input(first, 1));
    if (p.kernel == K_FUSED) {
        const tsr_node *add = host->graph_node(piece, 1);
        int product_first = same_value(host->node_input(add, 0), host->node_output(first, 0));
        p.in[2] = input_position(piece, host->node_input(add, product_first ? 1 : 0));
    }
    for (size_t k = 0; k < 3; k++)
        if (p.in[k] == (size_t)-1) return fail(TSR_ERR_PROVIDER, "pretend: piece at '%s': an input is missing", p.node);
    /* graph_device was appended too; an older host has only device 0. */
    p.device = TSR_HAS_MEMBER(host, tsr_host_api, graph_device) ? host->graph_device(piece) : 0;
    if (!(copy = malloc(sizeof *copy))) return host->status_new(TSR_ERR_NO_MEMORY, "pretend: out of memory");
    *copy = p;
    *piece_state = copy; /* the plugin's; freed by release */
    return NULL;
}

static void pretend_release(void *piece_state) { free(piece_state); }

/* The kernel a piece runs, for profiles and reports. A static string
 * outlives the piece, as the ABI asks. */
static const char *pretend_describe(void *piece_state) {
    return kernel_names[((const pretend_piece *)piece_state)->kernel];
}

/* ---- 5. run ----------------------------------------------------------- */

static size_t elements(const tsr_tensor *t) {
    size_t n = 1;
    for (int32_t d = 0; d < t->rank; d++) n *= (size_t)t->dims[d];
    return n;
}

/* The floats of a float tensor in the piece's device memory, or NULL.
 * memory_kind is checked first, so a host pointer is refused unread. */
static float *device_floats(const tsr_tensor *t, int32_t device) {
    pretend_buffer *b;
    if (!t || t->elem_type != TSR_FLOAT || t->memory_kind != TSR_MEMORY_DEVICE || t->device_index != device)
        return NULL;
    b = buffer_of(t->data, device);
    if (!b || t->nbytes != elements(t) * sizeof(float) || t->nbytes > b->nbytes) return NULL;
    return (float *)(void *)b->payload;
}

/* Y[M,N] = A[M,K] B[K,N] (+ bias[N]) (then Relu), in i-k-j order so the
 * inner loop walks rows. */
static void matmul(const float *A, const float *B, const float *bias, int relu, float *Y, size_t M, size_t K,
                   size_t N) {
    for (size_t i = 0; i < M; i++) {
        float *y = Y + i * N;
        for (size_t j = 0; j < N; j++) y[j] = bias ? bias[j] : 0.0f;
        for (size_t k = 0; k < K; k++)
            for (size_t j = 0; j < N; j++) y[j] += A[i * K + k] * B[k * N + j];
        for (size_t j = 0; relu && j < N; j++) y[j] = y[j] < 0.0f ? 0.0f : y[j]; /* NaN stays NaN */
    }
}

static tsr_status *pretend_run(void *piece_state, tsr_run_context *ctx) {
    const pretend_piece *p = piece_state;
    int plain = p->kernel == K_RELU || p->kernel == K_ADD; /* output shaped like A */
    /* Inputs are the host's, valid until run returns; the host has copied
     * each one into this chip's memory. */
    const tsr_tensor *a = host->run_input(ctx, p->in[0]);
    const tsr_tensor *b = p->kernel == K_RELU ? NULL : host->run_input(ctx, p->in[1]);
    const tsr_tensor *c = p->kernel == K_FUSED ? host->run_input(ctx, p->in[2]) : NULL;
    const float *A = device_floats(a, p->device), *B = device_floats(b, p->device), *C = device_floats(c, p->device);
    int64_t dims[2] = {0, 0};
    tsr_tensor *y;
    float *Y;
    tsr_status *st;
    if (!A || (b && !B) || (c && !C) || (p->kernel != K_RELU && !b) || (p->kernel == K_FUSED && !c))
        return fail(TSR_ERR_RUNTIME, "pretend: node '%s': an input is not a float32 tensor in device %d memory",
                    p->node, (int)p->device);
    /* Shapes may change between runs: check them every run. */
    if (p->kernel == K_ADD &&
        (a->rank != b->rank || (a->rank && memcmp(a->dims, b->dims, sizeof *a->dims * (size_t)a->rank))))
        return fail(TSR_ERR_INVALID_ARGUMENT, "pretend: node '%s': Add needs inputs of equal shape", p->node);
    if (!plain) {
        if (a->rank != 2 || b->rank != 2 || a->dims[1] != b->dims[0] ||
            (c && (c->rank != 1 || c->dims[0] != b->dims[1])))
            return fail(TSR_ERR_INVALID_ARGUMENT, "pretend: node '%s': MatMul shapes do not fit", p->node);
        dims[0] = a->dims[0];
        dims[1] = b->dims[1];
    }
    /* The host allocates the output in this chip's memory (our mem_alloc);
     * the tensor is the host's, valid until run returns. */
    if ((st = host->run_alloc_output(ctx, 0, TSR_FLOAT, plain ? a->rank : 2, plain ? a->dims : dims, &y))) return st;
    if (!(Y = device_floats(y, p->device)))
        return fail(TSR_ERR_RUNTIME, "pretend: node '%s': output not in device %d memory", p->node, (int)p->device);
    if (p->kernel == K_RELU)
        for (size_t i = 0; i < elements(a); i++) Y[i] = A[i] < 0.0f ? 0.0f : A[i];
    else if (p->kernel == K_ADD)
        for (size_t i = 0; i < elements(a); i++) Y[i] = A[i] + B[i];
    else matmul(A, B, C, p->kernel == K_FUSED, Y, (size_t)dims[0], (size_t)a->dims[1], (size_t)dims[1]);
    return NULL; /* synchronous: the work is done, so `synchronize` stays NULL */
}

/* ---- 6. the table and the entry point --------------------------------- */

/* The plugin's, static const so it outlives every use. Unnamed slots are NULL. */
static const tsr_provider pretend_provider = {
    .struct_size = sizeof(tsr_provider), /* tells the host which members exist */
    .name = "pretend",                   /* what -p and --provider-option use */
    .vendor = "Example Vendor",
    .version = "1.0",
    .create = pretend_create,
    .destroy = pretend_destroy,
    .device_count = pretend_device_count,
    .device_info = pretend_device_info,
    .claim = pretend_claim,
    .compile = pretend_compile,
    .run = pretend_run,
    .release = pretend_release,
    .mem_alloc = pretend_mem_alloc, /* these four are required with device memory */
    .mem_free = pretend_mem_free,
    .copy_to_device = pretend_copy_to_device,
    .copy_to_host = pretend_copy_to_host,
    .piece_describe = pretend_describe,
    .copy_between_devices = pretend_copy_between,
    /* flags 0: the host copies constants (weights, biases) into device
     * memory once per session, and run sees them as handles like the rest. */
};

/* The one exported symbol; the build hides everything else. */
TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) {
    /* This plugin implements ABI 1: refuse a host that cannot speak it. */
    if (args->host_abi_min > 1 || args->host_abi_max < 1)
        return args->host->status_new(TSR_ERR_ABI, "pretend: implements provider ABI 1 only");
    host = args->host;
    args->abi_version = 1;
    args->provider = &pretend_provider;
    return NULL;
}
