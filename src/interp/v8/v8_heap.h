/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading V8's heap objects of a live process (or a snapshot) through
 * struct remote_memory, with the layout node describes (v8_binary.h).
 * Every object read is checked by its map's instance type first: a pointer
 * that no longer holds what the frame said (GC, flushed code) gives an
 * error, never a wrong name. Every read and loop is bounded.
 */
#ifndef OMNIPROF_INTERP_V8_V8_HEAP_H
#define OMNIPROF_INTERP_V8_V8_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct remote_memory;
struct v8_layout;

#define V8_STR_MAX	  256	       /* bytes of a name or file name kept (UTF-8) */
#define V8_SOURCE_MAX	  (32u << 20)  /* characters of a script's source scanned for lines */
#define V8_POSITIONS_MAX  (256u << 10) /* bytes of a source position table read */
#define V8_CONS_DEPTH_MAX 16	       /* cons strings followed */

/* One entry of a source position table: a code offset and its script offset. */
struct v8_position {
	uint32_t code_offset;
	uint32_t script_offset;
	uint16_t inlining_id; /* 0: the function itself, else 1 + index of InliningPositions */
};

/* The instance type of the tagged pointer obj. 0 or -errno (-EINVAL: not a heap object). */
int v8_heap__type(const struct remote_memory *mem, const struct v8_layout *l, uint64_t obj,
		  uint16_t *type);
/* A field (8 bytes) of the tagged object obj. 0 or -errno. */
int v8_heap__field(const struct remote_memory *mem, uint64_t obj, uint32_t off, uint64_t *out);

/*
 * The string obj in UTF-8 into out (cap bytes, NUL-terminated, cut at a
 * character boundary). 0 or -errno (-EINVAL: not a string, or a kind not
 * read: external strings).
 */
int v8_heap__string(const struct remote_memory *mem, const struct v8_layout *l, uint64_t obj,
		    char *out, size_t cap);

/* Characters [from, from + count) of string obj, as v8_heap__string. */
int v8_heap__substring(const struct remote_memory *mem, const struct v8_layout *l, uint64_t obj,
		       uint32_t from, uint32_t count, char *out, size_t cap);

/*
 * The name of SharedFunctionInfo sfi ("" for an anonymous function) into out;
 * a class's method as "Class.method" (the class named by its source).
 * 0 or -errno (-EINVAL: sfi is no SharedFunctionInfo).
 */
int v8_heap__function_name(const struct remote_memory *mem, const struct v8_layout *l, uint64_t sfi,
			   char *out, size_t cap);

/* sfi's Script (tagged), or 0 when it has none (or it is unreadable). */
uint64_t v8_heap__script(const struct remote_memory *mem, const struct v8_layout *l, uint64_t sfi);

/*
 * The line ends of script (offsets of each line terminator, as V8 counts
 * them), from its source: *ends (malloc'd, caller frees) and *n. 0 or -errno.
 */
int v8_heap__line_ends(const struct remote_memory *mem, const struct v8_layout *l, uint64_t script,
		       uint32_t **ends, size_t *n);
/* The 1-based line of script offset pos, 0 when unknown. */
int64_t v8_heap__line_of(const uint32_t *ends, size_t n, uint32_t pos);

/*
 * Decodes a source position table (the bytes of a ByteArray) into *out
 * (malloc'd, caller frees) and *n. 0 or -errno (-EINVAL: malformed).
 */
int v8_heap__decode_positions(const uint8_t *bytes, size_t len, struct v8_position **out,
			      size_t *n);
/* Reads and decodes the ByteArray table (tagged). 0 or -errno. */
int v8_heap__positions(const struct remote_memory *mem, const struct v8_layout *l, uint64_t table,
		       struct v8_position **out, size_t *n);
/*
 * The bytecode offset that pc offset pc_off of baseline code maps to: its
 * bytecode offset table (one unsigned VLQ pc delta for the function's entry,
 * then one per bytecode, in order) walked along the bytecodes, whose sizes
 * come from sizes[scale][bytecode] (n bytecodes; 0 and 1 are the Wide and
 * ExtraWide prefixes, 2 and 3 their debug-break forms). *out: -1 for the
 * entry. 0 or -EINVAL (malformed, or pc_off past the table).
 */
int v8_heap__baseline_offset(const uint8_t *table, size_t table_len, const uint8_t *bytecode,
			     size_t bytecode_len, const uint8_t (*sizes)[256], uint32_t n,
			     uint32_t pc_off, int64_t *out);

/*
 * A Maglev code's safepoint table (the first part of its metadata, right
 * after its instructions): a 16-byte header of four little-endian 32-bit
 * words, the safepoint count at word count_word and the entry
 * configuration after it (V8 13.6: word 1, after a stack slot count; V8
 * 12.4: word 0), then per safepoint its pc, deopt index + 1, trampoline pc
 * + 1, a byte counting pushed registers and the register indexes, each
 * field as many bytes as the configuration says (bit 0: has deopt data,
 * bits 1-3 register index bytes, 4-6 pc bytes, 7-9 deopt index bytes).
 */
#define V8_MAGLEV_SAFEPOINT_HEADER 16
#define V8_SAFEPOINTS_MAX	   4096	       /* safepoints of one code read, at most */
#define V8_SAFEPOINT_BYTES_MAX	   (64u << 10) /* bytes of one table read, at most */
/* The bytes of the table whose first V8_MAGLEV_SAFEPOINT_HEADER bytes are
 * head, header included; 0 when the header is not a table's. */
size_t v8_heap__maglev_safepoints_size(const uint8_t *head, unsigned count_word);
/*
 * The deoptimization index of the safepoint at pc offset pc_off in the table
 * (len bytes, header included) of code code_size bytes long; -1 when none,
 * or when the table is not one (too short, pcs not rising inside the code).
 */
int64_t v8_heap__maglev_deopt_index(const uint8_t *table, size_t len, unsigned count_word,
				    uint32_t code_size, uint32_t pc_off);

/*
 * A deoptimization translation (DeoptimizationFrameTranslation, V8 12 on):
 * per translation a BEGIN (lookback distance to an earlier BEGIN, frame
 * count, JavaScript frame count), then per frame a frame opcode and its
 * operands followed by its values' opcodes, outermost frame first. Opcodes
 * are bytes, operands VLQ (7 bits a byte, low first, 0x80 continues;
 * signed ones with their sign in bit 0). A translation refers back to its
 * lookback BEGIN's: MATCH_PREVIOUS_TRANSLATION n (or an opcode byte >=
 * the opcode count, n = byte - count) takes the next n operations from
 * there, after skipping as many there as this one has of its own since
 * they were last aligned. Opcode numbers and operand counts per V8 version.
 */
struct v8_translation_ops {
	const uint8_t *operands; /* operand count by opcode */
	uint8_t n;		 /* opcodes */
	uint8_t n_frames;	 /* opcodes below it are frames' */
	uint8_t interpreted_with_return, interpreted_without_return, inlined_extra_arguments;
	uint8_t begin_without_feedback, begin_with_feedback, match_previous;
};
/* V8 13.6 (Node 24): the order and counts read from node's own binary
 * (its opcode printer's jump table, TranslationOpcodeOperandCount's table). */
extern const struct v8_translation_ops v8_translation_v13;

/* An interpreted frame of a translation. */
struct v8_deopt_frame {
	int32_t bytecode_offset;
	int32_t literal; /* its function's index in the deoptimization literal array */
};
#define V8_DEOPT_FRAMES_MAX    16   /* frames of one translation */
#define V8_TRANSLATION_OPS_MAX 8192 /* operations decoded for one translation */

/*
 * The interpreted frames of the translation at index of the translation
 * bytes t (len), outermost first, into out (max): *n of them, exactly its
 * JavaScript frame count. -EINVAL when it does not decode exactly: an
 * unknown opcode, a lookback or match out of range, counts that disagree,
 * a frame other than an interpreted one or inlined extra arguments (a
 * builtin continuation, a construct stub).
 */
int v8_heap__translation_frames(const uint8_t *t, size_t len, uint32_t index,
				const struct v8_translation_ops *ops, struct v8_deopt_frame *out,
				size_t max, size_t *n);

/* The entry for code offset off (the last one at or before it), NULL when none. */
const struct v8_position *v8_heap__position_at(const struct v8_position *p, size_t n, uint32_t off);

#endif
