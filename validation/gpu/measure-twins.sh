#!/usr/bin/env bash
# Measures the CUDA twins of workloads/cuda under Nsight Compute, the way the
# stored measurements of validation/gpu/h100 were made, on a machine that has
# an NVIDIA GPU, nvcc, ncu and python3 (3.11 or later) but perhaps no Rust.
#
#   validation/gpu/measure-twins.sh OUTDIR [COMMIT]
#
# OUTDIR receives twin-NAME.csv (ncu's log) for every workload of
# workloads/expectations.toml with a `cuda` entry, device.txt (what the tools
# say about themselves) and measured.toml. COMMIT is the commit whose twin
# sources are built (default: `git rev-parse HEAD`). Copy OUTDIR's files into
# validation/gpu/<device>/ and update its README's table; tf-validate reads
# them with --gpu-data. Run from the repository root.
set -euo pipefail

out=${1:?usage: measure-twins.sh OUTDIR [COMMIT]}
commit=${2:-$(git rev-parse HEAD 2>/dev/null || true)}
[ -n "$commit" ] || { echo "measure-twins.sh: no COMMIT given and no git checkout here" >&2; exit 2; }
for tool in nvcc ncu nvidia-smi python3 make; do
    command -v "$tool" >/dev/null || { echo "measure-twins.sh: $tool not found" >&2; exit 2; }
done
mkdir -p "$out"

# The metrics of validation/src/gpu.rs, and the same four for local memory
# (local memory is the stack; a twin that spills shows it there).
metrics=smsp__thread_inst_executed_per_inst_executed.ratio,smsp__thread_inst_executed.sum,smsp__inst_executed.sum
for space in global local; do
    for op in ld st; do
        metrics+=,l1tex__t_sectors_pipe_lsu_mem_${space}_op_${op}.sum
        metrics+=,l1tex__t_requests_pipe_lsu_mem_${space}_op_${op}.sum
    done
done

{
    nvidia-smi -L
    nvcc --version | tail -n 2
    ncu --version | tail -n 1
    date
} >"$out/device.txt"

make -s -C workloads cuda CUDA_ARCH=native

# One line per twin: name, program, kernels joined by |, then its arguments.
python3 - >"$out/twins.tsv" <<'EOF'
import tomllib
with open("workloads/expectations.toml", "rb") as f:
    doc = tomllib.load(f)
for w in doc["workload"]:
    twin = w.get("cuda")
    if twin:
        print("\t".join([w["name"], twin["program"], "|".join(twin["kernels"]), *twin["args"]]))
EOF

while IFS=$'\t' read -r name program kernels args_line; do
    read -r -a args <<<"${args_line//$'\t'/ }"
    echo "measuring $name ($program ${args[*]})"
    ncu --csv --print-units base --kernel-name-base function \
        --kernel-name "regex:^($kernels)$" --metrics "$metrics" \
        --log-file "$out/twin-$name.csv" "workloads/build/cuda/$program" "${args[@]}" >/dev/null
    # ncu names the program by its absolute path; keep the log free of this
    # machine's directories.
    sed -i "s|$PWD/||g" "$out/twin-$name.csv"
done <"$out/twins.tsv"
rm "$out/twins.tsv"

device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvcc_version=$(nvcc --version | sed -n 's/.*release \([0-9.]*\), \(V[0-9.]*\).*/\1 (nvcc \2)/p')
ncu_version=$(ncu --version | sed -n 's/^Version \([0-9.]*\)\.[0-9]* .*/\1/p')
cat >"$out/measured.toml" <<EOF
# How the measurements beside this file were made (read by tf-validate).
device = "$device"
date = "$(date +%F)"
# The commit whose workloads/cuda/*.cu and the headers they include were
# built and measured; a twin whose sources changed after it is not compared.
commit = "$commit"
tools = "CUDA $nvcc_version, Nsight Compute $ncu_version"
build = "\`make -C workloads cuda CUDA_ARCH=native\` (nvcc -O3 -lineinfo -arch=native)"
EOF
echo "measured $(ls "$out"/twin-*.csv | wc -l) twins into $out"
