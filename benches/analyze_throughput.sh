#!/usr/bin/env bash
# Analyzer throughput and memory on real traces:
# - pigz -p 4 -c on generated text of SMALL and 10×SMALL bytes (default 2 MB
#   and 20 MB): thread instructions analysed per second at W = 32 on one core
#   (RAYON_NUM_THREADS=1) and on all cores, the same for W = 8,16,32 at once,
#   and the peak resident memory of each run (memory must not grow with the
#   trace: the 10× trace must peak about as high as the small one);
# - GNU sort --parallel=4 on the 10× input (as many threads as cores, at
#   most 4): one warp whose lanes run apart and call short functions (the
#   comparisons) all the time, at W = 32 and W = 8,16,32;
# - nbody 8192 bodies on 128 threads, one unit per call of accelerate():
#   regular, fully converged code, 64 long units per thread; and nbody 2048
#   at W = 8,16,32 at once (many warps at each width: the narrower warps
#   are counted from the replay of the warp of 32 that holds them);
# - divergence triangle 4096 (64 threads' worth of items, many warps);
# - with the first pass kept in the trace's index (`--index`, on by
#   default): the one-core W = 32 rows of pigz, sort and nbody analyse a trace
#   whose files are a minute old, so the run scans it and writes the index;
#   the row after ("again, from the index") is the next analysis, which
#   reads the first pass from there; every other row runs with
#   `--index off`, so that it measures a whole analysis, and a build
#   without the index (TF=PATH) runs the same rows but the "again" ones;
# - pigz 2 MB at W = 1,2,4,32 on one core: widths that form different
#   warps;
# - how right the progress bar's ETA is: for the replay of both pigz
#   traces and of nbody, and of pigz 2 MB and nbody 2048 at the nine widths
#   of `tf report`'s sweep, the bar's estimate of the rest when a tenth of
#   the stage was done, beside what the rest took (`tf analyze --timings`,
#   and `tf report --timings` of those two), ETA_RUNS times each (default
#   3).
#   benches/analyze_throughput.sh            SMALL=4000000 benches/analyze_throughput.sh
set -euo pipefail
cd "$(dirname "$0")/.."
small=${SMALL:-2000000}
. benches/prepare.sh

# trace DIR PROGRAM ARGS...: traces the program into DIR; on failure prints
# why and stops
trace() {
    local dir=$1
    shift
    "$tf" trace -o "$dir" -- "$@" > /dev/null 2> "$tmp/err" || { cat "$tmp/err"; exit 1; }
}

trace_pigz() { # bytes dir
    workloads/build/O1/gen_text "$1" > "$tmp/input"
    trace "$2" pigz -p 4 -c "$tmp/input"
}

# Whether this build keeps the first pass in an index: the other rows then
# run without it.
off=()
if "$tf" analyze --help | grep -q -- '--index'; then off=(--index off); fi

# settle DIR: the trace's files a minute old (a trace changed in the last
# seconds is not indexed)
settle() { find "$1" -maxdepth 1 -type f -exec touch -d '-1 minute' {} +; }

# indexed LABEL TRACE ARGS...: the one-core row that scans and writes the
# index, then the one that reads it (only the first without an index)
indexed() {
    local label=$1 trace=$2
    shift 2
    settle "$trace"
    report "$label" "$trace" 1 "$@"
    if [ ${#off[@]} -gt 0 ]; then report "$label, again, from the index" "$trace" 1 "$@"; fi
}

traced() { "$tf" info "$1" | awk '$1 == "all" && !seen { print $4; seen = 1 }'; }

# run THREADS TRACE ARGS...: prints "seconds peak_kb"
run() {
    local threads=$1 trace=$2
    shift 2
    RAYON_NUM_THREADS=$threads /usr/bin/time -f "%e %M" -o "$tmp/time" \
        "$tf" analyze "$trace" "$@" > /dev/null 2> "$tmp/err" || { cat "$tmp/err"; exit 1; }
    cat "$tmp/time"
}

report() { # label trace threads args...
    local label=$1 trace=$2 threads=$3
    shift 3
    local insns widths secs kb
    insns=$(traced "$trace")
    widths=$(( $(echo "$*" | sed 's/.*--warp \([0-9,]*\).*/\1/' | tr -cd ',' | wc -c) + 1 ))
    read -r secs kb < <(run "$threads" "$trace" "$@")
    awk -v l="$label" -v t="$threads" -v n="$insns" -v w="$widths" -v s="$secs" -v k="$kb" 'BEGIN {
        printf "  %-34s %2s core(s) %7.2f s  %7.1f M thread-insns/s (%d width%s)  %6.1f MB peak\n",
            l, t, s, n * w / s / 1e6, w, (w > 1 ? "s" : ""), k / 1024 }'
}

cores=$(nproc)
eta_traces=()
echo "tf analyze throughput ($cores cores)"
for bytes in "$small" $((10 * small)); do
    dir="$tmp/pigz-$bytes"
    trace_pigz "$bytes" "$dir"
    label="pigz $((bytes / 1000000)) MB ($(traced "$dir") insns)"
    indexed "$label, W=32" "$dir" --warp 32
    report "$label, W=32" "$dir" "$cores" "${off[@]}" --warp 32
    report "$label, W=8,16,32" "$dir" "$cores" "${off[@]}" --warp 8,16,32
    if [ "$bytes" = "$small" ]; then
        # widths that form different warps: W=1 is counted by the wider
        # warps' replays (lanes_alone.rs), W=2 and 4 replay on their own
        report "$label, W=1,2,4,32" "$dir" 1 "${off[@]}" --warp 1,2,4,32
    fi
    eta_traces+=("$dir")
done
dir="$tmp/sort"
workloads/build/O1/gen_text $((10 * small)) > "$tmp/input"
LC_ALL=C.UTF-8 trace "$dir" sort --parallel=4 -S 1G "$tmp/input"
label="sort $((10 * small / 1000000)) MB ($(traced "$dir") insns)"
indexed "$label, W=32" "$dir" --warp 32
report "$label, W=8,16,32" "$dir" "$cores" "${off[@]}" --warp 8,16,32
dir="$tmp/nbody"
trace "$dir" workloads/build/O1/nbody 8192 128
label="nbody 8192 ($(traced "$dir") insns)"
indexed "$label, W=32" "$dir" --unit call:accelerate --warp 32
report "$label, W=32" "$dir" "$cores" "${off[@]}" --unit call:accelerate --warp 32
dir="$tmp/nbody-2048"
trace "$dir" workloads/build/O1/nbody 2048 128
label="nbody 2048 ($(traced "$dir") insns)"
report "$label, W=8,16,32" "$dir" 1 "${off[@]}" --unit call:accelerate --warp 8,16,32
report "$label, W=8,16,32" "$dir" "$cores" "${off[@]}" --unit call:accelerate --warp 8,16,32
dir="$tmp/triangle"
trace "$dir" workloads/build/O1/divergence triangle 4096
label="divergence triangle 4096 ($(traced "$dir") insns)"
report "$label, W=32" "$dir" 1 "${off[@]}" --unit call:worker --warp 32
report "$label, W=32" "$dir" "$cores" "${off[@]}" --unit call:worker --warp 32

eta() { # label trace args...: tf analyze's
    local label=$1 trace=$2
    shift 2
    for _ in $(seq "$eta_runs"); do
        "$tf" analyze "$trace" "$@" --timings 2>&1 >/dev/null | replay_line "$label"
    done
}
eta_report() { # label trace: tf report's (its sweep, and the observer)
    local label=$1 trace=$2
    for _ in $(seq "$eta_runs"); do
        "$tf" report "$trace" -o "$tmp/report" --timings 2>&1 >/dev/null | replay_line "$label"
    done
}
replay_line() { # label: the replay's --timings line, labelled
    awk -v l="$1" '/replaying/ { sub(/^tf: /, ""); printf "  %-34s %s\n", l, $0 }'
}
# Each ETA row runs ETA_RUNS times (default 3): on a shared machine one run's
# error is often the machine's, which a run beside it tells apart from the
# estimate's own. These runs replay from the index where there is one (the
# replay is what they time).
eta_runs=${ETA_RUNS:-3}
echo "progress ETA at 10% of the replay ($eta_runs runs each)"
eta "pigz $((small / 1000000)) MB, W=32" "${eta_traces[0]}" --warp 32
eta "pigz $((10 * small / 1000000)) MB, W=32" "${eta_traces[1]}" --warp 32
eta "nbody 8192, W=32" "$tmp/nbody" --unit call:accelerate --warp 32
# the widths of tf report's sweep (tf_reports::SWEEP), jobs that cost
# unlike amounts per instruction
sweep=1,2,4,8,16,24,32,48,64
eta "pigz $((small / 1000000)) MB, W=$sweep" "${eta_traces[0]}" --warp "$sweep"
eta "nbody 2048, W=$sweep" "$tmp/nbody-2048" --unit call:accelerate --warp "$sweep"
eta_report "tf report pigz $((small / 1000000)) MB" "${eta_traces[0]}"
eta_report "tf report nbody 2048" "$tmp/nbody-2048"
