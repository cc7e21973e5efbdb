/* SPDX-License-Identifier: Apache-2.0 */
/*
 * OP_UNROLL: loops over a fixed count the BPF build needs unrolled (clang:
 * the verifier would otherwise walk each round's paths); ordinary C does not
 * care. Shared by the unwinder's headers that compile for both targets.
 */
#ifndef OMNIPROF_UNWIND_UNROLL_H
#define OMNIPROF_UNWIND_UNROLL_H

#ifdef __clang__
#define OP_UNROLL _Pragma("unroll")
#else
#define OP_UNROLL
#endif

#endif
