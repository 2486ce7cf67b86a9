/* plugin_device with TSR_PROVIDER_HOST_CONSTANTS: its Reshape reads the
 * constant shape from host memory, where the host must leave it (no copy
 * into device memory). */
#define DEVICE_HOST_CONSTANTS
#include "plugin_device.c"
