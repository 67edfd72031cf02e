/* libFuzzer harness: one rank's Chakra ET file (framing, protobuf-c's
 * decoding of Chakra's schema, ids, dependencies, cycles).  In a build
 * without protobuf-c it checks the "built without" refusal. */
#include "chakra_et.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ChakraRank r = {0};
    GError *err = NULL;
    if (chakra_parse_rank("fuzz.0.et", data, size, &r, &err)) {
        for (int i = 0; i < r.n; i++) {
            const ChakraNode *n = &r.nodes[i];
            if (n->type < CHAKRA_METADATA || n->type > CHAKRA_COLL)
                __builtin_trap(); /* success promises known types */
            for (int k = 0; k < n->ndeps; k++)
                if (n->dep_idx[k] < 0 || n->dep_idx[k] >= r.n || r.nodes[n->dep_idx[k]].id != n->deps[k])
                    __builtin_trap(); /* and resolved dependencies */
            (void)strlen(n->name);
            (void)strlen(n->pg_name);
        }
    } else if (!err || err->code != SIM_ERROR_INPUT || !(g_str_has_prefix(err->message, "fuzz.0.et:") ||
                                                          (!chakra_supported() && strstr(err->message, "built without")))) {
        __builtin_trap(); /* failure without the file in the message */
    }
    chakra_rank_clear(&r);
    g_clear_error(&err);
    return 0;
}
