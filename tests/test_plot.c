/* plots/: every picture is produced by a real gnuplot run (CI installs
 * gnuplot-nox); a missing gnuplot fails these tests. */
#include "plot.h"
#include "test_main.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static char *tmpdir;

static char *tmp_path(const char *name)
{
    if (!tmpdir)
        tmpdir = g_dir_make_tmp("shardsim-test-plot-XXXXXX", NULL);
    return g_build_filename(tmpdir, name, NULL);
}

/* The PNG signature, then an IHDR chunk of 13 bytes with width and height. */
static void check_png(const char *path, guint32 want_w, guint32 want_h)
{
    char *data = NULL;
    gsize len = 0;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &data, &len, NULL));
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    CU_ASSERT_TRUE_FATAL(len > 33);
    CU_ASSERT_EQUAL(memcmp(data, sig, 8), 0);
    const unsigned char *u = (const unsigned char *)data;
    guint32 chunk_len = (guint32)u[8] << 24 | (guint32)u[9] << 16 | (guint32)u[10] << 8 | u[11];
    CU_ASSERT_EQUAL(chunk_len, 13);
    CU_ASSERT_EQUAL(memcmp(data + 12, "IHDR", 4), 0);
    guint32 w = (guint32)u[16] << 24 | (guint32)u[17] << 16 | (guint32)u[18] << 8 | u[19];
    guint32 h = (guint32)u[20] << 24 | (guint32)u[21] << 16 | (guint32)u[22] << 8 | u[23];
    CU_ASSERT_TRUE(w > 0 && h > 0);
    if (want_w)
        CU_ASSERT_EQUAL(w, want_w);
    if (want_h)
        CU_ASSERT_EQUAL(h, want_h);
    /* the file ends with an IEND chunk */
    CU_ASSERT_EQUAL(memcmp(data + len - 8, "IEND", 4), 0);
    g_free(data);
}

typedef struct {
    int depth;
    char *root;
    GString *text; /* all character data, entities decoded */
} SvgScan;

static void svg_start(GMarkupParseContext *c, const char *el, const char **an, const char **av, gpointer user,
                      GError **e)
{
    SvgScan *s = user;
    if (s->depth++ == 0)
        s->root = g_strdup(el);
}

static void svg_end(GMarkupParseContext *c, const char *el, gpointer user, GError **e)
{
    ((SvgScan *)user)->depth--;
}

static void svg_text(GMarkupParseContext *c, const char *t, gsize n, gpointer user, GError **e)
{
    g_string_append_len(((SvgScan *)user)->text, t, (gssize)n);
    g_string_append_c(((SvgScan *)user)->text, '\n');
}

/* Parses the SVG as XML (GMarkup rejects malformed documents) and returns its
 * text content; the root element must be <svg>. */
static char *svg_text_of(const char *path)
{
    char *data = NULL;
    gsize len = 0;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &data, &len, NULL));
    /* GMarkup does not read DOCTYPE declarations: skip the prolog up to <svg */
    char *start = strstr(data, "<svg");
    CU_ASSERT_PTR_NOT_NULL_FATAL(start);
    GMarkupParser p = { svg_start, svg_end, svg_text, NULL, NULL };
    SvgScan s = { 0, NULL, g_string_new(NULL) };
    GMarkupParseContext *ctx = g_markup_parse_context_new(&p, 0, &s, NULL);
    GError *err = NULL;
    gboolean ok = g_markup_parse_context_parse(ctx, start, (gssize)strlen(start), &err) &&
                  g_markup_parse_context_end_parse(ctx, &err);
    if (!ok)
        fprintf(stderr, "SVG parse error in %s: %s\n", path, err->message);
    CU_ASSERT_TRUE(ok);
    g_clear_error(&err);
    g_markup_parse_context_free(ctx);
    CU_ASSERT_EQUAL(s.depth, 0);
    CU_ASSERT_STRING_EQUAL(s.root ? s.root : "", "svg");
    g_free(s.root);
    g_free(data);
    return g_string_free(s.text, FALSE);
}

static const double X[] = { 1, 2, 4, 8, 16 };
static const double STEP_R[] = { 1.0, 0.55, 0.3, 0.17, 0.1 };
static const double STEP_S[] = { 0.9, 0.47, 0.25, 0.13, 0.07 };
static double thr_r[5], thr_s[5], eff_r[5], eff_s[5];
static const double MEM_R[] = { 16e9, 16e9, 16e9, 16e9, 16e9 };
static const double MEM_S[] = { 16e9, 10e9, 7e9, 5.5e9, 4.7e9 };

static void fill_series(PlotSeries s[2], const char *label_a, const char *label_b)
{
    for (int i = 0; i < 5; i++) {
        thr_r[i] = 32 * X[i] / STEP_R[i];
        thr_s[i] = 32 * X[i] / STEP_S[i];
        eff_r[i] = STEP_R[0] / STEP_R[i] / X[i];
        eff_s[i] = STEP_S[0] / STEP_S[i] / X[i];
    }
    s[0] = (PlotSeries){ label_a, 5, X, STEP_R, thr_r, eff_r, MEM_R, NULL };
    s[1] = (PlotSeries){ label_b, 5, X, STEP_S, thr_s, eff_s, MEM_S, NULL };
}

static void test_scaling_png(void)
{
    PlotSeries s[2];
    fill_series(s, "replicated", "sharded");
    char *path = tmp_path("scaling.png");
    GError *err = NULL;
    bool ok = plot_scaling(path, s, 2, &err);
    if (!ok)
        fprintf(stderr, "%s\n", err->message);
    CU_ASSERT_TRUE_FATAL(ok);
    CU_ASSERT_PTR_NULL(err);
    check_png(path, 1120, 960); /* four panels: 2 x 2 of 560 x 480 */
    g_free(path);
}

static void test_scaling_svg_labels(void)
{
    PlotSeries s[2];
    /* quotes, markup characters, enhanced-text markup and a newline must come out literally */
    const char *a = "ZeRO-1 'weight_update' & <sharded>";
    const char *b = "x^2 {DP}\nsecond line";
    fill_series(s, a, b);
    char *path = tmp_path("scaling.svg");
    GError *err = NULL;
    bool ok = plot_scaling(path, s, 2, &err);
    if (!ok)
        fprintf(stderr, "%s\n", err->message);
    CU_ASSERT_TRUE_FATAL(ok);
    char *text = svg_text_of(path);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, a));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "x^2 {DP} second line"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "Scaling efficiency"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "memory per device (GiB)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "devices (count)"));
    g_free(text);

    /* same input, byte-identical picture */
    char *path2 = tmp_path("scaling2.svg");
    CU_ASSERT_TRUE(plot_scaling(path2, s, 2, NULL));
    char *d1 = NULL, *d2 = NULL;
    gsize l1 = 0, l2 = 0;
    CU_ASSERT_TRUE(g_file_get_contents(path, &d1, &l1, NULL) && g_file_get_contents(path2, &d2, &l2, NULL));
    CU_ASSERT_TRUE(l1 == l2 && d1 && d2 && memcmp(d1, d2, l1) == 0);
    g_free(d1);
    g_free(d2);
    g_free(path);
    g_free(path2);
}

/* A series with only step time gives one panel; NaN points are skipped. */
static void test_scaling_partial(void)
{
    double step[5] = { 1, NAN, 0.3, -1, 0.1 };
    PlotSeries s = { "only step", 5, X, step, NULL, NULL, NULL, NULL };
    char *path = tmp_path("partial.png");
    GError *err = NULL;
    CU_ASSERT_TRUE(plot_scaling(path, &s, 1, &err));
    CU_ASSERT_PTR_NULL(err);
    check_png(path, 560, 480);
    g_free(path);
    g_clear_error(&err);
}

/* Occurrences of `needle` in `text`. */
static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* More than PLOT_MAX_CURVES curves: small multiples, by the labels' first
 * key when it makes groups small enough, else runs of PLOT_MAX_CURVES. */
static void test_scaling_facets(void)
{
    enum { N = 12 };
    PlotSeries s[N];
    char *labels[N];
    double step[N][5], thr[N][5];
    for (int k = 0; k < N; k++) {
        labels[k] = g_strdup_printf("tp=%d, pp=%d", 1 << (k / 4), k % 4 + 1);
        for (int i = 0; i < 5; i++) {
            step[k][i] = STEP_R[i] * (1 + 0.1 * k);
            thr[k][i] = 32 * X[i] / step[k][i];
        }
        s[k] = (PlotSeries){labels[k], 5, X, step[k], thr[k], NULL, NULL, NULL};
    }
    char *svg = tmp_path("facets.svg"), *png = tmp_path("facets.png");
    GError *err = NULL;
    bool ok = plot_scaling(svg, s, N, &err);
    if (!ok)
        fprintf(stderr, "%s\n", err->message);
    CU_ASSERT_TRUE_FATAL(ok);
    char *text = svg_text_of(svg);
    /* three facets (tp=1, 2, 4) of four curves, a row of two panels each */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "Step time: tp=1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "Throughput: tp=4"));
    CU_ASSERT_PTR_NULL(strstr(text, "tp=8"));
    CU_ASSERT_EQUAL(count_of(text, "Step time: "), 3);
    /* each curve in its own facet only: its legend entry in two panels */
    CU_ASSERT_EQUAL(count_of(text, "tp=2, pp=3"), 2);
    g_free(text);
    CU_ASSERT_TRUE(plot_scaling(png, s, N, &err));
    check_png(png, 2 * 440, 3 * 400);
    /* labels without a key to group by: runs of six */
    for (int k = 0; k < 8; k++)
        s[k].label = s[k].group = NULL;
    for (int k = 0; k < 8; k++) {
        g_free(labels[k]);
        labels[k] = g_strdup_printf("variant %d", k);
        s[k].label = labels[k];
    }
    CU_ASSERT_TRUE_FATAL(plot_scaling(svg, s, 8, &err));
    text = svg_text_of(svg);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "Step time: curves 1-6 of 8"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "Throughput: curves 7-8 of 8"));
    g_free(text);
    /* six curves: one plot as before */
    CU_ASSERT_TRUE_FATAL(plot_scaling(svg, s, 6, &err));
    text = svg_text_of(svg);
    CU_ASSERT_PTR_NULL(strstr(text, "curves 1-6"));
    CU_ASSERT_EQUAL(count_of(text, "variant 5"), 2);
    g_free(text);
    for (int k = 0; k < N; k++)
        g_free(labels[k]);
    g_free(svg);
    g_free(png);
    g_clear_error(&err);
}

static void test_memory(void)
{
    PlotMemoryBar bars[] = {
        { "replicated", 14e9, 14e9, 84e9, 20e9, 0.1e9, 0, 1.6e9 },
        { "ZeRO-1", 14e9, 14e9, 84e9 / 8, 20e9, 0.1e9, 0, 1.6e9 },
        { "ZeRO-3 \"fsdp\"", 14e9 / 8, 14e9 / 8, 84e9 / 8, 20e9, 3e9, 0, 1.6e9 },
    };
    char *svg = tmp_path("memory.svg"), *png = tmp_path("memory.png");
    GError *err = NULL;
    bool ok = plot_memory(svg, bars, 3, 80e9, &err);
    if (!ok)
        fprintf(stderr, "%s\n", err->message);
    CU_ASSERT_TRUE_FATAL(ok);
    char *text = svg_text_of(svg);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_PTR_NOT_NULL(strstr(text, bars[i].label));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "optimizer state"));
    /* every component its own legend entry; none for one that is 0 everywhere */
    CU_ASSERT_EQUAL(count_of(text, "activations"), 1);
    CU_ASSERT_EQUAL(count_of(text, "buffers"), 1);
    CU_ASSERT_EQUAL(count_of(text, "reserve"), 1);
    CU_ASSERT_PTR_NULL(strstr(text, "working set"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "memory per device (GiB)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "HBM capacity 74.51 GiB"));
    g_free(text);
    bars[2].working_set = 2e9;
    CU_ASSERT_TRUE_FATAL(plot_memory(svg, bars, 3, 80e9, &err));
    text = svg_text_of(svg);
    CU_ASSERT_EQUAL(count_of(text, "working set (peak)"), 1);
    g_free(text);
    CU_ASSERT_TRUE(plot_memory(png, bars, 3, 0, &err));
    CU_ASSERT_PTR_NULL(err);
    check_png(png, 900, 560);
    bars[1].gradients = -1;
    CU_ASSERT_FALSE(plot_memory(png, bars, 3, 80e9, &err));
    CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INPUT && strstr(err->message, "ZeRO-1"));
    g_clear_error(&err);
    g_free(svg);
    g_free(png);
}

static void test_validation(void)
{
    double size[12], meas[12], pred[12], meas2[12], pred2[12], lo[12], hi[12], base[12];
    for (int i = 0; i < 12; i++) {
        size[i] = pow(4, i) * 8;
        pred[i] = 20e-6 + size[i] / 100e9;
        lo[i] = pred[i] * 0.8;
        hi[i] = pred[i] * 1.3;
        base[i] = pred[i] * 2;
        meas[i] = pred[i] * (1 + 0.1 * sin(i));
        pred2[i] = 50e-6 + size[i] / 20e9;
        meas2[i] = i == 3 ? NAN : pred2[i] * 1.2;
    }
    PlotTrace t[2] = {{"dgx-a100 allreduce", 12, size, meas, pred, lo, hi, base, "default parameters"},
                      {"localhost", 12, size, meas2, pred2, NULL, NULL, NULL, NULL}};
    char *svg = tmp_path("validate.svg"), *png = tmp_path("validate.png");
    GError *err = NULL;
    bool ok = plot_validation(svg, "allreduce: predicted vs measured", t, 2, &err);
    if (!ok)
        fprintf(stderr, "%s\n", err->message);
    CU_ASSERT_TRUE_FATAL(ok);
    char *text = svg_text_of(svg);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "allreduce: predicted vs measured"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "dgx-a100 allreduce measured"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "dgx-a100 allreduce predicted"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "localhost measured"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "dgx-a100 allreduce p10-p90"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "dgx-a100 allreduce default parameters"));
    CU_ASSERT_PTR_NULL(strstr(text, "localhost p10-p90"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "MiB")); /* binary-prefix size axis */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "message size (bytes)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "time (s)"));
    g_free(text);
    /* prediction only */
    t[0].measured = NULL;
    CU_ASSERT_TRUE(plot_validation(png, NULL, t, 1, &err));
    CU_ASSERT_PTR_NULL(err);
    check_png(png, 900, 480 + 18 * 6); /* room for six legend entries below */
    g_free(svg);
    g_free(png);
}

static void test_errors(void)
{
    PlotSeries s[2];
    fill_series(s, "a", "b");
    GError *err = NULL;
    char *bad_ext = tmp_path("scaling.pdf");
    CU_ASSERT_FALSE(plot_scaling(bad_ext, s, 2, &err));
    CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INPUT && strstr(err->message, ".png or .svg"));
    g_clear_error(&err);
    CU_ASSERT_FALSE(g_file_test(bad_ext, G_FILE_TEST_EXISTS));
    CU_ASSERT_FALSE(plot_scaling(bad_ext, s, 0, &err));
    CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INPUT);
    g_clear_error(&err);
    /* nothing plottable */
    double nan5[5] = { NAN, NAN, NAN, NAN, NAN };
    PlotSeries empty = { "e", 5, X, nan5, NULL, NULL, NULL, NULL };
    char *png = tmp_path("never.png");
    CU_ASSERT_FALSE(plot_scaling(png, &empty, 1, &err));
    CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INPUT);
    g_clear_error(&err);
    PlotTrace t = {"t", 5, X, nan5, NULL, NULL, NULL, NULL, NULL};
    CU_ASSERT_FALSE(plot_validation(png, NULL, &t, 1, &err));
    CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INPUT);
    g_clear_error(&err);
    /* an unwritable destination is an error, not a silent success */
    CU_ASSERT_FALSE(plot_scaling("/nonexistent-dir/x/scaling.png", s, 2, &err));
    CU_ASSERT_PTR_NOT_NULL(err);
    g_clear_error(&err);
    /* a gnuplot that fails is reported */
    g_setenv("SHARDSIM_GNUPLOT", "false", TRUE);
    CU_ASSERT_FALSE(plot_scaling(png, s, 2, &err));
    CU_ASSERT_TRUE(err && err->code == SIM_ERROR_INTERNAL && strstr(err->message, "gnuplot failed"));
    g_clear_error(&err);
    g_setenv("SHARDSIM_GNUPLOT", "no-such-gnuplot-binary", TRUE);
    CU_ASSERT_FALSE(plot_scaling(png, s, 2, &err));
    CU_ASSERT_TRUE(err && strstr(err->message, "not found"));
    g_clear_error(&err);
    g_unsetenv("SHARDSIM_GNUPLOT");
    CU_ASSERT_FALSE(g_file_test(png, G_FILE_TEST_EXISTS));
    g_free(png);
    g_free(bad_ext);
}

/* Clean-up last: the directory holds only files this suite made. */
static void test_cleanup(void)
{
    if (!tmpdir)
        return;
    GDir *d = g_dir_open(tmpdir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        char *f = g_build_filename(tmpdir, name, NULL);
        g_unlink(f);
        g_free(f);
    }
    if (d)
        g_dir_close(d);
    CU_ASSERT_EQUAL(g_rmdir(tmpdir), 0);
    g_free(tmpdir);
    tmpdir = NULL;
}

static const TestCase tests[] = {
    { "scaling png", test_scaling_png },
    { "scaling svg labels and determinism", test_scaling_svg_labels },
    { "scaling partial panels", test_scaling_partial },
    { "scaling facets", test_scaling_facets },
    { "memory breakdown", test_memory },
    { "predicted vs measured", test_validation },
    { "errors", test_errors },
    { "cleanup", test_cleanup },
};

TEST_MAIN("plot", tests)
