/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What names a V8 frame, read once per (process, object) into the frame
 * store: an interpreted function (key: its BytecodeArray, fingerprint: its
 * SharedFunctionInfo) keeps its name, script name and a bytecode offset ->
 * line table; a pc in JIT code (key: the pc, fingerprint: the
 * SharedFunctionInfo) keeps the name, script name and the line of that pc,
 * from the code object found by walking back from the pc to its header. Scripts' line ends
 * are computed from their source once per (process, script) and checked
 * against the script's source at every use.
 */
#ifndef OMNIPROF_INTERP_V8_V8_CODE_H
#define OMNIPROF_INTERP_V8_V8_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

struct remote_memory;
struct v8_layout;
struct v8_stats;

struct v8_line {
	uint32_t offset; /* bytecode offset */
	uint32_t line;
};

/* A function TurboFan or Maglev inlined into the code holding a pc. */
struct v8_inlined {
	char *name;
	char *filename;
	int64_t line; /* 0: unknown */
};

struct v8_code {
	char *name;	/* "(anonymous)" for an anonymous function */
	char *filename; /* the script's name, "" when it has none */
	uint8_t kind;	/* enum op_v8_frame */
	uint16_t bias;	/* interpreted: subtracted from a frame's offset (tagged -> bytecode) */
	int64_t line;	/* JIT: the pc's line, 0: unknown */
	struct v8_line *lines; /* interpreted: ascending offsets */
	size_t n_lines;
	/* JIT: the functions inlined at the pc, innermost first (c itself is the outermost). */
	struct v8_inlined *inlined;
	size_t n_inlined;
	/*
	 * JIT with a line: the code object it was read from, and its two fields
	 * the line came from (source positions or bytecode offsets, deoptimization
	 * data or bytecode). Code flushed and recompiled for the same function at
	 * the same pc gives new ones: v8_code__current() says so.
	 */
	uint64_t code, code_positions, code_bytecode;
};

struct v8_code_ctx {
	const struct remote_memory *mem;
	const struct v8_layout *layout;
	struct hashmap *scripts;
	uint32_t pid;
	struct v8_stats *stats;
	uint64_t *stream_map; /* the process's InstructionStream map, 0: not seen yet */
};

/* How far back from a pc its code's header is looked for, in chunks of. */
#define V8_CODE_SCAN_MAX   (16u << 20)
#define V8_CODE_SCAN_CHUNK 4096
#define V8_BYTECODE_MAX	   (1u << 20) /* bytes of bytecode or of a table read */

/* Reads the interpreted function of bytecode array ba and sfi. 0 and *out, or -errno. */
int v8_code__read_interpreted(const struct v8_code_ctx *cc, uint64_t ba, uint64_t sfi,
			      struct v8_code **out);
/*
 * Whether c (read before) still describes the code at its pc: true for an
 * interpreted frame or a JIT frame named without a line (the function is the
 * key's fingerprint); for a line from a code object, when that object still
 * holds the same source positions and deoptimization data or bytecode. False:
 * read the frame again (its code was recompiled at the same address).
 */
bool v8_code__current(const struct v8_code_ctx *cc, const struct v8_code *c);
/* Reads what names pc in JIT code, run by a function of sfi. 0 and *out, or -errno. */
int v8_code__read_jit(const struct v8_code_ctx *cc, uint64_t pc, uint64_t sfi,
		      struct v8_code **out);
void v8_code__free(struct v8_code *c); /* accepts NULL */
size_t v8_code__bytes(const struct v8_code *c);
/* Name, file and line of c at a frame's aux (offset). */
void v8_code__describe(const struct v8_code *c, uint32_t aux, const char **name,
		       const char **filename, int64_t *line);

/*
 * Function index of c at aux, innermost first (the inlined functions, then
 * c's own); false past the last, and at 0 when nothing was inlined.
 */
bool v8_code__describe_inline(const struct v8_code *c, uint32_t aux, uint32_t index,
			      const char **name, const char **filename, int64_t *line);

/* The scripts' line ends: a hashmap of struct v8_script. */
void v8_scripts__init(struct hashmap *scripts);
/* Frees the entries of pid (all of them when all). */
void v8_scripts__clear(struct hashmap *scripts, uint32_t pid, bool all);

#endif
