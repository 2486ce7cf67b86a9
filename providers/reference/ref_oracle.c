/*
 * The float64 oracle: precision=double runs a piece of reference nodes with
 * every float32/float16/bfloat16 value widened to float64 and kept so
 * between the piece's nodes; values are rounded to their declared type only
 * where they leave the piece (the host reads them there: a graph output, a
 * value another provider or the core reads, or a value observed with
 * observe_all). The kernels are the reference provider's own: ONNX ops
 * accept double wherever they accept float, so a kernel handed double inputs
 * takes its double path.
 *
 * Like ref_attn_subgraph.c, the runner hands each node a copy of the host
 * API whose run_* slots read and write the runner's own value slots.
 *
 * A kernel that refuses double inputs is run again on inputs rounded back to
 * their declared types; that node, and one whose kernel writes a float32
 * result from double inputs, computes in its own precision. Such op types
 * are logged once per piece at warning level ("not covered by the oracle").
 * A narrow result (a Cast to float16, say, which rounds as the model asks)
 * is widened again, exactly, so no kernel sees float and double mixed.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_oracle.h"

/* A tensor the runner owns. */
typedef struct or_tensor {
    tsr_tensor t;
    int64_t dims[REF_MAX_RANK];
} or_tensor;

typedef struct or_slot {
    const tsr_value_info *v;
    int32_t declared;    /* value_elem_type: 0 when unknown */
    const tsr_tensor *t; /* this run's tensor: borrowed, `owned` or `konst` */
    or_tensor *owned;
    or_tensor *konst; /* a constant input, widened at compile time */
    int32_t logical;  /* the type the model gives it (t may be wider) */
    size_t last_use;  /* index of the last node reading it */
    int output;       /* piece output index, -1 when none */
} or_slot;

typedef struct or_node {
    const tsr_node *node;
    const ref_op *op;
    size_t n_in, n_out;
    int *map; /* n_in input slots, then n_out output slots; -1 = none */
    bool uncovered;
} or_node;

struct ref_oracle {
    tsr_host_api shim; /* the real host, run_* slots replaced; first member */
    const tsr_host_api *host;
    int threads;
    size_t n_slots, n_inputs; /* slots [0, n_inputs) are the piece's inputs */
    or_slot *slots;
    size_t *hash, hash_cap; /* slot index + 1 by value handle; 0 = empty */
    size_t n_nodes;
    or_node *nodes;
    size_t n_outputs;
    size_t *out_slot;
    or_tensor **scratch; /* outputs the piece drops, freed after each node */
    size_t n_scratch, cap_scratch;
    bool logged;
};

#define ORACLE(ctx) ((ref_oracle *)(void *)(ctx))

static bool narrow_float(int32_t t) { return t == TSR_FLOAT || t == TSR_FLOAT16 || t == TSR_BFLOAT16; }

/* --- owned tensors --------------------------------------------------------- */
static tsr_status *tensor_new(const tsr_host_api *h, int32_t type, int32_t rank, const int64_t *dims, or_tensor **out) {
    size_t es = ref_elem_size(type), n = 1;
    if (es == 0 || type == TSR_STRING)
        return h->status_new(TSR_ERR_NOT_SUPPORTED, "precision=double: a value of this element type cannot be kept");
    if (rank < 0 || rank > REF_MAX_RANK) return h->status_new(TSR_ERR_INVALID_ARGUMENT, "precision=double: bad rank");
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0 || (dims[d] && n > SIZE_MAX / (size_t)dims[d]))
            return h->status_new(TSR_ERR_INVALID_ARGUMENT, "precision=double: bad shape");
        n *= (size_t)dims[d];
    }
    if (n > SIZE_MAX / es) return h->status_new(TSR_ERR_INVALID_ARGUMENT, "tensor too large");
    or_tensor *o = calloc(1, sizeof *o);
    void *data = o ? calloc(n ? n * es : 1, 1) : NULL;
    if (!data) {
        free(o);
        return h->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    }
    if (rank) memcpy(o->dims, dims, (size_t)rank * sizeof *dims);
    o->t = (tsr_tensor){sizeof(tsr_tensor), type, rank, o->dims, data, n * es, TSR_MEMORY_HOST, 0};
    *out = o;
    return NULL;
}

static void tensor_free(or_tensor *o) {
    if (!o) return;
    free(o->t.data);
    free(o);
}

/* A copy of `t` converted to `type` (float64 to widen, a narrow type to round). */
static tsr_status *convert(const tsr_host_api *h, const tsr_tensor *t, int32_t type, or_tensor **out) {
    tsr_status *st = tensor_new(h, type, t->rank, t->dims, out);
    if (st) return st;
    uint64_t n = ref_numel(t);
    for (uint64_t i = 0; i < n; i++)
        ref_store(type, (*out)->t.data, (size_t)i, ref_load(t->elem_type, t->data, (size_t)i));
    return NULL;
}

/* Whether `t` holds elements to widen (a Shape or Size input may come as
 * its dims alone, data NULL). */
static bool widenable(const tsr_tensor *t) { return t && narrow_float(t->elem_type) && (t->data || ref_numel(t) == 0); }

/* --- the host API the kernels see ----------------------------------------- */
static size_t sh_count(const tsr_run_context *ctx) { return ORACLE(ctx)->n_slots; }

static const tsr_tensor *sh_input(const tsr_run_context *ctx, size_t i) {
    const ref_oracle *o = ORACLE(ctx);
    return i < o->n_slots ? o->slots[i].t : NULL;
}

static tsr_status *sh_alloc(tsr_run_context *ctx, size_t i, int32_t type, int32_t rank, const int64_t *dims,
                            tsr_tensor **out) {
    ref_oracle *o = ORACLE(ctx);
    if (i != (size_t)-1 && (i >= o->n_slots || o->slots[i].t))
        return o->host->status_new(TSR_ERR_RUNTIME, "precision=double: an output is written twice");
    if (i == (size_t)-1 && o->n_scratch == o->cap_scratch) {
        size_t cap = o->cap_scratch ? 2 * o->cap_scratch : 8;
        or_tensor **grown = realloc(o->scratch, cap * sizeof *grown);
        if (!grown) return o->host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
        o->scratch = grown;
        o->cap_scratch = cap;
    }
    or_tensor *t;
    tsr_status *st = tensor_new(o->host, type, rank, dims, &t);
    if (st) return st;
    if (i == (size_t)-1) {
        o->scratch[o->n_scratch++] = t;
    } else {
        o->slots[i].owned = t;
        o->slots[i].t = &t->t;
    }
    *out = &t->t;
    return NULL;
}

static tsr_status *sh_set_string(tsr_tensor *t, size_t i, const char *data, size_t size) {
    (void)t, (void)i, (void)data, (void)size;
    return NULL; /* unreachable: string tensors are refused at allocation */
}

static const tsr_value *sh_input_value(const tsr_run_context *ctx, size_t i) {
    (void)ctx, (void)i;
    return NULL; /* only plain tensors flow through an oracle piece */
}

static tsr_status *sh_set_value(tsr_run_context *ctx, size_t i, tsr_value *value) {
    (void)i;
    ORACLE(ctx)->host->val_free(value);
    return ORACLE(ctx)->host->status_new(TSR_ERR_NOT_SUPPORTED, "precision=double: sequences are not kept in a piece");
}

/* --- compile ---------------------------------------------------------------- */
static bool value_ok(const tsr_host_api *h, const tsr_value_info *v) {
    if (!v) return true;
    int32_t t = h->value_elem_type(v);
    return t != 0 && t != TSR_STRING && ref_elem_size(t) != 0;
}

bool ref_oracle_node_ok(const tsr_host_api *h, const tsr_node *node) {
    const char *op = h->node_op_type(node);
    if (strstr(op, "Sequence") || strstr(op, "Optional")) return false;
    for (size_t i = 0; i < h->node_input_count(node); i++)
        if (!value_ok(h, h->node_input(node, i))) return false;
    for (size_t i = 0; i < h->node_output_count(node); i++)
        if (!value_ok(h, h->node_output(node, i))) return false;
    return true;
}

/* The slot of value v (open addressing on the handle; a Concat may read
 * 100,000 values); SIZE_MAX when absent. */
static size_t hash_pos(const ref_oracle *o, const tsr_value_info *v) {
    uintptr_t x = (uintptr_t)v;
    x ^= x >> 17;
    x *= (uintptr_t)0x9E3779B97F4A7C15u;
    size_t i = (size_t)(x >> 7) & (o->hash_cap - 1);
    while (o->hash[i] && o->slots[o->hash[i] - 1].v != v) i = (i + 1) & (o->hash_cap - 1);
    return i;
}

static size_t find_slot(const ref_oracle *o, const tsr_value_info *v) {
    size_t h = o->hash[hash_pos(o, v)];
    return h ? h - 1 : SIZE_MAX;
}

/* Slot i now holds a value: index it. */
static void add_slot(ref_oracle *o, size_t i) { o->hash[hash_pos(o, o->slots[i].v)] = i + 1; }

void ref_oracle_free(ref_oracle *o) {
    if (!o) return;
    for (size_t i = 0; o->slots && i < o->n_slots; i++) {
        tensor_free(o->slots[i].owned);
        tensor_free(o->slots[i].konst);
    }
    for (size_t i = 0; o->nodes && i < o->n_nodes; i++) free(o->nodes[i].map);
    for (size_t i = 0; i < o->n_scratch; i++) tensor_free(o->scratch[i]);
    free(o->scratch);
    free(o->slots);
    free(o->hash);
    free(o->nodes);
    free(o->out_slot);
    free(o);
}

tsr_status *ref_oracle_compile(const tsr_host_api *h, const tsr_graph *piece, int threads, ref_oracle **out) {
    ref_oracle *o = calloc(1, sizeof *o);
    if (!o) return h->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    /* The kernels see the host's slots up to graph_device and no further:
     * a slot appended later may take a run context, which here is the
     * runner's, not the host's (run_should_stop, say: kernels then simply
     * do not stop early inside an oracle piece). */
    size_t known = offsetof(tsr_host_api, graph_device) + sizeof o->shim.graph_device;
    if (h->struct_size < known) known = h->struct_size;
    memcpy(&o->shim, h, known);
    o->shim.struct_size = (uint32_t)known;
    o->shim.run_input_count = sh_count;
    o->shim.run_output_count = sh_count;
    o->shim.run_input = sh_input;
    o->shim.run_alloc_output = sh_alloc;
    o->shim.tensor_set_string = sh_set_string;
    o->shim.run_input_value = sh_input_value;
    o->shim.run_set_output_value = sh_set_value;
    o->host = h;
    o->threads = threads;
    o->n_nodes = h->graph_node_count(piece);
    o->n_inputs = h->graph_input_count(piece);
    o->n_outputs = h->graph_output_count(piece);
    size_t cap = o->n_inputs + 1;
    for (size_t k = 0; k < o->n_nodes; k++) cap += h->node_output_count(h->graph_node(piece, k));
    o->slots = calloc(cap, sizeof *o->slots);
    for (o->hash_cap = 16; o->hash_cap < 2 * cap; o->hash_cap *= 2) {}
    o->hash = calloc(o->hash_cap, sizeof *o->hash);
    o->nodes = calloc(o->n_nodes + 1, sizeof *o->nodes);
    o->out_slot = calloc(o->n_outputs + 1, sizeof *o->out_slot);
    tsr_status *st = NULL;
    if (!o->slots || !o->hash || !o->nodes || !o->out_slot) {
        st = h->status_new(TSR_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < o->n_inputs; i++) {
        or_slot *s = &o->slots[o->n_slots++];
        s->v = h->graph_input(piece, i);
        s->declared = h->value_elem_type(s->v);
        s->output = -1;
        add_slot(o, o->n_slots - 1);
        const tsr_tensor *c = h->value_constant(s->v);
        if (c && c->memory_kind == TSR_MEMORY_HOST && widenable(c) && (st = convert(h, c, TSR_DOUBLE, &s->konst)))
            goto fail;
    }
    for (size_t k = 0; k < o->n_nodes; k++) {
        or_node *n = &o->nodes[k];
        n->node = h->graph_node(piece, k);
        n->op = ref_find_op(h->node_domain(n->node), h->node_op_type(n->node), h->node_opset(n->node));
        n->n_in = h->node_input_count(n->node);
        n->n_out = h->node_output_count(n->node);
        n->map = malloc((n->n_in + n->n_out + 1) * sizeof *n->map);
        if (!n->op || !n->map) {
            st = h->status_new(n->op ? TSR_ERR_NO_MEMORY : TSR_ERR_NOT_SUPPORTED,
                               n->op ? "out of memory" : "no kernel for this node");
            goto fail;
        }
        for (size_t i = 0; i < n->n_in; i++) {
            const tsr_value_info *v = h->node_input(n->node, i);
            size_t s = v ? find_slot(o, v) : SIZE_MAX;
            if (v && s == SIZE_MAX) {
                st = h->status_new(TSR_ERR_RUNTIME,
                                   "precision=double: a node reads a value "
                                   "the piece neither receives nor makes");
                goto fail;
            }
            n->map[i] = v ? (int)s : -1;
            if (v) o->slots[s].last_use = k;
        }
        for (size_t i = 0; i < n->n_out; i++) {
            const tsr_value_info *v = h->node_output(n->node, i);
            n->map[n->n_in + i] = -1;
            if (!v) continue;
            or_slot *s = &o->slots[o->n_slots];
            *s = (or_slot){.v = v, .declared = h->value_elem_type(v), .last_use = k, .output = -1};
            n->map[n->n_in + i] = (int)o->n_slots++;
            add_slot(o, o->n_slots - 1);
        }
    }
    for (size_t j = 0; j < o->n_outputs; j++) {
        size_t s = find_slot(o, h->graph_output(piece, j));
        if (s == SIZE_MAX || s < o->n_inputs) {
            st = h->status_new(TSR_ERR_RUNTIME, "precision=double: a piece output no node makes");
            goto fail;
        }
        o->out_slot[j] = s;
        o->slots[s].output = (int)j;
    }
    /* An output nobody reads stays dropped (-1), as in a one-node piece, so
     * kernels that skip unwanted outputs still may. */
    for (size_t k = 0; k < o->n_nodes; k++) {
        or_node *n = &o->nodes[k];
        for (size_t i = 0; i < n->n_out; i++) {
            int s = n->map[n->n_in + i];
            if (s >= 0 && o->slots[s].output < 0 && o->slots[s].last_use == k) n->map[n->n_in + i] = -1;
        }
    }
    *out = o;
    return NULL;
fail:
    ref_oracle_free(o);
    return st;
}

/* --- run -------------------------------------------------------------------- */
static void slot_clear(or_slot *s) {
    tensor_free(s->owned);
    s->owned = NULL;
    s->t = NULL;
}

static void scratch_clear(ref_oracle *o) {
    for (size_t i = 0; i < o->n_scratch; i++) tensor_free(o->scratch[i]);
    o->n_scratch = 0;
}

static tsr_status *call_kernel(ref_oracle *o, or_node *n) {
    ref_ctx c = {&o->shim,   n->node, (tsr_run_context *)(void *)o, n->map, n->map + n->n_in, n->n_in, n->n_out,
                 o->threads, 0};
    return n->op->run(&c);
}

/* Runs node n again on its widened inputs rounded back to their declared
 * types: its kernel has no double path. */
static tsr_status *run_narrow(ref_oracle *o, or_node *n) {
    const tsr_host_api *h = o->host;
    or_tensor **tmp = calloc(n->n_in + 1, sizeof *tmp);
    const tsr_tensor **saved = calloc(n->n_in + 1, sizeof *saved);
    tsr_status *st = tmp && saved ? NULL : h->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; !st && i < n->n_in; i++) {
        int s = n->map[i];
        if (s < 0 || saved[i] || !o->slots[s].t) continue;
        or_slot *sl = &o->slots[s];
        if (sl->t->elem_type != TSR_DOUBLE || !narrow_float(sl->logical)) continue;
        st = convert(h, sl->t, sl->logical, &tmp[i]);
        if (st) break;
        saved[i] = sl->t;
        /* an input read twice by this node is rounded once */
        for (size_t k = i; k < n->n_in; k++)
            if (n->map[k] == s) sl->t = &tmp[i]->t;
    }
    if (!st) st = call_kernel(o, n);
    for (size_t i = 0; saved && i < n->n_in; i++)
        if (saved[i]) o->slots[n->map[i]].t = saved[i];
    for (size_t i = 0; tmp && i < n->n_in; i++) tensor_free(tmp[i]);
    free(tmp);
    free(saved);
    return st;
}

/* Outputs whose narrow type the op's definition fixes, whatever its inputs'
 * type (an attribute, or the op's meaning): a float32 result there is not a
 * kernel without a double path. */
static bool narrow_by_spec(const char *op, size_t output) {
    static const char *const any[] = {
        "Cast",      "CastLike", "BitCast",        "RandomUniformLike", "RandomNormalLike",
        "Bernoulli", "EyeLike",  "MelWeightMatrix"};
    for (size_t i = 0; i < sizeof any / sizeof *any; i++)
        if (!strcmp(op, any[i])) return true;
    /* Mean and InvStdDev follow stash_type; y_scale is float32 */
    return (!strcmp(op, "LayerNormalization") && output > 0) || (!strcmp(op, "DynamicQuantizeLinear") && output == 1);
}

static tsr_status *run_node(ref_oracle *o, size_t k) {
    or_node *n = &o->nodes[k];
    int32_t widened_from = 0; /* the declared type of a widened input */
    for (size_t i = 0; i < n->n_in; i++) {
        int s = n->map[i];
        if (s >= 0 && o->slots[s].t && o->slots[s].t->elem_type == TSR_DOUBLE && narrow_float(o->slots[s].logical))
            widened_from = o->slots[s].logical;
    }
    /* BitCast reads bits: it must see its inputs as the model types them */
    bool bits = widened_from && !strcmp(o->host->node_op_type(n->node), "BitCast");
    tsr_status *st = bits ? run_narrow(o, n) : call_kernel(o, n);
    if (st && widened_from && !bits) {
        /* no double path: free what it made and run it in its own precision */
        o->host->status_free(st);
        for (size_t i = 0; i < n->n_out; i++)
            if (n->map[n->n_in + i] >= 0) slot_clear(&o->slots[n->map[n->n_in + i]]);
        scratch_clear(o);
        n->uncovered = true;
        st = run_narrow(o, n);
    }
    scratch_clear(o);
    if (st) return st;
    for (size_t i = 0; i < n->n_out; i++) {
        int s = n->map[n->n_in + i];
        if (s < 0) continue;
        or_slot *sl = &o->slots[s];
        if (!sl->t)
            return o->host->status_new(TSR_ERR_RUNTIME,
                                       "precision=double: a kernel did not "
                                       "make an output the piece needs");
        int32_t got = sl->t->elem_type;
        if (narrow_float(got)) {
            /* A narrow result (a Cast's, or a kernel's without a double
             * path) is widened, exactly, so that every float value in the
             * piece is double and no kernel sees mixed types. */
            if (widened_from && !narrow_by_spec(o->host->node_op_type(n->node), i))
                n->uncovered = true; /* double inputs, a float result */
            or_tensor *wide;
            tsr_status *cs = convert(o->host, sl->t, TSR_DOUBLE, &wide);
            if (cs) return cs;
            slot_clear(sl);
            sl->owned = wide;
            sl->t = &wide->t;
            sl->logical = got;
        } else if (narrow_float(sl->declared)) {
            sl->logical = sl->declared;
        } else if (sl->declared == 0 && got == TSR_DOUBLE && widened_from) {
            sl->logical = widened_from;
        } else {
            sl->logical = got;
        }
    }
    /* values read for the last time here are no longer needed */
    for (size_t i = 0; i < n->n_in; i++) {
        int s = n->map[i];
        if (s >= 0 && o->slots[s].last_use == k && o->slots[s].output < 0) slot_clear(&o->slots[s]);
    }
    return NULL;
}

static void log_uncovered(ref_oracle *o) {
    char msg[600];
    size_t len = 0;
    int n_ops = 0;
    for (size_t k = 0; k < o->n_nodes; k++) {
        if (!o->nodes[k].uncovered) continue;
        const char *op = o->host->node_op_type(o->nodes[k].node);
        bool seen = false;
        for (size_t j = 0; j < k && !seen; j++)
            seen = o->nodes[j].uncovered && !strcmp(o->host->node_op_type(o->nodes[j].node), op);
        if (seen) continue;
        if (n_ops++ == 0)
            len = (size_t)snprintf(msg, sizeof msg,
                                   "precision=double: not covered by the "
                                   "oracle (computed in their own precision): ");
        if (len < sizeof msg) len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", n_ops > 1 ? ", " : "", op);
    }
    if (n_ops) o->host->log(TSR_LOG_WARNING, "reference", msg);
    o->logged = true;
}

tsr_status *ref_oracle_run(ref_oracle *o, tsr_run_context *run) {
    const tsr_host_api *h = o->host;
    tsr_status *st = NULL;
    for (size_t i = 0; i < o->n_slots; i++) slot_clear(&o->slots[i]);
    for (size_t i = 0; i < o->n_inputs && !st; i++) {
        or_slot *s = &o->slots[i];
        const tsr_tensor *t = s->konst ? &s->konst->t : h->run_input(run, i);
        s->logical = s->konst ? s->declared : t ? t->elem_type : 0;
        if (!s->konst && widenable(t) && t->memory_kind == TSR_MEMORY_HOST) {
            st = convert(h, t, TSR_DOUBLE, &s->owned);
            t = s->owned ? &s->owned->t : NULL;
        }
        s->t = t;
    }
    for (size_t k = 0; k < o->n_nodes && !st; k++) st = run_node(o, k);
    for (size_t j = 0; j < o->n_outputs && !st; j++) {
        const or_slot *s = &o->slots[o->out_slot[j]];
        tsr_tensor *y;
        int32_t type = s->logical ? s->logical : s->t->elem_type;
        st = h->run_alloc_output(run, j, type, s->t->rank, s->t->dims, &y);
        if (st) break;
        if (type == s->t->elem_type) {
            if (s->t->nbytes) memcpy(y->data, s->t->data, s->t->nbytes);
        } else {
            uint64_t n = ref_numel(s->t);
            for (uint64_t i = 0; i < n; i++)
                ref_store(type, y->data, (size_t)i, ref_load(s->t->elem_type, s->t->data, (size_t)i));
        }
    }
    for (size_t i = 0; i < o->n_slots; i++) slot_clear(&o->slots[i]);
    scratch_clear(o);
    if (!st && !o->logged) log_uncovered(o);
    return st;
}
