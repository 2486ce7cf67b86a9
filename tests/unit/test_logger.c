/* tsr_session_options_set_logger: the lines a session writes go to the
 * application's function, with their source and level, and none to stderr;
 * a run's tag leads its lines. */
#include <CUnit/CUnit.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessera/tessera.h"

static const char *data_path(const char *name) {
    static char buf[1024];
    const char *dir = getenv("TESSERA_TEST_DATA");
    snprintf(buf, sizeof buf, "%s/%s", dir && *dir ? dir : "tests/data", name);
    return buf;
}

static const char *plugin_path(const char *name) {
    static char buf[1024];
    const char *dir = getenv("TESSERA_TEST_PLUGINS");
    snprintf(buf, sizeof buf, "%s/%s", dir && *dir ? dir : "build/test-plugins", name);
    return buf;
}

static int suite_init(void) {
    const char *lib = getenv("TESSERA_BUILD_LIB");
    return setenv("TESSERA_PROVIDER_PATH", lib && *lib ? lib : "build/lib", 1) == 0 ? 0 : 1;
}

typedef struct captured {
    int lines, warnings;
    char last_source[64];
    char all[8192];
} captured;

static void capture(void *user, int32_t level, const char *source, const char *message) {
    captured *c = user;
    c->lines++;
    if (level == TSR_LOG_WARNING) c->warnings++;
    snprintf(c->last_source, sizeof c->last_source, "%s", source);
    size_t used = strlen(c->all);
    snprintf(c->all + used, sizeof c->all - used, "%s: %s\n", source, message);
}

/* stderr into a file for the span of a call, to see that nothing went there */
static int stderr_to(const char *path, int *saved) {
    fflush(stderr);
    *saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || *saved < 0) return -1;
    dup2(fd, 2);
    close(fd);
    return 0;
}

static long stderr_back(const char *path, int saved) {
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    remove(path);
    return n;
}

/* plugin_fail_compile claims Relu and Add and fails to compile them: the
 * session warns for each piece and hands it to reference. */
static void test_logger_gets_creation_warnings(void) {
    captured c = {0};
    tsr_session_options *o;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&o));
    tsr_status_free(tsr_session_options_add_provider(o, plugin_path("plugin_fail_compile.so")));
    tsr_status_free(tsr_session_options_add_provider(o, "reference"));
    CU_ASSERT_PTR_NULL(tsr_session_options_set_logger(o, capture, &c));
    char path[64];
    snprintf(path, sizeof path, "/tmp/tessera_logger_%d.err", (int)getpid());
    int saved;
    CU_ASSERT_EQUAL_FATAL(stderr_to(path, &saved), 0);
    tsr_session *s = NULL;
    tsr_status *st = tsr_session_create(o, data_path("abi_relu_add.onnx"), &s);
    long written = stderr_back(path, saved);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    CU_ASSERT_EQUAL(written, 0);
    CU_ASSERT_EQUAL(c.warnings, 2); /* relu0 and add0 */
    CU_ASSERT_STRING_EQUAL(c.last_source, "fail_compile");
    CU_ASSERT_PTR_NOT_NULL(strstr(c.all, "failed to compile"));
    CU_ASSERT_PTR_NOT_NULL(strstr(c.all, "relu0"));
    tsr_session_free(s);

    /* NULL gives stderr back */
    CU_ASSERT_PTR_NULL(tsr_session_options_set_logger(o, NULL, &c));
    CU_ASSERT_EQUAL_FATAL(stderr_to(path, &saved), 0);
    st = tsr_session_create(o, data_path("abi_relu_add.onnx"), &s);
    written = stderr_back(path, saved);
    CU_ASSERT_PTR_NULL(st);
    tsr_status_free(st);
    CU_ASSERT(written > 0);
    CU_ASSERT_EQUAL(c.warnings, 2);
    tsr_session_free(s);
    tsr_session_options_free(o);
}

/* plugin_cache logs "compiled 'relu0'" at info level while the session is
 * made; with info level the logger hears it from "cache". */
static void test_logger_levels(void) {
    captured c = {0};
    tsr_session_options *o;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_options_create(&o));
    tsr_status_free(tsr_session_options_add_provider(o, plugin_path("plugin_cache.so")));
    tsr_status_free(tsr_session_options_add_provider(o, "reference"));
    CU_ASSERT_PTR_NULL(tsr_session_options_set_logger(o, capture, &c));
    tsr_session *s = NULL;
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_create(o, data_path("abi_relu_add.onnx"), &s));
    CU_ASSERT_PTR_NULL(strstr(c.all, "compiled 'relu0'")); /* warning level: not heard */
    tsr_session_free(s);
    CU_ASSERT_PTR_NULL(tsr_session_options_set_log_level(o, TSR_LOG_INFO));
    CU_ASSERT_PTR_NULL_FATAL(tsr_session_create(o, data_path("abi_relu_add.onnx"), &s));
    CU_ASSERT_PTR_NOT_NULL(strstr(c.all, "cache: compiled 'relu0'"));
    tsr_session_free(s);
    tsr_session_options_free(o);
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("logger", suite_init, NULL);
    CU_add_test(s, "the logger gets what session creation writes, stderr nothing", test_logger_gets_creation_warnings);
    CU_add_test(s, "the logger hears only lines at or below the session's level", test_logger_levels);
}
