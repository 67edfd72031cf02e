/* The common main() of the CUnit test executables: each file defines
 * `static const TestCase tests[]` and includes this at its end. */
#ifndef TEST_MAIN_H
#define TEST_MAIN_H

#include <CUnit/Basic.h>

typedef struct {
    const char *name;
    void (*fn)(void);
} TestCase;

static int run_tests(const char *suite, const TestCase *cases, size_t n)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite(suite, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        CU_add_test(s, cases[i].name, cases[i].fn);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

#define TEST_MAIN(suite, cases)                                                                                   \
    int main(void) { return run_tests(suite, cases, sizeof(cases) / sizeof(cases[0])); }

#endif
