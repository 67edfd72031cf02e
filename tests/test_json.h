/* Reading numbers out of a step result's JSON in the tests (shared by the
 * step, parallelism, seed-technique and torus suites). */
#ifndef TEST_JSON_H
#define TEST_JSON_H

#include <cjson/cJSON.h>
#include <math.h>

/* r[a] or r[a][b] as a number; NaN when missing. */
static inline double get(const cJSON *r, const char *a, const char *b)
{
    const cJSON *o = cJSON_GetObjectItem(r, a);
    if (b)
        o = cJSON_GetObjectItem(o, b);
    return o ? o->valuedouble : NAN;
}

#endif
