/* Finding every OpenCL platform and device and describing each one. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

/* Platforms and devices a sane system has; more would be a broken ICD. */
#define OCL_MAX_PLATFORMS 64
#define OCL_MAX_DEVICES_PER_PLATFORM 64

static int32_t kind_of(cl_device_type t) {
    if (t & CL_DEVICE_TYPE_GPU) return TSR_DEVICE_GPU;
    if (t & CL_DEVICE_TYPE_CPU) return TSR_DEVICE_CPU;
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return TSR_DEVICE_ACCELERATOR;
    return TSR_DEVICE_OTHER;
}

static const char *type_name(cl_device_type t) {
    if (t & CL_DEVICE_TYPE_GPU) return "GPU";
    if (t & CL_DEVICE_TYPE_CPU) return "CPU";
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
    return "other";
}

static void info_string(cl_device_id d, cl_device_info what, char *buf, size_t size) {
    buf[0] = 0;
    if (clGetDeviceInfo(d, what, size - 1, buf, NULL) != CL_SUCCESS) snprintf(buf, size, "?");
    buf[size - 1] = 0;
}

static void describe(ocl_device_desc *dd, size_t platform_index) {
    char pname[256] = "?", version[128], cversion[128];
    clGetPlatformInfo(dd->platform, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
    pname[sizeof pname - 1] = 0;
    info_string(dd->id, CL_DEVICE_NAME, dd->name, sizeof dd->name);
    info_string(dd->id, CL_DEVICE_VENDOR, dd->vendor, sizeof dd->vendor);
    info_string(dd->id, CL_DRIVER_VERSION, dd->driver, sizeof dd->driver);
    info_string(dd->id, CL_DEVICE_VERSION, version, sizeof version);
    info_string(dd->id, CL_DEVICE_OPENCL_C_VERSION, cversion, sizeof cversion);
    cl_device_type type = 0;
    cl_uint units = 0;
    cl_ulong global = 0, local = 0;
    clGetDeviceInfo(dd->id, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    clGetDeviceInfo(dd->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    clGetDeviceInfo(dd->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global, &global, NULL);
    clGetDeviceInfo(dd->id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
    dd->kind = kind_of(type);
    dd->global_mem = global;
    snprintf(dd->details, sizeof dd->details,
             "platform %zu '%s'; type %s; %u compute units; global memory %llu MiB; "
             "local memory %llu KiB; %s; %s; driver %s",
             platform_index, pname, type_name(type), (unsigned)units, (unsigned long long)(global >> 20),
             (unsigned long long)(local >> 10), version, cversion, dd->driver);
}

/* The ICD loader's and PoCL's first platform query is not thread-safe:
 * sessions created at once on several threads crashed inside PoCL
 * (tests/threads), so listing devices is serialised. */
static pthread_mutex_t enumerate_lock = PTHREAD_MUTEX_INITIALIZER;

static tsr_status *enumerate(ocl_device_desc **out, size_t *count);

tsr_status *ocl_devices_enumerate(ocl_device_desc **out, size_t *count) {
    pthread_mutex_lock(&enumerate_lock);
    tsr_status *s = enumerate(out, count);
    pthread_mutex_unlock(&enumerate_lock);
    return s;
}

static tsr_status *enumerate(ocl_device_desc **out, size_t *count) {
    *out = NULL;
    *count = 0;
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    /* No ICD installed reads as "no platform", not as a failure. */
    if (err != CL_SUCCESS || np == 0) return NULL;
    if (np > OCL_MAX_PLATFORMS) np = OCL_MAX_PLATFORMS;
    cl_platform_id plats[OCL_MAX_PLATFORMS];
    if ((err = clGetPlatformIDs(np, plats, NULL)) != CL_SUCCESS) return ocl_cl_error(err, "clGetPlatformIDs");
    ocl_device_desc *devs = NULL;
    size_t n = 0;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || !nd) continue;
        if (nd > OCL_MAX_DEVICES_PER_PLATFORM) nd = OCL_MAX_DEVICES_PER_PLATFORM;
        cl_device_id ids[OCL_MAX_DEVICES_PER_PLATFORM];
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL) != CL_SUCCESS) continue;
        ocl_device_desc *grown = realloc(devs, sizeof *devs * (n + nd));
        if (!grown) {
            free(devs);
            return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory listing devices");
        }
        devs = grown;
        for (cl_uint d = 0; d < nd; d++) {
            ocl_device_desc *dd = &devs[n++];
            memset(dd, 0, sizeof *dd);
            dd->platform = plats[p];
            dd->id = ids[d];
            describe(dd, p);
        }
    }
    *out = devs;
    *count = n;
    return NULL;
}

tsr_status *ocl_device_select(const ocl_device_desc *devs, size_t n, const char *spec, size_t *index) {
    char *end = NULL;
    unsigned long long v = strtoull(spec, &end, 10);
    if (spec[0] && end && *end == 0) {
        if (v >= n)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT, "opencl: option device=%s: only %zu device(s) found", spec, n);
        *index = (size_t)v;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (strstr(devs[i].name, spec) || strstr(devs[i].vendor, spec) || strstr(devs[i].details, spec)) {
            *index = i;
            return NULL;
        }
    }
    return ocl_error(TSR_ERR_INVALID_ARGUMENT, "opencl: option device=%s matches no device name (%zu device(s) found)",
                     spec, n);
}
