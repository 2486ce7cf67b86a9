/* partition_graph with real providers (the reference plugin and the custom
 * test plugin): pieces in an order that runs, every node in exactly one
 * piece, declines recorded with provider and reason, exclusions honoured,
 * and an error that lists the reasons when nobody claims a node. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_api.h"
#include "partition.h"
#include "plugin.h"
#include "tessera/tessera.h"

static const char *env_or(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

static const char *data_path(const char *name) {
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/%s", env_or("TESSERA_TEST_DATA", "tests/data"), name);
    return buf;
}

/* Providers loaded once per test through the same calls a session makes. */
typedef struct provs {
    tsr_plugin *plugins[4];
    provider_inst *inst[4];
    size_t n;
} provs;

static bool add_prov(provs *p, const char *which) {
    char path[1024];
    if (strcmp(which, "reference") == 0)
        snprintf(path, sizeof path, "%s/libtessera_provider_reference.so", env_or("TESSERA_BUILD_LIB", "build/lib"));
    else if (getenv("TESSERA_TEST_PLUGINS"))
        snprintf(path, sizeof path, "%s/%s.so", getenv("TESSERA_TEST_PLUGINS"), which);
    else snprintf(path, sizeof path, "%s/../test-plugins/%s.so", env_or("TESSERA_BUILD_LIB", "build/lib"), which);
    tsr_status *st = plugin_load(path, host_api_table(), &p->plugins[p->n]);
    if (!st) {
        tsr_provider_config cfg = {sizeof cfg, 0, NULL, NULL, 0, TSR_LOG_WARNING, 0};
        st = provider_create(p->plugins[p->n], &cfg, &p->inst[p->n]);
        if (st) plugin_unload(p->plugins[p->n]);
    }
    if (st) fprintf(stderr, "\n  provider %s: %s\n", which, tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    if (!st) p->n++;
    return !st;
}

static void free_provs(provs *p) {
    for (size_t i = 0; i < p->n; i++) {
        provider_destroy(p->inst[i]);
        plugin_unload(p->plugins[i]);
    }
    p->n = 0;
}

static ir_model *load(const char *name) {
    ir_model *m = NULL;
    tsr_status *st = ir_model_load_file(data_path(name), &m);
    if (!st) st = ir_infer_shapes(m->graph);
    if (st) fprintf(stderr, "\n  %s: %s\n", name, tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    if (st) {
        tsr_status_free(st);
        ir_model_free(m);
        return NULL;
    }
    return m;
}

/* Each node of g in exactly one piece, and every piece after the pieces that
 * produce what it reads. Returns the piece of each node (malloc'd). */
static size_t *check_pieces(const partition *pt, const ir_graph *g) {
    size_t *owner = malloc(sizeof(size_t) * (g->n_nodes + 1));
    size_t *seen = calloc(g->n_nodes + 1, sizeof(size_t));
    CU_ASSERT_FATAL(owner && seen);
    for (size_t p = 0; p < pt->n_pieces; p++) {
        const struct tsr_graph *v = pt->pieces[p].view;
        CU_ASSERT(v->n_nodes >= 1);
        CU_ASSERT(v->ir == g);
        for (size_t k = 0; k < v->n_nodes; k++) {
            size_t i = v->nodes[k]->index;
            CU_ASSERT_FATAL(i < g->n_nodes && g->nodes[i] == v->nodes[k]);
            seen[i]++;
            owner[i] = p;
        }
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (seen[i] != 1) fprintf(stderr, "\n  node '%s' is in %zu pieces\n", g->nodes[i]->name, seen[i]);
        CU_ASSERT_EQUAL(seen[i], 1);
    }
    for (size_t p = 0; p < pt->n_pieces; p++) {
        const struct tsr_graph *v = pt->pieces[p].view;
        for (size_t k = 0; k < v->n_inputs; k++) {
            const ir_value *iv = v->inputs[k];
            if (!iv->producer || iv->producer->graph != g) continue;
            size_t from = owner[iv->producer->index];
            if (from >= p) fprintf(stderr, "\n  piece %zu reads '%s' from piece %zu\n", p, iv->name, from);
            CU_ASSERT(from < p);
        }
    }
    free(seen);
    return owner;
}

static const char *piece_first(const partition *pt, size_t p) { return pt->pieces[p].view->nodes[0]->name; }

/* The reference provider alone on the chain: six one-node pieces in node
 * order, no declines, inputs and outputs of each piece as the graph says. */
static void test_reference_chain(void) {
    provs pv = {0};
    ir_model *m = load("exec_chain.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    if (!add_prov(&pv, "reference")) goto out;
    partition pt;
    tsr_status *st = partition_graph(m->graph, pv.inst, pv.n, NULL, 0, &pt);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    if (st) goto out;
    CU_ASSERT_EQUAL(pt.n_pieces, 6);
    CU_ASSERT_EQUAL(pt.n_declines, 0);
    free(check_pieces(&pt, m->graph));
    for (size_t p = 0; p < pt.n_pieces; p++) CU_ASSERT_EQUAL(pt.pieces[p].prov_index, 0);
    /* n3: d = Add(c, a) reads c and a; d goes on to n4. */
    const struct tsr_graph *v3 = pt.pieces[3].view;
    CU_ASSERT_STRING_EQUAL(piece_first(&pt, 3), "n3");
    CU_ASSERT_EQUAL(v3->n_inputs, 2);
    if (v3->n_inputs == 2) {
        CU_ASSERT_STRING_EQUAL(v3->inputs[0]->name, "c");
        CU_ASSERT_STRING_EQUAL(v3->inputs[1]->name, "a");
    }
    CU_ASSERT_EQUAL(v3->n_outputs, 1);
    if (v3->n_outputs == 1) CU_ASSERT_STRING_EQUAL(v3->outputs[0]->name, "d");
    /* n1 reads the initializer k like any other input. */
    const struct tsr_graph *v1 = pt.pieces[1].view;
    CU_ASSERT_EQUAL(v1->n_inputs, 2);
    if (v1->n_inputs == 2) CU_ASSERT_PTR_NOT_NULL(v1->inputs[1]->constant);
    partition_free(&pt);
    CU_ASSERT_EQUAL(pt.n_pieces, 0);
out:
    free_provs(&pv);
    ir_model_free(m);
}

/* Nobody claims com.example.Mystery: the error names the node, its op and
 * every provider's reason. */
static void test_unclaimed(void) {
    provs pv = {0};
    ir_model *m = load("abi_mystery.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    if (!add_prov(&pv, "reference")) goto out;
    partition pt;
    tsr_status *st = partition_graph(m->graph, pv.inst, pv.n, NULL, 0, &pt);
    CU_ASSERT_PTR_NOT_NULL(st);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_NOT_SUPPORTED);
    const char *msg = tsr_status_message(st);
    fprintf(stderr, "\n  [expected error] %s\n", msg);
    CU_ASSERT(strstr(msg, "no provider can run") != NULL);
    CU_ASSERT(strstr(msg, "'mystery0'") != NULL);
    CU_ASSERT(strstr(msg, "com.example.Mystery") != NULL);
    CU_ASSERT(strstr(msg, "reference: no kernel for com.example.Mystery") != NULL);
    /* Only the unclaimed node is listed. */
    CU_ASSERT(strstr(msg, "relu0") == NULL);
    tsr_status_free(st);
    CU_ASSERT_EQUAL(pt.n_pieces, 0);
    CU_ASSERT_PTR_NULL(pt.pieces);
out:
    free_provs(&pv);
    ir_model_free(m);
}

/* Reference first, then custom: reference declines Mystery (recorded with
 * its index and reason), custom takes it; the custom piece sits between the
 * two reference pieces, where the data flows. */
static void test_declines_and_order(void) {
    provs pv = {0};
    ir_model *m = load("abi_mystery.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    if (!add_prov(&pv, "reference") || !add_prov(&pv, "plugin_custom_op")) goto out;
    partition pt;
    tsr_status *st = partition_graph(m->graph, pv.inst, pv.n, NULL, 0, &pt);
    if (st) fprintf(stderr, "\n  %s\n", tsr_status_message(st));
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    if (st) goto out;
    CU_ASSERT_EQUAL_FATAL(pt.n_pieces, 3);
    free(check_pieces(&pt, m->graph));
    CU_ASSERT_STRING_EQUAL(piece_first(&pt, 0), "relu0");
    CU_ASSERT_STRING_EQUAL(piece_first(&pt, 1), "mystery0");
    CU_ASSERT_STRING_EQUAL(piece_first(&pt, 2), "add0");
    CU_ASSERT_EQUAL(pt.pieces[0].prov_index, 0);
    CU_ASSERT_EQUAL(pt.pieces[1].prov_index, 1);
    CU_ASSERT_EQUAL(pt.pieces[2].prov_index, 0);
    CU_ASSERT_EQUAL(pt.n_declines, 1);
    if (pt.n_declines == 1) {
        const declined *d = &pt.declines[0];
        CU_ASSERT_STRING_EQUAL(d->node->name, "mystery0");
        CU_ASSERT_EQUAL(d->prov_index, 0);
        CU_ASSERT_STRING_EQUAL(pv.inst[d->prov_index]->name, "reference");
        CU_ASSERT_EQUAL(d->reason, TSR_DECLINE_OP);
        CU_ASSERT(d->text && strstr(d->text, "no kernel for com.example.Mystery") != NULL);
    }
    char *text = partition_text(&pt, m->graph, pv.inst, pv.n, NULL);
    CU_ASSERT_PTR_NOT_NULL(text);
    if (text) {
        CU_ASSERT(strstr(text, "declined") != NULL);
        CU_ASSERT(strstr(text, "mystery0") != NULL);
        CU_ASSERT(strstr(text, "custom") != NULL);
    }
    free(text);
    partition_free(&pt);
out:
    free_provs(&pv);
    ir_model_free(m);
}

/* Custom first: it declines relu0 and add0 (recorded under index 0) and the
 * reference provider takes them. */
static void test_declines_other_order(void) {
    provs pv = {0};
    ir_model *m = load("abi_mystery.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    if (!add_prov(&pv, "plugin_custom_op") || !add_prov(&pv, "reference")) goto out;
    partition pt;
    tsr_status *st = partition_graph(m->graph, pv.inst, pv.n, NULL, 0, &pt);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    if (st) goto out;
    CU_ASSERT_EQUAL_FATAL(pt.n_pieces, 3);
    free(check_pieces(&pt, m->graph));
    CU_ASSERT_STRING_EQUAL(piece_first(&pt, 1), "mystery0");
    CU_ASSERT_EQUAL(pt.pieces[1].prov_index, 0);
    CU_ASSERT_EQUAL(pt.n_declines, 2);
    for (size_t i = 0; i < pt.n_declines; i++) {
        CU_ASSERT_EQUAL(pt.declines[i].prov_index, 0);
        CU_ASSERT_EQUAL(pt.declines[i].reason, TSR_DECLINE_OP);
        CU_ASSERT(strcmp(pt.declines[i].node->name, "mystery0") != 0);
        CU_ASSERT(strstr(pt.declines[i].text, "custom runs only") != NULL);
    }
    partition_free(&pt);
out:
    free_provs(&pv);
    ir_model_free(m);
}

/* An exclusion (a piece that failed to compile there) keeps a node from its
 * provider: Mystery excluded from custom leaves nobody to run it. Relu
 * excluded from reference leaves it to custom, which declines it. */
static void test_exclusions(void) {
    provs pv = {0};
    ir_model *m = load("abi_mystery.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    if (!add_prov(&pv, "reference") || !add_prov(&pv, "plugin_custom_op")) goto out;
    ir_graph *g = m->graph;
    ir_node *mystery = NULL;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i]->name, "mystery0") == 0) mystery = g->nodes[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mystery);
    exclusion ex = {mystery, 1};
    partition pt;
    tsr_status *st = partition_graph(g, pv.inst, pv.n, &ex, 1, &pt);
    CU_ASSERT_EQUAL(tsr_status_code(st), TSR_ERR_NOT_SUPPORTED);
    CU_ASSERT(strstr(tsr_status_message(st), "'mystery0'") != NULL);
    tsr_status_free(st);

    /* Excluding it from the provider that never claimed it changes nothing. */
    ex.prov_index = 0;
    st = partition_graph(g, pv.inst, pv.n, &ex, 1, &pt);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    if (!st) {
        CU_ASSERT_EQUAL(pt.n_pieces, 3);
        partition_free(&pt);
    }
out:
    free_provs(&pv);
    ir_model_free(m);
}

/* host_log writes to stderr: the text a call logged, malloc'd. */
typedef struct capture {
    int saved;
    FILE *tmp;
} capture;

static void capture_begin(capture *c) {
    fflush(stderr);
    c->tmp = tmpfile();
    c->saved = dup(2);
    if (c->tmp && c->saved >= 0) dup2(fileno(c->tmp), 2);
}

static char *capture_end(capture *c) {
    fflush(stderr);
    if (c->saved >= 0) {
        dup2(c->saved, 2);
        close(c->saved);
    }
    long n = c->tmp ? ftell(c->tmp) : 0;
    char *text = calloc(1, n > 0 ? (size_t)n + 1 : 1);
    if (c->tmp && text && n > 0) {
        rewind(c->tmp);
        if (fread(text, 1, (size_t)n, c->tmp) != (size_t)n) text[0] = 0;
    }
    if (c->tmp) fclose(c->tmp);
    if (text && text[0]) fprintf(stderr, "[captured log] %s", text);
    return text;
}

/* A provider claiming all six nodes of the chain as one piece gets one
 * piece whose inputs are x and k and whose outputs are c and y. */
static void test_many_node_piece(void) {
    provs pv = {0};
    ir_model *m = load("exec_chain.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    if (!add_prov(&pv, "plugin_greedy")) goto out;
    partition pt;
    tsr_status *st = partition_graph(m->graph, pv.inst, pv.n, NULL, 0, &pt);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    if (st) goto out;
    CU_ASSERT_EQUAL_FATAL(pt.n_pieces, 1);
    free(check_pieces(&pt, m->graph));
    const struct tsr_graph *v = pt.pieces[0].view;
    CU_ASSERT_EQUAL(v->n_nodes, 6);
    CU_ASSERT_DOUBLE_EQUAL(pt.pieces[0].cost, 1.0, 1e-12);
    CU_ASSERT_EQUAL(v->n_inputs, 2);
    if (v->n_inputs == 2) {
        CU_ASSERT_STRING_EQUAL(v->inputs[0]->name, "x");
        CU_ASSERT_STRING_EQUAL(v->inputs[1]->name, "k");
    }
    CU_ASSERT_EQUAL(v->n_outputs, 2);
    if (v->n_outputs == 2) {
        CU_ASSERT_STRING_EQUAL(v->outputs[0]->name, "c");
        CU_ASSERT_STRING_EQUAL(v->outputs[1]->name, "y");
    }
    partition_free(&pt);
out:
    free_provs(&pv);
    ir_model_free(m);
}

/* {relu0, add0} with mystery0 between them is not convex: one piece would
 * both feed and wait for the Mystery piece. The partitioner splits it into
 * single nodes, says so, and orders the pieces by the data. */
static void test_cyclic_claim_split(void) {
    provs pv = {0};
    ir_model *m = load("abi_mystery.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    if (!add_prov(&pv, "plugin_greedy") || !add_prov(&pv, "plugin_custom_op")) goto out;
    partition pt;
    capture cap;
    capture_begin(&cap);
    tsr_status *st = partition_graph(m->graph, pv.inst, pv.n, NULL, 0, &pt);
    char *log = capture_end(&cap);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    CU_ASSERT(log && strstr(log, "greedy") && strstr(log, "would form a cycle"));
    free(log);
    if (st) goto out;
    CU_ASSERT_EQUAL_FATAL(pt.n_pieces, 3);
    free(check_pieces(&pt, m->graph));
    CU_ASSERT_STRING_EQUAL(piece_first(&pt, 0), "relu0");
    CU_ASSERT_STRING_EQUAL(piece_first(&pt, 1), "mystery0");
    CU_ASSERT_STRING_EQUAL(piece_first(&pt, 2), "add0");
    CU_ASSERT_EQUAL(pt.pieces[0].prov_index, 0);
    CU_ASSERT_EQUAL(pt.pieces[1].prov_index, 1);
    CU_ASSERT_EQUAL(pt.pieces[2].prov_index, 0);
    for (size_t p = 0; p < 3; p++) CU_ASSERT_EQUAL(pt.pieces[p].view->n_nodes, 1);
    partition_free(&pt);
out:
    free_provs(&pv);
    ir_model_free(m);
}

/* partition_diamond.onnx (tests/data/make_placement_models.py): greedy
 * claims {r0, r1, a1, r2}; the path r0 -> m -> a1 leaves and re-enters it,
 * so it splits at m into {r0, r1} and {a1, r2} — two pieces of two nodes,
 * not four single nodes — and the warning names m. */
static void test_split_at_offending_node(void) {
    provs pv = {0};
    ir_model *m = load("partition_diamond.onnx");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    if (!add_prov(&pv, "plugin_greedy") || !add_prov(&pv, "plugin_custom_op")) goto out;
    partition pt;
    capture cap;
    capture_begin(&cap);
    tsr_status *st = partition_graph(m->graph, pv.inst, pv.n, NULL, 0, &pt);
    char *log = capture_end(&cap);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    CU_ASSERT(log && strstr(log, "through 'm'") && strstr(log, "split there into 2 and 2"));
    free(log);
    if (st) goto out;
    CU_ASSERT_EQUAL_FATAL(pt.n_pieces, 3);
    free(check_pieces(&pt, m->graph));
    CU_ASSERT_STRING_EQUAL(piece_first(&pt, 0), "r0");
    CU_ASSERT_EQUAL(pt.pieces[0].view->n_nodes, 2);
    CU_ASSERT_STRING_EQUAL(pt.pieces[0].view->nodes[1]->name, "r1");
    CU_ASSERT_STRING_EQUAL(piece_first(&pt, 1), "m");
    CU_ASSERT_EQUAL(pt.pieces[1].prov_index, 1);
    CU_ASSERT_STRING_EQUAL(piece_first(&pt, 2), "a1");
    CU_ASSERT_EQUAL(pt.pieces[2].view->n_nodes, 2);
    CU_ASSERT_STRING_EQUAL(pt.pieces[2].view->nodes[1]->name, "r2");
    partition_free(&pt);
out:
    free_provs(&pv);
    ir_model_free(m);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("partition", NULL, NULL);
    CU_add_test(s, "reference provider on a chain", test_reference_chain);
    CU_add_test(s, "unclaimed node: error lists the reasons", test_unclaimed);
    CU_add_test(s, "declines recorded; pieces in data order", test_declines_and_order);
    CU_add_test(s, "declines by the first provider", test_declines_other_order);
    CU_add_test(s, "exclusions", test_exclusions);
    CU_add_test(s, "a many-node piece", test_many_node_piece);
    CU_add_test(s, "a claim that would form a cycle is split", test_cyclic_claim_split);
    CU_add_test(s, "a diamond claim splits at the offending node", test_split_at_offending_node);
}
