/* Preset lookup: the data folder, the names of the presets in a subfolder,
 * and a name or path resolved to a file (sim_data.h). */
#include "sim_data.h"

#include <string.h>

char *sim_data_dir(const char *subdir)
{
    const char *env = g_getenv("SHARDSIM_DATA_DIR");
    return g_build_filename(env && *env ? env : SHARDSIM_DATA_DIR, subdir, NULL);
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **sim_data_list(const char *subdir)
{
    char *path = sim_data_dir(subdir);
    GPtrArray *a = g_ptr_array_new();
    GDir *dir = g_dir_open(path, 0, NULL);
    if (dir) {
        const char *f;
        while ((f = g_dir_read_name(dir)))
            if (g_str_has_suffix(f, ".json"))
                g_ptr_array_add(a, g_strndup(f, strlen(f) - 5));
        g_dir_close(dir);
    }
    g_ptr_array_sort(a, cmp_str); /* directory order is not stable */
    g_ptr_array_add(a, NULL);
    g_free(path);
    return (char **)g_ptr_array_free(a, FALSE);
}

bool sim_data_is_path(const char *name_or_path)
{
    return strcmp(name_or_path, "-") == 0 || strchr(name_or_path, '/') || g_str_has_suffix(name_or_path, ".json");
}

char *sim_data_resolve(const char *subdir, const char *what, const char *name_or_path, GError **err)
{
    if (!name_or_path || !*name_or_path) {
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "no %s named", what);
        return NULL;
    }
    if (sim_data_is_path(name_or_path))
        return g_strdup(name_or_path);
    char *dir = sim_data_dir(subdir);
    char *file = g_strconcat(name_or_path, ".json", NULL);
    char *path = g_build_filename(dir, file, NULL);
    g_free(file);
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
        char **names = sim_data_list(subdir);
        char *list = g_strjoinv(", ", names);
        g_set_error(err, SIM_ERROR, SIM_ERROR_INPUT, "unknown %s \"%s\" (presets in %s: %s)", what, name_or_path, dir,
                    *list ? list : "none");
        g_free(list);
        g_strfreev(names);
        g_clear_pointer(&path, g_free);
    }
    g_free(dir);
    return path;
}

SimJsonDoc *sim_data_load(const char *subdir, const char *what, const char *name_or_path, GError **err)
{
    char *path = sim_data_resolve(subdir, what, name_or_path, err);
    if (!path)
        return NULL;
    SimJsonDoc *doc = sim_json_load_file(path, err);
    g_free(path);
    return doc;
}
