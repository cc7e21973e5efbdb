// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * short_lived under another name (its own comm), for runs of 50 ms: a few
 * samples each, most of them taken before the profiler has read its maps.
 * Usage: very_short [MS]
 */
#include "short_lived.h"
