// build: clang -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * main -> a_01 -> ... -> a_20 -> leaf built by clang without frame pointers;
 * leaf spins on the CPU. The chain is in nofp_chain.h.
 * Usage: nofp_clang SECONDS
 */
#include "nofp_chain.h"
