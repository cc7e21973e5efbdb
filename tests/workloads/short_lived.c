// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * Lives for MS milliseconds of CPU time (default 200), spinning in
 * main -> sl_01 -> ... -> sl_08 -> sl_leaf, built without frame pointers.
 * The chain is in short_lived.h.
 * Usage: short_lived [MS]
 */
#include "short_lived.h"
