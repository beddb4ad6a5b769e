#!/bin/sh
# Checks of the Valgrind tool on small programs whose traces are known.
#   tracer-valgrind/tests/run.sh [WORKDIR]
# Builds the tool, traces each program, reads the traces with the tf-trace
# dump example and checks what must be in them. Prints one line per check
# and exits 1 if any failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work"
make -s -C "$root/tracer-valgrind" O="$work/build" libdir || exit 1
(cd "$root" && cargo build -q --release -p tf-trace --example dump) || exit 1
dump="$root/target/release/examples/dump"
failed=0

check() { # name, then a command that must succeed
    name=$1; shift
    if "$@" >/dev/null 2>&1; then echo "ok   $name"; else echo "FAIL $name"; failed=1; fi
}

# trace NAME [tf options] -- PROGRAM ARGS: trace into $work/NAME, dump to $work/NAME.txt
trace() {
    name=$1; shift
    opts=""
    while [ "$1" != "--" ]; do opts="$opts $1"; shift; done
    shift
    rm -rf "$work/$name" && mkdir -p "$work/$name"
    # shellcheck disable=SC2086
    VALGRIND_LIB="$work/build/lib" valgrind --tool=tf --vex-guest-chase=no --demangle=no -q \
        --tf-out="$work/$name" $opts "$@" >"$work/$name.out" 2>"$work/$name.err"
    echo $? >"$work/$name.status"
    "$dump" "$work/$name" >"$work/$name.txt" 2>&1
    echo $? >"$work/$name.dumpstatus"
}

# The function name of each traced block execution, in order (one per line).
functions() {
    awk '/^  function [0-9]+:/ { sub(":", "", $2); fn[$2] = $NF }
         /^  block [0-9]+:/ { sub(":", "", $2); bf[$2] = $5 }
         /^    (id|run|cand0|cand1) +block/ { print fn[bf[$3]] }' "$1"
}

# The block executions of thread $2 in dump $1.
executions() {
    awk -v t="$2" '/^thread [0-9]+ \(/ { on = ($2 == t) }
                   on && /^    (id|run|cand0|cand1) +block/' "$1"
}

mkdir -p "$work/bin"
cc() { gcc -O1 -g -fno-omit-frame-pointer "$@"; }

# --- signals, partial execution, rep with a zero count -----------------------
cc -o "$work/bin/signals" "$here/signals.c"
trace signals -- "$work/bin/signals"
t="$work/signals.txt"
check "signals: handled SIGUSR1 is a signal and a signal_return" \
    sh -c "grep -A3 'Signal { signo: 10 }' '$t' | grep -q 'SignalReturn { signo: 10 }'"
check "signals: the faulting block is partial, 1 instruction, then SIGSEGV" \
    sh -c "grep -A1 'PARTIAL 1/' '$t' | grep -q 'Signal { signo: 11 }'"
check "signals: no signal_return after siglongjmp" \
    sh -c "! grep -q 'SignalReturn { signo: 11 }' '$t'"
check "signals: a rep block has conditional operands" grep -q 'ops \[i0:r1? i0:w1?\]' "$t"
check "signals: exit status 0" grep -qx 0 "$work/signals.status"

# --- --tf-only / --tf-exclude --------------------------------------------------
cc -o "$work/bin/only" "$here/only.c"
trace only_f --tf-only=f -- "$work/bin/only"
only_fns=$(functions "$work/only_f.txt" | sort -u | tr '\n' ' ')
check "only: every traced block is in f or g" test "$only_fns" = "f g "
check "only: the rest is skipped with reason 3" grep -q 'skip OutsideRegion ' "$work/only_f.txt"
trace exclude_g --tf-exclude=g -- "$work/bin/only"
exclude_fns=$(functions "$work/exclude_g.txt" | sort -u | tr '\n' ' ')
check "exclude: f and main are traced, g is not" \
    sh -c "echo ' $exclude_fns' | grep -q ' f .*main ' && ! echo ' $exclude_fns' | grep -q ' g '"
check "exclude: g(10), g(5), g(20) are skips of 65, 35, 125" \
    sh -c "grep -o 'skip Excluded [0-9]*' '$work/exclude_g.txt' | grep -o '[0-9]*' | tr '\n' ' ' | grep -qx '65 35 125 '"

# --- fork and exec ---------------------------------------------------------------
cc -o "$work/bin/forkexec" "$here/forkexec.c"
trace fork -- "$work/bin/forkexec"
check "fork: the child's loop is not in the trace (one thread, < 200k instructions)" \
    sh -c "grep -q 'thread 1: parent 0' '$work/fork.txt' && ! grep -q 'thread 2:' '$work/fork.txt' &&
           awk '/^  traced:/ { exit !(\$2 < 200000) }' '$work/fork.txt'"
check "fork: the child's exit status reaches the parent" grep -q 'child 3' "$work/fork.out"
check "fork: the manifest counts one process forked" grep -q 'forked: 1  exec: \[\]' "$work/fork.txt"
trace exec -- "$work/bin/forkexec" x
check "exec: the program ran" grep -q "exec'd" "$work/exec.out"
check "exec: the trace before execve is readable, complete, and names the new program" \
    sh -c "grep -q 'complete: true' '$work/exec.txt' && grep -qx 0 '$work/exec.dumpstatus' &&
           grep -qF 'forked: 1  exec: [\"/bin/echo\", \"exec'\\''d\"]' '$work/exec.txt'"

# --- a fault in the middle of a block kills the process --------------------------
cc -pthread -o "$work/bin/fault" "$here/fault.c"
trace fault -- "$work/bin/fault"
check "fault: exit status 139" grep -qx 139 "$work/fault.status"
check "fault: manifest names SIGSEGV" grep -q 'exit_signal: Some(11)' "$work/fault.txt"
last_main=$(executions "$work/fault.txt" 1 | tail -1)
check "fault: main's last block is partial, 2 instructions, two stores" \
    sh -c "echo '$last_main' | grep -q 'PARTIAL 2/.* w8\[0\]=0x[0-9a-f]* w8\[1\]='"
check "fault: every thread's trace is readable" grep -qx 0 "$work/fault.dumpstatus"
check "fault: 4 threads" sh -c "[ \$(grep -c '^  thread [0-9]*: parent' '$work/fault.txt') = 4 ]"

# --- locks --------------------------------------------------------------------------
cc -pthread -o "$work/bin/locks" "$here/locks.c"
# Twice: with the default encoder threads (one per client thread), and with
# one encoder thread that all four client threads share.
for encoders in 0 1; do
    l=locks; [ "$encoders" = 0 ] || l=locks-shared
    trace $l --tf-encoders=$encoders -- "$work/bin/locks"
    addr() { grep -o "$1 0x[0-9a-f]*" "$work/$l.out" | awk '{print $2}'; }
    m=$(addr " m"); m2=$(addr m2); sp=$(addr sp); rw=$(addr rw); sem=$(addr sem)
    check "$l: 3 workers, parent 1, start routine worker" \
        sh -c "[ \$(grep -c 'parent 1 .* start $(addr worker) ' '$work/$l.txt') = 3 ]"
    check "$l: main's trylock succeeds once on m2, then releases it" \
        sh -c "grep -c 'lock_acquire Mutex $m2\$' '$work/$l.txt' | grep -qx 1 &&
               grep -c 'lock_release Mutex $m2\$' '$work/$l.txt' | grep -qx 1"
    check "$l: each worker: 3+2 mutex acquires of m (loop, cond wait)" \
        sh -c "[ \$(grep -c 'lock_acquire Mutex $m\$' '$work/$l.txt') -ge 15 ]"
    check "$l: spin, rwlock read and write, semaphore" \
        sh -c "grep -q 'lock_acquire Spin $sp\$' '$work/$l.txt' &&
               grep -q 'lock_release Spin $sp\$' '$work/$l.txt' &&
               grep -q 'lock_release RwRead $rw\$' '$work/$l.txt' &&
               grep -q 'lock_release RwWrite $rw\$' '$work/$l.txt' &&
               grep -q 'lock_acquire Semaphore $sem\$' '$work/$l.txt'"
    check "$l: condition waits and joins are skips of reason 1" grep -q 'skip SyncWait ' "$work/$l.txt"
    check "$l: the trace is complete and reads without damage" \
        sh -c "grep -qx 0 '$work/$l.status' && grep -qx 0 '$work/$l.dumpstatus' && ! grep -q 'complete: false' '$work/$l.txt'"
done

# --- OpenMP --------------------------------------------------------------------------
cc -fopenmp -o "$work/bin/omp" "$here/omp.c"
trace omp -- "$work/bin/omp"
check "omp: critical, named critical and atomic are locks" \
    sh -c "grep -q 'lock_acquire OmpCritical ' '$work/omp.txt' && grep -q 'lock_acquire OmpCriticalNamed ' '$work/omp.txt' &&
           grep -q 'lock_acquire OmpAtomic ' '$work/omp.txt'"
check "omp: 3 threads" sh -c "[ \$(grep -c '^  thread [0-9]*: parent' '$work/omp.txt') = 3 ]"

exit $failed
