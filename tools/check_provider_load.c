/*
 * check-provider, check 1: the plugin loads and negotiates an ABI version,
 * and describes its devices, through the public API (tsr_providers_discover
 * with the plugin's path, as `tessera providers PATH` does).
 *
 * Loading happens in a child (see check_provider.h), which hands the
 * description back as text: one "key<TAB>value" line per field and one
 * "device<TAB>...<TAB>..." line per device, values with tabs and newlines
 * made spaces.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check_provider.h"

/* --- in the child -------------------------------------------------------- */
typedef struct out_buf {
    char *p;
    size_t size, len;
} out_buf;

/* Appends one field, made one line, then `end`. */
static void put(out_buf *b, const char *value, char end) {
    for (const char *s = value ? value : ""; *s && b->len + 2 < b->size; s++)
        b->p[b->len++] = *s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s;
    if (b->len + 1 < b->size) b->p[b->len++] = end;
    b->p[b->len] = '\0';
}

static void put_line(out_buf *b, const char *key, const char *value) {
    put(b, key, '\t');
    put(b, value, '\n');
}

/* The parent's side of the job's answer. */
typedef struct load_result {
    cp_run *run;
    char *error; /* why it did not load, or NULL */
} load_result;

static char load_job(size_t index, void *user, char *msg, size_t size) {
    (void)index;
    const cp_run *r = ((const load_result *)user)->run;
    out_buf b = {msg, size, 0};
    msg[0] = '\0';
    tsr_provider_list *list = NULL;
    const char *paths[1] = {r->plugin};
    tsr_status *st = tsr_providers_discover(paths, 1, &list);
    if (st) {
        put_line(&b, "error", tsr_status_message(st));
        tsr_status_free(st);
        return TC_FAIL;
    }
    /* The extra paths come last in the list. */
    size_t n = tsr_provider_list_size(list);
    tsr_provider_desc d = {.struct_size = sizeof d};
    if (n == 0 || (st = tsr_provider_list_get(list, n - 1, &d))) {
        put_line(&b, "error", st ? tsr_status_message(st) : "the plugin is not in the list");
        tsr_status_free(st);
        tsr_provider_list_free(list);
        return TC_FAIL;
    }
    put_line(&b, "name", d.name);
    put_line(&b, "vendor", d.vendor);
    put_line(&b, "version", d.version);
    char num[32];
    snprintf(num, sizeof num, "%" PRIu32, d.abi_version);
    put_line(&b, "abi", num);
    if (d.error) put_line(&b, "error", d.error);
    for (size_t k = 0; !d.error && k < d.device_count; k++) {
        tsr_device_desc dev = {.struct_size = sizeof dev};
        if ((st = tsr_provider_list_device(list, n - 1, k, &dev))) {
            put_line(&b, "error", tsr_status_message(st));
            tsr_status_free(st);
            break;
        }
        put(&b, "device", '\t');
        put(&b, dev.name, '\t');
        put(&b, dev.vendor, '\t');
        snprintf(num, sizeof num, "%" PRId32, dev.kind);
        put(&b, num, '\t');
        snprintf(num, sizeof num, "%" PRId32, dev.memory_kind);
        put(&b, num, '\t');
        snprintf(num, sizeof num, "%" PRIu64, dev.memory_bytes);
        put(&b, num, '\t');
        put(&b, dev.details, '\n');
    }
    tsr_provider_list_free(list);
    return TC_PASS;
}

/* --- in the parent ------------------------------------------------------- */
/* Field k (from 0) of the tab-separated line [s, end), malloc'd. */
static char *field(const char *s, const char *end, size_t k) {
    for (; k && s < end; s++)
        if (*s == '\t') k--;
    const char *stop = s;
    while (stop < end && *stop != '\t') stop++;
    return strndup(s, (size_t)(stop - s));
}

static void add_device(cp_plugin *p, const char *line, const char *end) {
    cp_device *grown = realloc(p->devices, (p->device_count + 1) * sizeof *grown);
    if (!grown) return;
    p->devices = grown;
    cp_device *d = &p->devices[p->device_count++];
    char *kind = field(line, end, 3), *mem = field(line, end, 4), *bytes = field(line, end, 5);
    d->name = field(line, end, 1);
    d->vendor = field(line, end, 2);
    d->kind = kind ? (int32_t)strtol(kind, NULL, 10) : -1;
    d->memory_kind = mem ? (int32_t)strtol(mem, NULL, 10) : -1;
    d->memory_bytes = bytes ? strtoull(bytes, NULL, 10) : 0;
    d->details = field(line, end, 6);
    free(kind);
    free(mem);
    free(bytes);
}

static bool key_is(const char *line, size_t klen, const char *key) {
    return klen == strlen(key) && strncmp(line, key, klen) == 0;
}

static void load_done(size_t index, const fp_result *res, void *user) {
    (void)index;
    load_result *lr = user;
    cp_plugin *p = &lr->run->plugin_info;
    if (res->died) {
        lr->error = strdup(res->text ? res->text : "the loading child died");
        return;
    }
    for (const char *line = res->text; line && *line;) {
        const char *end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        const char *tab = memchr(line, '\t', (size_t)(end - line));
        if (tab) {
            size_t klen = (size_t)(tab - line);
            char *value = strndup(tab + 1, (size_t)(end - tab - 1));
            char **keep = key_is(line, klen, "name") ? &p->name
                : key_is(line, klen, "vendor")       ? &p->vendor
                : key_is(line, klen, "version")      ? &p->version
                : key_is(line, klen, "error")        ? &lr->error
                                                     : NULL;
            if (keep && !*keep) *keep = value, value = NULL;
            else if (key_is(line, klen, "abi") && value) p->abi_version = (uint32_t)strtoul(value, NULL, 10);
            else if (key_is(line, klen, "device")) add_device(p, line, end);
            free(value);
        }
        line = *end ? end + 1 : end;
    }
    if (!lr->error && res->kind != TC_PASS) lr->error = strdup("failed to load");
}

/* What the ABI asks of a device description, beyond loading. */
static bool devices_valid(const cp_plugin *p, char *why, size_t size) {
    for (size_t k = 0; k < p->device_count; k++) {
        const cp_device *d = &p->devices[k];
        if (!d->name || !*d->name) {
            snprintf(why, size, "device %zu has no name", k);
            return false;
        }
        if (d->kind < 0 || d->kind > 3) { /* tessera.h: 0 cpu .. 3 other */
            snprintf(why, size, "device %zu: kind %" PRId32 " is not a tsr_device_kind", k, d->kind);
            return false;
        }
        if (d->memory_kind != TSR_MEMORY_HOST && d->memory_kind != TSR_MEMORY_DEVICE) {
            snprintf(why, size, "device %zu: memory kind %" PRId32 " is not a tsr_memory_kind", k, d->memory_kind);
            return false;
        }
        /* provider.h: every device of one provider has the same memory_kind. */
        if (d->memory_kind != p->devices[0].memory_kind) {
            snprintf(why, size, "device %zu has %s memory but device 0 %s memory", k,
                     cli_memory_kind_name(d->memory_kind), cli_memory_kind_name(p->devices[0].memory_kind));
            return false;
        }
    }
    return true;
}

void cp_check_load(cp_run *r, cp_check *out) {
    load_result lr = {r, NULL};
    fp_pool pool = {
        .count = 1, .jobs = 1, .timeout = r->timeout, .fork = r->fork, .job = load_job, .done = load_done, .user = &lr};
    fp_run(&pool);
    cp_plugin *p = &r->plugin_info;
    char detail[TC_REASON_MAX], why[512];
    out->name = "load";
    if (lr.error || !p->name) {
        out->status = TC_FAIL;
        cli_format(detail, sizeof detail, "%s does not load: %s", r->plugin, lr.error ? lr.error : "no provider name");
    } else if (!devices_valid(p, why, sizeof why)) {
        out->status = TC_FAIL;
        cli_format(detail, sizeof detail, "%s %s: %s", p->name, p->version, why);
    } else {
        p->loaded = true;
        out->status = TC_PASS;
        cli_format(detail, sizeof detail, "%s %s (vendor %s), ABI %" PRIu32 ", %zu device%s%s%s", p->name,
                   p->version ? p->version : "", p->vendor && *p->vendor ? p->vendor : "-", p->abi_version,
                   p->device_count, p->device_count == 1 ? "" : "s", p->device_count ? ", " : "",
                   p->device_count ? cli_memory_kind_name(p->devices[0].memory_kind) : "");
        if (p->device_count) strncat(detail, " memory", sizeof detail - strlen(detail) - 1);
    }
    free(lr.error);
    out->detail = strdup(detail);
}
