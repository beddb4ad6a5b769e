#!/usr/bin/env bash
# The main job, end to end, on a bundled workload: trace a multi-threaded
# program, describe the trace, analyze it as warps of 8, 16 and 32 lanes.
# Results (table on the terminal, JSON, CSV and an HTML report) land in target/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --quiet
make -s -C workloads
tf=target/release/tf
out=target/demo
rm -rf "$out"
mkdir -p "$out"

# 64 threads; thread i calls worker(i), which calls body() (i mod 32) + 1 times.
"$tf" trace -o "$out/trace" -- workloads/build/O1/divergence triangle 64
"$tf" info "$out/trace" --top 10
"$tf" analyze "$out/trace" --unit call:worker --warp 8,16,32 --top 10 \
    --json "$out/analysis.json" --csv "$out/analysis.csv"
"$tf" report "$out/trace" --unit call:worker --warp 8,16,32 -o "$out/report"
echo
echo "tf: trace, analysis.json and analysis.csv are in $out/"
echo "tf: HTML report: $(pwd)/$out/report/index.html"
