#!/usr/bin/env bash
# Coverage-guided fuzzing of one fuzz target with libFuzzer, AddressSanitizer
# and UndefinedBehaviorSanitizer (Debian's clang), outside Bazel:
#
#   tools/fuzz.sh <target> <seconds> [libFuzzer flags or files...]
#   tools/fuzz.sh ps_request 300           # fuzz for 5 minutes
#   tools/fuzz.sh checkpoint 0 crash-1234  # rerun one input
#
# Targets: tests/fuzz/<target>_fuzzer.cc (ps_request, store_request,
# checkpoint, bulk_frame): the same LLVMFuzzerTestOneInput that `bazel test
# //tests/fuzz/...` runs with a small standalone driver. The script finds
# the project sources a target needs by following its #include "..." lines
# (a header with a .cc beside it brings that .cc; a *.pb.h brings its
# .proto and what that imports), generates the protobuf code with the
# system protoc, compiles everything with
#   clang++ -fsanitize=fuzzer,address,undefined
# and links the system gRPC/protobuf/absl (flags from pkg-config), glog and
# zlib. Objects are kept in out/fuzz/<target>/ and rebuilt when a source or
# header they used changed.
#
# The fuzzer starts from tests/fuzz/corpus/<target>/ (read-only) and keeps
# what it learns in out/fuzz/<target>/corpus/; crashing inputs land in
# out/fuzz/<target>/crashes/ — after fixing, copy one into
# tests/fuzz/corpus/<target>/ as a regression input. The last lines printed
# are libFuzzer's final stats (stat::number_of_executed_units = executions).
set -euo pipefail

usage() {
  echo "usage: tools/fuzz.sh <ps_request|store_request|checkpoint|bulk_frame> <seconds> [libFuzzer args...]" >&2
  exit 2
}
[[ $# -ge 2 ]] || usage
target=$1
seconds=$2
shift 2
[[ $seconds =~ ^[0-9]+$ ]] || usage

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
main_src=tests/fuzz/${target}_fuzzer.cc
[[ -f $main_src ]] || { echo "fuzz.sh: no $main_src" >&2; usage; }

# --- tools -----------------------------------------------------------------
need=()
command -v clang++ >/dev/null || need+=(clang)
command -v protoc >/dev/null || need+=(protobuf-compiler)
command -v pkg-config >/dev/null || need+=(pkg-config)
if ! dpkg-query -W -f='${Status}' libclang-rt-dev 2>/dev/null | grep -q "install ok installed" &&
   ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  need+=(libclang-rt-dev)
fi
if ((${#need[@]})); then
  echo "fuzz.sh: installing ${need[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
"$root/tools/setup.sh"  # the libraries (gRPC, protobuf, absl, glog, zlib)

# --- sources: follow the includes ----------------------------------------------
declare -A seen_file=() seen_proto=()
sources=()
protos=()
queue=("$main_src")

add_proto() {  # a .proto and, recursively, what it imports
  local p=$1
  [[ -n ${seen_proto[$p]:-} ]] && return
  seen_proto[$p]=1
  [[ -f $p ]] || { echo "fuzz.sh: missing $p" >&2; exit 1; }
  protos+=("$p")
  local imp
  for imp in $(sed -n 's/^import "\([^"]*\)";.*/\1/p' "$p"); do add_proto "$imp"; done
}

while ((${#queue[@]})); do
  f=${queue[0]}
  queue=("${queue[@]:1}")
  for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
    case $inc in
      *.grpc.pb.h) add_proto "${inc%.grpc.pb.h}.proto" ;;
      *.pb.h) add_proto "${inc%.pb.h}.proto" ;;
      *)
        [[ -f $inc && -z ${seen_file[$inc]:-} ]] || continue
        seen_file[$inc]=1
        queue+=("$inc")
        cc=${inc%.h}.cc
        if [[ $inc == *.h && -f $cc && -z ${seen_file[$cc]:-} ]]; then
          seen_file[$cc]=1
          sources+=("$cc")
          queue+=("$cc")
        fi
        ;;
    esac
  done
done

# --- build -------------------------------------------------------------------
build=out/fuzz/$target
gen=$build/gen
mkdir -p "$gen" "$build/obj" "$build/corpus" "$build/crashes"
grpc_plugin=$(command -v grpc_cpp_plugin)
gen_sources=()
for p in "${protos[@]}"; do
  base=${p%.proto}
  if [[ ! -f $gen/$base.pb.cc || $p -nt $gen/$base.pb.cc ]]; then
    protoc -I. --cpp_out="$gen" "$p"
    # Services also get their stubs (harmless for plain messages).
    if grep -q '^service ' "$p"; then
      protoc -I. --grpc_out="$gen" --plugin=protoc-gen-grpc="$grpc_plugin" "$p"
    fi
  fi
  gen_sources+=("$gen/$base.pb.cc")
  [[ -f $gen/$base.grpc.pb.cc ]] && gen_sources+=("$gen/$base.grpc.pb.cc")
done

CXX=${CXX:-clang++}
sanitize="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
# Same dialect and warnings as .bazelrc; -O1 -g for readable stacks.
cxxflags=(-std=c++17 -O1 -g -fno-omit-frame-pointer $sanitize
  -Wall -Wno-sign-compare -Wno-deprecated-declarations
  -DGLOG_USE_GLOG_EXPORT -I. -I"$gen"
  $(pkg-config --cflags grpc++ protobuf))
libs=($(pkg-config --libs grpc++ protobuf)
  -labsl_flags_parse -labsl_flags_usage -labsl_flags_usage_internal
  -labsl_flags_internal -labsl_flags_marshalling -labsl_flags_reflection
  -labsl_flags_config -labsl_flags_program_name
  -labsl_flags_private_handle_accessor -labsl_flags_commandlineflag
  -labsl_flags_commandlineflag_internal -labsl_statusor -labsl_status
  -labsl_cord -labsl_cordz_info -labsl_cord_internal
  -labsl_str_format_internal -labsl_strings -labsl_strings_internal
  -labsl_synchronization -labsl_time -labsl_time_zone -labsl_hash
  -labsl_raw_hash_set -labsl_random_internal_seed_material -labsl_base
  -labsl_raw_logging_internal -labsl_throw_delegate -labsl_int128
  -lglog -lz -lcrypto -lpthread)

# Is `obj` older than anything its .d file lists?
stale() {
  local obj=$1 dep=${1%.o}.d
  [[ -f $obj && -f $dep ]] || return 0
  local d
  for d in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$dep"); do
    [[ $d -nt $obj ]] && return 0
  done
  return 1
}

objects=()
pids=()
jobs_max=$(nproc)
for src in "$main_src" "${sources[@]}" "${gen_sources[@]}"; do
  obj=$build/obj/$(echo "${src#"$gen"/}" | tr / _).o
  objects+=("$obj")
  stale "$obj" || continue
  echo "fuzz.sh: compiling $src" >&2
  $CXX "${cxxflags[@]}" -MMD -MF "${obj%.o}.d" -c "$src" -o "$obj" &
  pids+=($!)
  if ((${#pids[@]} >= jobs_max)); then
    wait "${pids[0]}"
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid"; done
binary=$build/${target}_fuzzer
echo "fuzz.sh: linking $binary" >&2
$CXX -fsanitize=fuzzer,address,undefined "${objects[@]}" "${libs[@]}" -o "$binary"

# --- fuzz --------------------------------------------------------------------
# detect_leaks=0: gRPC and protobuf keep process-lifetime singletons.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
args=(-max_total_time="$seconds" -print_final_stats=1 -max_len=4096
  -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$build/crashes/")
if (($# > 0)) && [[ -f $1 ]]; then
  exec "$binary" "${args[@]}" "$@"  # rerun the given inputs
fi
exec "$binary" "${args[@]}" "$@" "$build/corpus" "tests/fuzz/corpus/$target"
