#include "nccltests.h"
#include "test_main.h"

#include <CUnit/Basic.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define DATA_TRACES SHARDSIM_SOURCE_DIR "/tests/data/traces"

/* What each real trace must read as.  Counted by hand from the files. */
typedef struct {
    const char *dir;
    const char *file;
    int run;                    /* 0: a file of one run; k: run k of several */
    size_t rows;
    uint64_t first_size, last_size;
    NcclTestsOp op;
    int ranks, hosts, per_host; /* per_host 0: the file shows no Rank lines */
    int factor_ranks;           /* ranks for the busbw factor */
    const char *device;         /* first device name, NULL if none printed */
    const char *nccl_version;   /* NULL if the output prints none */
} Expect;

#define MI325X "rccl-tests_allreduce_mi325x_1-2-4-8node_hisohara-aac11.txt"
#define H100_4NODE "nccl-tests_allreduce_h100-sxm_4node32gpu_8x400g-ib_vmware-vm_nccl2.26.2_nccl-tests-issue309.txt"
#define H100_GJ "nccl-tests_allreduce_h100-sxm_2-4-8node_400g-ib_nccl-tests-issue309-gj-aion.txt"
#define DALL "nccl-tests_allreduce_h200-dell-xe9680_2node16gpu_8x400g-roce-spectrumx_nccl2.30.4_openshift-guide-all-datatypes.txt"
static const Expect EXPECT[] = {
    /* -d all: each datatype's table a run of the same job (int8 ... f8e5m2) */
    { DATA_TRACES, DALL, 1, 3, 10737418240ull, 42949672960ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.30.4" },
    { DATA_TRACES, DALL, 2, 3, 10737418240ull, 42949672960ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.30.4" },
    { DATA_TRACES, DALL, 3, 3, 10737418240ull, 42949672960ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.30.4" },
    { DATA_TRACES, DALL, 4, 3, 10737418240ull, 42949672960ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.30.4" },
    { DATA_TRACES, DALL, 5, 3, 10737418240ull, 42949672960ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.30.4" },
    { DATA_TRACES, DALL, 6, 3, 10737418240ull, 42949672960ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.30.4" },
    { DATA_TRACES, DALL, 7, 3, 10737418240ull, 42949672960ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.30.4" },
    { DATA_TRACES, DALL, 8, 3, 10737418240ull, 42949672960ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.30.4" },
    { DATA_TRACES, DALL, 9, 3, 10737418240ull, 42949672960ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.30.4" },
    { DATA_TRACES, DALL, 10, 3, 10737418240ull, 42949672960ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.30.4" },
    { DATA_TRACES, DALL, 11, 3, 10737418240ull, 42949672960ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.30.4" },
    { DATA_TRACES, DALL, 12, 3, 10737418240ull, 42949672960ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.30.4" },
    /* SuperBench's fixtures: 8 x A100 in one process (-g 8), old nccl-tests (no Group), zero-size rows skipped */
    { DATA_TRACES, "nccl-tests_allgather_a100-40gb_1node8gpu_g8-one-process_superbench-fixture.txt", 0, 29, 32ull,
      8589934592ull, NCCLTESTS_ALLGATHER, 8, 1, 8, 8, "A100-SXM4-40GB", NULL },
    { DATA_TRACES, "nccl-tests_allreduce_a100-40gb_1node8gpu_g8-one-process_superbench-fixture.txt", 0, 32, 4ull,
      8589934592ull, NCCLTESTS_ALLREDUCE, 8, 1, 8, 8, "A100-SXM4-40GB", NULL },
    { DATA_TRACES, "nccl-tests_alltoall_a100-40gb_1node8gpu_g8-one-process_superbench-fixture.txt", 0, 29, 32ull,
      8589934592ull, NCCLTESTS_ALLTOALL, 8, 1, 8, 8, "A100-SXM4-40GB", NULL },
    { DATA_TRACES, "nccl-tests_broadcast_a100-40gb_1node8gpu_g8-one-process_superbench-fixture.txt", 0, 32, 4ull,
      8589934592ull, NCCLTESTS_BROADCAST, 8, 1, 8, 8, "A100-SXM4-40GB", NULL },
    { DATA_TRACES, "nccl-tests_reduce_a100-40gb_1node8gpu_g8-one-process_superbench-fixture.txt", 0, 32, 4ull,
      8589934592ull, NCCLTESTS_REDUCE, 8, 1, 8, 8, "A100-SXM4-40GB", NULL },
    { DATA_TRACES, "nccl-tests_reducescatter_a100-40gb_1node8gpu_g8-one-process_superbench-fixture.txt", 0, 29, 32ull,
      8589934592ull, NCCLTESTS_REDUCESCATTER, 8, 1, 8, 8, "A100-SXM4-40GB", NULL },
    { DATA_TRACES, "nccl-tests_allreduce_abci-a100-40gb_2node-16gpu_sharp.txt", 0, 29, 8,
      2147483648ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA A100-SXM4-40GB", NULL },
    { DATA_TRACES, "nccl-tests_allreduce_v100-sxm2-16gb_8gpu_hybrid-cube-mesh.txt", 0, 25, 8,
      134217728ull, NCCLTESTS_ALLREDUCE, 8, 1, 8, 8, "Tesla V100-SXM2-16GB", NULL },
    { DATA_TRACES, "rccl-tests_allreduce_mi300x_8gpu_1node.txt", 0, 31, 8, 8589934592ull,
      NCCLTESTS_ALLREDUCE, 8, 1, 8, 8, "AMD Instinct MI300X", NULL },
    { DATA_TRACES, "rccl-tests_allreduce_mi300x_2node-16gpu_roce.txt", 0, 32, 8, 17179869184ull,
      NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "AMD Instinct MI300X", "2.22.3" },
    { DATA_TRACES, "rccl-tests_allreduce_mi355x_2node-16gpu_pollara400.txt", 0, 31, 8,
      8589934592ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, NULL, "2.26.6" },
    { DATA_TRACES, "rccl-tests_allreduce_mi355x_2node-16gpu_pollara400_rccl2.27.7_vultr.txt", 0, 31, 16,
      17179869184ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "AMD Radeon Graphics", "2.27.7" },
    /* the same hosts' all-to-all: its four zero-size rows skipped */
    { DATA_TRACES, "rccl-tests_alltoall_mi355x_2node-16gpu_pollara400_rccl2.27.7_vultr.txt", 0, 27, 256,
      17179869184ull, NCCLTESTS_ALLTOALL, 16, 2, 8, 16, "AMD Radeon Graphics", "2.27.7" },
    /* one of those hosts alone, 8 GPUs in one process (-g 8) */
    { DATA_TRACES, "rccl-tests_alltoall_mi355x_1node8gpu_xgmi_rccl2.27.7_vultr.txt", 0, 21, 128, 134217728ull,
      NCCLTESTS_ALLTOALL, 8, 1, 8, 8, "AMD Radeon Graphics", "2.27.7" },
    /* sendrecv's factor is 1: busbw/algbw cannot tell the ranks */
    { DATA_TRACES, "nccl-tests_sendrecv_a100_8gpu_nvlink.txt", 0, 4, 134217728ull, 1073741824ull,
      NCCLTESTS_SENDRECV, 0, 0, 0, 8, NULL, NULL },
    { DATA_TRACES, "nccl-tests_allreduce_h100-sxm_2node16gpu_8hca_multinode-guide.txt", 0, 6, 268435456ull,
      8589934592ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H100 80GB HBM3", NULL },
    /* no Rank lines: 2 ranks from busbw/algbw = 1 */
    { DATA_TRACES, "nccl-tests_allreduce_h100-pcie-nvlinkbridge_2gpu_nccl-issue1161_PARTIAL.txt", 0, 2,
      1073741824ull, 2147483648ull, NCCLTESTS_ALLREDUCE, 2, 0, 0, 2, NULL, NULL },
    { DATA_TRACES, "nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_1node8gpu_nccl2.25.1_ocitutorials-ol.txt", 0, 1,
      10737418240ull, 10737418240ull, NCCLTESTS_ALLREDUCE, 8, 1, 8, 8, "NVIDIA A100-SXM4-40GB", "2.25.1" },
    { DATA_TRACES, "nccl-tests_allreduce_gh200_2node2gpu_slingshot_cscs-alps.txt", 0, 8, 1048576ull,
      134217728ull, NCCLTESTS_ALLREDUCE, 2, 2, 1, 2, "NVIDIA GH200 120GB", "2.30.7" },
    /* the same machine's 2 x 4 GPUs from CSCS's NCCL page; nccl-tests 2.17.1 prints no version */
    { DATA_TRACES, "nccl-tests_allreduce_gh200_2node8gpu_slingshot_cscs-alps-ce.txt", 0, 25, 8ull,
      134217728ull, NCCLTESTS_ALLREDUCE, 8, 2, 4, 8, "NVIDIA GH200 120GB", NULL },
    /* 2 x 4 GH200 of CSCS's Santis in the CXI container (cray-network-stack README); nccl-tests 2.16.4 */
    { DATA_TRACES, "nccl-tests_allreduce_gh200_2node8gpu_slingshot_cscs-santis-cxi-container.txt", 0, 25, 8ull,
      134217728ull, NCCLTESTS_ALLREDUCE, 8, 2, 4, 8, "NVIDIA GH200 120GB", NULL },
    { DATA_TRACES, "nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_2node16gpu_nccl2.26.5_ocitutorials-ubuntu.txt", 0,
      1, 10737418240ull, 10737418240ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA A100-SXM4-40GB", NULL },
    /* oracle-quickstart/oci-hpc-oke README: 8 B to 8 GiB, no version printed */
    { DATA_TRACES, "nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_2node16gpu_oke-rdma-readme.txt", 0, 31, 8ull,
      8589934592ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA A100-SXM4-40GB", NULL },
    { DATA_TRACES, "nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_2node16gpu_nccl2.14.3_oci-hpc-oke.txt", 0, 2,
      1073741824ull, 10737418240ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA A100-SXM4-40GB", "2.14.3" },
    /* mpirun --tag-output "[1,0]<stdout>:" prefixes; nccl-tests of 2021 without "Group" */
    { DATA_TRACES, "nccl-tests_allreduce_a100-40gb-aws-p4d_2node16gpu_efa_nccl2.8.3_aws-efa-eks.txt", 0, 28, 8ull,
      1073741824ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "A100-SXM4-40GB", "2.8.3" },
    { DATA_TRACES, "nccl-tests_allreduce_a100-40gb-aws-p4d_2node16gpu_efa_nccl2.23.4_aws-dlami-guide.txt", 0, 28, 8ull,
      1073741824ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA A100-SXM4-40GB", "2.23.4" },
    /* awsome-distributed-training README: srun "0: " labels, no Rank lines, no version */
    { DATA_TRACES, "nccl-tests_allreduce_a100-80gb-aws-p4de_2node16gpu_efa_awsome-distributed-training.txt", 0, 29, 8ull,
      2147483648ull, NCCLTESTS_ALLREDUCE, 16, 0, 0, 16, NULL, NULL },
    { DATA_TRACES, "nccl-tests_allreduce_h100-aws-p5_2node16gpu_efa_awsome-distributed-training.txt", 0, 32, 8ull,
      17179869184ull, NCCLTESTS_ALLREDUCE, 16, 0, 0, 16, NULL, NULL },
    /* mpirun --tag-output's "[1,0]<stdout>:" labels, one p5 instance, no Rank lines */
    { DATA_TRACES, "nccl-tests_allreduce_h100-aws-p5_1node8gpu_awsome-distributed-training-aws-batch.txt", 0, 32, 8ull,
      17179869184ull, NCCLTESTS_ALLREDUCE, 8, 0, 0, 8, NULL, NULL },
    { DATA_TRACES, "nccl-tests_allreduce_h100-sxm-dell-xe9680_2node16gpu_8x400g-ib_nccl2.26.2_nccl-tests-issue309.txt", 0,
      32, 8ull, 17179869184ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H100 80GB HBM3", "2.26.2" },
    { DATA_TRACES, "nccl-tests_allreduce_h100-gcp-a3mega_2node16gpu_tcpxo_create-a3mega.txt", 0, 31, 8ull,
      8589934592ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H100 80GB HBM3", NULL },
    /* nccl-tests issue #290: one process driving 8 H100s (-g 8), the op from a '# op:' header */
    { DATA_TRACES, "nccl-tests_allreduce_h100-sxm_1node8gpu_g8-one-process_nccl-tests-issue290.txt", 0, 6,
      134217728ull, 4294967296ull, NCCLTESTS_ALLREDUCE, 8, 1, 8, 8, "NVIDIA H100 80GB HBM3", NULL },
    /* 2 x 8 H200 over Spectrum-X RoCE, one process per node driving its 8 GPUs */
    { DATA_TRACES, "nccl-tests_allreduce_h200-dell-xe9680_2node16gpu_8x400g-roce-spectrumx_nccl2.30.4_openshift-guide.txt",
      0, 25, 1024ull, 17179869184ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.30.4" },
    /* dstack's cluster pages: result tables without Rank lines (16 ranks from busbw/algbw) */
    { DATA_TRACES, "nccl-tests_allreduce_a100-80gb-crusoe_2node16gpu_8x200g-ib_dstack-docs.txt", 0, 29, 8ull,
      2147483648ull, NCCLTESTS_ALLREDUCE, 16, 0, 0, 16, NULL, NULL },
    { DATA_TRACES, "nccl-tests_allreduce_b200-lambda-1cc_2node16gpu_ndr-ib_nccl2.26.2_dstack-docs.txt", 0, 29, 8ull,
      2147483648ull, NCCLTESTS_ALLREDUCE, 16, 0, 0, 16, NULL, "2.26.2" },
    /* the table without nccl-tests' '#' prefixes */
    { DATA_TRACES, "nccl-tests_allreduce_h100-nebius_2node16gpu_ndr-ib_dstack-docs.txt", 0, 31, 8ull,
      8589934592ull, NCCLTESTS_ALLREDUCE, 16, 0, 0, 16, NULL, NULL },
    { DATA_TRACES, "nccl-tests_allreduce_b200-gcp-a4_2node16gpu_8x400g-roce_dstack-docs.txt", 0, 11, 8388608ull,
      8589934592ull, NCCLTESTS_ALLREDUCE, 16, 0, 0, 16, NULL, NULL },
    /* nccl-tests issue #309's 4-node run (VMware VMs on HGX H100 hosts) */
    { DATA_TRACES, H100_4NODE, 0, 32, 8ull, 17179869184ull, NCCLTESTS_ALLREDUCE, 32, 4, 8, 32,
      "NVIDIA H100 80GB HBM3", "2.26.2" },
    /* the same thread's 8-, 2- and 4-node runs of one cluster, each under its own nThread line */
    { DATA_TRACES, H100_GJ, 1, 14, 1048576ull, 8589934592ull, NCCLTESTS_ALLREDUCE, 64, 8, 8, 64,
      "NVIDIA H100 80GB HBM3", NULL },
    { DATA_TRACES, H100_GJ, 2, 14, 1048576ull, 8589934592ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16,
      "NVIDIA H100 80GB HBM3", NULL },
    { DATA_TRACES, H100_GJ, 3, 14, 1048576ull, 8589934592ull, NCCLTESTS_ALLREDUCE, 32, 4, 8, 32,
      "NVIDIA H100 80GB HBM3", NULL },
    /* a PR's tail of a 72-GPU NVL72 run: its one Rank line (rank 71) comes before any run
     * opens and is not read; 72 ranks from busbw/algbw, hosts unknown */
    { DATA_TRACES, "nccl-tests_allreduce_gb200-nvl72_1rack72gpu_mnnvl_coreweave-pr43.txt", 0, 5, 536870912ull,
      8589934592ull, NCCLTESTS_ALLREDUCE, 72, 0, 0, 72, NULL, NULL },
    /* 2 x 8 H200 at 1-16 GiB: OCI RoCE (argonne-lcf/oci-howto) and Nebius IB (a Run:ai cookbook) */
    { DATA_TRACES, "nccl-tests_allreduce_h200-oci_2node16gpu_8x-roce_nccl2.27.5_argonne-oci-howto.txt", 0, 5,
      1073741824ull, 17179869184ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", "2.27.5" },
    { DATA_TRACES, "nccl-tests_allreduce_h200-nebius_2node16gpu_ib_runai-ml-cookbook.txt", 0, 5, 1073741824ull,
      17179869184ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H200", NULL },
    /* 2 x 8 H100 / H200 at 512 MiB-8 GiB on Kubernetes (SkyPilot's pages: tables without Rank lines) and
     * 2 x 8 H100 on OCI RoCE at 1-16 GiB; one DGX H100 node, 8 B-16 GiB (NVIDIA dgxc-benchmarking) */
    { DATA_TRACES, "nccl-tests_allreduce_h100-nebius_2node16gpu_ndr-ib_k8s_skypilot-docs.txt", 0, 5, 536870912ull,
      8589934592ull, NCCLTESTS_ALLREDUCE, 16, 0, 0, 16, NULL, NULL },
    { DATA_TRACES, "nccl-tests_allreduce_h200-coreweave_2node16gpu_ib_skypilot-docs.txt", 0, 5, 536870912ull,
      8589934592ull, NCCLTESTS_ALLREDUCE, 16, 0, 0, 16, NULL, NULL },
    { DATA_TRACES, "nccl-tests_allreduce_h100-oci-bm-gpu-h100.8_2node16gpu_16x200g-roce_nccl2.23.4_oci-hpc-troubleshooting.txt",
      0, 5, 1073741824ull, 17179869184ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H100 80GB HBM3", "2.23.4" },
    { DATA_TRACES, "nccl-tests_allreduce_h100-dgx_1node8gpu_nvswitch-nvls_dgxc-benchmarking.txt", 0, 32, 8ull,
      17179869184ull, NCCLTESTS_ALLREDUCE, 8, 1, 8, 8, "NVIDIA H100 80GB HBM3", NULL },
    /* Google Cloud's gIB pages: all-gather tables without Rank lines (16 ranks from busbw/algbw) */
    { DATA_TRACES, "nccl-tests_allgather_b200-gcp-a4_2node16gpu_8x400g-roce-gib_nccl2.25.1_gcp-docs-vms.txt", 0, 23,
      4096ull, 17179869184ull, NCCLTESTS_ALLGATHER, 16, 0, 0, 16, NULL, "2.25.1" },
    { DATA_TRACES, "nccl-tests_allgather_h200-gcp-a3ultra_2node16gpu_8x400g-roce-gib_gcp-docs.txt", 0, 24, 1024ull,
      8589934592ull, NCCLTESTS_ALLGATHER, 16, 0, 0, 16, NULL, NULL },
    /* dstack's A3 High page: all-gather, no '#' prefixes, no Rank lines, no version */
    { DATA_TRACES, "nccl-tests_allgather_h100-gcp-a3high_2node16gpu_tcpx_dstack-docs.txt", 0, 11, 8388608ull,
      8589934592ull, NCCLTESTS_ALLGATHER, 16, 0, 0, 16, NULL, NULL },
    { DATA_TRACES, "nccl-tests_allgather_h100-gcp-a3mega_2node16gpu_tcpxo_dstack-docs.txt", 0, 11, 8388608ull,
      8589934592ull, NCCLTESTS_ALLGATHER, 16, 0, 0, 16, NULL, NULL },
    /* Perlmutter (NERSC's logs: NCCL INFO lines between the rows) and Polaris
     * (ALCF's study, its all-gathers' rows of 0 bytes skipped; a user's page
     * without Rank lines for the 1-node run, its version in the header only) */
    { DATA_TRACES, "nccl-tests_allreduce_a100-40gb-perlmutter_2node8gpu_slingshot11-cxi_nccl2.22.3_nersc-job918494.txt", 0,
      30, 8ull, 4294967296ull, NCCLTESTS_ALLREDUCE, 8, 2, 4, 8, "NVIDIA A100-SXM4-40GB", "2.22.3" },
    { DATA_TRACES, "nccl-tests_allreduce_a100-40gb-perlmutter_2node8gpu_slingshot11-cxi_nccl2.22.3_ngc24.10_nersc-job918498.txt",
      0, 30, 8ull, 4294967296ull, NCCLTESTS_ALLREDUCE, 8, 2, 4, 8, "NVIDIA A100-SXM4-40GB", "2.22.3" },
    { DATA_TRACES, "nccl-tests_allreduce_a100-40gb-polaris_1node4gpu_nvlink3_nccl2.28.3_rcc-uchicago-pedramh-profiling.txt", 0,
      30, 8ull, 4294967296ull, NCCLTESTS_ALLREDUCE, 4, 0, 0, 4, NULL, NULL },
    { DATA_TRACES, "nccl-tests_allreduce_a100-40gb-polaris_2node8gpu_slingshot11-cxi_nccl2.18_alcf-nccl-tests.txt", 0, 29, 4ull,
      1073741824ull, NCCLTESTS_ALLREDUCE, 8, 2, 4, 8, "NVIDIA A100-SXM4-40GB", NULL },
    { DATA_TRACES, "nccl-tests_allgather_a100-40gb-polaris_2node8gpu_slingshot11-cxi_nccl2.18_alcf-nccl-tests.txt", 0, 24, 128ull,
      1073741824ull, NCCLTESTS_ALLGATHER, 8, 2, 4, 8, "NVIDIA A100-SXM4-40GB", NULL },
    { DATA_TRACES, "nccl-tests_allreduce_a100-40gb-polaris_8node32gpu_slingshot11-cxi_nccl2.18_alcf-nccl-tests.txt", 0, 29, 4ull,
      1073741824ull, NCCLTESTS_ALLREDUCE, 32, 8, 4, 32, "NVIDIA A100-SXM4-40GB", NULL },
    { DATA_TRACES, "nccl-tests_allgather_a100-40gb-polaris_8node32gpu_slingshot11-cxi_nccl2.18_alcf-nccl-tests.txt", 0, 22, 512ull,
      1073741824ull, NCCLTESTS_ALLGATHER, 32, 8, 4, 32, "NVIDIA A100-SXM4-40GB", NULL },
    /* found 2026-12-07: H100 and H200 runs held out for the validation table */
    { DATA_TRACES, "nccl-tests_allreduce_h100-oci-bm-gpu-h100.8_2node16gpu_16x200g-roce_nccl2.21.5_ocitutorials-ol.txt", 0, 5,
      1073741824ull, 17179869184ull, NCCLTESTS_ALLREDUCE, 16, 2, 8, 16, "NVIDIA H100 80GB HBM3", NULL },
    { DATA_TRACES, "nccl-tests_allreduce_h100-together-ai_2node16gpu_ib_k8s_skypilot-docs.txt", 0, 5, 536870912ull,
      8589934592ull, NCCLTESTS_ALLREDUCE, 16, 0, 0, 16, NULL, NULL },
    { DATA_TRACES, "nccl-tests_allgather_h100-gcp-a3mega_2node16gpu_8x200g-tcpxo_gke_cluster-toolkit.txt", 0, 26, 256ull,
      8589934592ull, NCCLTESTS_ALLGATHER, 16, 0, 0, 16, NULL, NULL },
    { DATA_TRACES, "nccl-tests_allgather_h100-gcp-a3high_2node16gpu_4x200g-tcpx_gke_cluster-toolkit.txt", 0, 10, 1048576ull,
      536870912ull, NCCLTESTS_ALLGATHER, 16, 0, 0, 16, NULL, NULL },
    { DATA_TRACES, "nccl-tests_allgather_h200-gcp-a3ultra_2node16gpu_8x400g-roce-gib_nccl2.26.6_skypilot-gib-pods.txt", 0, 24,
      1024ull, 8589934592ull, NCCLTESTS_ALLGATHER, 16, 2, 8, 16, "NVIDIA H200", "2.26.6" },
    /* one process driving 4 GPUs (-g 4) */
    { DATA_TRACES, "nccl-tests_allreduce_h100-sxm_1node4gpu_nvswitch_nccl2.29.2_nccl-collectives-bench-quiet.txt", 0, 31, 8ull,
      8589934592ull, NCCLTESTS_ALLREDUCE, 4, 1, 4, 4, "NVIDIA H100 80GB HBM3", "2.29.2" },
    { DATA_TRACES, "nccl-tests_reducescatter_h100-sxm_1node4gpu_nvswitch_nccl2.29.2_nccl-collectives-bench-quiet.txt", 0, 28,
      64ull, 8589934592ull, NCCLTESTS_REDUCESCATTER, 4, 1, 4, 4, "NVIDIA H100 80GB HBM3", "2.29.2" },
    /* -g 2, 4, 6 with NCCL_DEBUG=INFO's tuning lines between (and inside) the rows */
    { DATA_TRACES, "nccl-tests_allreduce_h100-sxm_1node2gpu_nvswitch_nccl2.29.2_auto_nccl-collectives-bench-scaling.txt", 0, 6,
      268435456ull, 8589934592ull, NCCLTESTS_ALLREDUCE, 2, 1, 2, 2, "NVIDIA H100 80GB HBM3", "2.29.2" },
    { DATA_TRACES, "nccl-tests_allreduce_h100-sxm_1node4gpu_nvswitch_nccl2.29.2_auto_nccl-collectives-bench-scaling.txt", 0, 6,
      268435456ull, 8589934592ull, NCCLTESTS_ALLREDUCE, 4, 1, 4, 4, "NVIDIA H100 80GB HBM3", "2.29.2" },
    { DATA_TRACES, "nccl-tests_allreduce_h100-sxm_1node6gpu_nvswitch_nccl2.29.2_auto_nccl-collectives-bench-scaling.txt", 0, 6,
      268435456ull, 8589934592ull, NCCLTESTS_ALLREDUCE, 6, 1, 6, 6, "NVIDIA H100 80GB HBM3", "2.29.2" },
    { DATA_TRACES, "nccl-tests_allreduce_h100-sxm_1node2gpu_nvswitch_nccl2.29.2_algo-nvls_nccl-collectives-bench-scaling.txt", 0, 6,
      268435456ull, 8589934592ull, NCCLTESTS_ALLREDUCE, 2, 1, 2, 2, "NVIDIA H100 80GB HBM3", "2.29.2" },
    { DATA_TRACES, "nccl-tests_allreduce_h100-sxm_1node4gpu_nvswitch_nccl2.29.2_algo-nvls_nccl-collectives-bench-scaling.txt", 0, 6,
      268435456ull, 8589934592ull, NCCLTESTS_ALLREDUCE, 4, 1, 4, 4, "NVIDIA H100 80GB HBM3", "2.29.2" },
    { DATA_TRACES, "nccl-tests_allreduce_h100-sxm_1node6gpu_nvswitch_nccl2.29.2_algo-ring_nccl-collectives-bench-scaling.txt", 0, 6,
      268435456ull, 8589934592ull, NCCLTESTS_ALLREDUCE, 6, 1, 6, 6, "NVIDIA H100 80GB HBM3", "2.29.2" },
    /* four runs under "====== N-node ======" lines, no Rank lines: the nodes
     * from the separators, 8 ranks a node from busbw/algbw */
    { DATA_TRACES, MI325X, 1, 3, 4294967296ull, 17179869184ull, NCCLTESTS_ALLREDUCE, 8, 1, 0, 8, NULL, NULL },
    { DATA_TRACES, MI325X, 2, 3, 4294967296ull, 17179869184ull, NCCLTESTS_ALLREDUCE, 16, 2, 0, 16, NULL, NULL },
    { DATA_TRACES, MI325X, 3, 3, 4294967296ull, 17179869184ull, NCCLTESTS_ALLREDUCE, 32, 4, 0, 32, NULL, NULL },
    { DATA_TRACES, MI325X, 4, 3, 4294967296ull, 17179869184ull, NCCLTESTS_ALLREDUCE, 64, 8, 0, 64, NULL, NULL },
};
#define N_EXPECT (sizeof EXPECT / sizeof EXPECT[0])

/* nccl-tests prints algbw = size/time and busbw = algbw*factor with 2
 * decimals, and time with 3-4 significant digits: allow that rounding. */
static bool close_to_print(double printed, double exact)
{
    return fabs(printed - exact) <= 0.006 + 1.5e-3 * fabs(exact);
}

static void check_rows(const NcclTrace *t, double factor)
{
    for (size_t i = 0; i < nccltests_n_rows(t); i++) {
        const NcclTestsRow *r = nccltests_row(t, i);
        CU_ASSERT_TRUE(r->time_us > 0);
        CU_ASSERT_TRUE(r->ip_time_us > 0);
        if (i > 0)
            CU_ASSERT_TRUE(r->size_bytes > nccltests_row(t, i - 1)->size_bytes);
        double alg = (double)r->size_bytes / r->time_us / 1e3; /* GB/s */
        double ip_alg = (double)r->size_bytes / r->ip_time_us / 1e3;
        bool ok = close_to_print(r->algbw_gbs, alg) && close_to_print(r->busbw_gbs, alg * factor) &&
                  close_to_print(r->ip_algbw_gbs, ip_alg) &&
                  close_to_print(r->ip_busbw_gbs, ip_alg * factor);
        if (!ok)
            fprintf(stderr, "\n%s:%d: busbw %.2f vs size/time*factor %.4f\n", nccltests_name(t),
                    r->line, r->busbw_gbs, alg * factor);
        CU_ASSERT_TRUE(ok);
    }
}

static void check_expect(const Expect *e, const NcclTrace *t)
{
    CU_ASSERT_EQUAL(nccltests_n_rows(t), e->rows);
    CU_ASSERT_EQUAL(nccltests_row(t, 0)->size_bytes, e->first_size);
    CU_ASSERT_EQUAL(nccltests_row(t, nccltests_n_rows(t) - 1)->size_bytes, e->last_size);
    CU_ASSERT_PTR_NULL(nccltests_row(t, nccltests_n_rows(t)));
    CU_ASSERT_EQUAL(nccltests_op(t), e->op);
    CU_ASSERT_EQUAL(nccltests_n_ranks(t), e->ranks);
    CU_ASSERT_EQUAL(nccltests_ranks_from_bw(t), e->per_host == 0 && e->ranks > 0);
    CU_ASSERT_EQUAL(nccltests_n_hosts(t), e->hosts);
    CU_ASSERT_EQUAL(nccltests_max_ranks_per_host(t), e->per_host);
    if (e->device) {
        CU_ASSERT_EQUAL(nccltests_n_devices(t), 1);
        CU_ASSERT_STRING_EQUAL(nccltests_device(t, 0), e->device);
    } else {
        CU_ASSERT_EQUAL(nccltests_n_devices(t), 0);
    }
    if (e->nccl_version) {
        if (!nccltests_nccl_version(t))
            fprintf(stderr, "\n%s: no NCCL version read\n", e->file);
        CU_ASSERT_PTR_NOT_NULL_FATAL(nccltests_nccl_version(t));
        CU_ASSERT_STRING_EQUAL(nccltests_nccl_version(t), e->nccl_version);
    } else {
        CU_ASSERT_PTR_NULL(nccltests_nccl_version(t));
    }
    /* every kept trace names where it came from, on what, and how it was run */
    CU_ASSERT_PTR_NOT_NULL(nccltests_header(t, "source"));
    CU_ASSERT_PTR_NOT_NULL(nccltests_header(t, "hardware"));
    CU_ASSERT_TRUE(nccltests_header(t, "command") || nccltests_header(t, "notes"));
    check_rows(t, nccltests_busbw_factor(e->op, e->factor_ranks));
}

static void test_real_traces(void)
{
    for (size_t k = 0; k < N_EXPECT; k++) {
        const Expect *e = &EXPECT[k];
        char *path = g_build_filename(e->dir, e->file, NULL);
        GError *err = NULL;
        NcclRuns *runs = nccltests_load_runs(path, &err);
        if (!runs)
            fprintf(stderr, "\n%s\n", err ? err->message : path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(runs);
        size_t want_runs = 1;
        for (size_t j = 0; j < N_EXPECT; j++)
            if (strcmp(EXPECT[j].file, e->file) == 0 && EXPECT[j].run > 0)
                want_runs = MAX(want_runs, (size_t)EXPECT[j].run);
        CU_ASSERT_EQUAL(nccltests_runs_n(runs), want_runs);
        const NcclTrace *t = nccltests_runs_get(runs, e->run > 0 ? (size_t)e->run - 1 : 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        char *name = e->run > 0 ? g_strdup_printf("%s#run%d", path, e->run) : g_strdup(path);
        CU_ASSERT_STRING_EQUAL(nccltests_name(t), name);
        check_expect(e, t);
        /* a file of several runs is refused by the one-run reader, at the second */
        NcclTrace *one = nccltests_load(path, &err);
        CU_ASSERT_EQUAL(one == NULL, want_runs > 1);
        if (!one)
            CU_ASSERT_TRUE(err && strstr(err->message, "a second run starts here"));
        g_clear_error(&err);
        nccltests_free(one);
        nccltests_runs_free(runs);
        g_free(name);
        g_free(path);
    }
}

/* Every file in the trace folders has an entry above, so none goes unchecked. */
static void test_all_files_listed(void)
{
    const char *dirs[] = { DATA_TRACES };
    for (size_t d = 0; d < G_N_ELEMENTS(dirs); d++) {
        GDir *dir = g_dir_open(dirs[d], 0, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
        const char *name;
        int n = 0;
        while ((name = g_dir_read_name(dir))) {
            if (!g_str_has_suffix(name, ".txt") || !strstr(name, "-tests_"))
                continue;
            bool listed = false;
            for (size_t k = 0; k < N_EXPECT; k++)
                listed |= strcmp(EXPECT[k].file, name) == 0;
            if (!listed)
                fprintf(stderr, "\n%s/%s has no expectations in test_nccltests.c\n", dirs[d], name);
            CU_ASSERT_TRUE(listed);
            n++;
        }
        CU_ASSERT_TRUE(n >= 2);
        g_dir_close(dir);
    }
}

static void test_provenance(void)
{
    char *path = g_build_filename(DATA_TRACES,
                                  "nccl-tests_allreduce_v100-sxm2-16gb_8gpu_hybrid-cube-mesh.txt", NULL);
    NcclTrace *t = nccltests_load(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_n_headers(t), 4);
    CU_ASSERT_STRING_EQUAL(nccltests_header_key(t, 0), "source");
    CU_ASSERT_STRING_EQUAL(nccltests_header(t, "command"), "./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8");
    /* "#   topo rows: ..." lines continue the hardware value */
    const char *hw = nccltests_header(t, "hardware");
    CU_ASSERT_TRUE(g_str_has_prefix(hw, "8x Tesla V100-SXM2-16GB"));
    CU_ASSERT_PTR_NOT_NULL(strstr(hw, "\ntopo rows: GPU0: NV1 NV1 NV2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(hw, "\nGPU4: SYS SYS NV1"));
    CU_ASSERT_PTR_NULL(nccltests_header(t, "nthread"));
    CU_ASSERT_PTR_NULL(nccltests_header(t, "out"));
    nccltests_free(t);
    g_free(path);
}

static void test_busbw_factor(void)
{
    CU_ASSERT_DOUBLE_EQUAL(nccltests_busbw_factor(NCCLTESTS_ALLREDUCE, 8), 1.75, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(nccltests_busbw_factor(NCCLTESTS_ALLREDUCE, 1), 0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(nccltests_busbw_factor(NCCLTESTS_REDUCESCATTER, 16), 15.0 / 16, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(nccltests_busbw_factor(NCCLTESTS_ALLGATHER, 4), 0.75, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(nccltests_busbw_factor(NCCLTESTS_ALLTOALL, 2), 0.5, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(nccltests_busbw_factor(NCCLTESTS_BROADCAST, 8), 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(nccltests_busbw_factor(NCCLTESTS_REDUCE, 8), 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(nccltests_busbw_factor(NCCLTESTS_SENDRECV, 8), 1, 0);
    CU_ASSERT_TRUE(isnan(nccltests_busbw_factor(NCCLTESTS_UNKNOWN, 8)));
    CU_ASSERT_TRUE(isnan(nccltests_busbw_factor(NCCLTESTS_ALLREDUCE, 0)));
}

static void test_op_names(void)
{
    CU_ASSERT_EQUAL(nccltests_op_from_name("all_reduce_perf"), NCCLTESTS_ALLREDUCE);
    CU_ASSERT_EQUAL(nccltests_op_from_name("AllReduce"), NCCLTESTS_ALLREDUCE);
    CU_ASSERT_EQUAL(nccltests_op_from_name("reduce-scatter"), NCCLTESTS_REDUCESCATTER);
    CU_ASSERT_EQUAL(nccltests_op_from_name("reduce"), NCCLTESTS_REDUCE);
    CU_ASSERT_EQUAL(nccltests_op_from_name("alltoall_perf"), NCCLTESTS_ALLTOALL);
    CU_ASSERT_EQUAL(nccltests_op_from_name("gather"), NCCLTESTS_UNKNOWN);
    CU_ASSERT_EQUAL(nccltests_op_from_name(NULL), NCCLTESTS_UNKNOWN);
    for (NcclTestsOp op = NCCLTESTS_ALLREDUCE; op <= NCCLTESTS_SENDRECV; op++)
        CU_ASSERT_EQUAL(nccltests_op_from_name(nccltests_op_name(op)), op);
    CU_ASSERT_STRING_EQUAL(nccltests_op_name(NCCLTESTS_UNKNOWN), "unknown");
}

/* Newest layout: version banner, Group, root, #wrong, N/A, exponent, timestamps. */
static void test_new_format(void)
{
    const char *text =
        "# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703\n"
        "# Collective test starting: reduce_perf\n"
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n"
        "#\n"
        "# Using devices\n"
        "#  Rank  0 Group  0 Pid   1887 on   worker-1 device  0 [0000:8d:00] NVIDIA H100 80GB HBM3\n"
        "#  Rank  1 Group  0 Pid   1888 on   worker-0 device  0 [0000:8d:00] NVIDIA H100 80GB HBM3\n"
        "#  Rank  2 Group  0 Pid   1889 on   worker-0 device  1 [0000:91:00] NVIDIA H100 80GB HBM3\n"
        "#\n"
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong           timestamp\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)     %Y-%m-%d %H:%M:%S\n"
        "           8             2     float     sum       0    10.00    0.00    0.00       0    11.00    0.00    0.00     N/A 2025-01-02 03:04:05\n"
        "          16             4     float     sum       0  1.2e+04    0.00    0.00       0    11.00    0.00    0.00     N/A 2025-01-02 03:04:06\n"
        "# Out of bounds values : 0 OK\n"
        "# Avg bus bandwidth    : 0 \n"
        "#\n"
        "# Collective test concluded: reduce_perf\n";
    GError *err = NULL;
    NcclTrace *t = nccltests_parse("new.txt", text, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_n_rows(t), 2);
    CU_ASSERT_EQUAL(nccltests_op(t), NCCLTESTS_REDUCE); /* not all_reduce */
    CU_ASSERT_EQUAL(nccltests_n_ranks(t), 3);
    CU_ASSERT_EQUAL(nccltests_n_hosts(t), 2);
    CU_ASSERT_EQUAL(nccltests_max_ranks_per_host(t), 2);
    CU_ASSERT_STRING_EQUAL(nccltests_device(t, 0), "NVIDIA H100 80GB HBM3");
    CU_ASSERT_STRING_EQUAL(nccltests_nccl_version(t), "2.27.3");
    CU_ASSERT_EQUAL(nccltests_n_headers(t), 0);
    const NcclTestsRow *r = nccltests_row(t, 1);
    CU_ASSERT_DOUBLE_EQUAL(r->time_us, 12000, 0);
    CU_ASSERT_DOUBLE_EQUAL(r->ip_time_us, 11, 0);
    CU_ASSERT_EQUAL(r->root, 0);
    CU_ASSERT_STRING_EQUAL(r->redop, "sum");
    CU_ASSERT_STRING_EQUAL(r->type, "float");
    CU_ASSERT_EQUAL(r->line, 13);
    nccltests_free(t);
}

/* Rows of 0 bytes (the smallest size split over more ranks than it holds
 * elements) are skipped, not taken for a second table. */
static void test_zero_size_rows(void)
{
    const char *text =
        "# Collective test starting: reduce_scatter_perf\n"
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)\n"
        "           0             0     float     sum      -1     0.13    0.00    0.00       0     0.15    0.00    0.00       0\n"
        "           0             0     float     sum      -1     0.15    0.00    0.00       0     0.13    0.00    0.00       0\n"
        "         256             4     float     sum      -1    33.45    0.01    0.01       0    33.79    0.01    0.01       0\n"
        "         512             8     float     sum      -1    34.03    0.02    0.01       0    34.11    0.02    0.01       0\n";
    GError *err = NULL;
    NcclTrace *t = nccltests_parse("zero.txt", text, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_n_rows(t), 2);
    CU_ASSERT_EQUAL(nccltests_row(t, 0)->size_bytes, 256);
    CU_ASSERT_EQUAL(nccltests_op(t), NCCLTESTS_REDUCESCATTER);
    CU_ASSERT_EQUAL(nccltests_zero_rows(t), 2);
    nccltests_free(t);
}

#define COLS_OLD "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
#define ROW_OLD "        1024           256   float     sum    36.07    0.03    0.05    N/A    35.90    0.03    0.05    N/A\n"

/* The process layout: ranks per (host, Pid) and nThread; whether the run's
 * NCCL made launches wait (before 2.12; old nccl-tests without "Group"). */
static void test_process_layout(void)
{
    static const struct {
        const char *file;
        int per_thread, per_process;
        bool waits;
    } cases[] = {
        {"nccl-tests_allreduce_v100-sxm2-16gb_8gpu_hybrid-cube-mesh.txt", 8, 8, true},
        {"nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_1node8gpu_nccl2.25.1_ocitutorials-ol.txt", 1, 1, false},
        {"nccl-tests_allreduce_h100-pcie-nvlinkbridge_2gpu_nccl-issue1161_PARTIAL.txt", 1, 1, false},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *path = g_build_filename(DATA_TRACES, cases[i].file, NULL);
        GError *err = NULL;
        NcclTrace *t = nccltests_load(path, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL(nccltests_gpus_per_thread(t), cases[i].per_thread);
        CU_ASSERT_EQUAL(nccltests_gpus_per_process(t), cases[i].per_process);
        CU_ASSERT_EQUAL(nccltests_launch_waits(t), cases[i].waits);
        nccltests_free(t);
        g_free(path);
    }
    /* a single-process run as its Rank lines show it, without a parameter
     * line: 8 ranks of one Pid; NCCL 2.18 launches without waiting */
    GString *s = g_string_new("# nccl-tests version 2.13.8 nccl-headers=21803 nccl-library=21803\n# Using devices\n");
    for (int r = 0; r < 8; r++)
        g_string_append_printf(s, "#  Rank %2d Group  0 Pid  4242 on node1 device %2d [0x%02x] NVIDIA H100\n", r, r, r);
    g_string_append(s, "#       size         count      type   redop    root     time   algbw   busbw  #wrong\n"
                       "  1048576  262144  float  sum  -1  30.0  34.95  61.17  0\n");
    GError *err = NULL;
    NcclTrace *t = nccltests_parse("g4t2.txt", s->str, &err);
    if (!t)
        fprintf(stderr, "\n%s\n", err ? err->message : "?");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_gpus_per_process(t), 8);
    CU_ASSERT_FALSE(nccltests_launch_waits(t));
    nccltests_free(t);
    g_string_free(s, TRUE);
    /* an old run (Rank lines without "Group": before NCCL 2.12) that logs
     * how NCCL launched: "Parallel" and plain "Group" do not wait, only the
     * multi-device launch "Group/CGMD" does (NCCL 2.8.3 src/enqueue.cc) */
    static const struct {
        const char *mode;
        bool waits;
    } modes[] = {{"", true}, {"host:1:1 [0] NCCL INFO Launch mode Parallel\n", false},
                 {"host:1:1 [0] NCCL INFO Launch mode Group\n", false},
                 {"host:1:1 [0] NCCL INFO Launch mode Group/CGMD\n", true}};
    for (size_t i = 0; i < G_N_ELEMENTS(modes); i++) {
        GString *o = g_string_new("# nThread 1 nGpus 8 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20\n");
        for (int r = 0; r < 8; r++)
            g_string_append_printf(o, "#   Rank %2d Pid 112424 on localhost device %2d [0x00] A100-SXM4-40GB\n", r, r);
        g_string_append_printf(o, "%s%s%s", COLS_OLD, modes[i].mode, ROW_OLD);
        t = nccltests_parse("mode.txt", o->str, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL(nccltests_launch_waits(t), modes[i].waits);
        nccltests_free(t);
        g_string_free(o, TRUE);
    }
}

/* Oldest layout without a header line: all_gather printed no redop column.
 * Log lines, launcher prefixes and snips are skipped. */
static void test_old_format_and_noise(void)
{
    const char *text =
        "[1,0]<stdout>:# nThread 1 nGpus 4 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
        "host:123:456 [0] NCCL INFO NCCL version 2.7.8+cuda11.0\n"
        "--(snip)--\n"
        "[1,0]<stdout>:           8             2   float    20.00    0.00    0.00  0e+00    21.00    0.00    0.00  0e+00\n"
        "10-0-0-1:123:456 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC\n"
        "0:          16             4   float    22.00    0.00    0.00  0e+00    23.00    0.00    0.00  0e+00\n"
        "\n";
    GError *err = NULL;
    NcclTrace *t = nccltests_parse("old.txt", text, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_n_rows(t), 2);
    CU_ASSERT_EQUAL(nccltests_op(t), NCCLTESTS_UNKNOWN);
    nccltests_set_op(t, NCCLTESTS_ALLGATHER);
    CU_ASSERT_EQUAL(nccltests_op(t), NCCLTESTS_ALLGATHER);
    /* nThread * nGpus counts one process: without Rank lines (and busbw 0.00)
     * the rank count is unknown, never guessed */
    CU_ASSERT_EQUAL(nccltests_n_ranks(t), 0);
    CU_ASSERT_EQUAL(nccltests_n_hosts(t), 0);
    CU_ASSERT_STRING_EQUAL(nccltests_nccl_version(t), "2.7.8");
    const NcclTestsRow *r = nccltests_row(t, 1);
    CU_ASSERT_PTR_NULL(r->redop);
    CU_ASSERT_EQUAL(r->root, -1);
    CU_ASSERT_DOUBLE_EQUAL(r->time_us, 22, 0);
    CU_ASSERT_DOUBLE_EQUAL(r->ip_time_us, 23, 0);
    CU_ASSERT_EQUAL(r->line, 6);
    nccltests_free(t);

    /* broadcast told by its columns: redop "none" and a root */
    const char *bc = "           8             2     float    none       0    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n";
    t = nccltests_parse("bc.txt", bc, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_op(t), NCCLTESTS_BROADCAST);
    nccltests_free(t);

    /* '# op:' names what the command line leaves open ... */
    const char *named = "# op: reduce_scatter\n# command: srun ./bench.sh\n"
                        "           8             2     float     sum   10.00    0.00    0.00  0e+00    10.00    0.00    0.00  0e+00\n";
    t = nccltests_parse("named.txt", named, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_op(t), NCCLTESTS_REDUCESCATTER);
    CU_ASSERT_STRING_EQUAL(nccltests_header(t, "op"), "reduce_scatter");
    nccltests_free(t);
}

/* Writes `text` into the temp dir, loads it and checks the error. */
static void expect_error(const char *dir, const char *name, const char *text, int line, const char *what)
{
    char *path = g_build_filename(dir, name, NULL);
    CU_ASSERT_TRUE_FATAL(g_file_set_contents(path, text, -1, NULL));
    GError *err = NULL;
    NcclTrace *t = nccltests_load(path, &err);
    if (t)
        fprintf(stderr, "\n%s: read without an error\n", name);
    CU_ASSERT_PTR_NULL(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    char *prefix = g_strdup_printf("%s:%d: ", path, line);
    bool ok = g_str_has_prefix(err->message, prefix) && strstr(err->message, what);
    if (!ok)
        fprintf(stderr, "\nexpected \"%s...%s\", got \"%s\"\n", prefix, what, err->message);
    CU_ASSERT_TRUE(ok);
    g_free(prefix);
    g_error_free(err);
    nccltests_free(t);
    g_unlink(path);
    g_free(path);
}

#define HDR                                                                                       \
    "# source: test\n"                                                                            \
    "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
#define ROW8 "           8             2     float     sum    22.54    0.00    0.00  4e-07    24.94    0.00    0.00  4e-07\n"

#define ROW16 "          16             4     float     sum    22.54    0.00    0.00  4e-07    24.94    0.00    0.00  4e-07\n"

static void test_malformed(void)
{
    char *dir = g_dir_make_tmp("nccltests-XXXXXX", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    expect_error(dir, "nonnum.txt",
                 HDR ROW8 "          16             4     float     sum    2x.54    0.00    0.00  4e-07    24.94    0.00    0.00  4e-07\n",
                 4, "out-of-place time \"2x.54\" is not 0 or a number");
    expect_error(dir, "inplace.txt",
                 HDR ROW8 ROW16 "          32             8     float     sum    22.54    0.00    0.00  4e-07    24.94    0.00    abc  4e-07\n",
                 5, "in-place busbw \"abc\"");
    expect_error(dir, "truncated.txt", HDR ROW8 "          16             4     float     sum    22.54    0.00\n",
                 4, "result row has 6 fields, expected 12");
    /* a row's datatype, reduction and count as nccl-tests prints them (review 8) */
    expect_error(dir, "type.txt", HDR ROW8 "          16             4     bogus     sum    22.54    0.00    0.00  4e-07    24.94    0.00    0.00  4e-07\n",
                 4, "datatype \"bogus\" is not one nccl-tests prints");
    expect_error(dir, "redop.txt", HDR ROW8 "          16             4     float     bogus    22.54    0.00    0.00  4e-07    24.94    0.00    0.00  4e-07\n",
                 4, "reduction \"bogus\" is not one nccl-tests prints");
    expect_error(dir, "count.txt", HDR ROW8 "          16           999     float     sum    22.54    0.00    0.00  4e-07    24.94    0.00    0.00  4e-07\n",
                 4, "size 16 is not a whole number of count 999 x 4-byte elements");
    expect_error(dir, "norows.txt", HDR "# Out of bounds values : 0 OK\n#\n", 4, "no nccl-tests result rows");
    expect_error(dir, "empty.txt", "", 1, "no nccl-tests result rows");
    expect_error(dir, "badsize.txt", HDR ROW8 "     1048576x       262144     float     sum    22.54    0.00    0.00  4e-07    24.94    0.00    0.00  4e-07\n",
                 4, "size \"1048576x\"");
    expect_error(dir, "negative.txt", HDR "           8             2     float     sum   -22.54    0.00    0.00  4e-07    24.94    0.00    0.00  4e-07\n",
                 3, "is not 0 or a number from 0.001 to 1e10 us");
    expect_error(dir, "huge.txt", HDR "           8             2     float     sum    1e308    0.00    0.00  4e-07    24.94    0.00    0.00  4e-07\n",
                 3, "out-of-place time \"1e308\" is not 0 or a number from 0.001 to 1e10 us");
    expect_error(dir, "tiny.txt", HDR "           8             2     float     sum    1e-300    0.00    0.00  4e-07    24.94    0.00    0.00  4e-07\n",
                 3, "out-of-place time \"1e-300\" is not 0 or a number from 0.001 to 1e10 us");
    expect_error(dir, "hex.txt", HDR "           8             2     float     sum     0x16    0.00    0.00  4e-07    24.94    0.00    0.00  4e-07\n",
                 3, "out-of-place time \"0x16\" is not 0 or a number");
    expect_error(dir, "hugesize.txt", HDR "  9223372036854775807             2     float     sum    22.54    0.00    0.00  4e-07    24.94    0.00    0.00  4e-07\n",
                 3, "size \"9223372036854775807\" is not a whole number of bytes up to 1 TiB");
    expect_error(dir, "noheader.txt", "# source: x\n\n           8             2     float     sum    22.54\n", 3,
                 "no column header");
    expect_error(dir, "badop.txt", "# source: x\n# op: allfoo\n" ROW8, 2, "unknown collective \"allfoo\"");
    expect_error(dir, "badheader.txt", "#       size         count      type\n" ROW8, 1, "column header lacks");
    g_rmdir(dir);
    g_free(dir);

    GError *err = NULL;
    CU_ASSERT_PTR_NULL(nccltests_load(SHARDSIM_SOURCE_DIR "/no/such/file.txt", &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, SIM_ERROR_INPUT);
    g_clear_error(&err);
}

/* NCCL_DEBUG=INFO's lines between a row's fields, glued to the field before
 * them (the host name starts with a digit, as a container id can): the row
 * read whole, the log lines read for what NCCL says it ran; a row its log
 * lines leave unfinished is bad input. */
#define LOG "9c0ffee:7:7 [0] NCCL INFO "
#define CUT_HDR "# source: test\n# Collective test starting: all_reduce_perf\n# Using devices\n#  Rank  0 Group  0 Pid  7 on 9c0ffee device  0 [0x1] GPU\n" \
    "#  Rank  1 Group  0 Pid  7 on 9c0ffee device  1 [0x2] GPU\n" \
    "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
static void test_rows_cut_by_log_lines(void)
{
    const char *text = CUT_HDR
        "     1048576        262144     float     sum" LOG "AllReduce: 1048576 Bytes -> Algo NVLS proto SIMPLE channel{Lo..Hi}={0..15}\n"
        LOG "AllReduce: 1048576 Bytes -> Algo RING proto LL\n"
        "   104.86   10.00   10.00  0" LOG "Launch mode Parallel\n"
        "   104.80   10.01   10.01  0\n"
        "     2097152        524288     float     sum   209.72   10.00   10.00  0   209.72   10.00   10.00  0\n"
        LOG "4194304 Bytes -> Algo 1 proto 2 time 25.214764\n"
        "     4194304       1048576     float     sum   419.44   10.00   10.00  0   419.44   10.00   10.00  0\n";
    GError *err = NULL;
    NcclTrace *t = nccltests_parse("cut.txt", text, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_n_rows(t), 3);
    CU_ASSERT_EQUAL(nccltests_row(t, 0)->size_bytes, 1048576);
    CU_ASSERT_DOUBLE_EQUAL(nccltests_row(t, 0)->time_us, 104.86, 1e-9);
    CU_ASSERT_EQUAL(nccltests_row(t, 0)->line, 7);
    CU_ASSERT_EQUAL(nccltests_n_ranks(t), 2);
    /* the last line for a size before its row; older NCCL's numbers, no collective */
    CU_ASSERT_STRING_EQUAL(nccltests_row(t, 0)->ran_algo, "ring");
    CU_ASSERT_STRING_EQUAL(nccltests_row(t, 0)->ran_proto, "ll");
    CU_ASSERT_PTR_NULL(nccltests_row(t, 1)->ran_algo);
    CU_ASSERT_STRING_EQUAL(nccltests_row(t, 2)->ran_algo, "ring");
    CU_ASSERT_STRING_EQUAL(nccltests_row(t, 2)->ran_proto, "simple");
    nccltests_free(t);

    /* an AllGather's lines name one rank's share (2 ranks: half the size);
     * algorithm numbers stop at NCCL's 6; a new cycle keeps the hosts and the
     * layout; a "Warning: ..." line between rows is no "host: " prefix */
    const char *ag = "# source: test\n# op: allgather\n# Collective test starting: all_gather_perf\n# Using devices\n"
        "#  Rank  0 Group  0 Pid  7 on 9c0ffee device  0 [0x1] GPU\n#  Rank  1 Group  0 Pid  7 on 9c0ffee device  1 [0x2] GPU\n"
        "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
        LOG "AllGather: 524288 Bytes -> Algo RING proto LL128\n" LOG "AllGather: 1048576 Bytes -> Algo 7 proto 2 time 1\n"
        "     1048576        262144     float    none" LOG "AllGather: 1048576 Bytes -> Algo 1 proto 0 time 1\n"
        "   209.72    5.00    2.50  0   209.72    5.00    2.50  0\n"
        "Warning: 2 GPUs are in use by other processes\n"
        "# Testing 2 cycle.\n"
        "     2097152        524288     float    none" LOG "AllGather: 1048576 Bytes -> Algo RING proto SIMPLE\n"
        "   419.44    5.00    2.50  0   419.44    5.00    2.50  0\n";
    NcclRuns *runs = nccltests_parse_runs("ag.txt", ag, &err);
    if (!runs)
        fprintf(stderr, "\nag.txt: %s\n", err->message);
    CU_ASSERT_PTR_NOT_NULL_FATAL(runs);
    CU_ASSERT_EQUAL(nccltests_runs_n(runs), 2);
    const NcclTestsRow *a1 = nccltests_row(nccltests_runs_get(runs, 0), 0);
    const NcclTestsRow *a2 = nccltests_row(nccltests_runs_get(runs, 1), 0);
    CU_ASSERT_TRUE(a1->ran_proto && strcmp(a1->ran_proto, "ll128") == 0); /* 524288 a rank, not the line for 1 MiB */
    CU_ASSERT_TRUE(a2->ran_proto && strcmp(a2->ran_proto, "simple") == 0);
    nccltests_runs_free(runs);

    char *dir = g_dir_make_tmp("nccltests-XXXXXX", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    const char *head = CUT_HDR "     1048576        262144     float     sum" LOG "AllReduce: 1 Bytes -> Algo RING proto LL\n";
    char *end = g_strconcat(head, LOG "x\n", NULL), *hash = g_strconcat(head, "# Out of bounds values : 0 OK\n", NULL);
    char *longer = g_strconcat(head, "   104.86   10.00   10.00  0   104.86   10.00   10.00  0  7\n", NULL);
    expect_error(dir, "cut-end.txt", end, 7, "result row cut by log lines has 4 of its 12 fields when the file ends");
    expect_error(dir, "cut-hash.txt", hash, 7, "has 4 of its 12 fields when line 8 comes");
    expect_error(dir, "cut-long.txt", longer, 7, "result row has 13 fields, expected 12");
    expect_error(dir, "cut-first.txt", "# source: test\n     8    2    float    sum" LOG "x\n", 2,
                 "a result row cut by a log line before any column header");
    g_free(end);
    g_free(hash);
    g_free(longer);
    g_rmdir(dir);
    g_free(dir);
}

/* What launchers and log collectors put before each line: mpirun's
 * "[1,0]<stdout>:" and "[0] ", torchrun's "[default0]:", srun -l's "3: ", pdsh's "node001: ", a
 * kubectl --timestamps stamp, and two of them together. */
static void test_line_prefixes(void)
{
    static const char *const prefixes[] = {"[1,0]<stdout>:", "[0] ", "[default0]:", "3: ", "node-001.cluster: ",
                                           "2024-05-01T10:00:00.123456789Z ", "2024-05-01 10:00:00+02:00 [0] ",
                                           "> ", "> > 3: "};
    for (size_t i = 0; i < G_N_ELEMENTS(prefixes); i++) {
        const char *lines[] = {"# nccl-tests version 2.17.1", "# Collective test starting: all_reduce_perf",
                               "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error",
                               "     1048576        262144     float     sum   104.86   10.00   17.50  0   104.86   10.00   17.50  0"};
        GString *text = g_string_new(NULL); /* on every line, the first too, as pdsh prints */
        for (size_t k = 0; k < G_N_ELEMENTS(lines); k++)
            g_string_append_printf(text, "%s%s\n", prefixes[i], lines[k]);
        GError *err = NULL;
        NcclTrace *t = nccltests_parse("prefix.txt", text->str, &err);
        if (!t)
            fprintf(stderr, "\nprefix \"%s\": %s\n", prefixes[i], err->message);
        CU_ASSERT_PTR_NOT_NULL(t);
        CU_ASSERT_TRUE(t && nccltests_n_rows(t) == 1 && nccltests_row(t, 0)->size_bytes == 1048576);
        g_clear_error(&err);
        nccltests_free(t);
        g_string_free(text, TRUE);
    }
}

#define COLS "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
/* busbw/algbw = 1.75: 8 ranks of an allreduce; 1.5: 4 ranks */
#define ROW_R8 "     1048576        262144     float     sum   104.86   10.00   17.50  0   104.86   10.00   17.50  0\n"
#define ROW_R4 "     2097152        524288     float     sum   209.72   10.00   15.00  0   209.72   10.00   15.00  0\n"
#define RANK(n, host) "#  Rank  " #n " Group  0 Pid  1 on " host " device  " #n " [0x1] GPU\n"

/* A file that could be read two ways is bad input, at the line that shows it. */
static void test_contradictions(void)
{
    char *dir = g_dir_make_tmp("nccltests-XXXXXX", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    expect_error(dir, "twoops.txt",
                 "# source: t\n# Collective test starting: all_reduce_perf\n" COLS ROW8
                 "# Collective test starting: sendrecv_perf\n" COLS ROW8,
                 5, "second table is sendrecv at line 5, the first was allreduce at line 2");
    expect_error(dir, "opcmd.txt", "# op: allreduce\n# command: ./sendrecv_perf -g 2\n" COLS ROW8, 1,
                 "'# op:' says allreduce, but '# command:' at line 2 runs sendrecv");
    expect_error(dir, "cmdout.txt", "# command: ./all_reduce_perf\n# Collective test starting: all_gather_perf\n" COLS ROW8,
                 2, "the output says allgather, but '# command:' at line 1 runs allreduce");
    expect_error(dir, "opout.txt", "# op: allreduce\n# Collective test starting: all_gather_perf\n" COLS ROW8, 2,
                 "the output says allgather, but '# op:' at line 1 says allreduce");
    expect_error(dir, "twice.txt", HDR ROW8 ROW16 ROW8, 5, "size 8 does not grow from 16 at line 4");
    expect_error(dir, "negsize.txt", HDR ROW8 "          -8             2     float     sum    22.54    0.00    0.00  0    24.94    0.00    0.00  0\n",
                 4, "size \"-8\" is not a whole number of bytes");
    expect_error(dir, "ranks.txt", "# Collective test starting: all_reduce_perf\n" RANK(0, "h") RANK(1, "h") COLS ROW_R8, 5,
                 "busbw/algbw of allreduce says 8 ranks, but the Rank lines list 2");
    expect_error(dir, "ratios.txt", "# command: all_reduce_perf\n" COLS ROW_R8 ROW_R4, 3,
                 "busbw/algbw ratios disagree on the rank count");
    /* -t and -g as nccl-tests takes them, and whole processes (review 8) */
    expect_error(dir, "ngpus0.txt", "# command: all_reduce_perf\n# nThread 1 nGpus 0 minBytes 8\n" COLS ROW_R8, 2,
                 "nThread \"1\" and nGpus \"0\" must be whole numbers from 1 to 1024");
    expect_error(dir, "ngpus3.txt", "# command: all_reduce_perf\n# nThread 1 nGpus 3 minBytes 8\n" COLS ROW_R8, 4,
                 "8 ranks, but nThread 1 x nGpus 3 makes 3 in one process: no whole number of processes");
    expect_error(dir, "nthread.txt", "# command: all_reduce_perf\n# nThread 1 nGpus 8 minBytes 8\n" COLS ROW_R4, 4,
                 "4 ranks, but nThread 1 x nGpus 8 makes 8 in one process");
    expect_error(dir, "stated.txt",
                 "# Collective test starting: all_reduce_perf\n# Collective test concluded: all_gather_perf\n" COLS ROW8, 2,
                 "this run says allgather here and allreduce at line 1");
    g_rmdir(dir);
    g_free(dir);
}

static void test_runs_and_ranks(void)
{
    GError *err = NULL;
    /* a header repeated after rows starts a second run: each read on its own */
    const char *two = "# source: t\n# command: all_reduce_perf\n====== 1-node ======\n" COLS ROW_R8
                      "=== 2 nodes ===\n" COLS ROW_R4;
    CU_ASSERT_PTR_NULL(nccltests_parse("two.txt", two, &err));
    CU_ASSERT_TRUE(err && g_str_has_prefix(err->message, "two.txt:6: a second run starts here (the file holds 2 runs"));
    g_clear_error(&err);
    NcclRuns *runs = nccltests_parse_runs("two.txt", two, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(runs);
    CU_ASSERT_EQUAL(nccltests_runs_n(runs), 2);
    const NcclTrace *a = nccltests_runs_get(runs, 0), *b = nccltests_runs_get(runs, 1);
    CU_ASSERT_PTR_NULL(nccltests_runs_get(runs, 2));
    CU_ASSERT_STRING_EQUAL(nccltests_name(a), "two.txt#run1");
    CU_ASSERT_STRING_EQUAL(nccltests_name(b), "two.txt#run2");
    CU_ASSERT_EQUAL(nccltests_n_ranks(a), 8);
    CU_ASSERT_EQUAL(nccltests_n_ranks(b), 4);
    CU_ASSERT_TRUE(nccltests_ranks_from_bw(a));
    CU_ASSERT_EQUAL(nccltests_n_hosts(a), 1);
    CU_ASSERT_EQUAL(nccltests_n_hosts(b), 2);
    CU_ASSERT_EQUAL(nccltests_n_rows(a), 1);
    CU_ASSERT_EQUAL(nccltests_row(b, 0)->line, 8);
    CU_ASSERT_EQUAL(nccltests_op(b), NCCLTESTS_ALLREDUCE);
    CU_ASSERT_STRING_EQUAL(nccltests_header(b, "source"), "t"); /* headers belong to every run */
    nccltests_runs_free(runs);

    /* the op from the one binary the notes name; several name none */
    NcclTrace *t = nccltests_parse("n.txt", "# notes: mpirun -np 8 ./all_gather_perf -b 8\n" COLS ROW8, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_op(t), NCCLTESTS_ALLGATHER);
    nccltests_free(t);
    t = nccltests_parse("n.txt", "# notes: all_gather_perf, then sendrecv_perf\n" COLS ROW8, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_op(t), NCCLTESTS_UNKNOWN);
    /* the rank count follows the op a caller sets: 1.75 is 8 ranks of an
     * allreduce, nothing for a broadcast */
    CU_ASSERT_EQUAL(nccltests_n_ranks(t), 0);
    nccltests_free(t);
    t = nccltests_parse("r.txt", COLS ROW_R8, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_n_ranks(t), 0);
    nccltests_set_op(t, NCCLTESTS_ALLREDUCE);
    CU_ASSERT_EQUAL(nccltests_n_ranks(t), 8);
    nccltests_set_op(t, NCCLTESTS_BROADCAST);
    CU_ASSERT_EQUAL(nccltests_n_ranks(t), 0);
    nccltests_free(t);
    /* an operation named on a command line of the output */
    t = nccltests_parse("c.txt", "$ mpirun -np 4 ./build/reduce_scatter_perf -b 8\n" COLS ROW8, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_op(t), NCCLTESTS_REDUCESCATTER);
    nccltests_free(t);
    CU_ASSERT_PTR_NULL(err);
}

/* Found by fuzzing: a version line naming nccl-library twice leaked the
 * first version string (the sanitizer build fails on the leak). */
static void test_repeated_version(void)
{
    const char *text = "# nccl-tests x nccl-library=21803 nccl-library=21904\n"
                       "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
                       "8 2 float sum -1 1.0 0.01 0.01 0 1.0 0.01 0.01 0\n";
    GError *err = NULL;
    NcclTrace *t = nccltests_parse("v.txt", text, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(nccltests_nccl_version(t), "2.18.3");
    nccltests_free(t);
}

/* Two tables found in published output (the parse check of 2026-12-07):
 * an old alltoall_perf that prints its header's "redop" column blank
 * (microsoft/superbenchmark tests/data/nccl_alltoall.log), and -d all,
 * where each datatype's sizes follow the last's in one table: each type's
 * table a run of the same job. */
static void test_blank_redop_and_datatypes(void)
{
    const char *old =
        "# Collective test starting: alltoall_perf\n"
        "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
        "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
        "           0             0   float             1.63    0.00    0.00    N/A     1.38    0.00    0.00    N/A\n"
        "     1048576         32768   float            40.00   26.21   22.94  0e+00    41.00   25.58   22.38  0e+00\n";
    GError *err = NULL;
    NcclTrace *t = nccltests_parse("old-a2a.txt", old, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_n_rows(t), 1);
    CU_ASSERT_DOUBLE_EQUAL(nccltests_row(t, 0)->time_us, 40.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(nccltests_row(t, 0)->ip_busbw_gbs, 22.38, 1e-12);
    CU_ASSERT_EQUAL(nccltests_op(t), NCCLTESTS_ALLTOALL);
    nccltests_free(t);
    const char *all = "# Collective test starting: all_reduce_perf\n" RANK(0, "h") RANK(1, "h") RANK(2, "h") RANK(3, "h")
                      COLS ROW8 ROW16
                      "           8             8      int8     sum    22.54    0.00    0.00  0    24.94    0.00    0.00  0\n"
                      "          16            16      int8     sum    22.54    0.00    0.00  0    24.94    0.00    0.00  0\n";
    NcclRuns *runs = nccltests_parse_runs("dall.txt", all, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(runs);
    CU_ASSERT_EQUAL_FATAL(nccltests_runs_n(runs), 2);
    static const char *const types[] = {"float", "int8"};
    for (size_t k = 0; k < 2; k++) {
        const NcclTrace *r = nccltests_runs_get(runs, k);
        CU_ASSERT_EQUAL(nccltests_n_rows(r), 2);
        CU_ASSERT_STRING_EQUAL(nccltests_row(r, 1)->type, types[k]);
        CU_ASSERT_EQUAL(nccltests_n_ranks(r), 4); /* the job's Rank lines in both */
        CU_ASSERT_EQUAL(nccltests_op(r), NCCLTESTS_ALLREDUCE);
    }
    nccltests_runs_free(runs);
    CU_ASSERT_PTR_NULL(err);
    /* anything else is bad input at its line (a review's cases): a type
     * change without the sizes starting over, the first type again, and a
     * row missing its type, which the blank-redop reading must not take */
    static const struct {
        const char *rows, *msg;
        int line;
    } bad[] = {
        {ROW8 ROW16 "          32            32      int8     sum    22.54    0.00    0.00  0    24.94    0.00    0.00  0\n",
         "datatype int8 at size 32 after float at 16", 5},
        {ROW8 ROW16 "           8             8      int8     sum    22.54    0.00    0.00  0    24.94    0.00    0.00  0\n" ROW8,
         "datatype float at size 8 after int8 at 8", 6},
        {ROW8 "          16             4     sum    22.54    0.00    0.00  0    24.94    0.00    0.00  0\n",
         "result row has 11 fields, expected 12", 4},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *text = g_strconcat("# Collective test starting: all_reduce_perf\n", COLS, bad[i].rows, NULL);
        CU_ASSERT_PTR_NULL(nccltests_parse("bad.txt", text, &err));
        CU_ASSERT_PTR_NOT_NULL_FATAL(err);
        char *at = g_strdup_printf("bad.txt:%d: %s", bad[i].line, bad[i].msg);
        if (!strstr(err->message, at))
            fprintf(stderr, "\n%s\n", err->message);
        CU_ASSERT_PTR_NOT_NULL(strstr(err->message, at));
        g_free(at);
        g_clear_error(&err);
        g_free(text);
    }
}

/* No binary named, n > 2 Rank lines: busbw/algbw 2(n-1)/n is an all-reduce,
 * (n-1)/n with a reduction printed a reduce-scatter; (n-1)/n without one
 * (all-gather or all-to-all) and 2 ranks (every factor 1) stay unknown. */
/* Rows the checks of a time against its algbw must take (review 8): -C 1's
 * cputime columns (the host's launch time; algbw is the GPUs'), under a
 * header that follows provenance lines; and a time printed %7.1e past 1e7 us,
 * two significant digits. */
static void test_time_columns(void)
{
    const char *const texts[] = {
        "# source: x\n# notes: y\n"
        "#       size         count      type   redop    root     cputime   algbw   busbw #wrong     cputime   algbw   busbw #wrong\n"
        "     1048576        262144     float     sum      -1     9.87    0.50    0.94      0     9.91    0.50    0.94      0\n",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        " 17179869184    4294967296     float     sum      -1  1.3e+07    1.27    2.38      0  1.3e+07    1.27    2.38      0\n"};
    for (size_t i = 0; i < G_N_ELEMENTS(texts); i++) {
        GError *err = NULL;
        NcclTrace *t = nccltests_parse("t.txt", texts[i], &err);
        CU_ASSERT_PTR_NOT_NULL(t);
        CU_ASSERT_PTR_NULL(err);
        g_clear_error(&err);
        nccltests_free(t);
    }
}

static void test_op_from_bw(void)
{
    const char *ranks8 = RANK(0, "h") RANK(1, "h") RANK(2, "h") RANK(3, "h") RANK(4, "h") RANK(5, "h") RANK(6, "h")
        RANK(7, "h");
    const char *rs = "     1048576        262144     float     sum   104.86   10.00    8.75  0   104.86   10.00    8.75  0\n";
    const char *ag = "     1048576        262144     float    none   104.86   10.00    8.75  0   104.86   10.00    8.75  0\n";
    const char *two = RANK(0, "h") RANK(1, "h") COLS
        "     1048576        262144     float     sum   104.86   10.00   10.00  0   104.86   10.00   10.00  0\n";
    struct { const char *rows; NcclTestsOp op; } c[] = {
        {ROW_R8, NCCLTESTS_ALLREDUCE}, {rs, NCCLTESTS_REDUCESCATTER}, {ag, NCCLTESTS_UNKNOWN}};
    GError *err = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(c); i++) {
        char *text = g_strconcat(ranks8, COLS, c[i].rows, NULL);
        NcclTrace *t = nccltests_parse("bw.txt", text, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL(nccltests_op(t), c[i].op);
        nccltests_free(t);
        g_free(text);
    }
    NcclTrace *t = nccltests_parse("two.txt", two, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(nccltests_op(t), NCCLTESTS_UNKNOWN);
    nccltests_free(t);
    CU_ASSERT_PTR_NULL(err);
}

static const TestCase tests[] = {
    {"rows of 0 bytes are skipped", test_zero_size_rows},
    {"real traces", test_real_traces},
    {"all trace files listed", test_all_files_listed},
    {"provenance headers", test_provenance},
    {"busbw factor", test_busbw_factor},
    {"op names", test_op_names},
    {"new format", test_new_format},
    {"old format and noise", test_old_format_and_noise},
    {"malformed input", test_malformed},
    {"rows cut by NCCL's log lines", test_rows_cut_by_log_lines},
    {"launcher and log prefixes", test_line_prefixes},
    {"repeated version", test_repeated_version},
    {"contradictions", test_contradictions},
    {"runs and ranks", test_runs_and_ranks},
    {"process layout", test_process_layout},
    {"a blank redop column; -d all's datatypes", test_blank_redop_and_datatypes},
    {"the op from busbw/algbw and the Rank lines", test_op_from_bw},
    {"time columns: cputime and %7.1e times", test_time_columns},
};
TEST_MAIN("nccltests", tests)
