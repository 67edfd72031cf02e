#!/usr/bin/env bash
# The p10-p90 band of collective predictions: the default band in
# models/presets/collectives.json is what the published traces give today
# (recomputed here from `validate`), about 80% of their measurements fall in
# it, and it widens outside what the measurements covered.
# Usage: bash cli_uncertainty.sh SHARDSIM_BINARY SOURCE_DIR [--update]
# (--update writes the recomputed quantiles into models/presets/collectives.json)
set -u
bin=$1
src=$2
exec python3 - "$bin" "$src" "${3:-}" <<'EOF'
import json, math, re, sys
bin, src, update = sys.argv[1], sys.argv[2], sys.argv[3] == "--update"
d = src + "/tests/data/traces/"
# Every published GPU collective trace on the preset the README's validation table names.
cases = [("dgx1-v100", ["--nccl-version", "2.4.8"], "nccl-tests_allreduce_v100-sxm2-16gb_8gpu_hybrid-cube-mesh.txt"),
         ("abci-a100", [], "nccl-tests_allreduce_abci-a100-40gb_2node-16gpu_sharp.txt"),
         ("mi300x-node", [], "rccl-tests_allreduce_mi300x_8gpu_1node.txt"),
         ("mi355x-cluster", [], "rccl-tests_allreduce_mi355x_2node-16gpu_pollara400.txt"),
         ("mi355x-cluster", [], "rccl-tests_allreduce_mi355x_2node-16gpu_pollara400_rccl2.27.7_vultr.txt"),
         ("oci-bm-gpu4.8", [], "nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_1node8gpu_nccl2.25.1_ocitutorials-ol.txt"),
         ("oci-bm-gpu4.8", [], "nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_2node16gpu_nccl2.26.5_ocitutorials-ubuntu.txt"),
         ("oci-bm-gpu4.8", [], "nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_2node16gpu_oke-rdma-readme.txt"),
         ("dgx-h100-cluster", ["--nodes", "2"], "nccl-tests_allreduce_h100-sxm_2node16gpu_8hca_multinode-guide.txt"),
         ("mi325x-cluster", [], "rccl-tests_allreduce_mi325x_1-2-4-8node_hisohara-aac11.txt"),
         ("gh200-slingshot", [], "nccl-tests_allreduce_gh200_2node2gpu_slingshot_cscs-alps.txt"),
         ("h100-pcie-nvlink", [], "nccl-tests_allreduce_h100-pcie-nvlinkbridge_2gpu_nccl-issue1161_PARTIAL.txt")]
# Published runs added after the band was derived: held out, they check it rather than set it
# (each on the preset and options of the README's validation table).
heldout = [("oci-bm-gpu4.8", [], "nccl-tests_allreduce_a100-40gb-oci-bm-gpu4.8_2node16gpu_nccl2.14.3_oci-hpc-oke.txt"),
           ("aws-p4d", [], "nccl-tests_allreduce_a100-40gb-aws-p4d_2node16gpu_efa_nccl2.23.4_aws-dlami-guide.txt"),
           ("aws-p4d", ["--nodes", "2"], "nccl-tests_allreduce_a100-80gb-aws-p4de_2node16gpu_efa_awsome-distributed-training.txt"),
           ("aws-p5", ["--nodes", "2"], "nccl-tests_allreduce_h100-aws-p5_2node16gpu_efa_awsome-distributed-training.txt"),
           ("aws-p4d", [], "nccl-tests_allreduce_a100-40gb-aws-p4d_2node16gpu_efa_nccl2.8.3_aws-efa-eks.txt"),
           ("dgx-h100-cluster", ["--nodes", "2"], "nccl-tests_allreduce_h100-sxm-dell-xe9680_2node16gpu_8x400g-ib_nccl2.26.2_nccl-tests-issue309.txt"),
           ("dgx-h100", [], "nccl-tests_allreduce_h100-sxm_1node8gpu_g8-one-process_nccl-tests-issue290.txt"),
           ("dgx-h100-cluster", ["--nodes", "4"], "nccl-tests_allreduce_h100-sxm_4node32gpu_8x400g-ib_vmware-vm_nccl2.26.2_nccl-tests-issue309.txt"),
           ("dgx-h100-cluster", [], "nccl-tests_allreduce_h100-sxm_2-4-8node_400g-ib_nccl-tests-issue309-gj-aion.txt"),
           ("dgx-h200-cluster", ["--nodes", "2"], "nccl-tests_allreduce_h200-dell-xe9680_2node16gpu_8x400g-roce-spectrumx_nccl2.30.4_openshift-guide.txt"),
           ("gb200-nvl72", [], "nccl-tests_allreduce_gb200-nvl72_1rack72gpu_mnnvl_coreweave-pr43.txt"),
           ("gcp-a3mega", ["--nccl-version", "2.21.5"], "nccl-tests_allreduce_h100-gcp-a3mega_2node16gpu_tcpxo_create-a3mega.txt"),
           ("gh200-slingshot", [], "nccl-tests_allreduce_gh200_2node8gpu_slingshot_cscs-alps-ce.txt"),
           ("gh200-slingshot", [], "nccl-tests_allreduce_gh200_2node8gpu_slingshot_cscs-santis-cxi-container.txt"),
           ("mi300x-cluster", [], "rccl-tests_allreduce_mi300x_2node-16gpu_roce.txt"),
           ("dgx-h100-cluster", ["--nodes", "2"], "nccl-tests_allreduce_h100-nebius_2node16gpu_ndr-ib_k8s_skypilot-docs.txt"),
           ("dgx-h200-cluster", ["--nodes", "2"], "nccl-tests_allreduce_h200-coreweave_2node16gpu_ib_skypilot-docs.txt"),
           ("oci-bm-gpu-h100.8", [], "nccl-tests_allreduce_h100-oci-bm-gpu-h100.8_2node16gpu_16x200g-roce_nccl2.23.4_oci-hpc-troubleshooting.txt"),
           ("dgx-h100", [], "nccl-tests_allreduce_h100-dgx_1node8gpu_nvswitch-nvls_dgxc-benchmarking.txt"),
           ("perlmutter-gpu", [], "nccl-tests_allreduce_a100-40gb-perlmutter_2node8gpu_slingshot11-cxi_nccl2.22.3_ngc24.10_nersc-job918498.txt"),
           ("polaris", [], "nccl-tests_allreduce_a100-40gb-polaris_2node8gpu_slingshot11-cxi_nccl2.18_alcf-nccl-tests.txt"),
           ("polaris", [], "nccl-tests_allgather_a100-40gb-polaris_2node8gpu_slingshot11-cxi_nccl2.18_alcf-nccl-tests.txt"),
           ("polaris", [], "nccl-tests_allreduce_a100-40gb-polaris_8node32gpu_slingshot11-cxi_nccl2.18_alcf-nccl-tests.txt"),
           ("polaris", [], "nccl-tests_allgather_a100-40gb-polaris_8node32gpu_slingshot11-cxi_nccl2.18_alcf-nccl-tests.txt"),
           ("polaris", ["--nodes", "1", "--proto", "simple"], "nccl-tests_allreduce_a100-40gb-polaris_1node4gpu_nvlink3_nccl2.28.3_rcc-uchicago-pedramh-profiling.txt")]
sys.path.insert(0, src + "/tests")
from shardsim_json import bad, runner, exit_status
run = runner(bin)
def q(v, p):
    v = sorted(v); pos = p * (len(v) - 1); lo = int(pos); hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)
res = {False: [], True: []}
for topo, extra, f in cases:
    out = run("validate", "--json", "-t", topo, *extra, d + f)
    for r in (out or {}).get("rows", []):
        res[r["size_bytes"] >= 1048576].append(math.log(r["predicted_s"] / r["measured_s"]))
path = src + "/models/presets/collectives.json"
unc = json.load(open(path))["uncertainty"]
for large, key in ((False, "log_residual_small"), (True, "log_residual_large")):
    got = [q(res[large], 0.1), q(res[large], 0.9)]
    print("%s: recomputed p10 %.3f p90 %.3f, file %s (%d rows)" % (key, got[0], got[1], unc[key], len(res[large])))
    if update:
        text = open(path).read()
        text = re.sub(r'("%s": \[)[^\]]*(\])' % key, r"\g<1>\n      %.3f,\n      %.3f\n    \2" % tuple(got), text)
        open(path, "w").write(text)
    elif any(abs(a - b) > 0.03 for a, b in zip(got, unc[key])):
        bad("%s in models/presets/collectives.json is stale: recomputed %.3f, %.3f (--update)" % (key, got[0], got[1]))
# About 80% of the measurements lie in the band their own predictions carry.
inside = total = 0
for topo, extra, f in cases:
    out = run("validate", "--json", "-t", topo, *extra, d + f)
    for r in (out or {}).get("rows", []):
        total += 1
        inside += r["predicted_p10_s"] <= r["measured_s"] <= r["predicted_p90_s"]
print("measurements inside their predicted p10-p90 band: %d of %d" % (inside, total))
if not (total > 100 and 0.7 <= inside / total <= 0.9):
    bad("coverage %d/%d is not about 80%%" % (inside, total))
# The held-out runs: how many of their measurements the band holds (printed; a regression guard,
# not a goal: the clouds' floors and the anomalous stacks of the README's "Not yet" fall outside).
for name, sel in (("all", lambda t: True), ("InfiniBand/RoCE/NVLink", lambda t: t not in ("aws-p4d", "aws-p5", "gcp-a3mega", "gh200-slingshot", "mi300x-cluster", "perlmutter-gpu", "polaris"))):
    inside = total = 0
    for topo, extra, f in heldout:
        if not sel(topo):
            continue
        out = run("validate", "--json", "-t", topo, *extra, d + f)
        for r in (out or {}).get("rows", []):
            total += 1
            inside += r["predicted_p10_s"] <= r["measured_s"] <= r["predicted_p90_s"]
    print("held-out runs (%s): %d of %d measurements inside their p10-p90 band (%.0f%%)" % (name, inside, total, 100.0 * inside / max(total, 1)))
    if name == "all" and not (total > 100 and inside / total >= 0.3):
        bad("held-out coverage %d/%d below 30%%" % (inside, total))
# Wider outside what was measured: more nodes, larger sizes, a topology never measured.
def width(*args):
    r = run("collective", "--json", *args)["rows"][0]
    return math.log(r["time_p90_s"] / r["time_p10_s"]), r["band_widened"]
w2, f2 = width("-t", "oci-bm-gpu4.8", "--nodes", "2", "--sizes", "1GiB")
w64, f64 = width("-t", "oci-bm-gpu4.8", "--nodes", "64", "--sizes", "1GiB")
wbig, _ = width("-t", "oci-bm-gpu4.8", "--nodes", "2", "--sizes", "256GiB")
wtorus, _ = width("-t", "tpu-v3-pod", "--nodes", "2", "--sizes", "1GiB")
print("band widths (log p90/p10): 2 nodes %.3f, 64 nodes %.3f, 256 GiB %.3f, unmeasured topology %.3f" % (w2, w64, wbig, wtorus))
if f2 != 1: bad("a measured setting is widened (%g)" % f2)
if not w64 > w2 * 1.5: bad("64 nodes (8 measured) not wider")
if not wbig > w2 * 1.2: bad("256 GiB (16 GiB measured) not wider")
if not wtorus > w2 * 1.3: bad("an unmeasured topology not wider")
sys.exit(exit_status())
EOF
