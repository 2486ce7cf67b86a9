/* The compiled-piece cache (tsr_session_options_set_cache_dir): before a
 * provider with piece_export/piece_import compiles a piece, look for a blob
 * it wrote for the same piece; after it compiles one, store the blob.
 *
 * A blob's file is named after a 128-bit key hashed from what the compile
 * saw (provider name and version, the device, every node, attribute, value
 * type and constant byte of the piece), and
 * holds: "TSRPIECE", a format number, the compatibility string, the key,
 * the blob's length, the blob and a hash of it. A file whose compatibility
 * string, key or hash differ, or that is cut short, is not imported: the
 * piece is compiled and the log says why. Files are written under a
 * temporary name and renamed, so a reader never sees half of one. */
#include "piece_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph_view.h"
#include "host_log.h"
#include "status.h"

#define MAGIC "TSRPIECE"
enum { MAGIC_LEN = 8, FORMAT = 1, KEY_LEN = 16 };
/* the most a blob file may be: a bound on what a damaged file makes us read */
#define MAX_FILE_BYTES ((uint64_t)16 << 30)

/* --- hashing ------------------------------------------------------------- */

typedef struct hasher {
    uint64_t a, b;
} hasher;

static const uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full, P3 = 0x165667B19E3779F9ull;

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static void mix(hasher *h, uint64_t w) {
    h->a = rotl(h->a ^ (w * P2), 31) * P1;
    h->b = rotl(h->b + (w * P3), 27) * P2 + P1;
}

static void hash_bytes(hasher *h, const void *data, size_t n) {
    const unsigned char *p = data;
    mix(h, (uint64_t)n);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        mix(h, w);
    }
    uint64_t tail = 0;
    if (i < n) memcpy(&tail, p + i, n - i);
    mix(h, tail);
}

static void hash_str(hasher *h, const char *s) { hash_bytes(h, s ? s : "", s ? strlen(s) : 0); }
static void hash_int(hasher *h, int64_t v) { mix(h, (uint64_t)v); }

static void hash_tensor(hasher *h, const ir_tensor *t) {
    if (!t) return hash_int(h, -1);
    hash_int(h, t->elem_type);
    hash_int(h, t->rank);
    for (int32_t d = 0; d < t->rank; d++) hash_int(h, t->dims[d]);
    if (t->elem_type == TSR_STRING) {
        const tsr_string *s = t->data;
        for (size_t i = 0; i < t->nbytes / sizeof *s; i++) hash_bytes(h, s[i].data, s[i].size);
    } else {
        hash_bytes(h, t->data, t->nbytes);
    }
}

static void hash_type(hasher *h, const ir_type *t, int depth) {
    if (!t || depth > 8) return hash_int(h, -1);
    hash_int(h, t->kind);
    hash_int(h, t->elem_type);
    hash_int(h, t->rank);
    for (int32_t d = 0; d < t->rank; d++) {
        hash_int(h, t->dims[d].value);
        hash_str(h, t->dims[d].symbol);
    }
    hash_int(h, t->key_type);
    hash_type(h, t->elem, depth + 1);
}

static void hash_value(hasher *h, const ir_value *v) {
    if (!v) return hash_int(h, -2);
    hash_str(h, v->name);
    hash_type(h, &v->type, 0);
    if (v->constant) hash_tensor(h, v->constant);
}

static void hash_nodes(hasher *h, ir_node *const *nodes, size_t n, int depth);

static void hash_attr(hasher *h, const ir_attr *a, int depth) {
    hash_str(h, a->name);
    hash_int(h, a->type);
    hash_int(h, a->i);
    uint32_t fbits;
    memcpy(&fbits, &a->f, sizeof fbits);
    hash_int(h, fbits);
    hash_bytes(h, a->s, a->s ? a->s_len : 0);
    hash_int(h, (int64_t)a->count);
    if (a->ints) hash_bytes(h, a->ints, a->count * sizeof *a->ints);
    if (a->floats) hash_bytes(h, a->floats, a->count * sizeof *a->floats);
    for (size_t i = 0; a->strings && i < a->count; i++) hash_bytes(h, a->strings[i], a->string_lens[i]);
    hash_tensor(h, a->t);
    for (size_t i = 0; a->tensors && i < a->count; i++) hash_tensor(h, a->tensors[i]);
    if (a->g) hash_nodes(h, a->g->nodes, a->g->n_nodes, depth + 1);
    for (size_t i = 0; a->graphs && i < a->count; i++)
        if (a->graphs[i]) hash_nodes(h, a->graphs[i]->nodes, a->graphs[i]->n_nodes, depth + 1);
}

static void hash_nodes(hasher *h, ir_node *const *nodes, size_t n, int depth) {
    hash_int(h, (int64_t)n);
    if (depth > IR_MAX_GRAPH_DEPTH) return;
    for (size_t i = 0; i < n; i++) {
        const ir_node *nd = nodes[i];
        hash_str(h, nd->name);
        hash_str(h, nd->op_type);
        hash_str(h, nd->domain);
        hash_int(h, nd->opset);
        hash_int(h, (int64_t)nd->n_inputs);
        for (size_t k = 0; k < nd->n_inputs; k++) hash_str(h, nd->inputs[k] ? nd->inputs[k]->name : NULL);
        hash_int(h, (int64_t)nd->n_outputs);
        for (size_t k = 0; k < nd->n_outputs; k++) hash_str(h, nd->outputs[k] ? nd->outputs[k]->name : NULL);
        hash_int(h, (int64_t)nd->n_attrs);
        for (size_t k = 0; k < nd->n_attrs; k++) hash_attr(h, &nd->attrs[k], depth);
    }
}

/* The compatibility string is left out: a blob of an older driver then
 * sits under the same name, is refused saying so, and is replaced. */
static void piece_key(const provider_inst *pv, const struct tsr_graph *view, unsigned char key[KEY_LEN]) {
    hasher h = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull};
    hash_str(&h, pv->name);
    hash_str(&h, pv->plugin->vt->version);
    hash_int(&h, view->device);
    hash_nodes(&h, view->nodes, view->n_nodes, 0);
    hash_int(&h, (int64_t)view->n_inputs);
    for (size_t i = 0; i < view->n_inputs; i++) hash_value(&h, view->inputs[i]);
    hash_int(&h, (int64_t)view->n_outputs);
    for (size_t i = 0; i < view->n_outputs; i++) hash_value(&h, view->outputs[i]);
    memcpy(key, &h.a, 8);
    memcpy(key + 8, &h.b, 8);
}

static uint64_t blob_hash(const void *bytes, size_t n) {
    hasher h = {0x452821E638D01377ull, 0xBE5466CF34E90C6Cull};
    hash_bytes(&h, bytes, n);
    return h.a ^ rotl(h.b, 17);
}

/* --- files --------------------------------------------------------------- */

static void file_path(const char *dir, const char *provider, const unsigned char key[KEY_LEN], char *out, size_t size) {
    char hex[2 * KEY_LEN + 1];
    for (int i = 0; i < KEY_LEN; i++) snprintf(hex + 2 * i, 3, "%02x", key[i]);
    snprintf(out, size, "%s/%s-%s.tsrpiece", dir, provider, hex);
}

/* The whole file, or NULL with *why set ("" when it is simply absent). */
static unsigned char *read_file(const char *path, size_t *size, char *why, size_t why_size) {
    why[0] = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT) snprintf(why, why_size, "cannot open it: %s", strerror(errno));
        return NULL;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > MAX_FILE_BYTES) {
        snprintf(why, why_size, "not a regular file of at most 16 GiB");
        close(fd);
        return NULL;
    }
    size_t n = (size_t)sb.st_size, got = 0;
    unsigned char *buf = malloc(n ? n : 1);
    if (!buf) snprintf(why, why_size, "out of memory for %zu bytes", n);
    while (buf && got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            snprintf(why, why_size, "reading it failed");
            free(buf);
            buf = NULL;
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    *size = n;
    return buf;
}

/* The blob inside a file's bytes, or NULL with *why set. */
static const unsigned char *unwrap(const unsigned char *f, size_t n, const char *compat,
                                   const unsigned char key[KEY_LEN], size_t *blob_size, char *why, size_t why_size) {
    uint32_t format, clen;
    if (n < MAGIC_LEN + 8 || memcmp(f, MAGIC, MAGIC_LEN) != 0) {
        snprintf(why, why_size, "not a Tessera compiled-piece file");
        return NULL;
    }
    memcpy(&format, f + MAGIC_LEN, 4);
    memcpy(&clen, f + MAGIC_LEN + 4, 4);
    if (format != FORMAT) {
        snprintf(why, why_size, "written in cache format %u, this Tessera reads %d", format, FORMAT);
        return NULL;
    }
    size_t at = MAGIC_LEN + 8;
    if (clen > n - at) {
        snprintf(why, why_size, "cut short");
        return NULL;
    }
    if (clen != strlen(compat) || memcmp(f + at, compat, clen) != 0) {
        snprintf(why, why_size, "written for '%.*s', this provider is '%s'", (int)(clen > 200 ? 200 : clen),
                 (const char *)(f + at), compat);
        return NULL;
    }
    at += clen;
    uint64_t len, sum;
    if (n - at < KEY_LEN + 8) {
        snprintf(why, why_size, "cut short");
        return NULL;
    }
    if (memcmp(f + at, key, KEY_LEN) != 0) {
        snprintf(why, why_size, "written for another piece");
        return NULL;
    }
    at += KEY_LEN;
    memcpy(&len, f + at, 8);
    at += 8;
    if (len > n - at || n - at - len != 8) {
        snprintf(why, why_size, "cut short or padded (its blob length says %llu bytes)", (unsigned long long)len);
        return NULL;
    }
    memcpy(&sum, f + at + len, 8);
    if (sum != blob_hash(f + at, (size_t)len)) {
        snprintf(why, why_size, "damaged (its checksum does not match)");
        return NULL;
    }
    *blob_size = (size_t)len;
    return f + at;
}

static bool write_all(int fd, const void *p, size_t n) {
    const unsigned char *b = p;
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        b += w;
        n -= (size_t)w;
    }
    return true;
}

static void store(const char *path, const char *compat, const unsigned char key[KEY_LEN], const void *blob, size_t size,
                  const char *who) {
    static unsigned counter;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%ld.%u.tmp", path, (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        char msg[4400];
        snprintf(msg, sizeof msg, "compiled-piece cache: cannot write '%s': %s", tmp, strerror(errno));
        host_log(TSR_LOG_WARNING, who, msg);
        return;
    }
    uint32_t format = FORMAT, clen = (uint32_t)strlen(compat);
    uint64_t len = size, sum = blob_hash(blob, size);
    bool ok = write_all(fd, MAGIC, MAGIC_LEN) && write_all(fd, &format, 4) && write_all(fd, &clen, 4) &&
        write_all(fd, compat, clen) && write_all(fd, key, KEY_LEN) && write_all(fd, &len, 8) &&
        write_all(fd, blob, size) && write_all(fd, &sum, 8);
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, path) == 0) return;
    unlink(tmp);
    char msg[4400];
    snprintf(msg, sizeof msg, "compiled-piece cache: writing '%s' failed", path);
    host_log(TSR_LOG_WARNING, who, msg);
}

/* --- compile through the cache ------------------------------------------ */

static bool has_cache_slots(const tsr_provider *vt) {
    return TSR_HAS_MEMBER(vt, tsr_provider, piece_import) && vt->cache_compat && vt->piece_export && vt->piece_import;
}

tsr_status *piece_cache_compile(provider_inst *pv, const struct tsr_graph *view, const char *cache_dir,
                                void **compiled) {
    const tsr_provider *vt = pv->plugin->vt;
    const char *compat =
        cache_dir && *cache_dir && has_cache_slots(vt) ? vt->cache_compat(pv->state, view->device) : NULL;
    if (!compat) return vt->compile(pv->state, (const tsr_graph *)view, compiled);
    unsigned char key[KEY_LEN];
    piece_key(pv, view, key);
    char path[4096], why[512], msg[5000];
    file_path(cache_dir, pv->name, key, path, sizeof path);
    size_t fsize = 0, bsize = 0;
    unsigned char *file = read_file(path, &fsize, why, sizeof why);
    const unsigned char *blob = file ? unwrap(file, fsize, compat, key, &bsize, why, sizeof why) : NULL;
    if (blob) {
        tsr_status *is = vt->piece_import(pv->state, (const tsr_graph *)view, blob, bsize, compiled);
        free(file);
        if (!is) {
            snprintf(msg, sizeof msg, "piece starting at '%s' (%s): imported from '%s'", view->nodes[0]->name,
                     view->nodes[0]->op_type, path);
            host_log(TSR_LOG_INFO, pv->name, msg);
            return NULL;
        }
        snprintf(why, sizeof why, "the provider refused it: %s", tsr_status_message(is));
        tsr_status_free(is);
        *compiled = NULL;
    } else {
        free(file);
    }
    if (why[0]) {
        snprintf(msg, sizeof msg, "compiled-piece cache: '%s' not used (%s); compiling", path, why);
        host_log(TSR_LOG_WARNING, pv->name, msg);
    }
    TSR_TRY(vt->compile(pv->state, (const tsr_graph *)view, compiled));
    void *bytes = NULL;
    size_t size = 0;
    tsr_status *es = vt->piece_export(*compiled, &bytes, &size);
    if (es) {
        snprintf(msg, sizeof msg, "compiled-piece cache: export failed: %s", tsr_status_message(es));
        host_log(TSR_LOG_WARNING, pv->name, msg);
        tsr_status_free(es);
    } else if (bytes || !size) {
        store(path, compat, key, bytes, size, pv->name);
    }
    free(bytes); /* made with the host table's alloc, which is malloc */
    return NULL;
}
