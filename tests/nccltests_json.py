#!/usr/bin/env python3
"""Writes a printed nccl-tests run in the layout nccl-tests' -J option
writes (src/util.cu of NVIDIA/nccl-tests 2.17 and later: one line; version,
args, env, nccl_version, config with its devices, results with out_of_place
and in_place halves).  A format fixture made at test time from a published
run in tests/data/traces: every number is the printed one, none is changed.

Usage: nccltests_json.py TRACE.txt BINARY [--cpu-time] [--in-place-only] [--indent] [--env VAR=VALUE]...
(--env: an entry of the report's environment list, as the run's shell had it)
"""
import json
import re
import sys

RANK = re.compile(r"#\s+Rank\s+(\d+)\s+Group\s+(\d+)\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s+(.*)")
PARAMS = re.compile(r"#\s*nThread (\d+) nGpus (\d+)")
VERSION = re.compile(r"nccl-library=(\d+)")
LOGGED = re.compile(r"NCCL version (\d+)\.(\d+)\.(\d+)")  # NCCL's log line: the code as NCCL_VERSION_CODE (2.9+)


def half(f, at, time_key):
    wrong = f[at + 3]
    return {time_key: float(f[at]), "alg_bw": float(f[at + 1]), "bus_bw": float(f[at + 2]),
            "nwrong": None if wrong == "N/A" else float(wrong)}


def convert(path, binary, cpu_time=False, in_place_only=False, env=()):
    devices, results, config, version = [], [], {}, None
    time_key = "cpu_time" if cpu_time else "time"
    for line in open(path):
        m = RANK.match(line)
        if m:
            devices.append({"rank": int(m[1]), "group": int(m[2]), "pid": int(m[3]), "hostname": m[4],
                            "device": int(m[5]), "device_hex": m[6], "device_info": m[7].strip()})
        m = PARAMS.match(line)
        if m:
            config = {"nthreads": int(m[1]), "ngpus": int(m[2])}
        m = VERSION.search(line)
        if m and version is None:
            version = int(m[1])
        m = LOGGED.search(line)
        if m and version is None:
            version = int(m[1]) * 10000 + int(m[2]) * 100 + int(m[3])
        f = line.split()
        if len(f) == 13 and f[0].isdigit() and not line.startswith("#"):
            results.append({"size": int(f[0]), "count": int(f[1]), "type": f[2], "redop": f[3],
                            "root": "%6s" % f[4],
                            "out_of_place": None if in_place_only else half(f, 5, time_key),
                            "in_place": half(f, 9, time_key), "actual_iterations": 20, "experiment_name": ""})
    config["devices"] = devices
    return {"version": 1, "start_time": "", "args": [binary], "env": list(env), "nccl_version": version,
            "config": config, "results": results}


if __name__ == "__main__":
    env = [sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--env"]
    doc = convert(sys.argv[1], sys.argv[2], "--cpu-time" in sys.argv, "--in-place-only" in sys.argv, env)
    if "--indent" in sys.argv:
        print(json.dumps(doc, indent=1))
    else:
        print(json.dumps(doc, separators=(",", ":")))
