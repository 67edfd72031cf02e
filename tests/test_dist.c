/* sim_dist without mpirun: the block rule (contiguous, balanced, in rank
 * order, covering every point once) and the one-rank gather.  The MPI
 * transport runs under mpirun in tests/cli_dist.sh. */
#include "sim_dist.h"
#include "test_main.h"

#include <string.h>

static void test_blocks_cover_in_order(void)
{
    for (int size = 1; size <= 9; size++)
        for (size_t n = 0; n <= 40; n++) {
            size_t next = 0, min = n, max = 0;
            for (int r = 0; r < size; r++) {
                size_t lo, hi;
                sim_dist_block_of(n, r, size, &lo, &hi);
                CU_ASSERT_EQUAL(lo, next);
                CU_ASSERT_TRUE(hi >= lo);
                next = hi;
                min = MIN(min, hi - lo);
                max = MAX(max, hi - lo);
            }
            CU_ASSERT_EQUAL(next, n);
            CU_ASSERT_TRUE(max - min <= 1); /* balanced */
        }
}

static void test_one_rank_gathers_copies(void)
{
    GError *err = NULL;
    SimDist *d = sim_dist_new(FALSE, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_EQUAL(sim_dist_size(d), 1);
    CU_ASSERT_TRUE(sim_dist_is_root(d));
    size_t lo, hi;
    sim_dist_block(d, 3, &lo, &hi);
    CU_ASSERT_TRUE(lo == 0 && hi == 3);
    char a[] = {'x', 'y'}, b[] = "", c[] = "{\"k\":1}";
    char *mine[] = {a, b, c};
    size_t len[] = {2, 0, strlen(c)}, *lens = NULL;
    char **all = sim_dist_allgather(d, 3, mine, len, TRUE, NULL, &lens, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(all);
    CU_ASSERT_STRING_EQUAL(all[0], "xy"); /* terminated although the input was not */
    CU_ASSERT_EQUAL(lens[1], 0);
    CU_ASSERT_STRING_EQUAL(all[2], c);
    sim_dist_results_free(all, 3, lens);
    CU_ASSERT_PTR_NULL(sim_dist_allgather(d, 3, mine, len, FALSE, "point 2: no", &lens, &err));
    CU_ASSERT_TRUE(err && strstr(err->message, "point 2: no"));
    g_clear_error(&err);
    sim_dist_free(d);
}

static const TestCase tests[] = {
    {"blocks cover the points in order", test_blocks_cover_in_order},
    {"one rank gathers copies", test_one_rank_gathers_copies},
};
TEST_MAIN("dist", tests)
