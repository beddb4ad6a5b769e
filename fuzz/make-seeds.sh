#!/bin/sh
# Seed corpus for the fuzz targets: small real traces made by tf trace on the
# workloads, and their Accel-Sim exports made by tf export, each packed into
# one file (fuzz/corpus/<target>/).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build --release -q
cargo build --release -q -p tf-fuzz-harness --example pack
make -s -C workloads
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p fuzz/corpus/read_trace fuzz/corpus/analyze_trace fuzz/corpus/export_trace fuzz/corpus/check_export
n=0
seed() { # name program args...
    name=$1; shift
    # crash ends with SIGSEGV (status 139); every trace must be complete.
    target/release/tf trace -o "$tmp/$name" -- "$@" >/dev/null 2>"$tmp/err" || [ $? -ne 125 ] || { cat "$tmp/err"; exit 1; }
    target/release/tf info "$tmp/$name" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
    target/release/examples/pack "$tmp/$name" "fuzz/corpus/read_trace/$name"
    cp "fuzz/corpus/read_trace/$name" "fuzz/corpus/analyze_trace/$name"
    cp "fuzz/corpus/read_trace/$name" "fuzz/corpus/export_trace/$name"
    n=$((n + 1))
}
export_seed() { # name program args...: the export of the workers' code, checked as it is written
    name=$1; shift
    target/release/tf trace --only worker -o "$tmp/x-$name" -- "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
    target/release/tf export --accelsim "$tmp/x-$name" -o "$tmp/x-$name-export" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
    target/release/examples/pack "$tmp/x-$name-export" "fuzz/corpus/check_export/$name"
    n=$((n + 1))
}
b=workloads/build/O1
seed threads $b/threads 2
seed divergence $b/divergence oddeven 16
seed locks $b/locks 2 10
seed loop $b/loop 50
seed crash $b/crash
export_seed threads $b/threads 2
export_seed divergence $b/divergence oddeven 64
export_seed locks $b/locks 2 5
echo "$n seeds in fuzz/corpus/"
ls -l fuzz/corpus/read_trace fuzz/corpus/check_export
