/*
 * Describing plugins' devices in words: `tessera providers` lists them and
 * `tessera check-provider` reports the plugin it checks with the same lines,
 * so a vendor sees one format.
 */
#include <inttypes.h>

#include "cli.h"

const char *cli_device_kind_name(int32_t kind) {
    switch (kind) {
    case 0: return "cpu";
    case 1: return "gpu";
    case 2: return "accelerator";
    default: return "other";
    }
}

const char *cli_memory_kind_name(int32_t kind) {
    return kind == TSR_MEMORY_HOST ? "host" : kind == TSR_MEMORY_DEVICE ? "device" : "unknown";
}

void cli_format_bytes(char *buf, size_t size, uint64_t b) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (b == 0) snprintf(buf, size, "unknown");
    else if (u == 0) snprintf(buf, size, "%" PRIu64 " B", b);
    else snprintf(buf, size, "%.1f %s", v, units[u]);
}

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

void cli_print_device(FILE *f, const char *indent, size_t index, const tsr_device_desc *dev) {
    char mem[32];
    cli_format_bytes(mem, sizeof mem, dev->memory_bytes);
    fprintf(f, "%sdevice %zu: %s\n%s  kind: %s\n%s  vendor: %s\n%s  memory: %s, %s\n", indent, index,
            or_dash(dev->name), indent, cli_device_kind_name(dev->kind), indent, or_dash(dev->vendor), indent,
            cli_memory_kind_name(dev->memory_kind), mem);
    if (dev->details && *dev->details) fprintf(f, "%s  details: %s\n", indent, dev->details);
}
