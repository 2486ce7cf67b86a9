/* The session's planned arena for host intermediates (arena_plan.h).
 *
 * Without it every tensor a kernel asks for is a calloc and a free per run
 * (175 a run for resnet50 on the reference provider), and what glibc or
 * host_block_cache keeps of freed blocks is sized for tensors, not for the
 * peak of what is live. The first run with given input shapes records each
 * request (piece, output or scratch ordinal, bytes); its lifetime is known
 * from the graph plan (from its producing piece to its last reader,
 * graph_plan.last_use). Offsets are then chosen greedily, best fit among the
 * gaps left by tensors whose lifetimes do not meet (in allocation order, as
 * ONNX Runtime's memory pattern planner, or largest first, whichever packs
 * tighter), and later runs with the same shapes take a block of that size
 * from a small pool and place every planned tensor in it.
 *
 * Safety rests on three checks at placement: a tensor is placed only where
 * it was planned (same piece, same output or scratch ordinal, same rank),
 * only when it is no larger than planned (shapes that depend on data may
 * grow: the tensor is then allocated as before and the plan grows after the
 * run), and never when it is a graph output (it outlives the run). Lifetimes
 * come from the plan's structure, not from the recording, so they hold for
 * every run. Control-flow pieces' own outputs are not placed (the
 * executor gives them no hook): they move into and out of bodies. Each
 * body has an arena of its own (cf_piece.arenas, runtime/cf_util.c): one
 * plan, made on the body's first iteration and reused by every later
 * iteration and run, growing ahead (arena_plans_grow_ahead) where its
 * tensors grow from one iteration to the next. */
#include "arena_plan.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "host_block_cache.h"

/* One request of a recording run. */
typedef struct arena_record {
    size_t piece, key; /* key: value index, or scratch ordinal in the piece */
    bool scratch;
    uint64_t bytes;
    int32_t rank;
} arena_record;

typedef struct arena_entry {
    size_t piece, key;
    bool scratch;
    size_t end;            /* the last piece during which it is live */
    uint64_t bytes;        /* planned: the most any run asked for */
    _Atomic uint64_t want; /* a larger size a placing run met, for the next plan */
    int32_t rank;
    uint64_t off;    /* in the tensor region */
    size_t dims_off; /* in the dims region after it, in int64s */
} arena_entry;

struct arena_plan {
    int64_t *sig;
    size_t sig_len;
    const graph_plan *gp;
    arena_entry *e;
    size_t n;
    size_t *by_value;   /* per value index: 1 + its entry, 0: none */
    size_t *scratch_at; /* per piece p: scratch entries scratch_list[scratch_at[p] .. [p+1]) */
    size_t *scratch_list;
    uint64_t data_bytes; /* the tensor region */
    size_t dims_count;   /* int64s of the dims region */
    size_t users;        /* runs using it now */
    bool recording;      /* a run is recording it: nobody places yet */
    uint64_t used_at;    /* arena tick of its last use, for eviction */
};

struct arena_block {
    unsigned char *mem;
    size_t cap;
};

struct arena_plans {
    pthread_mutex_t mu;
    struct arena_plan *plans[ARENA_MAX_PLANS];
    size_t n_plans;
    struct arena_block *idle[ARENA_MAX_IDLE_BLOCKS];
    size_t n_idle;
    uint64_t tick;
    arena_stats last;
    bool grow_ahead; /* set before any run: read without the lock */
};

static uint64_t round_up(uint64_t n) { return (n + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN; }

static void plan_free(struct arena_plan *p) {
    if (!p) return;
    free(p->sig);
    free(p->e);
    free(p->by_value);
    free(p->scratch_at);
    free(p->scratch_list);
    free(p);
}

static void block_free(struct arena_block *b) {
    if (!b) return;
    free(b->mem);
    free(b);
}

arena_plans *arena_plans_new(void) {
#ifdef TESSERA_ARENA_OFF
    /* a build to measure against: every tensor allocated alone */
    return NULL;
#endif
    arena_plans *a = calloc(1, sizeof *a);
    if (a) pthread_mutex_init(&a->mu, NULL);
    return a;
}

void arena_plans_grow_ahead(arena_plans *a) {
    if (a) a->grow_ahead = true;
}

void arena_plans_free(arena_plans *a) {
    if (!a) return;
    for (size_t i = 0; i < a->n_plans; i++) plan_free(a->plans[i]);
    for (size_t i = 0; i < a->n_idle; i++) block_free(a->idle[i]);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

/* Tensors live at once beyond which a plan is not made: the search is
 * O(entries x live), and a graph that holds thousands of intermediates at
 * once (a Concat of 100,000 values) would pay seconds for it. */
#define ARENA_MAX_LIVE 1024
/* Entries up to which the by-size order is tried too: it is quadratic. */
#define ARENA_MAX_BY_SIZE 4096

static uint64_t entry_size(const arena_entry *e) { return round_up(e->bytes ? e->bytes : 1); }

static bool overlaps(const arena_entry *a, const arena_entry *b) { return !(a->end < b->piece || b->end < a->piece); }

/* Allocation order: each entry, as its piece allocates it, goes into the
 * smallest gap between live tensors that fits, else above the topmost
 * live one. off[i] for entry i; the total, or UINT64_MAX when more than
 * ARENA_MAX_LIVE are live at once or memory runs out. */
static uint64_t offsets_in_order(const struct arena_plan *p, uint64_t *off) {
    size_t *live = malloc(sizeof *live * (p->n + 1)); /* entry indices, by offset */
    if (!live) return UINT64_MAX;
    size_t n_live = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < p->n; i++) {
        const arena_entry *e = &p->e[i];
        uint64_t size = entry_size(e);
        /* Entries are in allocation order, so starts never go down: what
         * died before this piece can be dropped for good. */
        size_t k = 0;
        for (size_t j = 0; j < n_live; j++)
            if (p->e[live[j]].end >= e->piece) live[k++] = live[j];
        n_live = k;
        if (n_live >= ARENA_MAX_LIVE) {
            free(live);
            return UINT64_MAX;
        }
        uint64_t best_off = 0, best_gap = UINT64_MAX, prev_end = 0;
        size_t best_at = n_live;
        for (size_t j = 0; j < n_live; j++) {
            uint64_t gap = off[live[j]] - prev_end;
            if (gap >= size && gap < best_gap) {
                best_gap = gap;
                best_off = prev_end;
                best_at = j;
            }
            prev_end = off[live[j]] + entry_size(&p->e[live[j]]);
        }
        if (best_gap == UINT64_MAX) best_off = prev_end;
        off[i] = best_off;
        if (best_off + size > total) total = best_off + size;
        memmove(&live[best_at + 1], &live[best_at], sizeof *live * (n_live - best_at));
        live[best_at] = i;
        n_live++;
    }
    free(live);
    return total;
}

typedef struct by_size {
    uint64_t size;
    size_t piece, i;
} by_size;

static int larger_first(const void *x, const void *y) {
    const by_size *a = x, *b = y;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    if (a->piece != b->piece) return a->piece < b->piece ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* Largest first (TensorFlow Lite's greedy-by-size): each entry goes into
 * the smallest gap among the entries already placed whose lifetimes meet
 * its own, else above the topmost of them. Packs tighter than allocation
 * order where big tensors come late (mobilenetv2 on the reference
 * provider: 9.19 MiB, its live peak, against 10.72). */
static uint64_t offsets_by_size(const struct arena_plan *p, uint64_t *off) {
    by_size *order = malloc(sizeof *order * (p->n + 1));
    size_t *placed = malloc(sizeof *placed * (p->n + 1)); /* by offset */
    if (!order || !placed) {
        free(order);
        free(placed);
        return UINT64_MAX;
    }
    for (size_t i = 0; i < p->n; i++) order[i] = (by_size){entry_size(&p->e[i]), p->e[i].piece, i};
    qsort(order, p->n, sizeof *order, larger_first);
    size_t n_placed = 0;
    uint64_t total = 0;
    for (size_t k = 0; k < p->n; k++) {
        size_t i = order[k].i;
        uint64_t size = order[k].size, best_off = 0, best_gap = UINT64_MAX, prev_end = 0;
        for (size_t j = 0; j < n_placed; j++) {
            size_t q = placed[j];
            if (!overlaps(&p->e[i], &p->e[q])) continue;
            if (off[q] >= prev_end) {
                uint64_t gap = off[q] - prev_end;
                if (gap >= size && gap < best_gap) {
                    best_gap = gap;
                    best_off = prev_end;
                }
            }
            uint64_t end = off[q] + entry_size(&p->e[q]);
            if (end > prev_end) prev_end = end;
        }
        if (best_gap == UINT64_MAX) best_off = prev_end;
        off[i] = best_off;
        if (best_off + size > total) total = best_off + size;
        size_t at = n_placed;
        while (at > 0 && off[placed[at - 1]] > best_off) at--;
        memmove(&placed[at + 1], &placed[at], sizeof *placed * (n_placed - at));
        placed[at] = i;
        n_placed++;
    }
    free(order);
    free(placed);
    return total;
}

/* Chooses every entry's offset: the tighter of allocation order and
 * largest first (the latter up to ARENA_MAX_BY_SIZE entries). false: out of
 * memory (the plan is unchanged). With more than ARENA_MAX_LIVE tensors
 * live at once the plan is left empty: nothing placed. */
static bool plan_offsets(struct arena_plan *p) {
    for (size_t i = 0; i < p->n; i++) {
        uint64_t want = atomic_load(&p->e[i].want);
        if (want > p->e[i].bytes) p->e[i].bytes = want;
    }
    uint64_t *a = malloc(sizeof *a * (p->n + 1)), *b = malloc(sizeof *b * (p->n + 1));
    uint64_t total_a = a && b ? offsets_in_order(p, a) : UINT64_MAX;
    if (!a || !b) {
        free(a);
        free(b);
        return false;
    }
    if (total_a == UINT64_MAX) {
        /* too many live at once (or out of memory): place nothing */
        free(a);
        free(b);
        p->n = 0;
        p->data_bytes = 0;
        p->dims_count = 0;
        return true;
    }
    uint64_t total_b = p->n <= ARENA_MAX_BY_SIZE ? offsets_by_size(p, b) : UINT64_MAX;
    const uint64_t *off = total_b < total_a ? b : a;
    size_t dims = 0;
    for (size_t i = 0; i < p->n; i++) {
        p->e[i].off = off[i];
        p->e[i].dims_off = dims;
        dims += (size_t)p->e[i].rank;
    }
    p->data_bytes = total_b < total_a ? total_b : total_a;
    p->dims_count = dims;
    free(a);
    free(b);
    return true;
}

/* Fills p from a recording run's requests; false: out of memory. */
static bool plan_build(struct arena_plan *p, const graph_plan *gp, const arena_record *rec, size_t n) {
    size_t n_values = gp->g->n_values, n_pieces = gp->part.n_pieces;
    p->e = calloc(n + 1, sizeof *p->e);
    p->by_value = calloc(n_values + 1, sizeof *p->by_value);
    p->scratch_at = calloc(n_pieces + 2, sizeof *p->scratch_at);
    p->scratch_list = calloc(n + 1, sizeof *p->scratch_list);
    if (!p->e || !p->by_value || !p->scratch_at || !p->scratch_list) return false;
    for (size_t i = 0; i < n; i++) {
        arena_entry *e = &p->e[i];
        e->piece = rec[i].piece;
        e->key = rec[i].key;
        e->scratch = rec[i].scratch;
        e->bytes = rec[i].bytes;
        atomic_init(&e->want, 0);
        e->rank = rec[i].rank;
        if (e->scratch) {
            /* freed when the kernel returns (run_context_end) */
            e->end = e->piece;
            p->scratch_at[e->piece + 1]++;
        } else {
            /* freed after its last reader, or at the run's end when no
             * later piece reads it */
            size_t last = gp->last_use[e->key];
            e->end = last == SIZE_MAX || last < e->piece ? n_pieces : last;
            p->by_value[e->key] = i + 1;
        }
    }
    for (size_t q = 0; q < n_pieces; q++) p->scratch_at[q + 1] += p->scratch_at[q];
    /* records of a piece are in ordinal order: fill each piece's run of
     * scratch_list in that order */
    size_t *fill = calloc(n_pieces + 1, sizeof *fill);
    if (!fill) return false;
    for (size_t i = 0; i < n; i++)
        if (p->e[i].scratch) {
            size_t q = p->e[i].piece;
            p->scratch_list[p->scratch_at[q] + fill[q]++] = i;
        }
    free(fill);
    p->n = n;
    return plan_offsets(p);
}

/* The plan for sig, or NULL; called under a->mu. */
static struct arena_plan *find_plan(arena_plans *a, const graph_plan *gp, const int64_t *sig, size_t len) {
    for (size_t i = 0; i < a->n_plans; i++) {
        struct arena_plan *p = a->plans[i];
        if (p->gp == gp && p->sig_len == len && (len == 0 || memcmp(p->sig, sig, sizeof *sig * len) == 0)) return p;
    }
    return NULL;
}

/* Room for one more plan: drops the least recently used idle one when
 * full; false when every plan is in use. Under a->mu. */
static bool make_room(arena_plans *a) {
    if (a->n_plans < ARENA_MAX_PLANS) return true;
    size_t victim = ARENA_MAX_PLANS;
    for (size_t i = 0; i < a->n_plans; i++) {
        const struct arena_plan *p = a->plans[i];
        if (p->users || p->recording) continue;
        if (victim == ARENA_MAX_PLANS || p->used_at < a->plans[victim]->used_at) victim = i;
    }
    if (victim == ARENA_MAX_PLANS) return false;
    plan_free(a->plans[victim]);
    a->plans[victim] = a->plans[--a->n_plans];
    return true;
}

/* A block of at least `need` bytes for one run: the smallest idle one that
 * is large enough, else a fresh one (an idle block too small is given back
 * first, so the pool never keeps outgrown blocks). NULL: out of memory. */
static struct arena_block *take_block(arena_plans *a, size_t need) {
    struct arena_block *b = NULL, *outgrown = NULL;
    pthread_mutex_lock(&a->mu);
    size_t best = a->n_idle;
    for (size_t i = 0; i < a->n_idle; i++)
        if (a->idle[i]->cap >= need && (best == a->n_idle || a->idle[i]->cap < a->idle[best]->cap)) best = i;
    if (best < a->n_idle) {
        b = a->idle[best];
        a->idle[best] = a->idle[--a->n_idle];
    } else if (a->n_idle) {
        outgrown = a->idle[--a->n_idle];
    }
    pthread_mutex_unlock(&a->mu);
    if (b) return b;
    block_free(outgrown);
    b = calloc(1, sizeof *b);
    /* malloc, not calloc: each placed tensor is zeroed when placed */
    size_t cap = (size_t)round_up(need ? need : 1);
    if (b) b->mem = aligned_alloc(ARENA_ALIGN, cap);
    if (!b || !b->mem) {
        free(b);
        return NULL;
    }
    b->cap = cap;
    return b;
}

/* Back to the pool, or freed when the pool holds larger ones enough.
 * Under a->mu. */
static void give_block(arena_plans *a, struct arena_block *b) {
    if (a->n_idle < ARENA_MAX_IDLE_BLOCKS) {
        a->idle[a->n_idle++] = b;
        return;
    }
    size_t smallest = 0;
    for (size_t i = 1; i < a->n_idle; i++)
        if (a->idle[i]->cap < a->idle[smallest]->cap) smallest = i;
    if (a->idle[smallest]->cap < b->cap) {
        struct arena_block *old = a->idle[smallest];
        a->idle[smallest] = b;
        b = old;
    }
    block_free(b);
}

void arena_run_begin(arena_plans *a, const graph_plan *gp, const int64_t *sig, size_t len, arena_run *r) {
    memset(r, 0, sizeof *r);
    r->a = a;
    r->gp = gp;
    if (!a || !gp || (len && !sig)) return;
    pthread_mutex_lock(&a->mu);
    struct arena_plan *p = find_plan(a, gp, sig, len);
    size_t need = 0;
    if (p && !p->recording) {
        p->users++;
        p->used_at = ++a->tick;
        r->plan = p;
        need = (size_t)p->data_bytes + p->dims_count * sizeof(int64_t);
    } else if (!p && make_room(a)) {
        p = calloc(1, sizeof *p);
        int64_t *copy = p ? malloc(sizeof *copy * (len + 1)) : NULL;
        if (p && copy) {
            if (len) memcpy(copy, sig, sizeof *copy * len);
            p->sig = copy;
            p->sig_len = len;
            p->gp = gp;
            p->recording = true;
            p->users = 1;
            p->used_at = ++a->tick;
            a->plans[a->n_plans++] = p;
            r->plan = p;
            r->recording = true;
        } else {
            free(p);
        }
    }
    /* else: another run is recording these shapes; this one allocates */
    pthread_mutex_unlock(&a->mu);
    if (r->plan && !r->recording && r->plan->n) r->block = take_block(a, need);
}

static arena_entry *lookup(const struct arena_plan *p, size_t piece, size_t key, bool scratch) {
    if (!scratch) {
        size_t i = p->by_value[key];
        return i && p->e[i - 1].piece == piece ? &p->e[i - 1] : NULL;
    }
    size_t at = p->scratch_at[piece], n = p->scratch_at[piece + 1] - at;
    return key < n ? &p->e[p->scratch_list[at + key]] : NULL;
}

bool arena_place(void *user, size_t index, size_t bytes, int32_t elem_type, int32_t rank, const int64_t *dims,
                 rt_tensor *slot) {
    arena_piece *ap = user;
    arena_run *r = ap ? ap->run : NULL;
    if (!r || !r->gp) return false;
    const struct tsr_graph *v = r->gp->part.pieces[ap->piece].view;
    bool scratch = index == (size_t)-1;
    size_t key;
    if (scratch) {
        key = ap->n_scratch++;
    } else {
        if (index >= v->n_outputs) return false;
        const ir_value *val = v->outputs[index];
        key = val->index;
        /* A graph output is handed to the application: never placed. */
        if (val->is_graph_output || key >= r->gp->g->n_values) {
            r->allocated++;
            return false;
        }
    }
    r->allocated++;
    if (r->recording) {
        if (r->rec_failed) return false;
        if (r->n_rec == r->cap_rec) {
            size_t cap = r->cap_rec ? 2 * r->cap_rec : 64;
            arena_record *grown = realloc(r->rec, sizeof *grown * cap);
            if (!grown) {
                r->rec_failed = true;
                return false;
            }
            r->rec = grown;
            r->cap_rec = cap;
        }
        r->rec[r->n_rec++] = (arena_record){ap->piece, key, scratch, bytes, rank};
        return false;
    }
    if (!r->block) return false;
    arena_entry *e = lookup(r->plan, ap->piece, key, scratch);
    if (!e || e->rank != rank) return false;
    if (bytes > e->bytes) {
        uint64_t want = r->a->grow_ahead && bytes <= UINT64_MAX / 2 ? bytes + bytes / 2 : bytes;
        uint64_t seen = atomic_load(&e->want);
        while (want > seen && !atomic_compare_exchange_weak(&e->want, &seen, want)) {}
        r->grew = true;
        return false;
    }
    r->allocated--;
    r->placed++;
    unsigned char *data = r->block->mem + e->off;
    int64_t *d = (int64_t *)(void *)(r->block->mem + r->plan->data_bytes) + e->dims_off;
    if (rank) memcpy(d, dims, sizeof *d * (size_t)rank);
    /* Kernels have always been handed zeroed memory (calloc, and
     * host_block_cache zeroes what it reuses): keep that. */
    memset(data, 0, bytes);
    memset(slot, 0, sizeof *slot);
    slot->view.struct_size = sizeof slot->view;
    slot->view.elem_type = elem_type;
    slot->view.rank = rank;
    slot->view.dims = rank ? d : NULL;
    slot->view.data = data;
    slot->view.nbytes = bytes;
    slot->view.memory_kind = TSR_MEMORY_HOST;
    slot->view.device_index = 0;
    /* The block is the arena's: releasing the slot only forgets it, and
     * anything that would keep a borrowed slot past the run copies it. */
    slot->borrowed = true;
    return true;
}

void arena_run_end(arena_run *r, bool ok) {
    arena_plans *a = r->a;
    if (!a || !r->plan) {
        if (a) {
            pthread_mutex_lock(&a->mu);
            a->last.planned_bytes = 0;
            a->last.placed = r->placed;
            a->last.allocated = r->allocated;
            pthread_mutex_unlock(&a->mu);
        }
        return;
    }
    struct arena_plan *p = r->plan;
    bool built = false;
    if (r->recording) {
        /* Built outside the lock: nobody places by a recording plan. */
        built = ok && !r->rec_failed && plan_build(p, r->gp, r->rec, r->n_rec);
        free(r->rec);
        r->rec = NULL;
    }
    pthread_mutex_lock(&a->mu);
    if (r->recording) {
        p->recording = false;
        p->users--;
        if (!built) {
            for (size_t i = 0; i < a->n_plans; i++)
                if (a->plans[i] == p) a->plans[i] = a->plans[--a->n_plans];
            plan_free(p);
            p = NULL;
        }
    } else {
        p->users--;
        /* Sizes that depend on data grew: plan them larger, unless another
         * run still places by the old offsets (then a later run will). */
        if (r->grew && !p->users) plan_offsets(p);
    }
    if (r->block) give_block(a, r->block);
    a->last.planned_bytes = p && !r->recording ? p->data_bytes : 0;
    a->last.placed = r->placed;
    a->last.allocated = r->allocated;
    if (r->block) a->last.runs_placed++;
    pthread_mutex_unlock(&a->mu);
    /* The recording run freed its tensors into host_block_cache; the next
     * run places them in a block instead, so holding both would only add
     * to the process's resident size. */
    if (built && p && p->n) host_block_trim();
    r->block = NULL;
    r->plan = NULL;
}

void arena_plans_stats(arena_plans *a, arena_stats *out) {
    memset(out, 0, sizeof *out);
    if (!a) return;
    pthread_mutex_lock(&a->mu);
    *out = a->last;
    out->plans = a->n_plans;
    out->blocks = a->n_idle;
    out->block_bytes = 0;
    for (size_t i = 0; i < a->n_idle; i++) out->block_bytes += a->idle[i]->cap;
    pthread_mutex_unlock(&a->mu);
}
