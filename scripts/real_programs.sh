#!/usr/bin/env bash
# Real multi-threaded Debian programs under tf: each runs natively and under
# `tf trace` on a generated input, the outputs are compared byte for byte,
# and `tf analyze --warp 8,16,32` replays the trace. One row per program:
# identical output (and exit status), replayed ÷ recorded instructions, SIMT efficiency at
# W = 8, 16, 32, and the analyze exit status. Not part of CI (it takes long).
#
#   scripts/real_programs.sh                      # ~20 MB inputs, 4 threads, every program
#   scripts/real_programs.sh --size 2000000       # smaller inputs (bytes)
#   scripts/real_programs.sh --quick              # 1 MB inputs: a quick check
#   scripts/real_programs.sh --programs xz,sort   # some programs only
#   options: --threads N, --work DIR (keep the logs and JSON there),
#            --keep-traces (keep each trace too, under --work), --tf PATH
#
# A trace is removed once its row is printed (unless --keep-traces): at
# 20 MB, xz, plzip and 7zz each write over 10 GB of trace.
#
# Programs (installed with apt-get when missing): pbzip2, lbzip2, xz, zstd,
# pzstd, plzip, 7zz, sort, x264, ImageMagick's convert-im6.q16 (OpenMP:
# a generated picture of about SIZE bytes blurred and resized), ripgrep's rg
# (Rust threads, searching the text cut into eight files), bwa (reads aligned
# to a reference) and samtools (those alignments sorted), minimap2 (the same
# reads aligned by its own thread pipeline), x265 (the video encoded by its
# work-stealing thread pool), GraphicsMagick's gm (OpenMP under GCC's
# runtime: the picture blurred and resized), vips (GLib's thread pool: the
# picture blurred) and node (JavaScript compiled at run time, on worker
# threads: workloads/node_workers.js hashing the text); also pigz on request. Inputs come from workloads/gen_text (text), workloads/gen_y4m
# (video for x264) and workloads/gen_dna (a reference of a million bases and
# SIZE/20 bytes of reads): the same size gives the same bytes. rg prints its
# files in the order its threads finish them, so its outputs are compared
# sorted; x264 chooses its code by the CPU's features, so both of its runs
# get those it finds under Valgrind (no AVX-512). Programs that cut their
# input into blocks for their threads are given blocks of about an eighth of
# the input, so that every thread has work at small sizes too. GNU sort
# starts no more threads than there are cores, and pzstd cuts inputs below a
# few MB into one chunk: on a small machine or input they run one worker,
# which shows as 1/W.
set -euo pipefail
cd "$(dirname "$0")/.."

size=20000000
threads=4
programs=pbzip2,lbzip2,xz,zstd,pzstd,plzip,7zz,sort,x264,convert-im6.q16,rg,bwa,samtools,minimap2,x265,gm,vips,node
work=
keep_traces=
tf=
while [ $# -gt 0 ]; do
    case "$1" in
    --size) size=$2; shift 2 ;;
    --quick) size=1000000; shift ;;
    --threads) threads=$2; shift 2 ;;
    --programs) programs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --keep-traces) keep_traces=1; shift ;;
    --tf) tf=$2; shift 2 ;;
    -h | --help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "real_programs.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$size$threads" in
*[!0-9]*) echo "real_programs.sh: --size and --threads take whole numbers" >&2; exit 2 ;;
esac

# The Debian package of each program.
package_of() {
    case "$1" in
    xz) echo xz-utils ;; 7zz) echo 7zip ;; sort) echo coreutils ;;
    convert-im6.q16) echo imagemagick ;; rg) echo ripgrep ;; gm) echo graphicsmagick ;;
    vips) echo libvips-tools ;; node) echo nodejs ;; *) echo "$1" ;;
    esac
}
# Whether program $1 is among those to run.
wants() {
    case ",$programs," in *,"$1",*) return 0 ;; esac
    return 1
}
missing=()
needed=${programs//,/ }
wants samtools && needed="$needed bwa" # samtools sorts what bwa aligned
wants vips && needed="$needed gm" # which makes vips' picture
for p in $needed jq; do
    command -v "$p" > /dev/null || missing+=("$(package_of "$p")")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "real_programs.sh: installing ${missing[*]}" >&2
    if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" > /dev/null
fi
scripts/setup.sh > /dev/null
if [ -z "$tf" ]; then
    cargo build --release --quiet
    tf=$PWD/target/release/tf
fi
make -s -C workloads build/O1/gen_text build/O1/gen_y4m build/O1/gen_dna

if [ -n "$work" ]; then
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
work=$(cd "$work" && pwd)
workloads/build/O1/gen_text "$size" > "$work/input.txt"
workloads/build/O1/gen_y4m "$size" > "$work/input.y4m"
block=$((size / 8 > 65536 ? size / 8 : 65536))
if wants rg; then
    mkdir -p "$work/pieces"
    split -n l/8 -d "$work/input.txt" "$work/pieces/part-"
fi
if wants bwa || wants samtools || wants minimap2; then
    bases=1000000
    workloads/build/O1/gen_dna ref $bases > "$work/ref.fa"
    workloads/build/O1/gen_dna reads $bases $((size / 20)) > "$work/reads.fq"
fi
if wants bwa || wants samtools; then
    bwa index "$work/ref.fa" 2> /dev/null
fi
if wants samtools; then
    bwa mem -t "$threads" "$work/ref.fa" "$work/reads.fq" > "$work/aligned.sam" 2> /dev/null
fi
x264_asm=
if wants x264; then
    # Valgrind's CPU has no AVX-512, and x264's AVX-512 code encodes a video
    # to other bytes than its AVX2 code: both runs get the CPU features x264
    # finds under Valgrind (none found: its row shows the difference).
    x264_asm=$(valgrind --tool=none -q x264 --frames 1 -o /dev/null "$work/input.y4m" 2>&1 |
        sed -n 's/.*using cpu capabilities: //p' | tr 'A-Z ' 'a-z,') || true
fi
x265_asm=
if wants x265; then # the same for x265, which spells them otherwise
    x265_asm=$(valgrind --tool=none -q x265 --input "$work/input.y4m" --frames 1 -o /dev/null 2>&1 |
        sed -n 's/.*using cpu capabilities: //p' | tr ' ' ',') || true
fi
if wants gm || wants vips; then # the picture convert-im6.q16 makes, as a file
    side=$(awk -v s="$size" 'BEGIN { printf "%d", sqrt(s / 3) }')
    gm convert -size "${side}x${side}" gradient:red-blue "$work/input.ppm"
fi

# The command line of program $1 (it writes its result to stdout).
command_of() {
    local in=$work/input.txt n=$threads
    case "$1" in
    pigz) echo pigz -p "$n" -c "$in" ;;
    pbzip2) echo pbzip2 -p"$n" -b$((block / 100000 > 9 ? 9 : block / 100000 + 1)) -c "$in" ;;
    lbzip2) echo lbzip2 -n "$n" -9 -c "$in" ;;
    xz) echo xz -T "$n" -6 --block-size="$block" -c "$in" ;;
    zstd) echo zstd -T"$n" -3 -B$((block > 524288 ? block : 524288)) -q -c "$in" ;;
    pzstd) echo pzstd -p "$n" -1 -q -c "$in" ;;
    plzip) echo plzip -n "$n" -6 -B "$block" -c "$in" ;;
    7zz) echo 7zz a -txz -mmt"$n" -m0=LZMA2:c=$((block / 1024))k -so -an -bd "$in" ;; # c= takes KiB
    sort) echo sort --parallel="$n" -S 1G "$in" ;;
    x264) echo x264 --threads "$n" ${x264_asm:+--asm "$x264_asm"} --quiet -o - "$work/input.y4m" ;;
    convert-im6.q16) # a square of about $size bytes of RGB pixels
        local side
        side=$(awk -v s="$size" 'BEGIN { printf "%d", sqrt(s / 3) }')
        echo convert-im6.q16 -limit thread "$n" -size "${side}x${side}" gradient:red-blue \
            -blur 0x2 -resize 150% ppm:- ;;
    rg) echo rg -j "$n" --count-matches -e '\w+ing|th\w+' "$work/pieces" ;; # no glob characters
    bwa) echo bwa mem -t "$n" "$work/ref.fa" "$work/reads.fq" ;;
    samtools) echo samtools sort -@ "$n" -O bam "$work/aligned.sam" ;;
    minimap2) echo minimap2 -t "$n" -a "$work/ref.fa" "$work/reads.fq" ;;
    x265) echo x265 --pools "$n" --frame-threads 2 --preset fast ${x265_asm:+--asm "$x265_asm"} \
        --input "$work/input.y4m" --output - ;;
    gm) echo gm convert -limit threads "$n" "$work/input.ppm" -blur 0x2 -resize 150% ppm:- ;;
    vips) echo vips --vips-concurrency="$n" gaussblur "$work/input.ppm" .ppm 2 ;;
    node) echo node "$PWD/workloads/node_workers.js" "$n" "$in" ;;
    *) echo "real_programs.sh: unknown program $1" >&2; return 1 ;;
    esac
}

printf '%s\n' "tf on real programs: inputs of $size bytes, $threads threads, $(nproc) cores, $("$tf" --version 2>/dev/null || echo tf)"
printf '%-8s %-9s %14s %9s %8s %8s %8s %9s %8s %8s\n' program identical "recorded insns" replayed \
    "W=8" "W=16" "W=32" "analyze" "trace s" "analyze s"
status=0
for p in ${programs//,/ }; do
    cmd=$(command_of "$p")
    dir=$work/$p
    rm -rf "$dir" && mkdir -p "$dir"
    native_rc=0 traced_rc=0
    # shellcheck disable=SC2086 # the command line is split on purpose
    LC_ALL=C $cmd > "$dir/native.out" 2> "$dir/native.err" || native_rc=$?
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    LC_ALL=C "$tf" trace -o "$dir/trace" -- $cmd > "$dir/traced.out" 2> "$dir/traced.err" || traced_rc=$?
    mid=$(date +%s.%N)
    rc=0
    "$tf" analyze "$dir/trace" --warp 8,16,32 --json "$dir/analyze.json" > "$dir/analyze.txt" 2>&1 || rc=$?
    end=$(date +%s.%N)
    if [ "$p" = rg ]; then # its files come in the order its threads finish them
        sort -o "$dir/native.out" "$dir/native.out"
        sort -o "$dir/traced.out" "$dir/traced.out"
    fi
    if [ "$p" = vips ]; then # its PPM header's comment holds the time it was written
        LC_ALL=C sed -i '2s/^#.*/#/' "$dir/native.out" "$dir/traced.out"
    fi
    same=no
    cmp -s "$dir/native.out" "$dir/traced.out" && [ "$native_rc" = "$traced_rc" ] && same=yes
    [ "$native_rc" = 0 ] || same="no(exit $native_rc)" # the command itself failed (see native.err)
    [ -s "$dir/native.out" ] || same="no(empty)"
    recorded=$("$tf" info "$dir/trace" 2> /dev/null | awk '$1 == "all" && !seen { print $4; seen = 1 }')
    if [ -s "$dir/analyze.json" ]; then
        # Replayed ÷ recorded at the widest width: the analyzer's own count of
        # the units' recorded instructions where it reports one, else all
        # traced instructions (tf info).
        read -r replayed w8 w16 w32 < <(jq -r --argjson rec "${recorded:-0}" '
            (.results | max_by(.warp_size)) as $r
            | ($r.recorded_thread_instructions // $rec) as $d
            | [ (if $d > 0 then $r.thread_instructions / $d * 100 else 0 end),
                (.results[] | select(.warp_size == (8, 16, 32)) | .simt_efficiency * 100) ]
            | map(. * 100 | round / 100) | @tsv' "$dir/analyze.json")
    else
        replayed=- w8=- w16=- w32=-
    fi
    printf '%-8s %-9s %14s %8s%% %7s%% %7s%% %7s%% %9s %8.0f %8.0f\n' "$p" "$same" "${recorded:--}" \
        "$replayed" "$w8" "$w16" "$w32" "exit $rc" \
        "$(awk -v a="$start" -v b="$mid" 'BEGIN { print b - a }')" \
        "$(awk -v a="$mid" -v b="$end" 'BEGIN { print b - a }')"
    [ -n "$keep_traces" ] || rm -rf "$dir/trace"
    if [ "$same" != yes ] || [ "$rc" -ne 0 ]; then
        status=1
    fi
done
echo "(replayed: thread instructions the replay issued ÷ the units' recorded instructions, widest W;"
echo " W=N: SIMT efficiency; analyze: tf analyze's exit status; logs in each program's directory under --work)"
exit $status
