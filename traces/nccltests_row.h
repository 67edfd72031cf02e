/* Private to the nccl-tests reader: one result table's column layout and
 * its rows, between the line reader (nccltests.c) and the row checks
 * (nccltests_row.c). */
#ifndef NCCLTESTS_ROW_H
#define NCCLTESTS_ROW_H

#include "nccltests_runs.h"
#include "trace_text.h"

/* Column positions of one result table; -1 where absent. */
typedef struct {
    int n_fields;
    int size, count, type, redop, root;
    int time[2], alg[2], bus[2];
    int wrong[2]; /* "#wrong" (nccl-tests 2.13 on), -1 where absent */
    bool cputime;  /* -C 1: the time columns are the host's launch time, algbw the GPUs' */
} NcclLayout;

/* The layout from a column-header line's tokens (after the '#'). */
bool nccltests_layout_from_header(const TraceTok *t, int n, NcclLayout *L);
/* Without a header line: the classic layouts by field count. */
bool nccltests_layout_from_count(int n, NcclLayout *L);
/* Reads the row of `n` tokens at `line` into `tr`, checked: 1 a row read
 * (or a zero-size one counted); 2 it starts the next datatype's table, not
 * read; 0 bad input, `err` set. */
int nccltests_parse_row(NcclTrace *tr, const NcclLayout *L, const TraceTok *t, int n, int line, GError **err);

#endif
