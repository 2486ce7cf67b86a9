/* Shared main for CUnit test programs: each test file defines unit_register(). */
#include <CUnit/Basic.h>
#include <stdio.h>

void unit_register(void);

int main(void) {
    if (CU_initialize_registry() != CUE_SUCCESS) return 2;
    unit_register();
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
