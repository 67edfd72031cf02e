/* sim_fit: parameters of a known latency-bandwidth model recovered from
 * synthetic measurements, robustness to outliers, undetermined parameters
 * kept at their priors, bounds, determinism. */
#include "sim_fit.h"
#include "test_main.h"

#include <math.h>

#define NSIZES 28

/* t(n) = alpha + n / beta + (a third parameter that no residual sees). */
typedef struct {
    double sizes[NSIZES], meas[NSIZES];
    int calls;
} Hockney;

static double model(const double *x, double n) { return x[0] + n / x[1]; }

static bool resid(const double *x, double *r, void *user, GError **err)
{
    Hockney *h = user;
    h->calls++;
    for (int k = 0; k < NSIZES; k++)
        r[k] = log(model(x, h->sizes[k]) / h->meas[k]);
    return true;
}

static void make(Hockney *h, double alpha, double beta)
{
    h->calls = 0;
    for (int k = 0; k < NSIZES; k++) {
        h->sizes[k] = ldexp(8, k);
        /* A deterministic +-1% ripple stands for measurement noise. */
        h->meas[k] = (alpha + h->sizes[k] / beta) * (1 + 0.01 * sin(3.0 * k));
    }
}

static SimFit *fit3(Hockney *h)
{
    SimFit *f = sim_fit_new(NSIZES, resid, h);
    CU_ASSERT_EQUAL(sim_fit_add(f, "alpha", 20e-6, 1e-7, 1e-3, 1.0), 0);
    CU_ASSERT_EQUAL(sim_fit_add(f, "beta", 5e9, 1e8, 1e12, 1.0), 1);
    CU_ASSERT_EQUAL(sim_fit_add(f, "unused", 3.0, 1.0, 10.0, 1.0), 2);
    return f;
}

static void test_recovers_known_parameters(void)
{
    Hockney h;
    make(&h, 6e-6, 42e9);
    SimFit *f = fit3(&h);
    CU_ASSERT_TRUE_FATAL(sim_fit_run(f, NULL));
    CU_ASSERT_DOUBLE_EQUAL(sim_fit_value(f, 0) / 6e-6, 1, 0.02);
    CU_ASSERT_DOUBLE_EQUAL(sim_fit_value(f, 1) / 42e9, 1, 0.02);
    CU_ASSERT_TRUE(sim_fit_determined(f, 0));
    CU_ASSERT_TRUE(sim_fit_determined(f, 1));
    CU_ASSERT_TRUE(sim_fit_rms_after(f) < 0.012);
    CU_ASSERT_TRUE(sim_fit_rms_before(f) > 10 * sim_fit_rms_after(f));
    CU_ASSERT_TRUE(sim_fit_log_sd(f, 1) < 0.05);
    sim_fit_free(f);
}

static void test_undetermined_keeps_prior(void)
{
    Hockney h;
    make(&h, 6e-6, 42e9);
    SimFit *f = fit3(&h);
    CU_ASSERT_TRUE_FATAL(sim_fit_run(f, NULL));
    CU_ASSERT_FALSE(sim_fit_determined(f, 2));
    CU_ASSERT_EQUAL(sim_fit_value(f, 2), 3.0);
    sim_fit_free(f);
}

/* Only the largest sizes: the latency is not seen, the bandwidth is. */
static bool resid_large(const double *x, double *r, void *user, GError **err)
{
    Hockney *h = user;
    for (int k = 0; k < 6; k++)
        r[k] = log(model(x, h->sizes[NSIZES - 1 - k]) / h->meas[NSIZES - 1 - k]);
    return true;
}

static void test_latency_undetermined_from_large_sizes(void)
{
    Hockney h;
    make(&h, 6e-6, 42e9);
    SimFit *f = sim_fit_new(6, resid_large, &h);
    sim_fit_add(f, "alpha", 20e-6, 1e-7, 1e-3, 1.0);
    sim_fit_add(f, "beta", 5e9, 1e8, 1e12, 1.0);
    CU_ASSERT_TRUE_FATAL(sim_fit_run(f, NULL));
    CU_ASSERT_FALSE(sim_fit_determined(f, 0));
    /* the rows barely see it: between the truth and its prior, where the prior holds it */
    CU_ASSERT_TRUE(sim_fit_value(f, 0) > 5e-6 && sim_fit_value(f, 0) <= 20e-6);
    CU_ASSERT_TRUE(sim_fit_determined(f, 1));
    CU_ASSERT_DOUBLE_EQUAL(sim_fit_value(f, 1) / 42e9, 1, 0.02);
    sim_fit_free(f);
}

static void test_outliers_do_not_drag(void)
{
    Hockney h;
    make(&h, 6e-6, 42e9);
    h.meas[20] *= 3; /* two wild rows */
    h.meas[5] /= 2;
    SimFit *f = fit3(&h);
    CU_ASSERT_TRUE_FATAL(sim_fit_run(f, NULL));
    CU_ASSERT_DOUBLE_EQUAL(sim_fit_value(f, 0) / 6e-6, 1, 0.05);
    CU_ASSERT_DOUBLE_EQUAL(sim_fit_value(f, 1) / 42e9, 1, 0.03);
    sim_fit_free(f);
}

static void test_bounds_hold(void)
{
    Hockney h;
    make(&h, 6e-6, 42e9);
    SimFit *f = sim_fit_new(NSIZES, resid, &h);
    sim_fit_add(f, "alpha", 20e-6, 1e-5, 1e-3, 1.0); /* truth below the bound */
    sim_fit_add(f, "beta", 5e9, 1e8, 1e12, 1.0);
    CU_ASSERT_TRUE_FATAL(sim_fit_run(f, NULL));
    CU_ASSERT_TRUE(sim_fit_value(f, 0) >= 1e-5 * (1 - 1e-12));
    sim_fit_free(f);
}

static void test_deterministic(void)
{
    Hockney h1, h2;
    make(&h1, 3e-6, 9e9);
    make(&h2, 3e-6, 9e9);
    SimFit *a = fit3(&h1), *b = fit3(&h2);
    CU_ASSERT_TRUE_FATAL(sim_fit_run(a, NULL) && sim_fit_run(b, NULL));
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(sim_fit_value(a, i), sim_fit_value(b, i));
    CU_ASSERT_EQUAL(h1.calls, h2.calls);
    sim_fit_free(a);
    sim_fit_free(b);
}

static void test_bad_arguments(void)
{
    SimFit *f = sim_fit_new(1, resid, NULL);
    CU_ASSERT_EQUAL(sim_fit_add(f, "zero", 0, 0, 1, 1), -1);
    CU_ASSERT_EQUAL(sim_fit_add(f, "outside", 5, 1, 2, 1), -1);
    CU_ASSERT_EQUAL(sim_fit_add(f, "nan", 1, 0.5, NAN, 1), -1);
    CU_ASSERT_EQUAL(sim_fit_nparams(f), 0);
    sim_fit_free(f);
}

static bool resid_fail(const double *x, double *r, void *user, GError **err)
{
    g_set_error(err, g_quark_from_static_string("test"), 1, "no");
    return false;
}

static void test_callback_error_stops(void)
{
    SimFit *f = sim_fit_new(2, resid_fail, NULL);
    sim_fit_add(f, "a", 1, 0.5, 2, 1);
    GError *err = NULL;
    CU_ASSERT_FALSE(sim_fit_run(f, &err));
    CU_ASSERT_PTR_NOT_NULL(err);
    g_clear_error(&err);
    sim_fit_free(f);
}

static const TestCase tests[] = {
    {"recovers known parameters within 2%", test_recovers_known_parameters},
    {"an unused parameter keeps its prior", test_undetermined_keeps_prior},
    {"latency undetermined from large sizes only", test_latency_undetermined_from_large_sizes},
    {"outliers do not drag the fit", test_outliers_do_not_drag},
    {"bounds hold", test_bounds_hold},
    {"deterministic", test_deterministic},
    {"bad arguments refused", test_bad_arguments},
    {"a callback error stops the fit", test_callback_error_stops},
};
TEST_MAIN("fit", tests)
