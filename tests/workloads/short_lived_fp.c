// build: gcc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls
/*
 * short_lived with frame pointers: the control case. When this one's chain is
 * complete and short_lived's is not, the unwinder (not the tracking of young
 * processes or the symbolization of exited ones) is what fails.
 * Usage: short_lived_fp [MS]
 */
#include "short_lived.h"
