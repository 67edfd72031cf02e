#!/usr/bin/env bash
# NVLS's channel count by NCCL version (src/transport/nvls.cc): 16 on every GPU
# to 2.24; from 2.25 32 on Blackwell (Hopper keeps 16); from 2.27 24 on
# Blackwell inside one NVLink domain, 32 across nodes.  The count sets the size
# of NVLS's rounds and so its pipeline fill (models/coll_nvls.c), which is
# linear in channels x heads while the chunk size stays in one class:
#  - GB200 NVL72 at 512 MiB (64 KiB chunks at 16, 24 and 32 channels): the
#    fill's growth from 16 to 32 channels is twice its growth from 16 to 24;
#  - the newest version (the default) is 2.27's 24 channels;
#  - Hopper's time does not move with the version;
#  - NVLSTree on two B200 nodes: 16 channels to 2.24, 32 from 2.25 on.
# Usage: bash cli_nvls_channels.sh SHARDSIM_BINARY SOURCE_DIR
set -u
bin=$1
. "$2/tests/lib_check.sh"

# time_s of one size: t TOPOLOGY ALGO SIZE [options]
t() {
  local topo=$1 algo=$2 size=$3
  shift 3
  "$bin" collective --topology "$topo" --op allreduce --algo "$algo" --sizes "$size:$size" --json "$@" |
    python3 -c 'import json,sys; print(repr(json.load(sys.stdin)["rows"][0]["time_s"]))'
}
# ok EXPR: a Python expression over the times, true or false
ok() { python3 -c "import sys; sys.exit(0 if ($1) else 1)"; }

g24=$(t gb200-nvl72 nvls 512MiB --nccl-version 2.24.3)
g25=$(t gb200-nvl72 nvls 512MiB --nccl-version 2.25.1)
g27=$(t gb200-nvl72 nvls 512MiB --nccl-version 2.27.3)
gnew=$(t gb200-nvl72 nvls 512MiB)
check "nvl72 fill grows with channels" ok "$g24 < $g27 < $g25"
check "nvl72 32-16 is twice 24-16" ok "abs(($g25 - $g24) / ($g27 - $g24) - 2) < 1e-6"
check "nvl72 newest is 24 channels" ok "$gnew == $g27"

h24=$(t dgx-h100 nvls 512MiB --nccl-version 2.24.3)
h25=$(t dgx-h100 nvls 512MiB --nccl-version 2.25.1)
h27=$(t dgx-h100 nvls 512MiB --nccl-version 2.27.3)
check "hopper keeps 16 channels" ok "$h24 == $h25 == $h27"

b24=$(t dgx-b200-cluster nvlstree 1GiB --nodes 2 --nccl-version 2.24.3)
b25=$(t dgx-b200-cluster nvlstree 1GiB --nodes 2 --nccl-version 2.25.1)
b27=$(t dgx-b200-cluster nvlstree 1GiB --nodes 2 --nccl-version 2.27.3)
check "b200 nvlstree 16 then 32 channels" ok "$b24 < $b25 and $b25 == $b27"

echo "cli_nvls_channels: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
