#!/usr/bin/env bash
# Instructions, not seconds: what a one-warp replay executes per block
# execution, and what decoding alone executes of it. Valgrind's cachegrind
# counts the same in every run of the same build on the same trace, where
# timings on a shared machine move by 10 to 30% from run to run: a change to
# the replay or the decoder is measured here to a tenth of a percent.
# - pigz -p 4 -c on SMALL bytes of generated text (default 300 kB: about
#   56 M instructions traced, 12 M block executions; a minute under
#   cachegrind), `tf analyze --warp 32` on one core from the index (the
#   first pass kept by an analysis before);
# - its busiest thread decoded alone, with the addresses, unchecked, as the
#   replay's lanes read it (tf-trace's `decode_thread` example).
#   benches/analyze_instructions.sh      TF=PATH benches/analyze_instructions.sh
# TF measures another build's replay (the decoding is this tree's); two
# builds compare on one trace, each traced run's threads interleaving
# otherwise: TF_BENCH_TRACE=DIR takes that trace instead of tracing pigz
# (its files linked into a directory of the run's own, where each build
# keeps its own index; the trace must be older than a minute to be indexed).
set -euo pipefail
cd "$(dirname "$0")/.."
small=${SMALL:-300000}
. benches/prepare.sh
cargo build --release --quiet -p tf-trace --example decode_thread

if [ -n "${TF_BENCH_TRACE:-}" ]; then
    mkdir "$tmp/trace"
    files=("$TF_BENCH_TRACE"/manifest "$TF_BENCH_TRACE"/*.tfc)
    # copied where a link cannot be made (another file system), with their
    # times (a trace modified in the last minute is not indexed)
    ln "${files[@]}" "$tmp/trace"/ 2> /dev/null || cp -p "${files[@]}" "$tmp/trace"/
    what="the trace $TF_BENCH_TRACE"
else
    workloads/build/O1/gen_text "$small" > "$tmp/input"
    "$tf" trace -o "$tmp/trace" -- pigz -p 4 -c "$tmp/input" > /dev/null 2> "$tmp/err" ||
        { cat "$tmp/err"; exit 1; }
    what="pigz -p 4 -c ($small bytes)"
    # a trace changed in the last seconds is not indexed
    find "$tmp/trace" -maxdepth 1 -type f -exec touch -d '-1 minute' {} +
fi
"$tf" analyze "$tmp/trace" --warp 32 > /dev/null

# count OUT COMMAND...: the instructions COMMAND executes (its own output in OUT)
count() {
    local out=$1
    shift
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        --log-file="$tmp/valgrind" "$@" > "$out" 2>&1
    awk '/I *refs:/ { gsub(",", "", $NF); print $NF }' "$tmp/valgrind"
}

# the "all" row of tf info: traced instructions and block executions; the
# thread with the most block executions
"$tf" info "$tmp/trace" > "$tmp/info"
read -r insns blocks < <(awk '$1 == "all" { print $4, $6 }' "$tmp/info")
read -r tid tid_blocks < <(awk '$1 ~ /^[0-9]+$/ && $6 + 0 > most { most = $6 + 0; tid = $1 } END { print tid, most }' "$tmp/info")

replay=$(RAYON_NUM_THREADS=1 count "$tmp/analyze" "$tf" analyze "$tmp/trace" --warp 32 --timings)
grep -q "first pass read from" "$tmp/analyze" ||
    { echo "the replay did not read the first pass from the index:"; cat "$tmp/analyze"; exit 1; }
decode=$(count "$tmp/decode" target/release/examples/decode_thread "$tmp/trace" "$tid")

echo "$what: $insns instructions traced, $blocks block executions"
awk -v r="$replay" -v b="$blocks" -v i="$insns" 'BEGIN {
    printf "one-warp replay (W = 32, one core, from the index): %.0f instructions, %.1f per block execution, %.1f per thread instruction\n", r, r / b, r / i }'
awk -v d="$decode" -v b="$tid_blocks" -v t="$tid" 'BEGIN {
    printf "decoding thread %s alone (%d block executions): %.0f instructions, %.1f per block execution\n", t, b, d, d / b }'
