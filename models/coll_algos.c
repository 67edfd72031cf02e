/* The one list of collective algorithms, in CollAlgo order (the tuner's
 * ties go to the earlier), and what is read off it: names, parsing and the
 * choices help texts show.  Adding an algorithm: see coll_internal.h. */
#include "coll_internal.h"


static const CollAlgoDesc *const algos[COLL_NUM_ALGOS] = {
    [COLL_RING] = &coll_ring_algo,       [COLL_TREE] = &coll_tree_algo, [COLL_RHD] = &coll_rhd_algo,
    [COLL_DIRECT] = &coll_direct_algo,   [COLL_HIER] = &coll_hier_algo, [COLL_COLLNET] = &coll_collnet_algo,
    [COLL_NVLS] = &coll_nvls_algo,
};

const CollAlgoDesc *coll_algo_desc(CollAlgo a) { return a >= 0 && a < COLL_NUM_ALGOS ? algos[a] : NULL; }

const char *coll_algo_name(CollAlgo a)
{
    return a == COLL_ALGO_AUTO ? "auto" : a >= 0 && a < COLL_NUM_ALGOS ? algos[a]->name : "?";
}

int coll_algo_parse(const char *s)
{
    if (!g_ascii_strcasecmp(s, "auto"))
        return COLL_ALGO_AUTO;
    for (int i = 0; i < COLL_NUM_ALGOS; i++)
        if (!g_ascii_strcasecmp(s, algos[i]->name))
            return i;
    for (int i = 0; i < COLL_NUM_ALGOS; i++)
        if (algos[i]->alias && !g_ascii_strcasecmp(s, algos[i]->alias))
            return i;
    return -2;
}

const char *coll_algo_choices(void)
{
    static gsize once;
    static char buf[COLL_NUM_ALGOS * 16];
    if (g_once_init_enter(&once)) {
        for (int i = 0; i < COLL_NUM_ALGOS; i++) {
            if (i > 0)
                g_strlcat(buf, "|", sizeof buf);
            g_strlcat(buf, algos[i]->name, sizeof buf);
        }
        g_once_init_leave(&once, 1);
    }
    return buf;
}
