# Sourced by the benchmark scripts: installs what they need, builds tf and the
# workloads, and sets $tf (the binary: TF=PATH measures another build, e.g.
# an earlier commit's, side by side with this one) and $tmp (a scratch
# directory removed on exit). Run from the repository root.
scripts/setup.sh
cargo build --release --quiet
make -s -C workloads
tf=${TF:-$PWD/target/release/tf}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
