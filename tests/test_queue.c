#include "sim_queue.h"
#include "test_main.h"

#include <glib.h>
#include <stdlib.h>

static void test_order_and_ties(void)
{
    SimQueue *q = sim_queue_new();
    int v[6] = {0, 1, 2, 3, 4, 5};
    sim_queue_push(q, 30, &v[0]);
    sim_queue_push(q, 10, &v[1]);
    sim_queue_push(q, 20, &v[2]);
    sim_queue_push(q, 10, &v[3]); /* tie with v[1]: pushed later, pops later */
    sim_queue_push(q, 10, &v[4]);
    sim_queue_push(q, 0, &v[5]);
    int expect[6] = {5, 1, 3, 4, 2, 0};
    sim_time_t expect_t[6] = {0, 10, 10, 10, 20, 30};
    CU_ASSERT_EQUAL(sim_queue_size(q), 6);
    for (int i = 0; i < 6; i++) {
        sim_time_t t;
        void *d;
        CU_ASSERT_TRUE_FATAL(sim_queue_pop(q, &t, &d));
        CU_ASSERT_EQUAL(*(int *)d, expect[i]);
        CU_ASSERT_EQUAL(t, expect_t[i]);
    }
    CU_ASSERT_FALSE(sim_queue_pop(q, NULL, NULL));
    CU_ASSERT_EQUAL(sim_queue_peek_time(q), SIM_TIME_NEVER);
    sim_queue_free(q);
}

static void test_cancel_and_reschedule(void)
{
    SimQueue *q = sim_queue_new();
    int a = 1, b = 2, c = 3;
    SimEventId ia = sim_queue_push(q, 5, &a);
    SimEventId ib = sim_queue_push(q, 7, &b);
    sim_queue_push(q, 9, &c);
    CU_ASSERT_TRUE(sim_queue_cancel(q, ia));
    CU_ASSERT_FALSE(sim_queue_cancel(q, ia)); /* twice: already gone */
    CU_ASSERT_EQUAL(sim_queue_size(q), 2);
    CU_ASSERT_EQUAL(sim_queue_peek_time(q), 7);
    SimEventId ib2 = sim_queue_reschedule(q, ib, 11, &b);
    CU_ASSERT_NOT_EQUAL(ib, ib2);
    CU_ASSERT_FALSE(sim_queue_cancel(q, ib));
    void *d;
    sim_time_t t;
    CU_ASSERT_TRUE(sim_queue_pop(q, &t, &d));
    CU_ASSERT_EQUAL(t, 9);
    CU_ASSERT_PTR_EQUAL(d, &c);
    CU_ASSERT_TRUE(sim_queue_pop(q, &t, &d));
    CU_ASSERT_EQUAL(t, 11);
    CU_ASSERT_PTR_EQUAL(d, &b);
    CU_ASSERT_FALSE(sim_queue_cancel(q, ib2)); /* fired already */
    CU_ASSERT_FALSE(sim_queue_cancel(q, 0));
    CU_ASSERT_EQUAL(sim_queue_size(q), 0);
    sim_queue_free(q);
}

typedef struct {
    sim_time_t t;
    uint64_t seq;
    bool cancelled;
} Ref;

static int cmp_ref(const void *a, const void *b)
{
    const Ref *x = *(Ref *const *)a, *y = *(Ref *const *)b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* 1e6 random events (many ties) with 10% cancelled, against a sorted reference. */
static void test_random_against_sorted(void)
{
    enum { N = 1000000 };
    Ref *refs = g_new(Ref, N);
    Ref **order = g_new(Ref *, N);
    SimEventId *ids = g_new(SimEventId, N);
    GRand *r = g_rand_new_with_seed(42);
    SimQueue *q = sim_queue_new();
    for (int i = 0; i < N; i++) {
        refs[i] = (Ref){(sim_time_t)g_rand_int_range(r, 0, 100000), (uint64_t)i, false};
        order[i] = &refs[i];
        ids[i] = sim_queue_push(q, refs[i].t, &refs[i]);
    }
    size_t live = N;
    for (int i = 0; i < N / 10; i++) {
        int k = g_rand_int_range(r, 0, N);
        bool ok = sim_queue_cancel(q, ids[k]);
        CU_ASSERT_EQUAL(ok, !refs[k].cancelled);
        if (ok)
            live--;
        refs[k].cancelled = true;
    }
    CU_ASSERT_EQUAL(sim_queue_size(q), live);
    qsort(order, N, sizeof(Ref *), cmp_ref);
    size_t k = 0, mismatches = 0;
    void *d;
    sim_time_t t;
    while (sim_queue_pop(q, &t, &d)) {
        while (k < N && order[k]->cancelled)
            k++;
        if (k >= N || d != order[k] || t != order[k]->t)
            mismatches++;
        k++;
    }
    while (k < N && order[k]->cancelled)
        k++;
    CU_ASSERT_EQUAL(mismatches, 0);
    CU_ASSERT_EQUAL(k, N);
    sim_queue_free(q);
    g_rand_free(r);
    g_free(refs);
    g_free(order);
    g_free(ids);
}

/* Phases of distinct times (the queue stops grouping) and of few times
 * (grouping again, with single events of the same times still pending),
 * 10% cancelled, against a sorted reference. */
static void test_grouping_switches(void)
{
    enum { N = 600000 };
    Ref *refs = g_new(Ref, N);
    Ref **order = g_new(Ref *, N);
    SimEventId *ids = g_new(SimEventId, N);
    GRand *r = g_rand_new_with_seed(9);
    SimQueue *q = sim_queue_new();
    for (int i = 0; i < N; i++) {
        bool distinct = (i / 100000) % 2 == 0;
        sim_time_t t = distinct ? (sim_time_t)g_rand_int(r) << 8 : (sim_time_t)g_rand_int_range(r, 0, 1000) << 8;
        refs[i] = (Ref){t, (uint64_t)i, false};
        order[i] = &refs[i];
        ids[i] = sim_queue_push(q, t, &refs[i]);
        if (i % 10 == 3) {
            int k = g_rand_int_range(r, 0, i + 1);
            CU_ASSERT_EQUAL(sim_queue_cancel(q, ids[k]), !refs[k].cancelled);
            refs[k].cancelled = true;
        }
    }
    qsort(order, N, sizeof(Ref *), cmp_ref);
    size_t k = 0, mismatches = 0;
    void *d;
    sim_time_t t;
    while (sim_queue_pop(q, &t, &d)) {
        while (k < N && order[k]->cancelled)
            k++;
        if (k >= N || d != order[k] || t != order[k]->t)
            mismatches++;
        k++;
    }
    while (k < N && order[k]->cancelled)
        k++;
    CU_ASSERT_EQUAL(mismatches, 0);
    CU_ASSERT_EQUAL(k, N);
    CU_ASSERT_EQUAL(sim_queue_size(q), 0);
    sim_queue_free(q);
    g_rand_free(r);
    g_free(refs);
    g_free(order);
    g_free(ids);
}

/* Interleaved pushes and pops never return an event earlier than one already popped. */
static void test_hold_monotone(void)
{
    SimQueue *q = sim_queue_new();
    GRand *r = g_rand_new_with_seed(7);
    for (int i = 0; i < 1000; i++)
        sim_queue_push(q, (sim_time_t)g_rand_int_range(r, 0, 1000), NULL);
    sim_time_t last = 0;
    bool monotone = true;
    for (int i = 0; i < 100000; i++) {
        sim_time_t t;
        sim_queue_pop(q, &t, NULL);
        monotone &= t >= last;
        last = t;
        SimEventId id = sim_queue_push(q, t + (sim_time_t)g_rand_int_range(r, 0, 1000), NULL);
        if (i % 3 == 0)
            sim_queue_cancel(q, id);
        if (i % 3 == 0)
            sim_queue_push(q, t + 5, NULL);
    }
    CU_ASSERT_TRUE(monotone);
    CU_ASSERT_EQUAL(sim_queue_size(q), 1000);
    g_rand_free(r);
    sim_queue_free(q);
}

static const TestCase tests[] = {
    {"order and ties", test_order_and_ties},
    {"cancel and reschedule", test_cancel_and_reschedule},
    {"1e6 random events against a sorted reference", test_random_against_sorted},
    {"hold pattern stays monotone", test_hold_monotone},
    {"grouping off and on keeps the order", test_grouping_switches},
};
TEST_MAIN("queue", tests)
