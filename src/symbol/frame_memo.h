/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Native frames already named, remembered across profiles: (file slot, ELF
 * address) -> the frames symbolization gave it (inline chain, names, source
 * lines). An agent names the same hot addresses every interval, and each
 * costs libdw a walk of the DIEs of its unit (dwarf_getscopes): most of an
 * interval's CPU before this. A file slot names one file's content, so an
 * entry stays right until the slot is reused (symbolizer__forget_file() forgets
 * them). Bounded: past the limit everything is forgotten and relearned.
 */
#ifndef OMNIPROF_SYMBOL_FRAME_MEMO_H
#define OMNIPROF_SYMBOL_FRAME_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "symbol/native_symbols.h"
#include "util/hashmap.h"

#define FRAME_MEMO_DEFAULT_BYTES (4u << 20)

struct frame_memo_stats {
	uint64_t hits;
	uint64_t misses;
	uint64_t resets; /* times the limit made it forget everything */
};

struct frame_memo {
	struct hashmap index; /* (file slot, vaddr) -> struct memo_entry * (owned) */
	size_t bytes;	      /* held by the entries */
	size_t limit;
	struct frame_memo_stats stats;
};

/* limit: bytes the entries may hold (0: FRAME_MEMO_DEFAULT_BYTES). */
void frame_memo__init(struct frame_memo *m, size_t limit);
/* Forgets every entry (frees them); the memo stays usable. Accepts NULL. */
void frame_memo__clear(struct frame_memo *m);
/* Forgets the entries of file_slot (its slot is about to name another file). */
void frame_memo__forget_file(struct frame_memo *m, uint32_t file_slot);

/*
 * Copies the frames remembered for (file_slot, vaddr) into out (at most max)
 * and returns how many (0: remembered as unnamed), or -1 when not
 * remembered. out[i].file points into the memo: valid until the next
 * frame_memo__put() or frame_memo__clear().
 */
long frame_memo__get(struct frame_memo *m, uint32_t file_slot, uint64_t vaddr,
		     struct sym_frame *out, size_t max);

/*
 * Remembers the n frames (n may be 0) named for (file_slot, vaddr), which must
 * not be remembered yet. Returns 0 or -ENOMEM (then nothing is remembered).
 */
int frame_memo__put(struct frame_memo *m, uint32_t file_slot, uint64_t vaddr,
		    const struct sym_frame *frames, size_t n);

#endif
