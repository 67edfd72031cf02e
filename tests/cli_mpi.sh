#!/usr/bin/env bash
# The MPI model from the command line: OSU traces validated with the layout
# and library their headers state, the knobs (--library, --mpi-library), and
# bad input around them.
# Usage: bash cli_mpi.sh SHARDSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
traces=$src/tests/data/traces
. "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh" # $tmp, check, expect_exit
ar=$traces/osu_allreduce_oci-bm-optimized3.36_4node144proc_rocev2-100g_ocitutorials.txt
a2a=$traces/osu_alltoall_oci-bm-optimized3.36_1node36proc_ocitutorials.txt

"$bin" validate --json -t oci-bm-optimized3.36 "$ar" "$a2a" >"$tmp/v.json" 2>"$tmp/err"
check "OSU traces validate without --ranks (their headers say)" [ $? -eq 0 ]
check "ranks, nodes and library from the headers" python3 - "$tmp/v.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["traces"]
assert [(x["ranks"], x["nodes"]) for x in t] == [(144, 4), (36, 1)], t
assert all(x["library"] == "openmpi 5.0.8 (the trace)" for x in t), t
assert t[0]["rows"][0]["algo"].startswith("han(") and t[1]["rows"][0]["algo"] == "tuned:modified_bruck"
assert t[0]["median_abs_pct_error_large"] <= 20 and t[0]["median_abs_pct_error_small"] <= 30
PY
expect_exit 2 "the trace says 144 ranks, not 72" validate -t oci-bm-optimized3.36 --ranks 72 "$ar"
check "--ranks cannot contradict the headers" [ $? -eq 0 ]
expect_exit 2 "the trace says 4 nodes, not 2" validate -t oci-bm-optimized3.36 --nodes 2 "$ar"
check "--nodes cannot contradict the headers" [ $? -eq 0 ]

"$bin" validate --json -t oci-bm-optimized3.36 --mpi-library mpich "$ar" >"$tmp/m.json" 2>/dev/null
check "--mpi-library mpich follows MPICH's selection" python3 - "$tmp/m.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["traces"][0]
assert t["library"] == "mpich (--mpi-library)" and t["rows"][0]["algo"].startswith("composition_alpha("), t
PY
"$bin" validate --json -t oci-bm-optimized3.36 --library nccl "$ar" >"$tmp/n.json" 2>/dev/null
check "--library nccl predicts with the NCCL model" python3 - "$tmp/n.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["traces"][0]
assert "library" not in t and t["rows"][0]["proto"] in ("ll", "ll128", "simple"), t
PY
expect_exit 2 "unknown --library 'gloo'" validate -t oci-bm-optimized3.36 --library gloo "$ar"
check "an unknown --library is bad input" [ $? -eq 0 ]
expect_exit 2 "unknown --mpi-library 'lam'" validate -t oci-bm-optimized3.36 --mpi-library lam "$ar"
check "an unknown --mpi-library is bad input" [ $? -eq 0 ]
expect_exit 2 "the MPI model runs what the MPI library selects" validate -t oci-bm-optimized3.36 --algo ring "$ar"
check "--algo (NCCL's) is refused with the MPI model" [ $? -eq 0 ]

printf '# OSU MPI Allreduce Latency Test v7.3\n# Size       Avg Latency(us)\n4 10.0\n' >"$tmp/bare.txt"
expect_exit 2 "no header states it; give --ranks" validate -t oci-bm-optimized3.36 "$tmp/bare.txt"
check "without a header, OSU asks for --ranks" [ $? -eq 0 ]
printf '# hardware: 4 nodes\n# command: mpirun -n 144 -N 32 osu_allreduce\n# OSU MPI Allreduce Latency Test v7.3\n# Size       Avg Latency(us)\n4 10.0\n' >"$tmp/clash.txt"
expect_exit 2 "the headers say 144 ranks, 4 nodes and 32 ranks per node" validate -t oci-bm-optimized3.36 "$tmp/clash.txt"
check "headers that contradict each other are bad input" [ $? -eq 0 ]
printf '# OSU MPI Allreduce Latency Test v7.3\n# Size       Avg Latency(us)\n4 10.0\n' >"$tmp/allreduce-mpich-4n.txt"
"$bin" validate --json -t oci-bm-optimized3.36 --ranks 144 --nodes 4 "$tmp/allreduce-mpich-4n.txt" >"$tmp/f.json" 2>/dev/null
check "the library from the file name, the layout never" python3 - "$tmp/f.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["traces"][0]
assert t["library"] == "mpich (the file name)" and t["ranks_from"] == "--ranks", t
PY

printf '# mpi: Intel(R) MPI Library 2021.9\n# hardware: 4 nodes, 36 ranks per node\n# OSU MPI Allreduce Latency Test v7.3\n# Size       Avg Latency(us)\n4 10.0\n' >"$tmp/impi.txt"
"$bin" validate --json -t oci-bm-optimized3.36 "$tmp/impi.txt" >"$tmp/i.json" 2>/dev/null
check "Intel MPI is predicted with MPICH's selection, and says so" python3 - "$tmp/i.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["traces"][0]
assert t["library"] == "mpich's selection for Intel MPI 2021.9 (the trace)" and (t["ranks"], t["nodes"]) == (144, 4), t
PY

"$bin" collective --json -t oci-bm-optimized3.36 --library mpi --op alltoall --sizes 4K,1MiB >"$tmp/c.json" 2>"$tmp/err"
check "collective --library mpi" python3 - "$tmp/c.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["library"] == "openmpi" and d["ranks"] == 144 and len(d["rows"]) == 2
assert all(r["time_s"] > 0 and r["algo"].startswith("tuned:") for r in d["rows"])
PY
expect_exit 2 "--library mpi takes no --algo, --proto or --flows" collective -t oci-bm-optimized3.36 --library mpi --flows
check "collective --library mpi takes no --flows" [ $? -eq 0 ]
expect_exit 2 "goes with --library mpi" collective -t oci-bm-optimized3.36 --mpi-library mpich
check "--mpi-library alone is refused" [ $? -eq 0 ]
"$bin" collective --json -t oci-bm-optimized3.36 --library mpi --sizes 1MiB >"$tmp/c1.json" 2>/dev/null
"$bin" collective --json -t oci-bm-optimized3.36 --library mpi --sizes 1MiB >"$tmp/c2.json" 2>/dev/null
check "same input, byte-identical output" cmp -s "$tmp/c1.json" "$tmp/c2.json"

# An independent check of the all-to-all algorithms on another fabric: the
# transport fitted (calibrate) on a cluster's point-to-point runs only
# (osu_latency, osu_bw: latency, per-message overhead, bandwidth), then that
# cluster's published 8-rank all-to-all runs predicted with it.  Three sets
# from CSCS Alps (GH200, Slingshot-11 CXI): the cray-network-stack examples
# (MPICH 4.2.1 latency, Open MPI 5.0.8rc1 bandwidth; both libraries'
# all-to-all) and the cscs-docs container pages (Open MPI 5.0.8, MPICH 4.3.1,
# each with its own point-to-point runs).  MPICH's all-to-all at 22-26%
# below 1 MiB (its scattered range runs about 2x slower than its
# point-to-point costs give), held below 35%; MPICH's choices (Bruck up to
# 256 B per peer, scattered to 32 KiB, pairwise) as its tuning file states
# them.  Open MPI runs pml cm there (every message through the NICs, 7 per
# rank, software at both ends): on these fitted transports 30-34% below
# 1 MiB, since their per-message cost (0.85-0.87 us, fitted where latency
# and per-message cost are only jointly determined) is above the 0.5 us the
# same runs' all-to-all shows, which the default transport has (7.5% and
# 10.1%, tests/test_cxi.c); held below 35%.  From 1 MiB MPICH is 3-5x and
# Open MPI 1.5x faster than measured (not asserted).
alps_check() { # NAME OMPI_BOUND MPICH_BOUND P2P_TRACES... -- A2A_TRACES...
  local name=$1 ob=$2 mb=$3 p2p=() a2a=()
  shift 3
  while [ "$1" != "--" ]; do p2p+=("$traces/$1"); shift; done
  shift
  for f in "$@"; do a2a+=("$traces/$f"); done
  "$bin" calibrate -t gh200-slingshot --nodes 2 -o "$tmp/$name.json" "${p2p[@]}" >/dev/null 2>"$tmp/err"
  check "$name: calibrate on the point-to-point runs" [ $? -eq 0 ]
  "$bin" validate --json -t gh200-slingshot --ranks 8 --nodes 2 --params "$tmp/$name.json" "${a2a[@]}" \
    >"$tmp/$name.v.json" 2>"$tmp/err"
  check "$name: the all-to-all runs validate on the calibrated transport" [ $? -eq 0 ]
  check "$name: all-to-all within bounds below 1 MiB, each library's selection" \
    python3 - "$tmp/$name.v.json" "$ob" "$mb" <<'PY'
import json, sys
bound = {"openmpi": float(sys.argv[2]), "mpich": float(sys.argv[3])}
for t in json.load(open(sys.argv[1]))["traces"]:
    lib = t["library"].split()[0]
    assert t["library"].endswith("(the file name)"), t["library"]
    assert t["median_abs_pct_error_small"] <= bound[lib], (t["trace"], t["median_abs_pct_error_small"])
    algo = {r["size_bytes"] // 8: r["algo"] for r in t["rows"]}
    if lib == "openmpi":
        assert {algo[p] for p in algo if p < 131072} == {"tuned:linear_sync"}, algo
    else:
        assert algo[256] == "mpir:brucks" and algo[512] == algo[32768] == "mpir:scattered", algo
        assert algo[65536] == "mpir:pairwise", algo
PY
}
alps_check cray-network-stack 35 35 \
  osu_latency_gh200-alps-clariden_2node_slingshot11-cxi_mpich-4.2.1_cscs-cray-network-stack.txt \
  osu_bw_gh200-alps-clariden_2node_host_slingshot11-cxi_openmpi-5.0.8_cscs-cray-network-stack.txt -- \
  osu_alltoall_gh200-alps-clariden_2node8proc_host_slingshot11-cxi_openmpi-5.0.8_cscs-cray-network-stack.txt \
  osu_alltoall_gh200-alps-clariden_2node8proc_slingshot11-cxi_mpich-4.2.1_cscs-cray-network-stack.txt
for lib in openmpi-5.0.8 mpich-4.3.1; do
  alps_check "cscs-docs-$lib" 35 35 \
    "osu_latency_gh200-alps-clariden_2node_host_slingshot11-cxi-hook_${lib}_cscs-docs.txt" \
    "osu_bw_gh200-alps-clariden_2node_host_slingshot11-cxi-hook_${lib}_cscs-docs.txt" -- \
    "osu_alltoall_gh200-alps-clariden_2node8proc_host_slingshot11-cxi-hook_${lib}_cscs-docs.txt"
done
# Slingshot: the NICs' cxi transport reaches the MPI model (models/presets/mpi.json
# "transports.cxi"); RoCE has none; an OSU latency run over CXI shows its steps
"$bin" collective --json -t gh200-slingshot --nodes 2 --library mpi --sizes 8B >"$tmp/cxi.json" 2>/dev/null
"$bin" collective --json -t oci-bm-optimized3.36 --library mpi --sizes 8B >"$tmp/roce.json" 2>/dev/null
check "the CXI transport in collective --library mpi, none for RoCE" python3 - "$tmp/cxi.json" "$tmp/roce.json" <<'PY'
import json, sys
c, r = (json.load(open(f)) for f in sys.argv[1:3])
assert c["transport"] == {"message_overhead_s": 5e-7, "low_latency_payload_bytes": 96, "eager_max_bytes": 4097}, c
assert "transport" not in r
PY
lat=$traces/osu_latency_gh200-alps-clariden_2node_slingshot11-cxi_mpich-4.2.1_cscs-cray-network-stack.txt
"$bin" validate --json -t gh200-slingshot --nodes 2 "$lat" >"$tmp/lat.json" 2>/dev/null
check "osu_latency over CXI: steps past 96 B and 4097 B, both targets met" python3 - "$tmp/lat.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = {r["size_bytes"]: r["predicted_s"] for r in d["rows"]}
assert p[128] - p[64] > 0.5e-6 and p[8192] - p[4096] > 3e-6 and p[4096] - p[2048] < 0.1e-6, p
assert d["median_abs_pct_error_large"] <= 20 and d["median_abs_pct_error_small"] <= 30, d
PY

# The libfabric version: a trace's '# libfabric:' header over the topology's
# "libfabric_version" (CXI's eager limit 4097 B up to 2.1, 18433 B from 2.2)
printf '# libfabric: 2.2.0\n# OSU MPI Latency Test v7.5\n# Size       Avg Latency(us)\n4096 3.0\n8192 3.5\n32768 6.0\n' >"$tmp/lf22.txt"
sed 1d "$tmp/lf22.txt" >"$tmp/lfnone.txt"
"$bin" validate --json -t gh200-slingshot --nodes 2 "$tmp/lf22.txt" >"$tmp/lf22.json" 2>/dev/null
"$bin" validate --json -t gh200-slingshot --nodes 2 "$tmp/lfnone.txt" >"$tmp/lfnone.json" 2>/dev/null
check "'# libfabric: 2.2.0' moves the rendezvous past 16 KiB" python3 - "$tmp/lf22.json" "$tmp/lfnone.json" <<'PY'
import json, sys
new, old = ({r["size_bytes"]: r["predicted_s"] for r in json.load(open(f))["rows"]} for f in sys.argv[1:3])
assert new[8192] - new[4096] < 0.5e-6 < 3e-6 < old[8192] - old[4096], (new, old)
assert new[32768] - new[8192] > 3e-6 and abs(new[32768] - old[32768]) < 1e-12, (new, old)
PY
printf '# libfabric: soon\n# OSU MPI Latency Test v7.5\n# Size       Avg Latency(us)\n4096 3.0\n' >"$tmp/lfbad.txt"
expect_exit 2 "'# libfabric: soon' is not a version" validate -t gh200-slingshot --nodes 2 "$tmp/lfbad.txt"
check "a '# libfabric:' header that is no version is bad input" [ $? -eq 0 ]
sed 's/"libfabric_version": "2.2"/"libfabric_version": "two"/' "$src/topologies/presets/olivia-cpu.json" >"$tmp/olivia-bad.json"
expect_exit 2 '"libfabric_version" must be a version' validate -t "$tmp/olivia-bad.json" --nodes 2 "$tmp/lfnone.txt"
check "a topology's libfabric_version that is no version is bad input" [ $? -eq 0 ]

# Open MPI's pml: a '# pml:' header over the transport's (cm over CXI: the
# node-local messages through the NICs; ob1: shared memory inside a node)
printf '# OSU MPI All-to-All Personalized Exchange Latency Test v7.5\n# Size       Avg Latency(us)\n8 12.0\n' >"$tmp/a2a-openmpi.txt"
(printf '# pml: ob1\n'; cat "$tmp/a2a-openmpi.txt") >"$tmp/a2a-openmpi-ob1.txt"
"$bin" validate --json -t gh200-slingshot --ranks 8 --nodes 2 "$tmp/a2a-openmpi.txt" "$tmp/a2a-openmpi-ob1.txt" >"$tmp/pml.json" 2>/dev/null
# (1.6 us apart at 8 bytes: on Grace a shared-memory message costs 0.77 us of
# software, models/presets/mpi.json shm_message_overhead, near CXI's 0.65)
check "'# pml: ob1' keeps node-local messages in shared memory" python3 - "$tmp/pml.json" <<'PY'
import json, sys
cm, ob1 = (t["rows"][0]["predicted_s"] for t in json.load(open(sys.argv[1]))["traces"])
assert ob1 < cm - 1e-6, (cm, ob1)
PY
(printf '# pml: yalla\n'; cat "$tmp/a2a-openmpi.txt") >"$tmp/a2a-bad.txt"
expect_exit 2 "'# pml: yalla' is not cm, ob1 or ucx" validate -t gh200-slingshot --ranks 8 --nodes 2 "$tmp/a2a-bad.txt"
check "an unknown '# pml:' is bad input" [ $? -eq 0 ]

echo "cli_mpi: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
