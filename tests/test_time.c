#include "sim_json.h"
#include "sim_time.h"
#include "sim_units.h"
#include "test_main.h"

#include <CUnit/Basic.h>
#include <math.h>
#include <string.h>

static void test_time_roundtrip(void)
{
    CU_ASSERT_EQUAL(sim_time_from_s(1.0), SIM_TIME_PS_PER_S);
    CU_ASSERT_EQUAL(sim_time_from_s(1.5e-12), 2); /* rounds to nearest */
    CU_ASSERT_EQUAL(sim_time_from_s(-3.0), 0);
    CU_ASSERT_EQUAL(sim_time_from_s(NAN), 0);
    CU_ASSERT_EQUAL(sim_time_from_s(1e30), SIM_TIME_NEVER);
    /* from 2^63 ps (107 days) to 2^64 (213): exact, not 2^63 (llround's
     * signed result wrapped there; review 9) */
    CU_ASSERT_EQUAL(sim_time_from_s(1e7), (sim_time_t)1e19);
    CU_ASSERT_EQUAL(sim_time_from_s(1.5e7), (sim_time_t)1.5e19);
    CU_ASSERT_TRUE(sim_time_from_s(1.5e7) > sim_time_from_s(1e7));
    CU_ASSERT_DOUBLE_EQUAL(sim_time_to_s(sim_time_from_s(0.125)), 0.125, 1e-15);
    CU_ASSERT_EQUAL(sim_time_add(SIM_TIME_NEVER - 1, 5), SIM_TIME_NEVER);
}

static void test_parse_size(void)
{
    double b = 0;
    CU_ASSERT_TRUE(sim_parse_size("8", &b));
    CU_ASSERT_DOUBLE_EQUAL(b, 8, 0);
    CU_ASSERT_TRUE(sim_parse_size("8B", &b));
    CU_ASSERT_DOUBLE_EQUAL(b, 8, 0);
    CU_ASSERT_TRUE(sim_parse_size("64KiB", &b));
    CU_ASSERT_DOUBLE_EQUAL(b, 65536, 0);
    CU_ASSERT_TRUE(sim_parse_size("8GiB", &b));
    CU_ASSERT_DOUBLE_EQUAL(b, 8589934592.0, 0);
    CU_ASSERT_TRUE(sim_parse_size("1M", &b));
    CU_ASSERT_DOUBLE_EQUAL(b, 1048576, 0);
    CU_ASSERT_FALSE(sim_parse_size("", &b));
    CU_ASSERT_FALSE(sim_parse_size("12XB", &b));
    CU_ASSERT_FALSE(sim_parse_size("-4", &b));
    CU_ASSERT_TRUE(sim_parse_size("2.5K", &b));
    CU_ASSERT_DOUBLE_EQUAL(b, 2560, 0);
    CU_ASSERT_TRUE(sim_parse_size("1m", &b));
    CU_ASSERT_DOUBLE_EQUAL(b, 1048576, 0);
    CU_ASSERT_FALSE(sim_parse_size("2.5", &b));        /* not a whole byte */
    CU_ASSERT_FALSE(sim_parse_size("1e30", &b));       /* beyond 2^53 */
    CU_ASSERT_FALSE(sim_parse_size("99999999999999999999", &b));
}

static void test_json_error_lines(void)
{
    const char *text = "{\n  \"a\": 1,\n  \"b\": {\n    \"c\": \"x\"\n  }\n}\n";
    GError *err = NULL;
    SimJsonDoc *doc = sim_json_parse("t.json", text, strlen(text), &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    const cJSON *b = cJSON_GetObjectItem(sim_json_root(doc), "b");
    double v = 0;
    CU_ASSERT_FALSE(sim_json_get_number(doc, b, "c", true, 0, 1, &v, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_STRING_EQUAL(err->message, "t.json:4: \"c\" must be a number");
    g_clear_error(&err);
    long n = 0;
    CU_ASSERT_FALSE(sim_json_get_int(doc, sim_json_root(doc), "a", true, 2, 5, &n, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_STRING_EQUAL(err->message, "t.json:2: \"a\" must be between 2 and 5, not 1");
    g_clear_error(&err);
    CU_ASSERT_FALSE(sim_json_get_int(doc, b, "zz", true, 0, 1, &n, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_STRING_EQUAL(err->message, "t.json:3: missing required field \"zz\"");
    g_clear_error(&err);
    sim_json_free(doc);

    const char *bad = "{\n \"a\": 1,\n \"b\": [1, 2,,]\n}";
    CU_ASSERT_PTR_NULL(sim_json_parse("bad.json", bad, strlen(bad), &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    CU_ASSERT_TRUE(g_str_has_prefix(err->message, "bad.json:3: invalid JSON"));
    g_clear_error(&err);
}

/* Found by fuzzing: cJSON takes any control byte as whitespace; the line
 * scanner must too, and must never spin when out of step with the tree. */
static void test_json_control_bytes(void)
{
    const char hang[] = "[\b[1,2]]";
    GError *err = NULL;
    SimJsonDoc *doc = sim_json_parse("hang.json", hang, sizeof hang - 1, &err);
    CU_ASSERT_PTR_NOT_NULL(doc);
    sim_json_free(doc);
    g_clear_error(&err);
    const char ctl[] = "{\x01\"a\":\x02[1,\x03{\"b\":\x1f" "2}]}";
    doc = sim_json_parse("ctl.json", ctl, sizeof ctl - 1, &err);
    if (doc)
        sim_json_free(doc);
    g_clear_error(&err);
}

static void test_json_duplicates_and_utf8(void)
{
    GError *err = NULL;
    const char *dup = "{\n \"nodes\": 8,\n \"p\": {\"a\": 1},\n \"nodes\": 16\n}";
    CU_ASSERT_PTR_NULL(sim_json_parse("d.json", dup, strlen(dup), &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_STRING_EQUAL(err->message, "d.json:4: \"nodes\" is given twice in one object");
    g_clear_error(&err);
    const char *bytes = "{\"name\": \"\xff\xfe\"}";
    CU_ASSERT_PTR_NULL(sim_json_parse("u.json", bytes, strlen(bytes), &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_STRING_EQUAL(err->message, "u.json:1: not valid UTF-8 text");
    g_clear_error(&err);
}

/* Quantities print in their unit's scale; seconds past it as written
 * (review 8: a latency of 1e300 s printed "inf s"). */
static void test_format_quantity(void)
{
    const struct { double v; SimUnit u; const char *want; } cases[] = {
        {2e-6, SIM_UNIT_SECONDS, "2 us"},  {1e300, SIM_UNIT_SECONDS, "1e+300 s"}, {64.0 * 1073741824, SIM_UNIT_BYTES, "64 GiB"},
        {1.5e12, SIM_UNIT_BYTES_PER_S, "1.5 TB/s"}, {1.0000001, SIM_UNIT_NONE, "1"}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *s = sim_format_quantity(cases[i].v, cases[i].u);
        CU_ASSERT_STRING_EQUAL(s, cases[i].want);
        g_free(s);
    }
    GError *err = NULL;
    CU_ASSERT_FALSE(sim_check_range("\"x\"", 1.0000001, 0.01, 1, SIM_UNIT_NONE, &err));
    CU_ASSERT_STRING_EQUAL(err->message, "\"x\" must be between 0.01 and 1, not 1 (1.0000001000000001)");
    g_clear_error(&err);
}

static const TestCase tests[] = {
    {"time roundtrip", test_time_roundtrip},
    {"quantities printed", test_format_quantity},
    {"parse size", test_parse_size},
    {"json error lines", test_json_error_lines},
    {"json control bytes", test_json_control_bytes},
    {"json duplicate keys and UTF-8", test_json_duplicates_and_utf8},
};
TEST_MAIN("time_and_input", tests)
