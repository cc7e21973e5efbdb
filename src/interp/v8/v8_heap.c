// SPDX-License-Identifier: Apache-2.0
#include "interp/v8/v8_heap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "interp/v8/v8_binary.h"
#include "proc/remote_memory.h"

int v8_heap__field(const struct remote_memory *mem, uint64_t obj, uint32_t off, uint64_t *out)
{
	if (!(obj & 1))
		return -EINVAL;
	return remote_memory__read(mem, obj - 1 + off, out, sizeof(*out));
}

int v8_heap__type(const struct remote_memory *mem, const struct v8_layout *l, uint64_t obj,
		  uint16_t *type)
{
	uint64_t map;
	int err = v8_heap__field(mem, obj, 0, &map);

	if (err)
		return err;
	if (!(map & 1))
		return -EINVAL;
	return remote_memory__read(mem, map - 1 + l->map_instance_type, type, sizeof(*type));
}

static int64_t smi(const struct v8_layout *l, uint64_t v)
{
	return (int64_t)v >> l->smi_shift;
}

/* A string being built: UTF-8 bytes, cut at cap - 1. */
struct sbuf {
	char *out;
	size_t len, cap;
	bool full;
};

static void put_cp(struct sbuf *b, uint32_t cp)
{
	char tmp[4];
	size_t n;

	if (b->full)
		return;
	if (cp < 0x80) {
		tmp[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		tmp[0] = (char)(0xc0 | (cp >> 6));
		tmp[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else {
		tmp[0] = (char)(0xe0 | (cp >> 12));
		tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		tmp[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	}
	if (b->len + n >= b->cap) {
		b->full = true;
		return;
	}
	memcpy(b->out + b->len, tmp, n);
	b->len += n;
}

/* V8's "uncached" external strings keep no data pointer (instance type bit 4). */
#define V8_UNCACHED_EXTERNAL 0x10u

/*
 * Where the characters of string obj (of instance type type) start: a
 * sequential string's own, or the data pointer a cached external string
 * keeps after its resource (node's built-in modules' sources, in node's
 * read-only data). 0 or -EINVAL (another kind, or not read).
 */
static int chars_at(const struct remote_memory *mem, const struct v8_layout *l, uint64_t obj,
		    uint16_t type, uint64_t *addr)
{
	if ((type & l->str_repr_mask) == l->str_seq_tag) {
		*addr = obj - 1 + l->seq_string_data;
		return 0;
	}
	if ((type & l->str_repr_mask) != l->str_external_tag || !l->external_resource ||
	    (type & V8_UNCACHED_EXTERNAL))
		return -EINVAL;
	if (v8_heap__field(mem, obj, l->external_resource + 8, addr) || !*addr)
		return -EINVAL;
	return 0;
}

/* Characters [from, from + count) of string obj into b. */
static int string_part(const struct remote_memory *mem, const struct v8_layout *l, uint64_t obj,
		       uint32_t from, uint32_t count, struct sbuf *b, int depth)
{
	uint16_t type;
	int32_t len;
	uint64_t a, c;
	int err;

	if (depth > V8_CONS_DEPTH_MAX)
		return -ELOOP;
	err = v8_heap__type(mem, l, obj, &type);
	if (err)
		return err;
	if (type >= l->type_first_nonstring)
		return -EINVAL;
	err = remote_memory__read(mem, obj - 1 + l->string_length, &len, sizeof(len));
	if (err)
		return err;
	if (len < 0 || from > (uint32_t)len)
		return -EINVAL;
	if (count > (uint32_t)len - from)
		count = (uint32_t)len - from;
	if (!chars_at(mem, l, obj, type, &a)) {
		bool one = (type & l->str_encoding_mask) == l->str_one_byte_tag;
		uint8_t chunk[512];

		while (count && !b->full) {
			size_t want = one ? count : (size_t)count * 2;

			if (want > sizeof(chunk))
				want = sizeof(chunk);
			err = remote_memory__read(mem, a + (one ? from : from * 2ull), chunk, want);
			if (err)
				return err;
			for (size_t i = 0; i < want; i += one ? 1 : 2)
				put_cp(b,
				       one ? chunk[i] : (uint32_t)(chunk[i] | chunk[i + 1] << 8));
			from += (uint32_t)(one ? want : want / 2);
			count -= (uint32_t)(one ? want : want / 2);
		}
		return 0;
	}
	if ((type & l->str_repr_mask) == l->str_thin_tag) {
		if ((err = v8_heap__field(mem, obj, l->thin_actual, &a)))
			return err;
		return string_part(mem, l, a, from, count, b, depth + 1);
	}
	if ((type & l->str_repr_mask) == l->str_sliced_tag) {
		if ((err = v8_heap__field(mem, obj, l->sliced_parent, &a)) ||
		    (err = v8_heap__field(mem, obj, l->sliced_offset, &c)))
			return err;
		if (smi(l, c) < 0 || smi(l, c) > INT32_MAX)
			return -EINVAL;
		return string_part(mem, l, a, from + (uint32_t)smi(l, c), count, b, depth + 1);
	}
	if ((type & l->str_repr_mask) == l->str_cons_tag) {
		int32_t first_len;

		if ((err = v8_heap__field(mem, obj, l->cons_first, &a)) ||
		    (err = v8_heap__field(mem, obj, l->cons_second, &c)) ||
		    (err = remote_memory__read(mem, a - 1 + l->string_length, &first_len,
					       sizeof(first_len))))
			return err;
		if (first_len < 0 || first_len > len)
			return -EINVAL;
		if (from < (uint32_t)first_len) {
			uint32_t n1 =
			    (uint32_t)first_len - from < count ? (uint32_t)first_len - from : count;

			if ((err = string_part(mem, l, a, from, n1, b, depth + 1)))
				return err;
			from += n1;
			count -= n1;
		}
		if (!count)
			return 0;
		return string_part(mem, l, c, from - (uint32_t)first_len, count, b, depth + 1);
	}
	return -EINVAL; /* uncached external strings: no data pointer */
}

int v8_heap__substring(const struct remote_memory *mem, const struct v8_layout *l, uint64_t obj,
		       uint32_t from, uint32_t count, char *out, size_t cap)
{
	struct sbuf b = {out, 0, cap, false};
	int err;

	if (!cap)
		return -EINVAL;
	out[0] = 0;
	err = string_part(mem, l, obj, from, count, &b, 0);
	out[b.len] = 0;
	return err;
}

int v8_heap__string(const struct remote_memory *mem, const struct v8_layout *l, uint64_t obj,
		    char *out, size_t cap)
{
	struct sbuf b = {out, 0, cap, false};
	int err;

	if (!cap)
		return -EINVAL;
	out[0] = 0;
	err = string_part(mem, l, obj, 0, (uint32_t)cap, &b, 0);
	out[b.len] = 0;
	return err;
}

static bool is_string(const struct remote_memory *mem, const struct v8_layout *l, uint64_t obj)
{
	uint16_t type;

	return !v8_heap__type(mem, l, obj, &type) && type < l->type_first_nonstring;
}

/* V8's ScopeType: the first 4 bits of a ScopeInfo's flags (numbers in the layout). */
#define V8_SCOPE_TYPE_MASK 0xfu
/* Slots after a ScopeInfo's context locals looked at: the function variable
 * (2), the inferred name, the class variable's index, the positions (2), the
 * outer ScopeInfo. */
#define V8_SCOPE_TAIL 8
/* Of those, the slots that may hold the function's name or inferred name. */
#define V8_SCOPE_NAMES 5
/* Characters of a class's source read for its name ("class", spaces, the name). */
#define V8_CLASS_HEAD 96

/* The slot index (from the flags) of scope info si's first slot after its context locals. */
static int scope_tail(const struct remote_memory *mem, const struct v8_layout *l, uint64_t si,
		      size_t *first)
{
	uint64_t n;
	int err;

	if ((err = v8_heap__field(mem, si,
				  l->fixed_array_data - 8 + 8 * l->scopeinfo_ncontextlocals, &n)))
		return err;
	n = (uint64_t)smi(l, n);
	if (n > 1u << 20)
		return -EINVAL;
	/* Names inlined when few, else one hash table; then one info each. */
	*first = l->scopeinfo_first_vars + (n > 75 ? 1 + n : 2 * n);
	return 0;
}

static bool id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || (unsigned char)c >= 0x80;
}

/* At most this many context locals are inlined in a ScopeInfo (V8 11 on:
 * more are one hash table). */
#define V8_SCOPE_INLINED_MAX 75

/*
 * The class variable among class scope cls's context locals: V8 keeps a
 * class's own binding there when a method (or initializer) uses it; its
 * other locals are synthetic (".brand", ".home_object", ...) or private
 * names ("#x"). The first local named as an identifier, "" when none.
 */
static void class_local(const struct remote_memory *mem, const struct v8_layout *l, uint64_t cls,
			char *out, size_t cap)
{
	uint64_t n, name;

	out[0] = 0;
	if (v8_heap__field(mem, cls, l->fixed_array_data - 8 + 8 * l->scopeinfo_ncontextlocals,
			   &n) ||
	    (n & 1))
		return;
	n = (uint64_t)smi(l, n);
	if (n > V8_SCOPE_INLINED_MAX)
		return;
	for (uint64_t i = 0; i < n; i++) {
		if (v8_heap__field(mem, cls,
				   l->fixed_array_data - 8 + 8 * (l->scopeinfo_first_vars + i),
				   &name) ||
		    !(name & 1) || !is_string(mem, l, name) ||
		    v8_heap__string(mem, l, name, out, cap))
			break;
		if (out[0] && out[0] != '.' && out[0] != '#' && !(out[0] >= '0' && out[0] <= '9') &&
		    id_char(out[0]))
			return;
	}
	out[0] = 0;
}

/*
 * The name of the class whose scope info is cls, into out. V8 keeps no
 * class name there as such, but (V8 10 on) the class's source positions:
 * the script's source at the start must read "class NAME". The start is one
 * of the first two Smis after the locals (a saved class variable index may
 * come first); "class" at that offset of the source is the check. V8 9
 * keeps no positions for a class scope: there the class variable among its
 * locals names it, when V8 kept it. "" for an anonymous class, or when
 * neither is there.
 */
static void class_name(const struct remote_memory *mem, const struct v8_layout *l, uint64_t cls,
		       uint64_t sfi, char *out, size_t cap)
{
	uint64_t slots[2], script, src;
	char head[V8_CLASS_HEAD + 1];
	size_t first, i, k;

	out[0] = 0;
	/* V8 13 keeps the positions before the context locals (the last two
	 * slots before them, scopeinfo_idx_first_vars counting them); V8 10 to
	 * 12 after, where a saved class variable index may come first. */
	if (l->scope_flags_raw && l->scopeinfo_first_vars >= 2)
		first = l->scopeinfo_first_vars - 2;
	else if (l->scope_flags_raw || scope_tail(mem, l, cls, &first))
		return;
	if (remote_memory__read(mem, cls - 1 + l->fixed_array_data - 8 + 8 * first, slots,
				sizeof(slots)))
		return;
	/* V8 9 (its BaselineData's sign) keeps no class positions: the slots
	 * there are the next object's; its class variable names the class. Only
	 * there: V8 10 on keep the positions, checked against the source. */
	if (l->type_baseline_data) {
		class_local(mem, l, cls, out, cap);
		return;
	}
	script = v8_heap__script(mem, l, sfi);
	if (!script || !l->has_lines || v8_heap__field(mem, script, l->script_source, &src))
		return;
	for (int s = 0; s < 2; s++) {
		int64_t pos = smi(l, slots[s]);

		if ((slots[s] & 1) || pos < 0 || pos > INT32_MAX)
			continue;
		if (v8_heap__substring(mem, l, src, (uint32_t)pos, V8_CLASS_HEAD, head,
				       sizeof(head)) ||
		    strncmp(head, "class", 5) || id_char(head[5]))
			continue;
		for (i = 5; head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r';
		     i++)
			;
		for (k = i; id_char(head[k]); k++)
			;
		/* A name cut by the read, or "class extends B" / "class {": none. */
		if (k == i || !head[k] || k - i >= cap ||
		    (k - i == 7 && !strncmp(head + i, "extends", 7)))
			return;
		memcpy(out, head + i, k - i);
		out[k - i] = 0;
		return;
	}
}

/* Is scope info si's ScopeType (its flags' low bits) want? */
static bool scope_is(const struct remote_memory *mem, const struct v8_layout *l, uint64_t si,
		     uint8_t want)
{
	uint64_t flags;

	if (v8_heap__field(mem, si, l->fixed_array_data - 8, &flags))
		return false;
	if (l->scope_flags_raw) /* V8 13: a uint32 (then padding, or the next field) */
		return (flags & V8_SCOPE_TYPE_MASK) == want;
	return !(flags & 1) && ((uint64_t)smi(l, flags) & V8_SCOPE_TYPE_MASK) == want;
}

/*
 * A method of a class: its scope info (own) is a function's and its outer
 * scope info (the first ScopeInfo among the slots after the locals, before
 * the next object's map) is a class scope. Its class's name, "" when not a
 * method or unknown. Both types are checked: numbers wrong for a V8 give
 * the bare method name.
 */
static void method_class(const struct remote_memory *mem, const struct v8_layout *l, uint64_t sfi,
			 uint64_t own, const uint64_t *tail, size_t n, char *out, size_t cap)
{
	uint16_t type;

	out[0] = 0;
	if (!scope_is(mem, l, own, l->scope_function))
		return;
	for (size_t i = 0; i < n; i++) {
		if (!(tail[i] & 1) || v8_heap__type(mem, l, tail[i], &type))
			continue;
		if (type == l->type_map)
			return; /* past the ScopeInfo's end */
		if (type != l->type_scope_info)
			continue;
		if (!scope_is(mem, l, tail[i], l->scope_class))
			return;
		class_name(mem, l, tail[i], sfi, out, cap);
		return;
	}
}

int v8_heap__function_name(const struct remote_memory *mem, const struct v8_layout *l, uint64_t sfi,
			   char *out, size_t cap)
{
	uint64_t v, slots[V8_SCOPE_TAIL];
	char cls[V8_STR_MAX];
	uint16_t type;
	size_t first, len, clen, tail;
	int err;

	out[0] = 0;
	if ((err = v8_heap__type(mem, l, sfi, &type)))
		return err;
	if (type != l->type_sfi)
		return -EINVAL;
	if ((err = v8_heap__field(mem, sfi, l->sfi_name_or_scope_info, &v)))
		return err;
	if (!(v & 1))
		return 0; /* no name (kNoSharedNameSentinel) */
	if ((err = v8_heap__type(mem, l, v, &type)))
		return err;
	if (type < l->type_first_nonstring)
		return v8_heap__string(mem, l, v, out, cap);
	if (type != l->type_scope_info)
		return -EINVAL;
	/*
	 * A ScopeInfo: flags, parameter count, context local count, the context
	 * locals' names (inlined when few, else a hash table in one slot) and
	 * infos, then (by the flags) the function variable (its name, a slot
	 * index) and the inferred name. The first non-empty string of those
	 * slots is the name: what follows them holds no strings (positions are
	 * Smis, the outer scope a ScopeInfo).
	 */
	if ((err = scope_tail(mem, l, v, &first)))
		return err;
	tail = V8_SCOPE_TAIL;
	memset(slots, 0, sizeof(slots));
	/* A ScopeInfo at the end of a mapping: its names only, no class. */
	if (remote_memory__read(mem, v - 1 + l->fixed_array_data - 8 + 8 * first, slots,
				sizeof(slots))) {
		tail = 0;
		if ((err = remote_memory__read(mem, v - 1 + l->fixed_array_data - 8 + 8 * first,
					       slots, 3 * sizeof(slots[0]))))
			return err;
	}
	/* Up to a saved class variable index and a receiver slot (Smis, V8 9
	 * keeps the receiver's for a function using `this`), then the function
	 * variable's name and slot, then the inferred name. */
	for (size_t i = 0; i < (tail ? V8_SCOPE_NAMES : 3) && !out[0]; i++) {
		uint16_t t;

		if (!(slots[i] & 1) || v8_heap__type(mem, l, slots[i], &t))
			continue;
		if (t == l->type_map)
			break; /* past the ScopeInfo's end: the next object's */
		if (t >= l->type_first_nonstring)
			continue;
		if ((err = v8_heap__string(mem, l, slots[i], out, cap)))
			return err;
	}
	/* Class methods as "Class.method" (not the constructor: its name is the class's). */
	method_class(mem, l, sfi, v, slots, tail, cls, sizeof(cls));
	len = strlen(out);
	clen = strlen(cls);
	if (out[0] && clen && strcmp(cls, out) && clen + 1 + len < cap) {
		memmove(out + clen + 1, out, len + 1);
		memcpy(out, cls, clen);
		out[clen] = '.';
	}
	return 0;
}

uint64_t v8_heap__script(const struct remote_memory *mem, const struct v8_layout *l, uint64_t sfi)
{
	uint64_t s;
	uint16_t type;

	if (v8_heap__field(mem, sfi, l->sfi_script, &s) || v8_heap__type(mem, l, s, &type) ||
	    type != l->type_script)
		return 0;
	return s;
}

/* Appends v to *ends. 0 or -ENOMEM. */
static int push_end(uint32_t **ends, size_t *n, size_t *cap, uint32_t v)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		uint32_t *tmp = realloc(*ends, c * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		*ends = tmp;
		*cap = c;
	}
	(*ends)[(*n)++] = v;
	return 0;
}

/* Line ends of a sequential string's characters (the flattened source). */
struct line_scan {
	uint32_t **ends;
	size_t *n, cap;
	uint32_t pos;
	bool cr; /* the last character was '\r' */
};

static int scan_chars(struct line_scan *s, const uint8_t *chunk, size_t len, bool one)
{
	for (size_t i = 0; i < len; i += one ? 1 : 2, s->pos++) {
		uint32_t c = one ? chunk[i] : (uint32_t)(chunk[i] | chunk[i + 1] << 8);
		int err = 0;

		/* V8's terminators: \n, \r not followed by \n, U+2028, U+2029. */
		if (s->cr && c != '\n')
			err = push_end(s->ends, s->n, &s->cap, s->pos - 1);
		s->cr = c == '\r';
		if (c == '\n' || c == 0x2028 || c == 0x2029)
			err = push_end(s->ends, s->n, &s->cap, s->pos);
		if (err)
			return err;
	}
	return 0;
}

static int scan_string(const struct remote_memory *mem, const struct v8_layout *l, uint64_t obj,
		       uint32_t from, uint32_t count, struct line_scan *s, int depth)
{
	uint16_t type;
	int32_t len;
	uint64_t a, c;
	int err;

	if (depth > V8_CONS_DEPTH_MAX)
		return -ELOOP;
	if ((err = v8_heap__type(mem, l, obj, &type)))
		return err;
	if (type >= l->type_first_nonstring)
		return -EINVAL;
	if ((err = remote_memory__read(mem, obj - 1 + l->string_length, &len, sizeof(len))))
		return err;
	if (len < 0 || from > (uint32_t)len)
		return -EINVAL;
	if (count > (uint32_t)len - from)
		count = (uint32_t)len - from;
	if (!chars_at(mem, l, obj, type, &a)) {
		bool one = (type & l->str_encoding_mask) == l->str_one_byte_tag;
		static __thread uint8_t chunk[64 << 10];

		while (count) {
			size_t want = one ? count : (size_t)count * 2;

			if (want > sizeof(chunk))
				want = sizeof(chunk);
			err = remote_memory__read(mem, a + (one ? from : from * 2ull), chunk, want);
			if (err)
				return err;
			if ((err = scan_chars(s, chunk, want, one)))
				return err;
			from += (uint32_t)(one ? want : want / 2);
			count -= (uint32_t)(one ? want : want / 2);
		}
		return 0;
	}
	if ((type & l->str_repr_mask) == l->str_thin_tag) {
		if ((err = v8_heap__field(mem, obj, l->thin_actual, &a)))
			return err;
		return scan_string(mem, l, a, from, count, s, depth + 1);
	}
	if ((type & l->str_repr_mask) == l->str_sliced_tag) {
		if ((err = v8_heap__field(mem, obj, l->sliced_parent, &a)) ||
		    (err = v8_heap__field(mem, obj, l->sliced_offset, &c)))
			return err;
		if (smi(l, c) < 0 || smi(l, c) > INT32_MAX)
			return -EINVAL;
		return scan_string(mem, l, a, from + (uint32_t)smi(l, c), count, s, depth + 1);
	}
	if ((type & l->str_repr_mask) == l->str_cons_tag) {
		int32_t first_len;

		if ((err = v8_heap__field(mem, obj, l->cons_first, &a)) ||
		    (err = v8_heap__field(mem, obj, l->cons_second, &c)) ||
		    (err = remote_memory__read(mem, a - 1 + l->string_length, &first_len,
					       sizeof(first_len))))
			return err;
		if (first_len < 0 || first_len > len)
			return -EINVAL;
		if (from < (uint32_t)first_len) {
			uint32_t n1 =
			    (uint32_t)first_len - from < count ? (uint32_t)first_len - from : count;

			if ((err = scan_string(mem, l, a, from, n1, s, depth + 1)))
				return err;
			from += n1;
			count -= n1;
		}
		if (!count)
			return 0;
		return scan_string(mem, l, c, from - (uint32_t)first_len, count, s, depth + 1);
	}
	return -EINVAL;
}

int v8_heap__line_ends(const struct remote_memory *mem, const struct v8_layout *l, uint64_t script,
		       uint32_t **ends, size_t *n)
{
	struct line_scan s = {ends, n, 0, 0, false};
	uint64_t src;
	int err;

	*ends = NULL;
	*n = 0;
	if (!l->has_lines)
		return -ENOTSUP;
	if ((err = v8_heap__field(mem, script, l->script_source, &src)))
		return err;
	err = scan_string(mem, l, src, 0, V8_SOURCE_MAX, &s, 0);
	if (err) {
		free(*ends);
		*ends = NULL;
		*n = 0;
	}
	return err;
}

int64_t v8_heap__line_of(const uint32_t *ends, size_t n, uint32_t pos)
{
	size_t lo = 0, hi = n;

	/* The first line end at or after pos: its index is the 0-based line. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ends[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int64_t)lo + 1;
}

/* One zig-zag VLQ value (7 bits a byte, low first, bit 7: more). */
static int read_vlq(const uint8_t *bytes, size_t len, size_t *i, int64_t *out)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 63)
			return -EINVAL;
		b = bytes[(*i)++];
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
	return 0;
}

int v8_heap__decode_positions(const uint8_t *bytes, size_t len, struct v8_position **out, size_t *n)
{
	struct v8_position *p = NULL;
	size_t i = 0, cap = 0, count = 0;
	int64_t code = 0, pos = 0;

	*out = NULL;
	*n = 0;
	while (i < len) {
		int64_t dc, dp;

		if (read_vlq(bytes, len, &i, &dc) || read_vlq(bytes, len, &i, &dp)) {
			free(p);
			return -EINVAL;
		}
		/* The sign of the code offset's delta is the statement flag. */
		code += dc >= 0 ? dc : -dc - 1;
		pos += dp;
		if (code < 0 || code > UINT32_MAX || pos < 0) {
			free(p);
			return -EINVAL;
		}
		if (count == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct v8_position *tmp = realloc(p, c * sizeof(*tmp));

			if (!tmp) {
				free(p);
				return -ENOMEM;
			}
			p = tmp;
			cap = c;
		}
		/* SourcePosition: bit 0 external, 30 bits of script offset, 16 of inlining id. */
		p[count++] = (struct v8_position){
		    .code_offset = (uint32_t)code,
		    .script_offset = (uint32_t)((pos >> 1) & ((1u << 30) - 1)),
		    .inlining_id = (uint16_t)((uint64_t)pos >> 31),
		};
	}
	*out = p;
	*n = count;
	return 0;
}

int v8_heap__positions(const struct remote_memory *mem, const struct v8_layout *l, uint64_t table,
		       struct v8_position **out, size_t *n)
{
	uint16_t type;
	uint64_t len;
	uint8_t *bytes;
	int err;

	*out = NULL;
	*n = 0;
	if ((err = v8_heap__type(mem, l, table, &type)))
		return err;
	if (type != l->type_byte_array && type != l->type_trusted_byte_array)
		return -EINVAL;
	if ((err = v8_heap__field(mem, table, l->fixed_array_length, &len)))
		return err;
	len = (uint64_t)smi(l, len);
	if (len > V8_POSITIONS_MAX)
		return -E2BIG;
	if (!len)
		return 0;
	bytes = malloc(len);
	if (!bytes)
		return -ENOMEM;
	err = remote_memory__read(mem, table - 1 + l->fixed_array_data, bytes, len);
	if (!err)
		err = v8_heap__decode_positions(bytes, len, out, n);
	free(bytes);
	return err;
}

static int read_uvlq(const uint8_t *bytes, size_t len, size_t *i, uint64_t *out)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 63)
			return -EINVAL;
		b = bytes[(*i)++];
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*out = v;
	return 0;
}

/* Size of the bytecode at off (its prefix included), 0 when malformed. */
static uint32_t bytecode_size(const uint8_t *bc, size_t len, const uint8_t (*sizes)[256],
			      uint32_t n, size_t off)
{
	unsigned int scale = 0;
	uint8_t b;

	if (off >= len || bc[off] >= n)
		return 0;
	b = bc[off];
	if (b <= 3) { /* Wide, ExtraWide and their debug-break forms */
		scale = (b & 1) ? 2 : 1;
		if (off + 1 >= len || bc[off + 1] >= n)
			return 0;
		return sizes[scale][bc[off + 1]] ? 1u + sizes[scale][bc[off + 1]] : 0;
	}
	return sizes[0][b];
}

int v8_heap__baseline_offset(const uint8_t *table, size_t table_len, const uint8_t *bytecode,
			     size_t bytecode_len, const uint8_t (*sizes)[256], uint32_t n,
			     uint32_t pc_off, int64_t *out)
{
	uint64_t end, delta;
	size_t i = 0, next = 0;
	int64_t bo = -1;

	if (!n || read_uvlq(table, table_len, &i, &end))
		return -EINVAL;
	while (end < pc_off) {
		uint32_t size;

		if (read_uvlq(table, table_len, &i, &delta) || next >= bytecode_len)
			return -EINVAL;
		end += delta;
		bo = (int64_t)next;
		size = bytecode_size(bytecode, bytecode_len, sizes, n, next);
		if (!size)
			return -EINVAL;
		next += size;
	}
	*out = bo;
	return 0;
}

const struct v8_position *v8_heap__position_at(const struct v8_position *p, size_t n, uint32_t off)
{
	const struct v8_position *best = NULL;

	/* Code offsets ascend: the last entry at or before off. */
	for (size_t i = 0; i < n && p[i].code_offset <= off; i++)
		best = &p[i];
	return best;
}

/* n (1..4) little-endian bytes at p. */
static uint32_t le_bytes(const uint8_t *p, unsigned n)
{
	uint32_t v = 0;

	for (unsigned b = 0; b < n; b++)
		v |= (uint32_t)p[b] << (8 * b);
	return v;
}

/* The configuration's field sizes: 0 when it is not one. */
static uint32_t maglev_entry_size(const uint8_t *head, unsigned count_word, uint32_t *count,
				  uint32_t *pc_size, uint32_t *dx_size)
{
	uint32_t cfg, reg_size;

	if (count_word > 2)
		return 0;
	*count = le_bytes(head + 4 * count_word, 4);
	cfg = le_bytes(head + 4 * (count_word + 1), 4);
	*pc_size = (cfg >> 4) & 7;
	*dx_size = (cfg >> 7) & 7;
	reg_size = (cfg >> 1) & 7;
	/* Maglev code's table always has deopt data: its calls are lazy deopt points. */
	if (!(cfg & 1) || (cfg >> 10) || !*pc_size || *pc_size > 4 || !*dx_size || *dx_size > 4 ||
	    reg_size > 4 || !*count || *count > V8_SAFEPOINTS_MAX)
		return 0;
	return 2 * *pc_size + *dx_size + 1 + reg_size;
}

size_t v8_heap__maglev_safepoints_size(const uint8_t *head, unsigned count_word)
{
	uint32_t count, pc_size, dx_size, esize;
	size_t bytes;

	esize = maglev_entry_size(head, count_word, &count, &pc_size, &dx_size);
	bytes = V8_MAGLEV_SAFEPOINT_HEADER + (size_t)count * esize;
	return esize && bytes <= V8_SAFEPOINT_BYTES_MAX ? bytes : 0;
}

int64_t v8_heap__maglev_deopt_index(const uint8_t *table, size_t len, unsigned count_word,
				    uint32_t code_size, uint32_t pc_off)
{
	uint32_t count, pc_size, dx_size, esize, last = 0;
	int64_t found = -1;

	if (len < V8_MAGLEV_SAFEPOINT_HEADER ||
	    v8_heap__maglev_safepoints_size(table, count_word) > len)
		return -1;
	esize = maglev_entry_size(table, count_word, &count, &pc_size, &dx_size);
	if (!esize)
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *e = table + V8_MAGLEV_SAFEPOINT_HEADER + (size_t)i * esize;
		uint32_t pc = le_bytes(e, pc_size), dx = le_bytes(e + pc_size, dx_size);

		/* Every pc checked, past the one looked for too: a table whose pcs
		 * do not rise inside the code is not one. */
		if (pc >= code_size || (i && pc <= last))
			return -1;
		last = pc;
		if (pc == pc_off)
			found = (int64_t)dx - 1; /* dx 0: no deopt entry, -1 */
	}
	return found;
}

/* V8 13.6's 45 opcodes' operand counts, by opcode number. */
static const uint8_t v13_operands[45] = {
    6, 4, 3, 3,		       /* interpreted with / without return, builtin continuations */
    2, 1, 3, 4, 3, 3, 3,       /* construct stubs, continuations, wasm, extra arguments */
    1, 0, 0, 3, 3,	       /* arguments elements, lengths, BEGIN without / with feedback */
    1, 1, 1, 0,		       /* bool register, slot, captured object, string concat */
    1, 1, 1, 1, 1, 1, 1, 1, 1, /* double, simd, holey double, duplicated, float */
    1, 1, 1, 1, 1, 1, 1, 1,    /* int32, int64, signed and unsigned bigint64 */
    0, 1, 1, 1, 1, 1, 2, 1,    /* optimized out ... update feedback, match previous */
};

const struct v8_translation_ops v8_translation_v13 = {
    .operands = v13_operands,
    .n = 45,
    .n_frames = 11,
    .interpreted_with_return = 0,
    .interpreted_without_return = 1,
    .inlined_extra_arguments = 10,
    .begin_without_feedback = 14,
    .begin_with_feedback = 15,
    .match_previous = 44,
};

/* A translation being read: its own position and its lookback's. */
struct tr_iter {
	const uint8_t *t;
	size_t len, cur, prev;
	bool has_prev;
	uint32_t remaining; /* operations still to take from prev (the current one included) */
	uint32_t since;	    /* operations of its own since prev was aligned */
	const struct v8_translation_ops *ops;
};

/* An unsigned VLQ at *pos, below limit. 0 or -EINVAL. */
static int tr_uvlq(const uint8_t *t, size_t limit, size_t *pos, uint32_t *out)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*pos >= limit)
			return -EINVAL;
		b = t[(*pos)++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (v > UINT32_MAX)
				return -EINVAL;
			*out = (uint32_t)v;
			return 0;
		}
	}
	return -EINVAL;
}

/* The next operand, from prev while operations are taken from there. */
static int tr_operand(struct tr_iter *it, int32_t *out)
{
	uint32_t u;
	int err = it->remaining ? tr_uvlq(it->t, it->cur, &it->prev, &u)
				: tr_uvlq(it->t, it->len, &it->cur, &u);

	if (err)
		return err;
	/* Sign in bit 0, magnitude above. */
	*out = (u & 1) ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
	return 0;
}

static bool tr_begin(const struct v8_translation_ops *ops, uint8_t op)
{
	return op == ops->begin_without_feedback || op == ops->begin_with_feedback;
}

/* An operation at prev: never a match, always before cur; a BEGIN (the
 * lookback's own, aligned with this one's) only skipped, never taken. */
static int tr_op_at_prev(struct tr_iter *it, uint8_t *op, bool skip)
{
	if (!it->has_prev || it->prev >= it->cur)
		return -EINVAL;
	*op = it->t[it->prev++];
	if (*op >= it->ops->n || *op == it->ops->match_previous ||
	    (!skip && tr_begin(it->ops, *op)))
		return -EINVAL;
	return 0;
}

static int tr_skip_at_prev(struct tr_iter *it)
{
	uint8_t op;
	uint32_t u;
	int err = tr_op_at_prev(it, &op, true);

	for (uint8_t k = 0; !err && k < it->ops->operands[op]; k++)
		err = tr_uvlq(it->t, it->cur, &it->prev, &u);
	return err;
}

static int tr_skip_operands(struct tr_iter *it, uint8_t op, unsigned done)
{
	int32_t v;
	int err = 0;

	for (unsigned k = done; !err && k < it->ops->operands[op]; k++)
		err = tr_operand(it, &v);
	return err;
}

/* The next operation's opcode (its operands follow, from where it came). */
static int tr_next(struct tr_iter *it, uint8_t *op)
{
	const struct v8_translation_ops *ops = it->ops;
	uint32_t lookback;
	size_t peek;
	uint8_t b;
	int err;

	if (it->remaining)
		it->remaining--;
	if (it->remaining)
		return tr_op_at_prev(it, op, false);
	if (it->cur >= it->len)
		return -EINVAL;
	b = it->t[it->cur++];
	if (b >= ops->n) {
		it->remaining = b - ops->n;
		b = ops->match_previous;
	} else if (b == ops->match_previous &&
		   (err = tr_uvlq(it->t, it->len, &it->cur, &it->remaining))) {
		return err;
	}
	if (tr_begin(ops, b)) {
		peek = it->cur;
		if ((err = tr_uvlq(it->t, it->len, &peek, &lookback)))
			return err;
		if (lookback) {
			/* The earlier BEGIN, which refers to none itself. */
			if (lookback > it->cur - 1)
				return -EINVAL;
			it->prev = it->cur - 1 - lookback;
			if (!tr_begin(ops, it->t[it->prev]) || it->t[it->prev + 1] != 0)
				return -EINVAL;
			it->has_prev = true;
		}
		it->since = 1;
	} else if (b == ops->match_previous) {
		if (!it->remaining)
			return -EINVAL; /* V8 writes none taking nothing */
		for (uint32_t k = 0; k < it->since; k++)
			if ((err = tr_skip_at_prev(it)))
				return err;
		it->since = 0;
		return tr_op_at_prev(it, op, false);
	} else {
		it->since++;
	}
	*op = b;
	return 0;
}

int v8_heap__translation_frames(const uint8_t *t, size_t len, uint32_t index,
				const struct v8_translation_ops *ops, struct v8_deopt_frame *out,
				size_t max, size_t *n)
{
	struct tr_iter it = {.t = t, .len = len, .cur = index, .ops = ops};
	int32_t lookback, frames, js;
	uint8_t op;
	int err;

	*n = 0;
	if (index >= len || (err = tr_next(&it, &op)) || !tr_begin(ops, op) ||
	    (err = tr_operand(&it, &lookback)) || (err = tr_operand(&it, &frames)) ||
	    (err = tr_operand(&it, &js)))
		return -EINVAL;
	if (js < 1 || frames < js || frames > V8_DEOPT_FRAMES_MAX || (size_t)js > max)
		return -EINVAL;
	for (uint32_t ops_read = 0; frames > 0; ops_read++) {
		if (ops_read >= V8_TRANSLATION_OPS_MAX || tr_next(&it, &op) || tr_begin(ops, op))
			return -EINVAL;
		if (op >= ops->n_frames) {
			if (tr_skip_operands(&it, op, 0))
				return -EINVAL;
			continue;
		}
		frames--;
		if (op == ops->inlined_extra_arguments) {
			if (tr_skip_operands(&it, op, 0))
				return -EINVAL;
			continue;
		}
		/* Frames of builtins or construct stubs are not named here. */
		if ((op != ops->interpreted_with_return && op != ops->interpreted_without_return) ||
		    *n >= (size_t)js)
			return -EINVAL;
		if (tr_operand(&it, &out[*n].bytecode_offset) ||
		    tr_operand(&it, &out[*n].literal) || tr_skip_operands(&it, op, 2) ||
		    out[*n].bytecode_offset < 0 || out[*n].literal < 0)
			return -EINVAL;
		(*n)++;
	}
	return *n == (size_t)js ? 0 : -EINVAL;
}
