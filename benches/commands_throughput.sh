#!/usr/bin/env bash
# The other commands that read a whole trace, on `pigz -p 4 -c` of generated
# text (SMALL bytes, default 400 kB): `tf info`, `tf report` (its default
# sweep and W = 32) and `tf export --accelsim`, each on one core
# (RAYON_NUM_THREADS=1) and on all cores, with `--index off` where the
# command has it (so that every run is a whole one). Prints the wall time,
# thread instructions per second and peak memory of each; for the export
# also the lines written per second, and how right the progress bar's ETA
# was a tenth of the way into each stage of a second or more (`tf export
# --timings`, ETA_RUNS times, default 3, on all cores).
#   benches/commands_throughput.sh        SMALL=2000000 benches/commands_throughput.sh
#   TF=PATH benches/commands_throughput.sh   (another build, side by side)
set -euo pipefail
cd "$(dirname "$0")/.."
small=${SMALL:-400000}
. benches/prepare.sh

workloads/build/O1/gen_text "$small" > "$tmp/input"
trace="$tmp/trace"
"$tf" trace -o "$trace" -- pigz -p 4 -c "$tmp/input" > /dev/null 2> "$tmp/err" || { cat "$tmp/err"; exit 1; }
insns=$("$tf" info "$trace" | awk '$1 == "all" && !seen { print $4; seen = 1 }')
off=()
if "$tf" analyze --help | grep -q -- '--index'; then off=(--index off); fi

# row LABEL THREADS COMMAND...: prints the command's wall time, rate and peak memory
row() {
    local label=$1 threads=$2
    shift 2
    rm -rf "$tmp/out"
    RAYON_NUM_THREADS=$threads /usr/bin/time -f "%e %M" -o "$tmp/time" \
        "$@" > "$tmp/stdout" 2> "$tmp/err" || { cat "$tmp/err"; exit 1; }
    read -r secs kb < "$tmp/time"
    awk -v l="$label" -v t="$threads" -v n="$insns" -v s="$secs" -v k="$kb" 'BEGIN {
        printf "  %-28s %2s core(s) %7.2f s  %7.1f M thread-insns/s  %6.1f MB peak\n",
            l, t, s, n / s / 1e6, k / 1024 }'
}

echo "tf commands on pigz -p 4 of $small bytes ($insns thread instructions, $(nproc) cores)"
for threads in 1 "$(nproc)"; do
    row "tf info" "$threads" "$tf" info "$trace"
    row "tf report" "$threads" "$tf" report "$trace" -o "$tmp/out" "${off[@]}"
    row "tf export --accelsim" "$threads" "$tf" export --accelsim "$trace" -o "$tmp/out" "${off[@]}"
    lines=$(grep -c '^[0-9a-f]* [0-9a-f]\{8\} ' "$tmp/out/kernel-1.traceg" || true)
    secs=$(cut -d' ' -f1 "$tmp/time")
    awk -v n="$lines" -v s="$secs" 'BEGIN { printf "  %-28s %.1f M lines/s (%d lines)\n", "", n / s / 1e6, n }'
done

if "$tf" export --help | grep -q -- '--timings'; then
    eta_runs=${ETA_RUNS:-3}
    echo "progress ETA at 10% of tf export's stages ($eta_runs runs)"
    for _ in $(seq "$eta_runs"); do
        rm -rf "$tmp/out"
        "$tf" export --accelsim "$trace" -o "$tmp/out" --timings 2> "$tmp/err" > /dev/null || { cat "$tmp/err"; exit 1; }
        awk '/at 10%/ { sub(/^tf: /, ""); print "  " $0 }' "$tmp/err"
    done
fi
