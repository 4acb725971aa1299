#!/bin/sh
# Rebuilds quicreno.bpf.o from quicreno.bpf.c. Needs clang (Debian: clang-14),
# llvm-strip and bpftool, and a kernel with BTF for vmlinux.h. The object is
# committed so that building the module needs none of them.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$tmp/vmlinux.h"
clang=$(command -v clang || command -v clang-14)
strip=$(command -v llvm-strip || command -v llvm-strip-14)
"$clang" -O2 -g -Wall -Werror -target bpf -I"$tmp" -c quicreno.bpf.c -o quicreno.bpf.o
"$strip" -g quicreno.bpf.o
