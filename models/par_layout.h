/* Megatron-Core's pipeline_model_parallel_layout strings (par_layout.c),
 * for the scenario's check and the step's partition. */
#ifndef PAR_LAYOUT_H
#define PAR_LAYOUT_H

#include <stdbool.h>

/* The decoder layers ('t') of each of the `chunks` (pp x vpp) model chunks
 * of `layout` ("Et*4|(t*4|)*14tmL") into `out`, checked against the model
 * (the embedding 'E' opening the first chunk, the loss 'L' and the
 * mtp_layers MTP modules 'm' in the last, every layer placed); false with
 * `why` (a static string) when it does not parse or fit. */
bool layout_chunks(const char *layout, int chunks, int layers, int mtp_layers, int *out, const char **why);

#endif
