/* plugin_device without copy_to_device and copy_to_host: a provider with
 * device memory the host could not fill or read, refused when the session
 * creates it (not at the first copy, through a NULL slot). */
#define DEVICE_NO_COPY
#include "plugin_device.c"
