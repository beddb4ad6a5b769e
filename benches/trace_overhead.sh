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

# "WALL CPU" in seconds, of the run with the median wall time of running
# "$@" $runs times; CPU is user + system time of all its threads and
# processes (on 2 cores, tf trace is bound by CPU: the Valgrind thread and
# the encoder threads share the cores).
median() {
    local TIMEFORMAT='%R %U %S' results=()
    for _ in $(seq "$runs"); do
        rm -rf "$tmp/trace"
        { time "$@" > "$tmp/out.gz" 2> "$tmp/err"; } 2> "$tmp/time" || { cat "$tmp/err" >&2; exit 1; }
        results+=("$(awk '{ print $1, $2 + $3 }' "$tmp/time")")
    done
    printf '%s\n' "${results[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}

m=$(median pigz -p 4 -c "$tmp/input")
read -r native native_cpu <<< "$m"
cp "$tmp/out.gz" "$tmp/native.gz"
m=$(median valgrind -q --tool=none pigz -p 4 -c "$tmp/input")
read -r none none_cpu <<< "$m"
cmp -s "$tmp/out.gz" "$tmp/native.gz" || { echo "valgrind's output differs" >&2; exit 1; }
m=$(median "$tf" trace -o "$tmp/trace" -- pigz -p 4 -c "$tmp/input")
read -r traced traced_cpu <<< "$m"
cmp -s "$tmp/out.gz" "$tmp/native.gz" || { echo "tf trace's output differs" >&2; exit 1; }

bytes=$(du -sb "$tmp/trace" | cut -f1)
insns=$("$tf" info "$tmp/trace" | awk '$1 == "all" && !seen { print $4; seen = 1 }')
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
echo "pigz -p 4 -c (20 MB), median of $runs runs, $(nproc) cores"
printf '  native                 %8.2f s   (%.2f s CPU)\n' "$native" "$native_cpu"
printf '  valgrind --tool=none   %8.2f s   (%.2f s CPU)\n' "$none" "$none_cpu"
printf '  tf trace               %8.2f s   (%.2f s CPU)\n' "$traced" "$traced_cpu"
printf '  tf trace / none        %8.2f   (target <= 3.0)\n' "$(div "$traced" "$none")"
printf '  tf trace / native      %8.2f\n' "$(div "$traced" "$native")"
printf '  trace bytes / insn     %8.3f   (%s bytes, %s traced instructions; target <= 0.5)\n' \
    "$(div "$bytes" "$insns")" "$bytes" "$insns"

# Where the time goes (TF_TRACER_ARGS passes options to the Valgrind tool):
# the instrumented program handing its raw records over, then the encoder
# threads walking them through the skip rules, then encoding, then writing.
stage() { TF_TRACER_ARGS="$1" median "$tf" trace -o "$tmp/trace" -- pigz -p 4 -c "$tmp/input"; }
m=$(stage --tf-bench=1)
read -r dropped dropped_cpu <<< "$m"
m=$(stage --tf-bench=2)
read -r walked walked_cpu <<< "$m"
m=$(stage --tf-bench=3)
read -r encoded encoded_cpu <<< "$m"
echo "  where the time goes:"
printf '    instrumented run, raw records dropped   %8.2f s  (%.2f x none)   %6.2f s CPU\n' "$dropped" "$(div "$dropped" "$none")" "$dropped_cpu"
printf '    + encoder threads walk the records      %8.2f s  (%.2f x none)   %6.2f s CPU\n' "$walked" "$(div "$walked" "$none")" "$walked_cpu"
printf '    + encoding the trace (no thread file)   %8.2f s  (%.2f x none)   %6.2f s CPU\n' "$encoded" "$(div "$encoded" "$none")" "$encoded_cpu"
printf '    + writing the thread files              %8.2f s  (%.2f x none)   %6.2f s CPU\n' "$traced" "$(div "$traced" "$none")" "$traced_cpu"
printf '  cores busy under tf trace                %6.2f of %s\n' "$(div "$traced_cpu" "$traced")" "$(nproc)"

# With perf (cpu-clock samples, which need no hardware counters): one more
# tf trace, its CPU time by thread and object, then by thread and function.
# Threads: tf-encoder (the encoder threads: walking the raw records, encoding,
# writing) and tf-amd64-linux (Valgrind's: the client's translated code with
# its instrumentation, "[JIT]", then Valgrind's core and the tool's
# bookkeeping). Shares are of all samples.
if command -v perf > /dev/null && perf record -q -e cpu-clock -o "$tmp/probe.data" true 2> /dev/null; then
    rm -rf "$tmp/trace"
    perf record -q -e cpu-clock -F 999 -o "$tmp/perf.data" -- \
        "$tf" trace -o "$tmp/trace" -- pigz -p 4 -c "$tmp/input" > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
    # the first $2 rows (awk reads all of perf's output: no broken pipe)
    shares() {
        perf report -i "$tmp/perf.data" --stdio --sort "$1" 2> /dev/null |
            awk -v n="$2" '$1 ~ /%$/ && n-- > 0 { sub(/^ */, "    "); print }'
    }
    echo "  CPU of one more tf trace (perf), by thread and object:"
    shares comm,dso 5
    echo "  by thread and function:"
    shares comm,sym 4
fi
