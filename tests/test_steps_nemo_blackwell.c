/* NeMo 26.02.01 to 26.06 (Megatron-Bridge's performance summary) on
 * DGX-B200 and DGX-GB200: every pre-training row of a model the simulator
 * has, BF16, FP8 and MXFP8 (tests/data/steps/nemo-bridge-blackwell-26.02.01-
 * 26.06.csv: provenance, the recipe revision each container ran, the
 * mapping, the rows left out), never fitted on.  Every row printed with its
 * error; asserted: a guard at today's figures plus a margin (2026-12-07: all
 * 40 rows median |error| 13.9 %, max 92.2 %; the 14 Llama rows median 3.0 %,
 * max 11.0 %; the MoE rows all faster than measured, as the older MoE
 * tables; every row predicted to fit, as every one ran), not a goal and not
 * a fit. */
#include "test_steps.h"

/* Whether each row of FILE is a dense Llama (ref.model llama*). */
static int dense_rows(const char *file, bool *dense, int cap)
{
    gchar *text = NULL, **lines = steps_table_rows(file, &text), **head = steps_cells(lines[0]);
    int n = 0, m = col(head, "ref.model");
    CU_ASSERT_FATAL(m >= 0);
    for (gchar **l = lines + 1; *l && n < cap; l++, n++) {
        gchar **f = steps_cells(*l);
        dense[n] = g_str_has_prefix(f[m], "llama");
        g_strfreev(f);
    }
    g_strfreev(head);
    g_strfreev(lines);
    g_free(text);
    return n;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_table(void)
{
    const char *file = STEPS "nemo-bridge-blackwell-26.02.01-26.06.csv";
    Summary s = run_table(file);
    bool dense[128];
    CU_ASSERT_EQUAL_FATAL(dense_rows(file, dense, 128), s.n);
    double d[128], worst = 0;
    int nd = 0, moe_fast = 0, nm = 0;
    for (int i = 0; i < s.n; i++) {
        double e = fabs(expm1(-s.row_logr[i])); /* |tokens/s error| */
        if (dense[i]) {
            d[nd++] = e;
            worst = fmax(worst, e);
        } else {
            nm++;
            moe_fast += s.row_logr[i] < 0;
        }
    }
    qsort(d, nd, sizeof *d, cmp);
    printf("the %d Llama rows: median |error| %.1f%%, max %.1f%%; %d of the %d MoE rows faster than measured\n", nd,
           100 * quantile(d, nd, 0.5), 100 * worst, moe_fast, nm);
    CU_ASSERT_EQUAL(s.n, 40);
    CU_ASSERT_TRUE(s.median <= 0.16);
    CU_ASSERT_TRUE(s.worst <= 1.0);
    CU_ASSERT_EQUAL(s.fits, s.n);
    CU_ASSERT_TRUE(quantile(d, nd, 0.5) <= 0.05 && worst <= 0.13);
}

static const TestCase tests[] = {
    {"NeMo 26.02.01-26.06 on DGX-B200 and DGX-GB200, held out: every row with its error", test_table},
};

TEST_MAIN("steps_nemo_blackwell", tests)
