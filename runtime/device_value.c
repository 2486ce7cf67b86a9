/* tsr_device_value: a run's result kept where it was made, owned by the
 * application and listed in its session so that freeing the session can
 * give the memory back before the providers are destroyed. */
#include <stdlib.h>
#include <string.h>

#include "device_value.h"
#include "host_log.h"
#include "run_budget.h"
#include "status.h"

tsr_status *device_value_new(tsr_session *s, rt_tensor *slot, tsr_device_value **out) {
    tsr_device_value *v = calloc(1, sizeof *v);
    if (!v) return TSR_NO_MEMORY();
    /* Outlives the run: the run's working_bytes no longer carry it. */
    if (slot->budget) run_budget_unreserve(slot->budget, slot->charged);
    slot->budget = NULL;
    slot->charged = 0;
    rt_tensor_move(&v->slot, slot);
    v->session = s;
    v->id = ++s->device_value_serial;
    v->next = s->device_values;
    if (v->next) v->next->prev = v;
    s->device_values = v;
    *out = v;
    return NULL;
}

static void unlink_value(tsr_device_value *v) {
    tsr_session *s = v->session;
    if (v->prev) v->prev->next = v->next;
    else s->device_values = v->next;
    if (v->next) v->next->prev = v->prev;
    v->prev = v->next = NULL;
}

void device_value_free_locked(tsr_device_value *v) {
    if (!v) return;
    if (v->session) {
        unlink_value(v);
        rt_tensor_release(&v->slot); /* the provider's mem_free: on the session's thread */
    }
    free(v);
}

tsr_device_value *device_value_find(tsr_session *s, uint64_t id) {
    for (tsr_device_value *v = s->device_values; v; v = v->next)
        if (v->id == id) return v;
    return NULL;
}

void session_device_values_orphan(tsr_session *s) {
    while (s->device_values) {
        tsr_device_value *v = s->device_values;
        unlink_value(v);
        rt_tensor_release(&v->slot);
        v->session = NULL; /* the handle stays the application's */
    }
}

/* A call into s's providers outside a run: one at a time, as runs are, and
 * logging under the session's level and logger. */
typedef struct session_call {
    tsr_session *s;
    int32_t level;
    host_logger logger;
} session_call;

static session_call call_enter(tsr_session *s) {
    pthread_mutex_lock(&s->lock);
    return (session_call){s, host_log_enter(s->log_level), host_logger_enter(s->logger)};
}

static void call_leave(session_call c) {
    host_logger_enter(c.logger);
    host_log_leave(c.level);
    pthread_mutex_unlock(&c.s->lock);
}

void tsr_device_value_free(tsr_device_value *v) {
    if (!v) return;
    if (!v->session) {
        device_value_free_locked(v);
        return;
    }
    session_call c = call_enter(v->session);
    device_value_free_locked(v);
    call_leave(c);
}

static tsr_status *check_alive(const tsr_device_value *v) {
    if (!v) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "device value is NULL");
    if (!v->session)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT,
                         "the session that made this device value has been freed, and its contents with it");
    return NULL;
}

tsr_status *tsr_device_value_info(const tsr_device_value *v, tsr_tensor *out, const char **provider) {
    TSR_TRY(check_alive(v));
    if (!out || out->struct_size < offsetof(tsr_tensor, device_index) + sizeof out->device_index)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "out is required, with struct_size set");
    uint32_t size = out->struct_size;
    memset(out, 0, sizeof *out);
    out->struct_size = size;
    if (!v->slot.value) {
        *out = v->slot.view;
        out->struct_size = size;
    }
    if (provider) *provider = v->slot.dev_owner ? v->slot.dev_owner->name : "host";
    return NULL;
}

tsr_status *tsr_device_value_to_host(const tsr_device_value *v, tsr_value **out) {
    TSR_TRY(check_alive(v));
    if (!out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "out is required");
    session_call c = call_enter(v->session);
    rt_tensor copy;
    memset(&copy, 0, sizeof copy);
    /* copy_to_host returns when the bytes are there: the sync point */
    tsr_status *st = rt_tensor_copy_to(&copy, &v->slot, NULL, 0);
    call_leave(c);
    if (!st) st = session_output_value(&copy, out);
    rt_tensor_release(&copy);
    return st;
}
