// build: gcc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls -I tests/workloads
/*
 * tests/workloads/deep_recursion.c built with frame pointers: the same
 * main -> recurse x DEPTH -> leaf, for bench/fp_floor.bpf.c's frame-pointer
 * walk beside omniprof's walk of the code built without them (bpf-cost).
 * Usage: deep_recursion_fp SECONDS DEPTH
 */
#include "deep_recursion.c"
