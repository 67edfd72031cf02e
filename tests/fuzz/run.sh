#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (ASan + UBSan) and runs each for
# a while on a seed corpus of the repository's real traces and presets.
#
#   bash tests/fuzz/run.sh [SECONDS] [HARNESS...]
#
# SECONDS per harness (default 20); harnesses: json topo nccltests osu (all by
# default) and otf2 (by name only: libotf2 itself can take seconds on an anchor
# that passes shardsim's check, too slow for CI's short runs).  FUZZ_BUILD names the build folder (default build-fuzz in the
# source tree).  Exit status: 0 clean, 1 a harness found a crash, hang or leak
# (the reproducer is printed and kept in $FUZZ_BUILD/artifacts), 77 when clang
# or its libFuzzer runtime is missing (Debian: clang libclang-rt-14-dev).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-20}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(json topo nccltests osu chakra kineto)
build=${FUZZ_BUILD:-$src/build-fuzz}
CC=${FUZZ_CC:-clang}

if ! command -v "$CC" >/dev/null; then
    echo "SKIPPED: $CC not found; install clang and libclang-rt-14-dev to fuzz" >&2
    exit 77
fi
mkdir -p "$build/obj" "$build/artifacts"
probe=$build/probe.c
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$probe"
if ! "$CC" -fsanitize=fuzzer,address,undefined "$probe" -o "$build/probe" 2>"$build/probe.log"; then
    cat "$build/probe.log" >&2
    echo "SKIPPED: $CC cannot link -fsanitize=fuzzer (libFuzzer runtime missing: install libclang-rt-14-dev)" >&2
    exit 77
fi

cflags=(-std=c11 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
    -fno-sanitize-recover=undefined -D_POSIX_C_SOURCE=200809L -DSHARDSIM_VERSION=\"fuzz\"
    -DSHARDSIM_DATA_DIR=\""$src"\" -I"$src/sim/core" -I"$src/topologies" -I"$src/models" -I"$src/traces" -I"$src/plots")
# FUZZ_SKIP_KNOWN=1 steps over the known, reported bugs (tests/fuzz/known/)
# so that a short run can find others: the JSON harnesses skip inputs with raw
# control characters, and the nccl-tests run does not check leaks.
suffix=
if [ "${FUZZ_SKIP_KNOWN:-0}" = 1 ]; then
    cflags+=(-DFUZZ_SKIP_CONTROL_CHARS)
    suffix=_skipknown
fi
# shellcheck disable=SC2207
cflags+=($(pkg-config --cflags glib-2.0 libcjson))
# shellcheck disable=SC2207
libs=($(pkg-config --libs glib-2.0 libcjson) -lm)
if command -v otf2-config >/dev/null; then
    # shellcheck disable=SC2207
    cflags+=(-DSHARDSIM_HAVE_OTF2 $(otf2-config --cflags))
    # shellcheck disable=SC2207
    libs+=($(otf2-config --ldflags) $(otf2-config --libs))
fi

# Chakra ET (traces/chakra_et.c) with protoc-c's C of Chakra's schema, where
# protobuf-c is installed; without it fuzz_chakra checks the refusal.
chakra_pb=
if command -v protoc-c >/dev/null && pkg-config --exists libprotobuf-c; then
    mkdir -p "$build/chakra"
    if [ ! -e "$build/chakra/et_def.pb-c.c" ] || [ "$src/traces/chakra/et_def.proto" -nt "$build/chakra/et_def.pb-c.c" ]; then
        protoc-c --c_out="$build/chakra" --proto_path="$src/traces/chakra" et_def.proto || exit 1
    fi
    # shellcheck disable=SC2207
    cflags+=(-DSHARDSIM_HAVE_CHAKRA=1 -I"$build/chakra" $(pkg-config --cflags libprotobuf-c))
    # shellcheck disable=SC2207
    libs+=($(pkg-config --libs libprotobuf-c))
    chakra_pb=$build/chakra/et_def.pb-c.c
fi

# The library, once, into objects (rebuilt when its source or any header is
# newer: a struct that changes in a private header must not leave stale objects).
newest_h=$(ls -t "$src"/sim/core/*.h "$src"/topologies/*.h "$src"/models/*.h "$src"/traces/*.h "$src"/plots/*.h | head -1)
objs=()
for f in "$src"/sim/core/*.c "$src"/topologies/*.c "$src"/models/*.c "$src"/traces/*.c "$src"/plots/*.c $chakra_pb; do
    [ -e "$f" ] || continue
    o=$build/obj/$(basename "$(dirname "$f")")_$(basename "${f%.c}").o
    if [ ! -e "$o" ] || [ "$f" -nt "$o" ] || [ "$newest_h" -nt "$o" ] || [ "$src/tests/fuzz/run.sh" -nt "$o" ]; then
        "$CC" "${cflags[@]}" -c "$f" -o "$o" || { echo "FAIL: compiling $f" >&2; exit 1; }
    fi
    objs+=("$o")
done

seeds_for() {
    case $1 in
    json) echo "$src/models/presets/accelerators $src/models/presets/workloads $src/examples $src/models/presets $src/tests/fuzz/known" ;;
    topo) echo "$src/topologies/presets $src/tests/fuzz/known" ;;
    nccltests) echo "$src/tests/data/traces $src/tests/fuzz/known" ;;
    osu) echo "$src/tests/fuzz/seeds/osu $src/tests/data/traces $src/tests/fuzz/known" ;;
    otf2) echo "$src/tests/fuzz/seeds/otf2 $src/tests/fuzz/known" ;;
    chakra) echo "$src/tests/fuzz/seeds/chakra $src/tests/fuzz/known" ;;
    kineto) echo "$src/tests/fuzz/seeds/kineto $src/tests/data/traces $src/tests/fuzz/known" ;;
    esac
}

status=0
for h in "${harnesses[@]}"; do
    hsrc=$src/tests/fuzz/fuzz_$h.c
    [ -e "$hsrc" ] || { echo "FAIL: no harness $hsrc" >&2; exit 1; }
    bin=$build/fuzz_$h$suffix
    "$CC" "${cflags[@]/fuzzer-no-link/fuzzer}" "$hsrc" "${objs[@]}" "${libs[@]}" -o "$bin" \
        || { echo "FAIL: building $bin" >&2; exit 1; }
    corpus=$build/corpus/$h
    mkdir -p "$corpus"
    seeds=()
    for d in $(seeds_for "$h"); do
        [ -d "$d" ] && seeds+=("$d")
    done
    extra=()
    # known and reported: nccltests_parse leaks a version string when a line
    # holds "nccl-library=" twice (tests/fuzz/known/nccltests-leak.txt)
    [ -n "$suffix" ] && [ "$h" = nccltests ] && extra+=(-detect_leaks=0)
    log=$build/fuzz_$h.log
    echo "== fuzz_$h: ${seconds}s, seeds: ${seeds[*]:-none}"
    # New inputs go to the first (writable) corpus folder; seeds are only read.
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
        "$bin" "$corpus" "${seeds[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -error_exitcode=1 -timeout_exitcode=1 "${extra[@]}" -print_final_stats=1 -artifact_prefix="$build/artifacts/$h-" >"$log" 2>&1
    rc=$?
    grep -E '^(stat::number_of_executed_units|stat::new_units_added)' "$log" | sed 's/^/   /'
    if [ $rc -ne 0 ]; then
        status=1
        echo "FAIL: fuzz_$h exited with $rc; log $log" >&2
        grep -E 'ERROR|SUMMARY|runtime error|Test unit written|ALARM|out-of-memory' "$log" | head -20 >&2
        for a in $(grep -o "Test unit written to [^ ]*" "$log" | awk '{print $5}'); do
            echo "   reproducer $a ($(stat -c %s "$a") bytes), first bytes:" >&2
            head -c 600 "$a" | cat -v | sed 's/^/   | /' >&2
            echo >&2
        done
    fi
done
exit $status
