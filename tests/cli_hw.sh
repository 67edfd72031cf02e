#!/usr/bin/env bash
# Describable hardware from the command line: every new preset's 1 GiB
# all-reduce within its line rates, the MI325X preset against its trace,
# --placement and the scenario's "placement" (deterministic, contiguous as
# before, scattered slower on an oversubscribed fat tree by what the flow
# model gives), and bad input in every new key exits 2 at FILE:LINE.
# Usage: bash cli_hw.sh SHARDSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
. "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh" # $tmp, check, expect_exit

# --- presets: PRESET, per-GPU NVLink (or Infinity Fabric) rate per direction,
# per-node NIC rate (0: one node), both raw line rates from the presets' sources
while read -r preset nvl nic; do
  "$bin" collective --json -t "$preset" --sizes 1GiB >"$tmp/$preset.json" 2>"$tmp/err"
  check "$preset loads and runs" [ $? -eq 0 ]
  "$bin" collective --json -t "$preset" --sizes 1GiB --algo ring >"$tmp/$preset-ring.json" 2>"$tmp/err"
  check "$preset: ring runs" [ $? -eq 0 ]
  check "$preset: 1 GiB within the line rates" python3 - "$tmp/$preset.json" "$tmp/$preset-ring.json" "$nvl" "$nic" <<'PY'
import json, sys
auto, ring = (json.load(open(f))["rows"][0] for f in sys.argv[1:3])
nvl, nic = float(sys.argv[3]), float(sys.argv[4])
nodes = json.load(open(sys.argv[1]))["nodes"]
# a ring sends 2(n-1)/n of the message over each rank's links: busbw <= the
# GPU's link and <= the node's NICs; any all-reduce, in-switch reduction
# included, moves the whole message through each GPU's link once: algbw <= it
bound = min(nvl, nic) if nodes > 1 else nvl
assert 0.5 * bound < ring["busbw_Bps"] <= bound, (ring["busbw_Bps"], bound)
assert auto["algbw_Bps"] <= nvl, (auto["algbw_Bps"], nvl)
if nodes > 1:  # no in-network reduction: every node's data leaves it 2(n-1)/n times
    assert auto["algbw_Bps"] <= nic * nodes / (2 * (nodes - 1)), auto
PY
done <<'EOF'
dgx-b200 900e9 0
dgx-b200-cluster 900e9 400e9
dgx-h200 450e9 0
dgx-h200-cluster 450e9 400e9
gb200-nvl72 900e9 0
mi325x-node 448e9 0
mi325x-cluster 448e9 400e9
mi300x-cluster 448e9 400e9
alps-gh200-dragonfly 450e9 100e9
aws-p4d 300e9 50e9
gcp-a3mega 450e9 200e9
h100-pcie-nvlink 300e9 0
EOF

# two NVL72 racks: one 72-GPU NVLink domain each, NICs between them
"$bin" collective --json -t gb200-nvl72 --nodes 2 --sizes 1GiB >"$tmp/nvl2.json" 2>"$tmp/err"
check "gb200-nvl72 --nodes 2: 144 ranks on 2 nodes of 72" python3 - "$tmp/nvl2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ranks"] == 144 and d["nodes"] == 2, d
PY

# MI325X on its own preset: at least as good as the nearest one (mi355x-cluster)
mi325=$src/tests/data/traces/rccl-tests_allreduce_mi325x_1-2-4-8node_hisohara-aac11.txt
"$bin" validate --json -t mi325x-cluster "$mi325" >"$tmp/v325.json" 2>"$tmp/err"
check "validate -t mi325x-cluster runs" [ $? -eq 0 ]
"$bin" validate --json -t mi355x-cluster "$mi325" >"$tmp/v355.json" 2>"$tmp/err"
check "mi325x-cluster: every run within 5% and no worse than mi355x-cluster" python3 - "$tmp/v325.json" "$tmp/v355.json" <<'PY'
import json, sys
a, b = (json.load(open(f))["traces"] for f in sys.argv[1:3])
assert len(a) == 4 == len(b)
for x, y in zip(a, b):
    e, f = x["median_abs_pct_error_large"], y["median_abs_pct_error_large"]
    assert e <= 5 and e <= f, (e, f)
PY

# MI300X on its own preset: AAC10 states no NIC speed; its 16 GiB row, a ring
# in the model as in RCCL's tuner, needs more per NIC than a 200G port carries
# and no more than the preset's 400G (8 NICs a node, 16 ranks)
mi300=$src/tests/data/traces/rccl-tests_allreduce_mi300x_2node-16gpu_roce.txt
"$bin" validate --json -t mi300x-cluster "$mi300" >"$tmp/v300.json" 2>"$tmp/err"
check "mi300x-cluster: the run's ring rate per NIC lies between 200G and the preset's 400G" \
  python3 - "$tmp/v300.json" "$src/topologies/presets/mi300x-cluster.json" <<'PY'
import json, sys
v, t = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
r = v["rows"][-1]
assert r["size_bytes"] == 17179869184 and r["algo"] == "ring", r
per_nic = r["size_bytes"] * 2 * 15 / 16 / r["measured_s"] / t["nics_per_node"]
assert t["nic"]["bandwidth"] == "400Gbps" and 200e9 / 8 < per_nic <= 400e9 / 8, per_nic
assert abs(r["abs_pct_error"]) < 5, r
PY

# --- placement on the command line
cat >"$tmp/ft.json" <<'EOF'
{
  "name": "ft-4to1",
  "family": "fat_tree",
  "fabric": "infiniband",
  "nodes": 64,
  "ranks_per_node": 8,
  "nics_per_node": 8,
  "nvlink": {"bandwidth": "25GB/s", "count": 18, "latency": "250ns"},
  "pcie": {"bandwidth": "63GB/s", "latency": "300ns"},
  "nic": {"bandwidth": "400Gbps", "latency": "350ns"},
  "nodes_per_leaf": 8,
  "spines": 8,
  "oversubscription": 4,
  "uplink": {"latency": "200ns"}
}
EOF
c() { "$bin" collective --json -t "$tmp/ft.json" --ranks 64 --sizes 1GiB --flows "$@"; }
c >"$tmp/none.json" && c --placement contiguous >"$tmp/cont.json" &&
  c --placement scattered >"$tmp/s1.json" && c --placement scattered >"$tmp/s1b.json" &&
  c --placement scattered --placement-seed 2 >"$tmp/s2.json" && c --placement rail_aligned >"$tmp/rail.json"
check "collective --placement runs" [ $? -eq 0 ]
check "--placement contiguous is the default, byte for byte" cmp -s "$tmp/none.json" "$tmp/cont.json"
check "--placement scattered is deterministic" cmp -s "$tmp/s1.json" "$tmp/s1b.json"
check "scattered: slower than contiguous (the spines) in the flow model and in the closed form, within 2% of each other" \
  python3 - "$tmp/cont.json" "$tmp/s1.json" "$tmp/s2.json" "$tmp/rail.json" <<'PY'
import json, sys
c, s1, s2, r = (json.load(open(f))["rows"][0] for f in sys.argv[1:5])
assert s1["flow_time_s"] > 2 * c["flow_time_s"] and s2["flow_time_s"] > 2 * c["flow_time_s"], (c, s1, s2)
assert "fabric_factor" not in c and s1["fabric_factor"] > 2 and s2["fabric_factor"] > 2, (c, s1, s2)
for x in (c, s1, s2):
    assert abs(x["time_s"] / x["flow_time_s"] - 1) < 0.02, x
assert r["flow_time_s"] == c["flow_time_s"]  # 8 per node: rail-aligned is contiguous
d = json.load(open(sys.argv[2]))
assert d["placement"] == "scattered, seed 1" and "placement" not in json.load(open(sys.argv[1])), d
PY
# 4:1 written as full-rate uplinks (spines = nodes_per_leaf / 4) or as the same number of quarter-rate
# ones (topologies/README.md): a ring over 8 nodes on 2 leaves sends one flow per rail up each leaf
for sp in 1 4; do
  python3 -c "import json,sys; t=json.load(open(sys.argv[1])); t.update(nodes=8, nodes_per_leaf=4, spines=int(sys.argv[2]), oversubscription=4); json.dump(t,open(sys.argv[3],'w'))" \
    "$src/topologies/presets/dgx-a100-cluster.json" "$sp" "$tmp/w$sp.json"
  "$bin" collective --json -t "$tmp/w$sp.json" --algo ring -s 1GiB --flows >"$tmp/w$sp.out"
done
check "4:1 of full-rate uplinks: one flow a leaf runs at its NIC's rate; of quarter-rate ones, 4x slower (closed form and flows)" \
  python3 - "$tmp/w1.out" "$tmp/w4.out" <<'PY'
import json, sys
full, thin = (json.load(open(f))["rows"][0] for f in sys.argv[1:3])
assert "fabric_factor" not in full and abs(thin["fabric_factor"] - 4) < 0.01, (full, thin)
assert abs(full["time_s"] / full["flow_time_s"] - 1) < 0.01 and abs(thin["time_s"] / thin["flow_time_s"] - 1) < 0.01
PY
# validate says where the fabric slowed a prediction: a 2-node trace on leaves of one node at 4:1
python3 -c "import json,sys; t=json.load(open(sys.argv[1])); t.update(nodes_per_leaf=1, spines=1, oversubscription=4); json.dump(t,open(sys.argv[2],'w'))" \
  "$src/topologies/presets/dgx-h100-cluster.json" "$tmp/leaf1.json"
h2=$src/tests/data/traces/nccl-tests_allreduce_h100-sxm_2node16gpu_8hca_multinode-guide.txt
"$bin" validate -t "$tmp/leaf1.json" --nodes 2 "$h2" >"$tmp/v.txt" && "$bin" validate --json -t "$tmp/leaf1.json" --nodes 2 "$h2" >"$tmp/v.json"
check "validate on a 4:1 fabric between the nodes: the note" grep -q "^# the fabric's switch-to-switch links slow the bandwidth term x" "$tmp/v.txt"
check "... and fabric_factor on every row of the JSON" python3 -c '
import json,sys
rows=json.load(open(sys.argv[1]))["rows"]
assert rows and all(r["fabric_factor"] > 2 for r in rows), rows[0]' "$tmp/v.json"
"$bin" validate -t dgx-h100-cluster --nodes 2 "$h2" >"$tmp/v1.txt"
check "... and none on the preset's non-blocking fabric" bash -c "! grep -q fabric '$tmp/v1.txt'"
# past the flows coll_fabric.c routes (2^22), the fabric is said not routed, in the header and the JSON
"$bin" collective -t dgx-a100-cluster --nodes 8200 --algo ring -s 1GiB >"$tmp/big.txt" &&
  "$bin" collective --json -t dgx-a100-cluster --nodes 8200 --algo ring -s 1GiB >"$tmp/big.json"
check "a 65600-rank ring: the fabric not routed, said in the header" grep -q "the fabric above the NICs not routed" "$tmp/big.txt"
check "... and in the JSON" python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["rows"][0]["fabric_not_routed"] is True' "$tmp/big.json"
check "bad --placement: exit 2" expect_exit 2 "unknown --placement 'random'" collective -t dgx-h100-cluster --placement random --sizes 1MiB
check "bad --placement-seed: exit 2" expect_exit 2 "placement-seed" collective -t dgx-h100-cluster --placement scattered --placement-seed x --sizes 1MiB

# --- placement in a scenario
scenario() { # PLACEMENT-FIELDS -> $tmp/sc.json
  cat >"$tmp/sc.json" <<EOF
{
  "topology": "$tmp/ft.json",
  "accelerator": "h100-sxm",
  "model": "gpt3-1.3b",
  "global_batch": 64,$1
  "parallelism": {"dp": 8, "tp": 8}
}
EOF
}
scenario "" && "$bin" run --json "$tmp/sc.json" >"$tmp/r-none.json"
scenario '
  "placement": "contiguous",' && "$bin" run --json "$tmp/sc.json" >"$tmp/r-cont.json"
check "\"placement\": \"contiguous\" is the default, byte for byte" cmp -s "$tmp/r-none.json" "$tmp/r-cont.json"
scenario '
  "placement": "scattered", "placement_seed": 3,' && "$bin" run --json "$tmp/sc.json" >"$tmp/r-s.json"
check "scattered scenario runs" [ $? -eq 0 ]
check "scattered: the data-parallel ring crosses the spines on the flow model" python3 - "$tmp/r-cont.json" "$tmp/r-s.json" <<'PY'
import json, sys
c, s = (json.load(open(f)) for f in sys.argv[1:3])
assert "placed scattered, seed 3" in s["config"]["devices_used"], s["config"]["devices_used"]
fc, fs = c["dp_contention"]["flow_time_alone_s"], s["dp_contention"]["flow_time_alone_s"]
assert fs > 2 * fc, (fc, fs)
PY
# a placement places every device, context-parallel ones too (review 10: the map held dp x tp x pp
# and cp's ranks were read past its end)
for pl in rail_aligned scattered; do
  python3 -c "import json,sys; s=json.load(open(sys.argv[1])); s['placement']=sys.argv[2]; json.dump(s,open(sys.argv[3],'w'))" \
    "$src/examples/llama2-7b-32k-cp4-h100.json" "$pl" "$tmp/cp-$pl.json"
  "$bin" run --json "$tmp/cp-$pl.json" >"$tmp/cp-$pl.out" 2>"$tmp/cp-$pl.err"
  check "cp 4 placed $pl runs" [ $? -eq 0 ]
  "$bin" run --json "$tmp/cp-$pl.json" 2>/dev/null | cmp -s - "$tmp/cp-$pl.out"
  check "... twice, byte for byte" [ $? -eq 0 ]
done
scenario '
  "placement": "random",'
check "scenario: unknown placement at its line" expect_exit 2 "sc.json:6: \"placement\" = \"random\" is not one of" run "$tmp/sc.json"
scenario '
  "placement": 3,'
check "scenario: placement not a string at its line" expect_exit 2 "sc.json:6:" run "$tmp/sc.json"
scenario '
  "placement": "scattered", "placement_seed": -1,'
check "scenario: negative placement_seed at its line" expect_exit 2 "sc.json:6:.*placement_seed" run "$tmp/sc.json"
scenario '
  "placement_seed": 4,'
check "scenario: placement_seed without scattered at its line" expect_exit 2 "sc.json:6: \"placement_seed\" is for" run "$tmp/sc.json"
scenario '
  "placment": "scattered",'
check "scenario: misspelt placement at its line" expect_exit 2 "sc.json:6:.*placment" run "$tmp/sc.json"

# --- dragonfly keys from the command line
sed 's/"groups": 24/"groups": 500/' "$src/topologies/presets/alps-gh200-dragonfly.json" >"$tmp/df.json"
line=$(grep -n '"global_links_per_switch"' "$tmp/df.json" | cut -d: -f1)
check "dragonfly: too few global ports at their line" expect_exit 2 "df.json:$line: .*cannot reach the other 499 groups" collective -t "$tmp/df.json" --sizes 1MiB
sed 's/"fabric": "slingshot"/"fabric": "slingshot", "routing": "ugal"/' "$src/topologies/presets/alps-gh200-dragonfly.json" >"$tmp/df.json"
line=$(grep -n '"routing"' "$tmp/df.json" | cut -d: -f1)
check "dragonfly: unknown routing at its line" expect_exit 2 "df.json:$line: unknown \"routing\" \"ugal\"" collective -t "$tmp/df.json" --sizes 1MiB
check "dragonfly: more nodes than it holds" expect_exit 2 "the dragonfly holds 2688" collective -t alps-gh200-dragonfly --nodes 3000 --sizes 1MiB

echo "cli_hw: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
