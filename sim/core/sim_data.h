/* Where presets live: SHARDSIM_DATA_DIR (the environment variable, else the
 * source tree the binary was built from) / SUBDIR / NAME.json.  Shared by the
 * topology, accelerator, workload and collective-parameter loaders. */
#ifndef SIM_DATA_H
#define SIM_DATA_H

#include "sim_json.h"

/* The folder of one kind of preset, e.g. "models/presets/workloads". */
char *sim_data_dir(const char *subdir);
/* Preset names in that folder (files NAME.json), sorted; free with g_strfreev. */
char **sim_data_list(const char *subdir);
/* A name with a '/' or ending in ".json" is a path and is returned as is;
 * otherwise the preset's file, which must exist.  Unknown presets are bad
 * input, and the message lists the ones there are ("unknown WHAT ..."). */
char *sim_data_resolve(const char *subdir, const char *what, const char *name_or_path, GError **err);
/* sim_data_resolve, then sim_json_load_file. */
SimJsonDoc *sim_data_load(const char *subdir, const char *what, const char *name_or_path, GError **err);
/* True when `name_or_path` names a file rather than a preset. */
bool sim_data_is_path(const char *name_or_path);

#endif
