/* sim_file: size caps, regular files only, "-" for standard input once;
 * and SIM_ECHO, how messages quote a user's text. */
#include "sim_json.h"
#include "sim_file.h"

#include <CUnit/Basic.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_main.h"

static char *tmp_file(const char *dir, const char *name, const char *text)
{
    char *path = g_build_filename(dir, name, NULL);
    CU_ASSERT_TRUE(g_file_set_contents(path, text, -1, NULL));
    return path;
}

static void expect_input_error(char *text, GError *err, const char *fragment)
{
    CU_ASSERT_PTR_NULL(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    if (!strstr(err->message, fragment))
        fprintf(stderr, "\n'%s' lacks '%s'\n", err->message, fragment);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, fragment));
    g_error_free(err);
    g_free(text);
}

static void test_cap(void)
{
    char *dir = g_dir_make_tmp("shardsim-XXXXXX", NULL);
    char *path = tmp_file(dir, "ten.txt", "0123456789");
    size_t len = 0;
    GError *err = NULL;
    char *text = sim_file_read(path, 10, "a test", &len, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL(len, 10);
    CU_ASSERT_STRING_EQUAL(text, "0123456789");
    g_free(text);
    text = sim_file_read(path, 9, "a test", &len, &err);
    expect_input_error(text, err, "limit for a test");
    g_unlink(path);
    g_free(path);
    g_rmdir(dir);
    g_free(dir);
}

static void test_not_regular(void)
{
    GError *err = NULL;
    char *text;
    text = sim_file_read("/dev/zero", 1 << 20, "JSON input", NULL, &err);
    expect_input_error(text, err, "is a device");
    err = NULL;
    char *dir = g_dir_make_tmp("shardsim-XXXXXX", NULL);
    text = sim_file_read(dir, 1 << 20, "JSON input", NULL, &err);
    expect_input_error(text, err, "is a directory");
    char *fifo = g_build_filename(dir, "fifo", NULL);
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    err = NULL; /* refused by name: the read must not wait for a writer */
    text = sim_file_read(fifo, 1 << 20, "JSON input", NULL, &err);
    expect_input_error(text, err, "is a FIFO");
    err = NULL;
    char *none = g_build_filename(dir, "none", NULL);
    text = sim_file_read(none, 1 << 20, "JSON input", NULL, &err);
    expect_input_error(text, err, "none");
    g_unlink(fifo);
    g_rmdir(dir);
    g_free(none);
    g_free(fifo);
    g_free(dir);
}

/* "-" is standard input, read once; its bytes count against the cap too. */
static void test_stdin(void)
{
    char *dir = g_dir_make_tmp("shardsim-XXXXXX", NULL);
    char *path = tmp_file(dir, "in.json", "{\"a\": 1}\n");
    int saved = dup(STDIN_FILENO);
    CU_ASSERT_TRUE_FATAL(freopen(path, "r", stdin) != NULL);
    GError *err = NULL;
    SimJsonDoc *doc = sim_json_load_file("-", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_STRING_EQUAL(sim_json_path(doc), "<stdin>");
    sim_json_free(doc);
    char *text = sim_file_read("-", 1 << 20, "JSON input", NULL, &err);
    expect_input_error(text, err, "only once");
    dup2(saved, STDIN_FILENO);
    close(saved);
    g_unlink(path);
    g_free(path);
    g_rmdir(dir);
    g_free(dir);
}

/* SIM_ECHO: short text as given, control characters escaped (a message
 * stays on one line), at most SIM_ECHO_MAX characters then "...", whole
 * UTF-8 characters, the widest within its buffer. */
static void test_echo(void)
{
    CU_ASSERT_STRING_EQUAL(SIM_ECHO("fused"), "fused");
    CU_ASSERT_STRING_EQUAL(SIM_ECHO("ab\ncd\t\x01\x7f"), "ab\\ncd\\t\\x01\\x7f");
    CU_ASSERT_STRING_EQUAL(SIM_ECHO(NULL), "(null)");
    GString *longs = g_string_new(NULL), *want = g_string_new(NULL);
    for (int i = 0; i < SIM_ECHO_MAX + 5; i++) {
        g_string_append(longs, "\xf0\x9f\x98\x80"); /* 4 bytes in UTF-8 */
        if (i < SIM_ECHO_MAX)
            g_string_append(want, "\xf0\x9f\x98\x80");
    }
    g_string_append(want, "...");
    CU_ASSERT_STRING_EQUAL(SIM_ECHO(longs->str), want->str);
    g_string_truncate(longs, 0);
    for (int i = 0; i < SIM_ECHO_MAX + 5; i++)
        g_string_append_c(longs, '\x02');
    const char *e = SIM_ECHO(longs->str);
    CU_ASSERT_EQUAL(strlen(e), 4 * SIM_ECHO_MAX + 3);
    g_string_free(longs, TRUE);
    g_string_free(want, TRUE);
}

/* CSV cells: quotes hold commas and doubled quotes; spaces around a cell
 * dropped, inside quotes kept; an open quote or text after one refused. */
static void test_csv(void)
{
    GError *err = NULL;
    gchar **f = sim_csv_fields(" a , \"b, \"\"c\"\"\" ,,\" d \"", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(g_strv_length(f), 4);
    CU_ASSERT_STRING_EQUAL(f[0], "a");
    CU_ASSERT_STRING_EQUAL(f[1], "b, \"c\"");
    CU_ASSERT_STRING_EQUAL(f[2], "");
    CU_ASSERT_STRING_EQUAL(f[3], " d ");
    g_strfreev(f);
    f = sim_csv_fields("x,", &err);
    CU_ASSERT_EQUAL(g_strv_length(f), 2);
    g_strfreev(f);
    const char *bad[] = {"a,\"b", "\"a\"b,c", "a,\"\"\"", NULL};
    for (int i = 0; bad[i]; i++) {
        CU_ASSERT_PTR_NULL(sim_csv_fields(bad[i], &err));
        CU_ASSERT_PTR_NOT_NULL(err);
        g_clear_error(&err);
    }
}

static const TestCase tests[] = {
    {"CSV cells", test_csv},
    {"size cap", test_cap},
    {"SIM_ECHO: quoted text", test_echo},
    {"only regular files by name", test_not_regular},
    {"standard input once", test_stdin},
};
TEST_MAIN("file", tests)
