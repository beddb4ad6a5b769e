#!/usr/bin/env bash
# Tracer overhead on a real program: `pigz -p 4 -c FILE` on a generated 20 MB
# text file. Prints the median wall time (of RUNS runs, default 3) natively,
# under `valgrind --tool=none`, and under `tf trace`; the ratios; and the
# trace's bytes per traced instruction. The outputs are checked to be
# byte-identical.
#   benches/trace_overhead.sh            # RUNS=5 benches/trace_overhead.sh
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
. benches/prepare.sh
workloads/build/O1/gen_text 20000000 > "$tmp/input"

# median wall time in seconds of running "$@" $runs times
median() {
    local times=()
    for _ in $(seq "$runs"); do
        rm -rf "$tmp/trace"
        local start end
        start=$(date +%s.%N)
        "$@" > "$tmp/out.gz" 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
        end=$(date +%s.%N)
        times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')")
    done
    printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}

native=$(median pigz -p 4 -c "$tmp/input")
cp "$tmp/out.gz" "$tmp/native.gz"
none=$(median valgrind -q --tool=none pigz -p 4 -c "$tmp/input")
cmp -s "$tmp/out.gz" "$tmp/native.gz" || { echo "valgrind's output differs" >&2; exit 1; }
traced=$(median "$tf" trace -o "$tmp/trace" -- pigz -p 4 -c "$tmp/input")
cmp -s "$tmp/out.gz" "$tmp/native.gz" || { echo "tf trace's output differs" >&2; exit 1; }

bytes=$(du -sb "$tmp/trace" | cut -f1)
insns=$("$tf" info "$tmp/trace" | awk '$1 == "all" && !seen { print $4; seen = 1 }')
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
echo "pigz -p 4 -c (20 MB), median of $runs runs, $(nproc) cores"
printf '  native                 %8.2f s\n' "$native"
printf '  valgrind --tool=none   %8.2f s\n' "$none"
printf '  tf trace               %8.2f s\n' "$traced"
printf '  tf trace / none        %8.2f   (target <= 3.0)\n' "$(div "$traced" "$none")"
printf '  tf trace / native      %8.2f\n' "$(div "$traced" "$native")"
printf '  trace bytes / insn     %8.3f   (%s bytes, %s traced instructions; target <= 0.5)\n' \
    "$(div "$bytes" "$insns")" "$bytes" "$insns"

# Where the time goes (TF_TRACER_ARGS passes options to the Valgrind tool):
# the instrumented program handing its raw records over, then the encoder
# threads walking them through the skip rules, then encoding and writing.
stage() { TF_TRACER_ARGS="$1" median "$tf" trace -o "$tmp/trace" -- pigz -p 4 -c "$tmp/input"; }
dropped=$(stage --tf-bench=1)
walked=$(stage --tf-bench=2)
echo "  where the time goes:"
printf '    instrumented run, raw records dropped   %8.2f s  (%.2f x none)\n' "$dropped" "$(div "$dropped" "$none")"
printf '    + encoder threads walk the records      %8.2f s  (%.2f x none)\n' "$walked" "$(div "$walked" "$none")"
printf '    + encoding and writing the trace        %8.2f s  (%.2f x none)\n' "$traced" "$(div "$traced" "$none")"
