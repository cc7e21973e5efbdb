// SPDX-License-Identifier: Apache-2.0
#include "interp/v8/v8_code.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "interp/v8/v8.h"
#include "interp/v8/v8_binary.h"
#include "interp/v8/v8_heap.h"
#include "proc/remote_memory.h"

struct v8_script {
	uint32_t pid;
	uint64_t addr;	 /* the Script (tagged) */
	uint64_t source; /* its source string when read: checked at every use */
	uint32_t *ends;
	size_t n;
};

struct script_key {
	uint32_t pid;
	uint64_t addr;
};

static bool script_equal(const void *entry, const void *key, void *ctx)
{
	const struct v8_script *s = entry;
	const struct script_key *k = key;

	(void)ctx;
	return s->pid == k->pid && s->addr == k->addr;
}

static uint64_t script_hash(uint32_t pid, uint64_t addr)
{
	return hash_u64(addr ^ ((uint64_t)pid << 48));
}

void v8_scripts__init(struct hashmap *scripts)
{
	hashmap__init(scripts, script_equal, NULL);
}

void v8_scripts__clear(struct hashmap *scripts, uint32_t pid, bool all)
{
	void *e;

	for (size_t i = 0; hashmap__next(scripts, &i, &e);) {
		struct v8_script *s = e;

		if (!all && s->pid != pid)
			continue;
		hashmap__remove_entry(scripts, script_hash(s->pid, s->addr), s);
		free(s->ends);
		free(s);
		i = 0; /* the table changed under the iterator */
	}
	if (all)
		hashmap__clear(scripts);
}

/* The line ends of script, computed once per (pid, script, source). NULL: unknown. */
static const struct v8_script *script_lines(const struct v8_code_ctx *cc, uint64_t script)
{
	struct script_key k = {cc->pid, script};
	uint64_t h = script_hash(cc->pid, script), source;
	struct v8_script *s;

	if (!cc->layout->has_lines ||
	    v8_heap__field(cc->mem, script, cc->layout->script_source, &source))
		return NULL;
	s = hashmap__find(cc->scripts, h, &k);
	if (s && s->source == source)
		return s;
	if (s) {
		hashmap__remove_entry(cc->scripts, h, s);
		free(s->ends);
		free(s);
	}
	if (cc->scripts->len >= V8_SCRIPTS_MAX)
		v8_scripts__clear(cc->scripts, 0, true);
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->pid = cc->pid;
	s->addr = script;
	s->source = source;
	if (v8_heap__line_ends(cc->mem, cc->layout, script, &s->ends, &s->n) ||
	    hashmap__insert(cc->scripts, h, s)) {
		free(s->ends);
		free(s);
		return NULL;
	}
	cc->stats->scripts++;
	return s;
}

/* Name and file name of sfi into c. 0 or -errno. */
static int read_names(const struct v8_code_ctx *cc, uint64_t sfi, uint64_t *script,
		      struct v8_code *c)
{
	char name[V8_STR_MAX], file[V8_STR_MAX * 4];
	uint64_t s;
	int err;

	err = v8_heap__function_name(cc->mem, cc->layout, sfi, name, sizeof(name));
	if (err)
		return err;
	*script = v8_heap__script(cc->mem, cc->layout, sfi);
	file[0] = 0;
	if (*script && !v8_heap__field(cc->mem, *script, cc->layout->script_name, &s))
		v8_heap__string(cc->mem, cc->layout, s, file, sizeof(file));
	c->name = strdup(name[0] ? name : "(anonymous)");
	c->filename = strdup(file);
	return c->name && c->filename ? 0 : -ENOMEM;
}

static size_t inlined_bytes(const struct v8_code *c)
{
	size_t n = c->n_inlined * sizeof(*c->inlined);

	for (size_t i = 0; i < c->n_inlined; i++)
		n += strlen(c->inlined[i].name) + strlen(c->inlined[i].filename) + 2;
	return n;
}

/* Forgets a partly read inlining chain. */
static void drop_inlined(struct v8_code *c)
{
	for (size_t i = 0; i < c->n_inlined; i++) {
		free(c->inlined[i].name);
		free(c->inlined[i].filename);
	}
	free(c->inlined);
	c->inlined = NULL;
	c->n_inlined = 0;
}

void v8_code__free(struct v8_code *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->filename);
	free(c->lines);
	drop_inlined(c);
	free(c);
}

size_t v8_code__bytes(const struct v8_code *c)
{
	return sizeof(*c) + (c->name ? strlen(c->name) + 1 : 0) +
	       (c->filename ? strlen(c->filename) + 1 : 0) + c->n_lines * sizeof(*c->lines) +
	       inlined_bytes(c);
}

/* Does sfi run bytecode array ba (directly, or through its baseline code)? */
static bool sfi_runs(const struct v8_code_ctx *cc, uint64_t sfi, uint64_t ba)
{
	const struct v8_layout *l = cc->layout;
	uint64_t data, inner;
	uint16_t type;

	if (!l->has_function_data || v8_heap__field(cc->mem, sfi, l->sfi_function_data, &data))
		return false;
	if (data == ba)
		return true;
	if (v8_heap__type(cc->mem, l, data, &type))
		return false;
	/* V8 9's BaselineData: its bytecode (or InterpreterData) at 16. */
	if (l->type_baseline_data && type == l->type_baseline_data) {
		if (v8_heap__field(cc->mem, data, 16, &data))
			return false;
		if (data == ba)
			return true;
		return !v8_heap__field(cc->mem, data, 8, &inner) && inner == ba;
	}
	/* Baseline code and InterpreterData hold the bytecode array one level down. */
	if (type == l->type_code)
		return l->has_code_objects &&
		       !v8_heap__field(cc->mem, data, l->code_bytecode, &inner) && inner == ba;
	return !v8_heap__field(cc->mem, data, 8, &inner) && inner == ba;
}

int v8_code__read_interpreted(const struct v8_code_ctx *cc, uint64_t ba, uint64_t sfi,
			      struct v8_code **out)
{
	const struct v8_layout *l = cc->layout;
	struct v8_code *c = calloc(1, sizeof(*c));
	struct v8_position *pos = NULL;
	const struct v8_script *s = NULL;
	uint64_t script = 0, table;
	uint16_t type;
	size_t n = 0;
	int err;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->kind = OP_V8_FRAME_INTERPRETED;
	c->bias = (uint16_t)(l->bytecode_array_data - 1);
	err = v8_heap__type(cc->mem, l, ba, &type);
	if (!err && type != l->type_bytecode_array)
		err = -EINVAL;
	/* The frame's function and bytecode were read together; both may have
	 * changed since (flushed bytecode, a moved object): name only what still
	 * belongs together. */
	if (!err && !sfi_runs(cc, sfi, ba)) {
		cc->stats->mismatches++;
		err = -ESTALE;
	}
	if (!err)
		err = read_names(cc, sfi, &script, c);
	if (err) {
		v8_code__free(c);
		return err;
	}
	if (script)
		s = script_lines(cc, script);
	if (s && !v8_heap__field(cc->mem, ba, l->bytecode_array_positions, &table) &&
	    !v8_heap__positions(cc->mem, l, table, &pos, &n) && n) {
		c->lines = calloc(n, sizeof(*c->lines));
		if (c->lines) {
			for (size_t i = 0; i < n; i++)
				c->lines[i] = (struct v8_line){
				    pos[i].code_offset, (uint32_t)v8_heap__line_of(
							    s->ends, s->n, pos[i].script_offset)};
			c->n_lines = n;
		}
	}
	if (!c->n_lines)
		cc->stats->no_lines++;
	free(pos);
	*out = c;
	return 0;
}

/* Is tagged map the map of InstructionStream objects? (cached in *cc->stream_map once seen) */
static bool is_stream_map(const struct v8_code_ctx *cc, uint64_t map)
{
	uint16_t type;

	if (*cc->stream_map)
		return map == *cc->stream_map;
	if (!(map & 1) ||
	    remote_memory__read(cc->mem, map - 1 + cc->layout->map_instance_type, &type,
				sizeof(type)) ||
	    type != cc->layout->type_instruction_stream)
		return false;
	*cc->stream_map = map;
	return true;
}

/*
 * The Code object whose instructions hold pc: found by walking back from pc
 * to the InstructionStream header before it (its map, then its Code), and
 * proved by the Code pointing back to that stream with pc inside
 * [entry, entry + size). 0 when none is found within V8_CODE_SCAN_MAX bytes.
 */
static uint64_t find_code(const struct v8_code_ctx *cc, uint64_t pc, uint64_t *entry,
			  uint32_t *size)
{
	const struct v8_layout *l = cc->layout;
	static __thread uint64_t words[V8_CODE_SCAN_CHUNK / 8];
	uint64_t hi = (pc & ~7ull) + 8, above = 0;

	/* Page by page downwards (a read never spans the mapping's first page and
	 * the unmapped one below it); a header's second word may be the first of
	 * the page above. A header at pc's own word cannot hold pc. */
	for (uint64_t scanned = 0; scanned < V8_CODE_SCAN_MAX && hi > V8_CODE_SCAN_CHUNK;) {
		uint64_t lo = (hi - 1) & ~(uint64_t)(V8_CODE_SCAN_CHUNK - 1);
		size_t n = (size_t)(hi - lo) / 8;

		if (remote_memory__read(cc->mem, lo, words, n * 8))
			return 0;
		for (size_t i = n; i-- > 0;) {
			uint64_t a = lo + 8 * i, code = i + 1 < n ? words[i + 1] : above, stream, e;
			uint32_t sz;
			uint16_t type;

			if (l->code_inline) {
				/* V8 10: the Code itself, its instructions after its header. */
				if (!(words[i] & 1) || !is_stream_map(cc, words[i]) ||
				    remote_memory__read(cc->mem, a + l->code_size, &sz, sizeof(sz)))
					continue;
				e = a + l->code_inline;
				if (pc < e || pc - e >= sz)
					return 0;
				*entry = e;
				*size = sz;
				return a + 1;
			}
			if (!(words[i] & 1) || !(code & 1) || !is_stream_map(cc, words[i]))
				continue;
			if (v8_heap__type(cc->mem, l, code, &type) || type != l->type_code ||
			    v8_heap__field(cc->mem, code, l->code_stream, &stream) ||
			    stream != a + 1 || v8_heap__field(cc->mem, code, l->code_entry, &e) ||
			    remote_memory__read(cc->mem, code - 1 + l->code_size, &sz, sizeof(sz)))
				continue;
			if (pc < e || pc - e >= sz)
				return 0; /* the closest stream does not hold pc */
			*entry = e;
			*size = sz;
			return code;
		}
		above = words[0];
		scanned += hi - lo;
		hi = lo;
	}
	return 0;
}

/* Element idx of FixedArray arr. 0 or -errno. */
static int array_at(const struct v8_code_ctx *cc, uint64_t arr, uint32_t idx, uint64_t *out)
{
	uint64_t len;
	int err = v8_heap__field(cc->mem, arr, cc->layout->fixed_array_length, &len);

	if (err)
		return err;
	if (idx >= (uint64_t)((int64_t)len >> cc->layout->smi_shift))
		return -ERANGE;
	return v8_heap__field(cc->mem, arr, cc->layout->fixed_array_data + 8 * idx, out);
}

/* The line of script offset off in the script of sfi (0: unknown). */
static int64_t line_in(const struct v8_code_ctx *cc, uint64_t script, uint32_t off)
{
	const struct v8_script *s = script ? script_lines(cc, script) : NULL;

	return s ? v8_heap__line_of(s->ends, s->n, off) : 0;
}

/*
 * The script offset, in the code's own function, of position p, and the
 * functions inlined at p into c->inlined, innermost first: each inlining id
 * is 1 + an index of the deoptimization data's InliningPositions ({the call
 * site's SourcePosition, the inlined function's index in the literal
 * array} each), its function's line that of p, then p is the call site, up
 * to the code's own function. False when the chain cannot be read.
 */
static bool inlined_chain(const struct v8_code_ctx *cc, uint64_t deopt, struct v8_position p,
			  struct v8_code *c, uint32_t *offset)
{
	const struct v8_layout *l = cc->layout;
	uint64_t table, literals, raw[2], sfi, script;

	for (int depth = 0; p.inlining_id && depth < 32; depth++) {
		struct v8_code tmp = {0};
		struct v8_inlined *n;

		if (array_at(cc, deopt, l->deopt_inlining_index, &table) ||
		    array_at(cc, deopt, l->deopt_literal_index, &literals) ||
		    remote_memory__read(
			cc->mem, table - 1 + l->fixed_array_data + 16ull * (p.inlining_id - 1), raw,
			sizeof(raw)) ||
		    array_at(cc, literals, (uint32_t)raw[1], &sfi))
			return false;
		sfi &= ~2ull; /* a weak reference (tag 3) in the literal array */
		if (read_names(cc, sfi, &script, &tmp)) {
			free(tmp.name);
			free(tmp.filename);
			return false;
		}
		n = realloc(c->inlined, (c->n_inlined + 1) * sizeof(*n));
		if (!n) {
			free(tmp.name);
			free(tmp.filename);
			return false;
		}
		c->inlined = n;
		n[c->n_inlined++] = (struct v8_inlined){tmp.name, tmp.filename,
							line_in(cc, script, p.script_offset)};
		p.script_offset = (uint32_t)((raw[0] >> 1) & ((1u << 30) - 1));
		p.inlining_id = (uint16_t)(raw[0] >> 31);
	}
	if (p.inlining_id)
		return false;
	*offset = p.script_offset;
	return true;
}

/* The bytes of ByteArray (or, with data_off, BytecodeArray) obj: *out malloc'd. 0 or -errno. */
static int read_bytes(const struct v8_code_ctx *cc, uint64_t obj, uint16_t want_type,
		      uint32_t data_off, uint8_t **out, size_t *len)
{
	const struct v8_layout *l = cc->layout;
	uint64_t n;
	uint16_t type;
	int err;

	*out = NULL;
	if ((err = v8_heap__type(cc->mem, l, obj, &type)))
		return err;
	/* A ByteArray's layout is a TrustedByteArray's (V8 12, 13). */
	if (type != want_type &&
	    !(want_type == l->type_byte_array && type == l->type_trusted_byte_array))
		return -EINVAL;
	if ((err = v8_heap__field(cc->mem, obj, l->fixed_array_length, &n)))
		return err;
	n = (uint64_t)((int64_t)n >> l->smi_shift);
	if (!n || n > V8_BYTECODE_MAX)
		return -E2BIG;
	*out = malloc(n);
	if (!*out)
		return -ENOMEM;
	err = remote_memory__read(cc->mem, obj - 1 + data_off, *out, n);
	if (err) {
		free(*out);
		*out = NULL;
		return err;
	}
	*len = n;
	return 0;
}

/*
 * The bytecode array baseline code runs, when it is sfi's: V8 10 on, the
 * code's bytecode field; V8 9, sfi's BaselineData (naming this code).
 */
static bool baseline_bytecode(const struct v8_code_ctx *cc, uint64_t code, uint64_t sfi,
			      uint64_t *ba)
{
	const struct v8_layout *l = cc->layout;
	uint64_t data, held;
	uint16_t type;

	if (!l->type_baseline_data)
		return !v8_heap__field(cc->mem, code, l->code_bytecode, ba) &&
		       sfi_runs(cc, sfi, *ba);
	if (v8_heap__field(cc->mem, sfi, l->sfi_function_data, &data) ||
	    v8_heap__type(cc->mem, l, data, &type) || type != l->type_baseline_data ||
	    v8_heap__field(cc->mem, data, 8, &held) || (held & ~2ull) != code ||
	    v8_heap__field(cc->mem, data, 16, ba) || v8_heap__type(cc->mem, l, *ba, &type))
		return false;
	/* Or through InterpreterData (its bytecode first). */
	return type == l->type_bytecode_array ||
	       (!v8_heap__field(cc->mem, *ba, 8, ba) && !v8_heap__type(cc->mem, l, *ba, &type) &&
		type == l->type_bytecode_array);
}

/*
 * The line of pc in baseline code: its bytecode offset (the code's bytecode
 * offset table walked along its bytecodes), then the bytecode's source
 * position. 0: unknown.
 */
static int64_t baseline_line(const struct v8_code_ctx *cc, uint64_t code, uint64_t pc_off,
			     uint64_t sfi, uint64_t script)
{
	const struct v8_layout *l = cc->layout;
	uint8_t *table = NULL, *bc = NULL;
	size_t table_len = 0, bc_len = 0, n = 0;
	struct v8_position *pos = NULL;
	const struct v8_script *s;
	uint64_t ba, positions;
	int64_t bo, line = 0;

	if (!l->n_bytecodes || !baseline_bytecode(cc, code, sfi, &ba) ||
	    v8_heap__field(cc->mem, code, l->code_positions, &positions) ||
	    read_bytes(cc, positions, l->type_byte_array, l->fixed_array_data, &table,
		       &table_len) ||
	    read_bytes(cc, ba, l->type_bytecode_array, l->bytecode_array_data, &bc, &bc_len))
		goto cleanup;
	if (v8_heap__baseline_offset(table, table_len, bc, bc_len, l->bytecode_sizes,
				     l->n_bytecodes, (uint32_t)pc_off, &bo))
		goto cleanup;
	if (v8_heap__field(cc->mem, ba, l->bytecode_array_positions, &positions) ||
	    v8_heap__positions(cc->mem, l, positions, &pos, &n))
		goto cleanup;
	{
		const struct v8_position *p =
		    v8_heap__position_at(pos, n, bo < 0 ? 0 : (uint32_t)bo);

		s = p ? script_lines(cc, script) : NULL;
		if (s)
			line = v8_heap__line_of(s->ends, s->n, p->script_offset);
	}
cleanup:
	free(table);
	free(bc);
	free(pos);
	return line;
}

/* The bytecode array sfi runs (directly, through baseline code or InterpreterData; V8 10 on). */
static bool sfi_bytecode(const struct v8_code_ctx *cc, uint64_t sfi, uint64_t *ba)
{
	const struct v8_layout *l = cc->layout;
	uint16_t type;

	if (!l->has_function_data || l->type_baseline_data ||
	    v8_heap__field(cc->mem, sfi, l->sfi_function_data, ba) ||
	    v8_heap__type(cc->mem, l, *ba, &type))
		return false;
	if (type == l->type_bytecode_array)
		return true;
	if (type == l->type_code ? v8_heap__field(cc->mem, *ba, l->code_bytecode, ba)
				 : v8_heap__field(cc->mem, *ba, 8, ba))
		return false;
	return !v8_heap__type(cc->mem, l, *ba, &type) && type == l->type_bytecode_array &&
	       sfi_runs(cc, sfi, *ba);
}

/* Deoptimization entries looked at, at most (eager and lazy). */
#define V8_DEOPT_ENTRIES_MAX 4096
/* Slots of a deoptimization entry (release builds): its bytecode offset,
 * translation index and pc. */
#define V8_DEOPT_ENTRY_SIZE 3

/*
 * The deoptimization index of return address offset pc_off in Maglev code
 * whose instructions are [entry, entry + size): its safepoint table
 * (v8_heap__maglev_deopt_index), the header's count at word 1 on V8 13
 * (read in Node 24's Maglev code), word 0 on V8 12 (read in Node 22's, run
 * with --maglev). -1 when none.
 */
static int64_t maglev_deopt_index(const struct v8_code_ctx *cc, uint64_t entry, uint32_t size,
				  uint64_t pc_off)
{
	unsigned count_word = cc->layout->scope_flags_raw ? 1 : 0;
	uint8_t head[V8_MAGLEV_SAFEPOINT_HEADER], *table = NULL;
	int64_t found = -1;
	size_t bytes;

	/* V8 12 and 13 alone (their Code described): V8 11's Maglev was not shipped. */
	if (!cc->layout->code_described ||
	    remote_memory__read(cc->mem, entry + size, head, sizeof(head)))
		return -1;
	bytes = v8_heap__maglev_safepoints_size(head, count_word);
	if (!bytes || !(table = malloc(bytes)))
		return -1;
	if (!remote_memory__read(cc->mem, entry + size, table, bytes))
		found =
		    v8_heap__maglev_deopt_index(table, bytes, count_word, size, (uint32_t)pc_off);
	free(table);
	return found;
}

/* The line of bytecode offset bo in the function sfi runs (0: unknown). */
static int64_t bytecode_line(const struct v8_code_ctx *cc, uint64_t sfi, uint64_t script,
			     uint32_t bo)
{
	const struct v8_layout *l = cc->layout;
	struct v8_position *pos = NULL;
	const struct v8_position *p;
	uint64_t ba, positions;
	int64_t line = 0;
	size_t n = 0;

	if (!sfi_bytecode(cc, sfi, &ba) ||
	    v8_heap__field(cc->mem, ba, l->bytecode_array_positions, &positions) ||
	    v8_heap__positions(cc->mem, l, positions, &pos, &n))
		return 0;
	p = v8_heap__position_at(pos, n, bo);
	if (p && !p->inlining_id)
		line = line_in(cc, script, p->script_offset);
	free(pos);
	return line;
}

/*
 * The frames of a Maglev return address from its deoptimization entry's
 * translation (V8 13): its interpreted frames, outermost first, each a
 * function of the deoptimization literal array and its bytecode offset.
 * The outermost must be this code's function (sfi) and the innermost's
 * offset the entry's; every function is checked as a SharedFunctionInfo.
 * Then c->line is the outermost's line and c->inlined the others, innermost
 * first, each with its own function's line of its offset. False (c
 * untouched) when any of it does not hold.
 */
static bool maglev_translation(const struct v8_code_ctx *cc, uint64_t deopt, uint64_t sfi,
			       uint64_t script, uint64_t tr_index, uint64_t bo, struct v8_code *c)
{
	const struct v8_layout *l = cc->layout;
	struct v8_deopt_frame frames[V8_DEOPT_FRAMES_MAX];
	uint64_t tr, literals, fsfi, fscript;
	size_t n = 0, tr_len = 0;
	int64_t line;
	uint8_t *bytes = NULL;
	bool ok = false;

	/* V8 13.6's opcodes (scope_flags_raw: V8 13's sign); the translation
	 * is the deoptimization data's first element. */
	if (!l->scope_flags_raw || array_at(cc, deopt, 0, &tr) ||
	    array_at(cc, deopt, l->deopt_literal_index, &literals) ||
	    read_bytes(cc, tr, l->type_byte_array, l->fixed_array_data, &bytes, &tr_len) ||
	    tr_index > UINT32_MAX ||
	    v8_heap__translation_frames(bytes, tr_len, (uint32_t)tr_index, &v8_translation_v13,
					frames, V8_DEOPT_FRAMES_MAX, &n) ||
	    (uint64_t)frames[n - 1].bytecode_offset != bo ||
	    array_at(cc, literals, (uint32_t)frames[0].literal, &fsfi) || (fsfi & ~2ull) != sfi)
		goto cleanup;
	/* The outermost's line is checked with the code later (v8_code__current):
	 * without it, no inlined frame is kept either. */
	line = bytecode_line(cc, sfi, script, (uint32_t)frames[0].bytecode_offset);
	if (!line)
		goto cleanup;
	for (size_t i = n; i-- > 1;) {
		struct v8_code tmp = {0};
		struct v8_inlined *in;

		if (array_at(cc, literals, (uint32_t)frames[i].literal, &fsfi) ||
		    read_names(cc, fsfi & ~2ull, &fscript, &tmp) ||
		    !(in = realloc(c->inlined, (c->n_inlined + 1) * sizeof(*in)))) {
			free(tmp.name);
			free(tmp.filename);
			drop_inlined(c);
			goto cleanup;
		}
		c->inlined = in;
		in[c->n_inlined++] = (struct v8_inlined){
		    tmp.name, tmp.filename,
		    bytecode_line(cc, fsfi & ~2ull, fscript, (uint32_t)frames[i].bytecode_offset)};
	}
	c->line = line;
	ok = true;
cleanup:
	free(bytes);
	return ok;
}

/*
 * The line of a return address in Maglev code (V8 12, 13), which records no
 * source positions (its table is the empty one): each call is a lazy
 * deoptimization point, its safepoint naming its deoptimization entry
 * {the call's bytecode offset, its translation's index, its pc}. The
 * entries follow the InliningPositions, the deopt exits' start and the
 * eager and lazy counts, eager ones first; the array's length must be
 * exactly theirs and the index a lazy entry's. The translation gives the
 * functions inlined at the call as frames of their own (maglev_translation);
 * else, in code without inlined functions, the offset's line in this
 * function (with inlined ones the offset could be one of theirs: no line).
 * c->line 0: unknown (a leaf's pc is no call's: no line).
 */
static void maglev_frames(const struct v8_code_ctx *cc, uint64_t deopt, uint64_t entry,
			  uint32_t size, uint64_t pc_off, uint64_t sfi, uint64_t script,
			  struct v8_code *c)
{
	const struct v8_layout *l = cc->layout;
	uint32_t first = l->deopt_inlining_index + 4;
	uint64_t table, len, inlined, eager, lazy, bo, tr_index;
	int64_t dx;

	if (!l->code_described || array_at(cc, deopt, l->deopt_inlining_index, &table) ||
	    v8_heap__field(cc->mem, table, l->fixed_array_length, &inlined) || (inlined & 1) ||
	    array_at(cc, deopt, first - 2, &eager) || array_at(cc, deopt, first - 1, &lazy) ||
	    (eager & 1) || (lazy & 1) ||
	    v8_heap__field(cc->mem, deopt, l->fixed_array_length, &len))
		return;
	eager = (uint64_t)((int64_t)eager >> l->smi_shift);
	lazy = (uint64_t)((int64_t)lazy >> l->smi_shift);
	len = (uint64_t)((int64_t)len >> l->smi_shift);
	if (eager > V8_DEOPT_ENTRIES_MAX || lazy > V8_DEOPT_ENTRIES_MAX ||
	    len != first + V8_DEOPT_ENTRY_SIZE * (eager + lazy))
		return;
	dx = maglev_deopt_index(cc, entry, size, pc_off);
	if (dx < (int64_t)eager || dx >= (int64_t)(eager + lazy) ||
	    array_at(cc, deopt, first + V8_DEOPT_ENTRY_SIZE * (uint32_t)dx, &bo) || (bo & 1) ||
	    (int64_t)bo >> l->smi_shift < 0 ||
	    array_at(cc, deopt, first + V8_DEOPT_ENTRY_SIZE * (uint32_t)dx + 1, &tr_index) ||
	    (tr_index & 1) || (int64_t)tr_index >> l->smi_shift < 0)
		return;
	bo = (uint64_t)((int64_t)bo >> l->smi_shift);
	tr_index = (uint64_t)((int64_t)tr_index >> l->smi_shift);
	if (maglev_translation(cc, deopt, sfi, script, tr_index, bo, c)) {
		cc->stats->maglev_translations++;
		return;
	}
	if ((int64_t)inlined >> l->smi_shift == 0)
		c->line = bytecode_line(cc, sfi, script, (uint32_t)bo);
}

int v8_code__read_jit(const struct v8_code_ctx *cc, uint64_t pc, uint64_t sfi, struct v8_code **out)
{
	const struct v8_layout *l = cc->layout;
	struct v8_code *c = calloc(1, sizeof(*c));
	struct v8_position *pos = NULL;
	uint64_t script = 0, code, entry = 0, table, deopt, owner;
	uint32_t flags = 0, size = 0, offset;
	size_t n = 0;
	int err;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->kind = OP_V8_FRAME_JIT;
	err = read_names(cc, sfi, &script, c);
	if (err) {
		v8_code__free(c);
		return err;
	}
	/*
	 * The line: from the code holding pc, when it is this function's (the
	 * deoptimization data of optimized code, the bytecode of baseline code
	 * say so).
	 */
	code = script && l->has_code_objects ? find_code(cc, pc, &entry, &size) : 0;
	if (code &&
	    !remote_memory__read(cc->mem, code - 1 + l->code_flags, &flags, sizeof(flags)) &&
	    (flags & l->code_kind_mask) == l->code_kind_baseline) {
		c->line = baseline_line(cc, code, pc - entry, sfi, script);
	} else if (code && (flags & l->code_kind_mask) > l->code_kind_baseline &&
		   !v8_heap__field(cc->mem, code, l->code_bytecode, &deopt) &&
		   !array_at(cc, deopt, l->deopt_sfi_index, &owner) &&
		   (!l->sfi_wrapper_sfi ||
		    !v8_heap__field(cc->mem, owner, l->sfi_wrapper_sfi, &owner)) &&
		   owner == sfi && !v8_heap__field(cc->mem, code, l->code_positions, &table) &&
		   !v8_heap__positions(cc->mem, l, table, &pos, &n)) {
		const struct v8_position *p = v8_heap__position_at(pos, n, (uint32_t)(pc - entry));
		const struct v8_script *s = p ? script_lines(cc, script) : NULL;

		if (s && inlined_chain(cc, deopt, *p, c, &offset))
			c->line = v8_heap__line_of(s->ends, s->n, offset);
		else
			drop_inlined(c); /* never a partial chain */
		/* Maglev's (the kind after baseline): no positions; its calls' lazy deopt points.
		 */
		if (!n && (flags & l->code_kind_mask) == l->code_kind_baseline + 1)
			maglev_frames(cc, deopt, entry, size, pc - entry, sfi, script, c);
	}
	if (!c->line)
		cc->stats->no_lines++;
	else if (v8_heap__field(cc->mem, code, l->code_positions, &c->code_positions) ||
		 v8_heap__field(cc->mem, code, l->code_bytecode, &c->code_bytecode)) {
		/* Not checkable later: no line rather than, one day, another code's. */
		c->line = 0;
		drop_inlined(c);
		cc->stats->no_lines++;
	} else
		c->code = code;
	free(pos);
	*out = c;
	return 0;
}

bool v8_code__current(const struct v8_code_ctx *cc, const struct v8_code *c)
{
	uint64_t positions, bytecode;

	if (c->kind != OP_V8_FRAME_JIT || !c->code)
		return true;
	return !v8_heap__field(cc->mem, c->code, cc->layout->code_positions, &positions) &&
	       !v8_heap__field(cc->mem, c->code, cc->layout->code_bytecode, &bytecode) &&
	       positions == c->code_positions && bytecode == c->code_bytecode;
}

void v8_code__describe(const struct v8_code *c, uint32_t aux, const char **name,
		       const char **filename, int64_t *line)
{
	*name = c->name;
	*filename = c->filename;
	*line = 0;
	if (c->kind == OP_V8_FRAME_JIT) {
		*line = c->line;
		return;
	}
	if (OP_V8_AUX_VALUE(aux) >= c->bias) {
		uint32_t off = OP_V8_AUX_VALUE(aux) - c->bias;

		/* The last entry at or before the frame's bytecode offset. */
		for (size_t i = 0; i < c->n_lines && c->lines[i].offset <= off; i++)
			*line = c->lines[i].line;
	}
}

bool v8_code__describe_inline(const struct v8_code *c, uint32_t aux, uint32_t index,
			      const char **name, const char **filename, int64_t *line)
{
	if (!c->n_inlined || index > c->n_inlined)
		return false;
	if (index == c->n_inlined) {
		v8_code__describe(c, aux, name, filename, line);
		return true;
	}
	*name = c->inlined[index].name;
	*filename = c->inlined[index].filename;
	*line = c->inlined[index].line;
	return true;
}
