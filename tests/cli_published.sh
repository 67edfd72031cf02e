#!/usr/bin/env bash
# Independent checks on published runs the model was never fitted on, found
# after it was built (issue 11): nccl-tests issue #290's single H100 node (one
# process, -g 8) on dgx-h100; two Dell XE9680 H200 nodes over 8x 400G
# Spectrum-X RoCE (an OpenShift guide, NCCL 2.30.4) on dgx-h200-cluster;
# nccl-tests issue #309's 4-node H100 run (HGX
# hosts in VMware VMs, 8x 400G InfiniBand, NCCL 2.26.2) and one 8-node H100
# cluster's 8-, 2- and 4-node runs from the same thread (400G InfiniBand), each
# on dgx-h100-cluster; CoreWeave's 72-GPU GB200 NVL72 rack (PR #43) on
# gb200-nvl72; dstack's published 2-node runs on Crusoe (A100 80GB, HDR IB),
# Lambda (B200, NDR IB), Nebius (H100, IB) and GCP A4 (B200, RoCE), each on
# the nearest preset.  Every row's error is printed.  The bounds are today's errors
# plus a margin: a regression guard, not a goal (issue 11's targets are 8%
# from 1 MiB and 20% below); the misses and their causes are in the comments.
# No constant of the model was chosen with any of these runs in view.
# Usage: bash cli_published.sh SHARDSIM_BINARY SOURCE_DIR
set -u
exec python3 - "$1" "$2" <<'PY'
import json, subprocess, sys
bin, src = sys.argv[1], sys.argv[2]
d = src + "/tests/data/traces/"
fail = 0
def bad(msg):
    global fail
    print("FAIL:", msg)
    fail = 1
def run(*args):
    out = subprocess.run([bin] + list(args), capture_output=True, text=True)
    if out.returncode:
        bad("shardsim %s: %s" % (" ".join(args), out.stderr.strip()))
        return None
    return json.loads(out.stdout)
H100_1 = "nccl-tests_allreduce_h100-sxm_1node8gpu_g8-one-process_nccl-tests-issue290.txt"
H200_SPX = "nccl-tests_allreduce_h200-dell-xe9680_2node16gpu_8x400g-roce-spectrumx_nccl2.30.4_openshift-guide.txt"
H100_4 = "nccl-tests_allreduce_h100-sxm_4node32gpu_8x400g-ib_vmware-vm_nccl2.26.2_nccl-tests-issue309.txt"
H100_GJ = "nccl-tests_allreduce_h100-sxm_2-4-8node_400g-ib_nccl-tests-issue309-gj-aion.txt"
GB200 = "nccl-tests_allreduce_gb200-nvl72_1rack72gpu_mnnvl_coreweave-pr43.txt"
CRUSOE = "nccl-tests_allreduce_a100-80gb-crusoe_2node16gpu_8x200g-ib_dstack-docs.txt"
LAMBDA = "nccl-tests_allreduce_b200-lambda-1cc_2node16gpu_ndr-ib_nccl2.26.2_dstack-docs.txt"
NEBIUS = "nccl-tests_allreduce_h100-nebius_2node16gpu_ndr-ib_dstack-docs.txt"
GCP_A4 = "nccl-tests_allreduce_b200-gcp-a4_2node16gpu_8x400g-roce_dstack-docs.txt"
# trace, preset (and options), run index in the file, nodes, bound on the
# median |error| from 1 MiB, bound below 1 MiB (None: no rows below)
cases = [
    # 3.4% (5.8% before NVLS's pipeline fill, coll_nvls.c nvls_fill_s, whose
    # rounds are NCCL's chunk rules and whose stage count is NVLSTree's):
    # NVLS, one process driving the 8 GPUs; 128-512 MiB 6-7% fast
    (H100_1, "dgx-h100", 0, 1, 6, None),
    # 2.8% / 27.5%: NVLSTree from 512 KiB as on the H100 2-node runs (the
    # preset's InfiniBand stands for Spectrum-X RoCE: the same verbs figures,
    # collectives.json transports.roce); below 1 MiB the run floors at 43-45 us
    # where the model gives 33.6 us, its bound for one thread launching 8
    # GPUs, and from 16 KiB it grows as if the launches added to the tree's
    # own time rather than hid it (one process drives each node's 8 GPUs)
    (H200_SPX, "dgx-h200-cluster --nodes 2", 0, 2, 6, 33),
    # 4.2% / 10.5% today; misses 2-8 MiB (the LL128 tree, 36-55% fast)
    (H100_4, "dgx-h100-cluster --nodes 4", 0, 4, 7, 14),
    # 18.0%: this cluster tops out at 320 GB/s bus bandwidth from 8 nodes
    # (NVIDIA in the thread: "possible, depending on your network", adaptive
    # routing; the author's NCCL_MIN_CTAS=24 run reaches 391), the model's
    # ring 377; 1-16 MiB 20-89% fast (one 8 MiB row at 1272 us)
    (H100_GJ, "dgx-h100-cluster", 0, 8, 21, None),
    # 4.3%: NVLSTree, as the Dell and multinode-guide 2-node runs
    (H100_GJ, "dgx-h100-cluster", 1, 2, 7, None),
    # 13.2%: 325 GB/s from 1 GiB against the model's 383 (the 4-node run
    # above reaches 366 on its fabric); 1-8 MiB 49-76% fast
    (H100_GJ, "dgx-h100-cluster", 2, 4, 16, None),
    # 15.5% (19.2% without NVLS's pipeline fill; 29.6% with Hopper's NVLS
    # rate): 835 GB/s bus bandwidth at 4-8 GiB (algorithm bandwidth 423 GB/s,
    # 0.47 of a GPU's 900 GB/s NVLink), the model 9% fast there with NCCL's
    # Blackwell NVLS efficiency (0.61 x 0.74/0.85 = 0.53 of the link); the
    # fill (2 rounds of 24 channels x 32 heads x 64 KiB, about 210 us) leaves
    # 512 MiB-2 GiB 16-25% fast: still about 350-450 us more per call than
    # its 4-8 GiB slope, not explained by public sources
    (GB200, "gb200-nvl72", 0, 1, 17, None),
    # dstack's cluster pages (dstackai/dstack, examples/clusters/*), four
    # clouds' 2-node runs, each on the nearest preset:
    # Crusoe, 2 x 8 A100 80GB VMs, 8 x 200G HDR InfiniBand: 7.7% / 15.9%;
    # misses 2-16 MiB (the model's LL and Simple rings, 28-98% slow: NCCL
    # runs something faster there) and the floor (27.7 us against 25.2)
    (CRUSOE, "dgx-a100-cluster --nodes 2", 0, 2, 10, 20),
    # Lambda 1-Click Cluster, 2 x 8 B200, NDR InfiniBand, NCCL 2.26.2:
    # 5.0% / 31.1% (8.8% / 32.1% before NVLSTree's proxy posts: 1-4 MiB a
    # flat 115 us measured, 80-91 without them, 115 with); the floor 35.5 us
    # against 25.2
    (LAMBDA, "dgx-b200-cluster --nodes 2", 0, 2, 7, 36),
    # Nebius, 2 x 8 H100 VMs, InfiniBand: 4.5% / 17.0% (4.7% / 18.6%
    # before a fill round took at least the tree's network step); the floor
    # 29.9 us against 25.2
    (NEBIUS, "dgx-h100-cluster --nodes 2", 0, 2, 7, 22),
    # GCP A4, 2 x 8 B200 over 8 x 400G RoCE (ConnectX-7), 8 MiB-8 GiB: 3.9%
    (GCP_A4, "dgx-b200-cluster --nodes 2", 0, 2, 6, None),
]
for f, topo, k, nodes, large, small in cases:
    v = run("validate", "--json", "-t", *topo.split(), d + f)
    if not v:
        continue
    t = v["traces"][k]
    print("%s run %d on %s: %d ranks on %d nodes, median |error| from 1 MiB %.1f%%, below %s" % (
        f, k + 1, topo, t["ranks"], t["nodes"], t["median_abs_pct_error_large"],
        "-" if t["median_abs_pct_error_small"] is None else "%.1f%%" % t["median_abs_pct_error_small"]))
    for r in t["rows"]:
        print("  %12d B  measured %10.1f us  predicted %10.1f us  %5.1f%%  %s %s" % (
            r["size_bytes"], r["measured_s"] * 1e6, r["predicted_s"] * 1e6, r["abs_pct_error"], r["algo"], r["proto"]))
    if t["nodes"] != nodes:
        bad("%s run %d: %d nodes read, the run had %d" % (f, k + 1, t["nodes"], nodes))
    if t["median_abs_pct_error_large"] > large:
        bad("%s run %d: %.1f%% from 1 MiB, bound %d%%" % (f, k + 1, t["median_abs_pct_error_large"], large))
    if small is None:
        if t["median_abs_pct_error_small"] is not None:
            bad("%s run %d: rows below 1 MiB, none expected" % (f, k + 1))
    elif t["median_abs_pct_error_small"] > small:
        bad("%s run %d: %.1f%% below 1 MiB, bound %d%%" % (f, k + 1, t["median_abs_pct_error_small"], small))
# The same cluster beats the NICs' line rate at 2 nodes and not from 4
# (NVLSTree, then the ring): the model's choice follows it.
v = run("validate", "--json", "-t", "dgx-h100-cluster", d + H100_GJ)
if v:
    for k, algo in ((1, "nvlstree"), (2, "ring"), (0, "ring")):
        big = [r for r in v["traces"][k]["rows"] if r["size_bytes"] >= 4 << 30]
        if not big or any(r["algo"] != algo for r in big):
            bad("%s run %d: from 4 GiB the model should choose %s" % (H100_GJ, k + 1, algo))
# NVLS on Blackwell: NCCL's efficiency ratio (collectives.json
# nvls.blackwell_factor, from NCCL's source, not from a run) gives 8x B200 at
# 8 GiB what a user reports for that node, "830+" GB/s bus bandwidth
# (NVIDIA/nccl issue #1807, NCCL 2.27.1); Hopper's 0.61 alone would give 959.
c = run("collective", "--json", "-t", "dgx-b200", "--op", "allreduce", "--sizes", "8GiB")
if c:
    bus = c["rows"][0]["busbw_Bps"] / 1e9
    print("8x B200 all-reduce at 8 GiB: %.0f GB/s bus bandwidth (%s; a user's figure 830+)" % (bus, c["rows"][0]["algo"]))
    if not (830 <= bus <= 880) or c["rows"][0]["algo"] != "nvls":
        bad("8x B200 NVLS at 8 GiB: %.0f GB/s, not 830-880 GB/s" % bus)
# The 2-node floor is NCCL's own tuner figure: NCCL's tuning log for a 2 x 8
# H100 job prints "128 Bytes -> Algo 0 proto 0 time 25.214764" (tree, LL;
# NVIDIA/nccl issue #1453), i.e. 6.8 + 2 x (7 x 0.6 + 5.0) us and its byte
# term.  Not a fit: the constants are tuning.cc's (README, "The two-node
# small-message floor").
c = run("collective", "--json", "-t", "dgx-h100-cluster", "--nodes", "2", "--op", "allreduce", "--sizes", "128")
if c:
    r = c["rows"][0]
    print("2 x 8 H100 all-reduce at 128 B: %.2f us (%s %s; NCCL's tuner prints 25.21)" % (r["time_s"] * 1e6, r["algo"], r["proto"]))
    if abs(r["time_s"] * 1e6 - 25.21) > 0.1 or (r["algo"], r["proto"]) != ("tree", "ll"):
        bad("2 x 8 H100 at 128 B: %.2f us %s %s, NCCL's tuner prints 25.21 us tree LL" % (r["time_s"] * 1e6, r["algo"], r["proto"]))
print("published: %s" % ("FAIL" if fail else "ok"))
sys.exit(fail)
PY
