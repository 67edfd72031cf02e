/* The workload object's layout, shared by workload.c (its parameters,
 * GEMMs, bytes and FLOPs) and workload_json.c (reading and checking it). */
#ifndef WORKLOAD_INTERNAL_H
#define WORKLOAD_INTERNAL_H

#include "workload.h"

typedef enum { CNN_CONV, CNN_FC } CnnLayerType;

typedef struct {
    char *name;
    CnnLayerType type;
    int in, out, kernel, stride, out_hw, groups;
    bool bn, bias, residual;
} CnnLayer;

struct Workload {
    char *name;
    WorkloadKind kind;
    WorkloadTransformer t;
    bool final_norm;
    CnnLayer *cnn;
    int n_cnn;
    int input_hw;
};

#endif
