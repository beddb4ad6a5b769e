#!/usr/bin/env bash
# Installs what tf and its tests need on Debian/Ubuntu, when it is missing:
# Valgrind (the tracer runs inside it), C and C++ compilers and make (the tracer,
# the workloads and the conformance programs), clang with LLVM's OpenMP runtime
# (the worksharing tests run the OpenMP workloads on libomp too), pigz (a real
# multi-threaded program the tests trace), age (a Go program from Debian,
# whose functions tf names from Go's own table), GLib (a workload takes its locks)
# and Chromium (the report tests open the HTML pages in it, headless).
set -euo pipefail

need=()
command -v valgrind >/dev/null || need+=(valgrind)
[ -f /usr/include/valgrind/pub_tool_basics.h ] || need+=(valgrind)
command -v gcc >/dev/null || need+=(gcc)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v clang >/dev/null || need+=(clang)
ls /usr/lib/llvm-*/lib/libomp.so >/dev/null 2>&1 || need+=(libomp-dev)
command -v pigz >/dev/null || need+=(pigz)
command -v age >/dev/null || need+=(age)
ls /usr/lib/*/libglib-2.0.so.0 >/dev/null 2>&1 || need+=(libglib2.0-0)
command -v chromium >/dev/null || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get install -y "${need[@]}" >/dev/null 2>&1 || {
        $sudo apt-get update >/dev/null
        $sudo apt-get install -y "${need[@]}"
    }
fi
