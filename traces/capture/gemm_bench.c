/* shardsim-gemm: times matrix multiplies on the local GPU with cuBLAS (CUDA)
 * or hipBLAS (ROCm) and prints the table `shardsim calibrate --accelerator`
 * reads: one row per shape and type, "m,n,k,dtype,seconds" (the median of the
 * timed calls), after provenance lines starting with '#'.
 *
 * Built only where the toolkit is found (traces/capture/CMakeLists.txt); by
 * hand: cc -std=c11 -O2 gemm_bench.c -lcublas -lcudart (CUDA) or
 * cc -std=c11 -O2 -D__HIP_PLATFORM_AMD__ -DSHARDSIM_GEMM_HIP gemm_bench.c
 * -lhipblas -lamdhip64 (ROCm).
 *
 * C = A B with A m x k, B k x n, column-major, no transposes, FP32
 * accumulation (the shapes a transformer layer's GEMMs have); the default
 * shapes sweep the token count and hidden sizes that do and do not divide the
 * usual tile sizes, so that the fitted efficiency sees tile and wave
 * quantisation. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef SHARDSIM_GEMM_HIP
#include <hip/hip_runtime_api.h>
#include <hipblas/hipblas.h>
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemset hipMemset
#define gpuEvent_t hipEvent_t
#define gpuEventCreate hipEventCreate
#define gpuEventRecord(e) hipEventRecord(e, 0)
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuSuccess hipSuccess
#define blasHandle hipblasHandle_t
#define blasCreate hipblasCreate
#define BLAS_OK HIPBLAS_STATUS_SUCCESS
#define BLAS_N HIPBLAS_OP_N
#define T_BF16 HIPBLAS_R_16B
#define T_F16 HIPBLAS_R_16F
#define T_F32 HIPBLAS_R_32F
#define C_F32 HIPBLAS_COMPUTE_32F
#define GEMM_ALGO HIPBLAS_GEMM_DEFAULT
#define blasGemmEx hipblasGemmEx_v2
static const char *device_name(void)
{
    static hipDeviceProp_t p;
    return hipGetDeviceProperties(&p, 0) == hipSuccess ? p.name : "unknown";
}
#else
#include <cublas_v2.h>
#include <cuda_runtime.h>
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemset cudaMemset
#define gpuEvent_t cudaEvent_t
#define gpuEventCreate cudaEventCreate
#define gpuEventRecord(e) cudaEventRecord(e, 0)
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuSuccess cudaSuccess
#define blasHandle cublasHandle_t
#define blasCreate cublasCreate
#define BLAS_OK CUBLAS_STATUS_SUCCESS
#define BLAS_N CUBLAS_OP_N
#define T_BF16 CUDA_R_16BF
#define T_F16 CUDA_R_16F
#define T_F32 CUDA_R_32F
#define C_F32 CUBLAS_COMPUTE_32F
#define GEMM_ALGO CUBLAS_GEMM_DEFAULT
#define blasGemmEx cublasGemmEx
static const char *device_name(void)
{
    static struct cudaDeviceProp p;
    return cudaGetDeviceProperties(&p, 0) == cudaSuccess ? p.name : "unknown";
}
#endif

#define MAX_ITERS 1000

typedef struct {
    const char *name;
    int type;
    size_t bytes;
} Dtype;

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* The median of `iters` timed calls after `warm` untimed ones (s); < 0 on error. */
static double time_gemm(blasHandle h, const Dtype *dt, long m, long n, long k, int warm, int iters)
{
    void *a = NULL, *b = NULL, *c = NULL;
    double result = -1;
    if (gpuMalloc(&a, (size_t)m * k * dt->bytes) != gpuSuccess || gpuMalloc(&b, (size_t)k * n * dt->bytes) != gpuSuccess ||
        gpuMalloc(&c, (size_t)m * n * dt->bytes) != gpuSuccess)
        goto out;
    gpuMemset(a, 0, (size_t)m * k * dt->bytes);
    gpuMemset(b, 0, (size_t)k * n * dt->bytes);
    float one = 1, zero = 0, ms[MAX_ITERS];
    gpuEvent_t e0, e1;
    gpuEventCreate(&e0);
    gpuEventCreate(&e1);
    for (int i = 0; i < warm + iters; i++) {
        gpuEventRecord(e0);
        if (blasGemmEx(h, BLAS_N, BLAS_N, (int)m, (int)n, (int)k, &one, a, dt->type, (int)m, b, dt->type, (int)k,
                       &zero, c, dt->type, (int)m, C_F32, GEMM_ALGO) != BLAS_OK)
            goto out;
        gpuEventRecord(e1);
        gpuEventSynchronize(e1);
        if (i >= warm)
            gpuEventElapsedTime(&ms[i - warm], e0, e1);
    }
    qsort(ms, (size_t)iters, sizeof ms[0], cmp_float);
    result = ms[iters / 2] / 1e3;
out:
    gpuFree(a);
    gpuFree(b);
    gpuFree(c);
    return result;
}

static int usage(void)
{
    fprintf(stderr, "usage: shardsim-gemm [-w WARMUP] [-n ITERS] [-o FILE] [M,N,K ...]\n"
                    "  times C = A B in bf16, fp16 and fp32 (FP32 accumulation); default shapes: tokens 2048..16384\n"
                    "  x hidden 1024..8192 (and sizes that do not divide the tiles); prints m,n,k,dtype,seconds\n");
    return 2;
}

int main(int argc, char **argv)
{
    int warm = 5, iters = 20;
    const char *out = NULL;
    long shapes[256][3];
    int nshapes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-w") && i + 1 < argc)
            warm = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else if (nshapes < 256 &&
                 sscanf(argv[i], "%ld,%ld,%ld", &shapes[nshapes][0], &shapes[nshapes][1], &shapes[nshapes][2]) == 3 &&
                 shapes[nshapes][0] > 0 && shapes[nshapes][1] > 0 && shapes[nshapes][2] > 0 &&
                 shapes[nshapes][0] <= 65536 && shapes[nshapes][1] <= 65536 && shapes[nshapes][2] <= 65536)
            nshapes++;
        else
            return usage();
    }
    if (warm < 0 || iters < 1 || iters > MAX_ITERS)
        return usage();
    if (nshapes == 0) {
        static const long tokens[] = {2048, 8192, 16384}, hidden[] = {1024, 2048, 4096, 5120, 8192, 1000, 2500, 6000};
        for (size_t t = 0; t < sizeof tokens / sizeof *tokens; t++)
            for (size_t hh = 0; hh < sizeof hidden / sizeof *hidden; hh++) {
                long hd = hidden[hh];
                long s[3][3] = {{tokens[t], 3 * hd, hd}, {tokens[t], hd, hd}, {tokens[t], 4 * hd, hd}};
                for (int q = 0; q < 3; q++)
                    memcpy(shapes[nshapes++], s[q], sizeof s[q]);
            }
    }
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        perror(out);
        return 2;
    }
    blasHandle h;
    if (blasCreate(&h) != BLAS_OK) {
        fprintf(stderr, "shardsim-gemm: cannot create a BLAS handle (no GPU?)\n");
        return 1;
    }
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(f, "# source: shardsim-gemm (traces/capture/gemm_bench.c), %s\n# device: %s\n# date: %s\n"
               "# method: C = A B, column-major, no transposes, FP32 accumulation; median of %d calls after %d\n"
               "m,n,k,dtype,seconds\n",
#ifdef SHARDSIM_GEMM_HIP
            "hipBLAS",
#else
            "cuBLAS",
#endif
            device_name(), date, iters, warm);
    static const Dtype types[] = {{"bf16", T_BF16, 2}, {"fp16", T_F16, 2}, {"fp32", T_F32, 4}};
    int rc = 0;
    for (int s = 0; s < nshapes; s++)
        for (size_t d = 0; d < sizeof types / sizeof *types; d++) {
            double t = time_gemm(h, &types[d], shapes[s][0], shapes[s][1], shapes[s][2], warm, iters);
            if (t < 0) {
                fprintf(stderr, "shardsim-gemm: %ld,%ld,%ld %s failed\n", shapes[s][0], shapes[s][1], shapes[s][2],
                        types[d].name);
                rc = 1;
                continue;
            }
            fprintf(f, "%ld,%ld,%ld,%s,%.9g\n", shapes[s][0], shapes[s][1], shapes[s][2], types[d].name, t);
        }
    if (out)
        fclose(f);
    return rc;
}
