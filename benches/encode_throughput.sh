#!/usr/bin/env bash
# The tracers' encoder alone (trace-format/include/tf_trace.h), without a
# tracer around it: what tf trace's encoder threads spend per block
# execution. Traces `pigz -p 4 -c` on a generated 2 MB text, writes the
# block executions of its busiest thread to a file (tf-trace's
# `executions` example) and encodes them again with benches/encode.c, built
# with the Valgrind tool's optimisation flags. Prints the best of RUNS runs
# (default 5) in ns per execution, and the bytes written with their CRC-32C,
# which any encoder writing the canonical encoding gives unchanged.
#   benches/encode_throughput.sh            # RUNS=9 benches/encode_throughput.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/prepare.sh
workloads/build/O1/gen_text 2000000 > "$tmp/input"
"$tf" trace -o "$tmp/trace" -- pigz -p 4 -c "$tmp/input" > /dev/null
# the thread with the most block executions (tf info's sixth column)
tid=$("$tf" info "$tmp/trace" | awk '$1 ~ /^[0-9]+$/ && $6 + 0 > most { most = $6 + 0; tid = $1 } END { print tid }')
cargo run --release --quiet -p tf-trace --example executions -- "$tmp/trace" "$tid" "$tmp/executions"
gcc -O2 -m64 -msse4.2 -Wall -Wextra -I trace-format/include benches/encode.c -o "$tmp/encode"
echo "pigz -p 4 -c (2 MB), thread $tid:"
"$tmp/encode" "$tmp/executions" "${RUNS:-5}"
