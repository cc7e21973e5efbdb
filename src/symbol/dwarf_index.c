// SPDX-License-Identifier: Apache-2.0
/*
 * The scope chains of addresses and the scope prefixes of declarations,
 * as libdw's dwarf_getscopes() / dwarf_getscopes_die() give them, without
 * visiting a whole unit per call (see dwarf_index.h).
 *
 * What libdw 0.188 does, which this file reproduces: it visits a unit's
 * DIEs depth first in DIE order (an imported unit's children in place of
 * the DW_TAG_imported_unit, unless it imports a compile unit), descends
 * only into DIEs that hold pc and may hold scopes (units, functions,
 * blocks, inlined calls, namespaces, classes, structs), and stops at the
 * first DIE holding pc none of whose children it descends into holds pc.
 * The chain is that path, innermost first. When the path goes through
 * inlined calls, the chain stops at the innermost one and goes on with the
 * DIEs enclosing that call's DW_AT_abstract_origin, which libdw finds by
 * visiting the unit (descending into anything that may hold scopes): none
 * when the origin is in another unit it does not import. Since DIEs are
 * stored depth first, a DIE's enclosing DIEs are those whose subtree spans
 * its offset, found here a level at a time by sibling offsets.
 */
#include "symbol/dwarf_index.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A level with more children than this, walked by a lookup, gets an index. */
#define INDEX_CHILDREN 32
/* Nesting of imported units walked in place, and of DIEs on a path. */
#define MAX_IMPORTS 16
#define MAX_DEPTH   256
/* Siblings one level of a containment search visits (hostile files). */
#define MAX_SIBLINGS (1u << 22)
/* Slots of a memo table at most (3/4 used), and the longest prefix remembered. */
#define MEMO_SLOTS   (1u << 16)
#define PREFIX_MAX   1024
#define DW_LANG_C17_ 0x002c /* DWARF 6 draft; not in every dwarf.h */

/* One address range of a child DIE. */
struct range_entry {
	Dwarf_Addr begin, end;
	Dwarf_Addr max_end; /* the largest end of this entry and every one before it */
	Dwarf_Die die;
	uint32_t order; /* the child's position among its siblings */
};

/* The children of one DIE with address ranges, sorted by begin. */
struct child_index {
	void *key; /* the parent DIE's addr */
	struct range_entry *e;
	size_t n;
	bool failed; /* a child's ranges could not be read: not exact, not used */
	/* For a unit: the units it imports at its top level, in place (their roots' addr). */
	void **imports;
	size_t n_imports;
};

/* A remembered answer about one DIE: a prefix (char) or an origin's enclosing DIEs (Dwarf_Die). */
struct memo_slot {
	void *key; /* the DIE's addr; NULL: empty */
	void *val; /* malloc'd, NULL when len is 0 */
	size_t len;
};

/* Open addressing, cap a power of 2, at most 3/4 used. */
struct memo {
	struct memo_slot *slots;
	size_t n, cap;
};

struct dwarf_index {
	struct child_index **idx; /* sorted by key */
	size_t n_idx, cap_idx;
	struct memo prefixes; /* per declaration: its prefix */
	struct memo origins;  /* per abstract origin: the DIEs enclosing it in its unit */
	size_t bytes, grown, max_bytes;
	bool full; /* an index did not fit: no more are built (each try walks a whole level) */
};

/* Walks a DIE's children as libdw does: an imported unit's in place. */
struct child_iter {
	Dwarf_Die die;
	Dwarf_Die stack[MAX_IMPORTS]; /* the DW_TAG_imported_unit DIEs walked into */
	int depth;
	/*
	 * Units walked into (their roots' addr, malloc'd, the caller frees),
	 * when the caller wants them: cap_imports (size_t)-1 says it does not.
	 */
	void **imports;
	size_t n_imports, cap_imports;
	bool alloc_failed;
};

static bool may_have_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

static void iter_note_import(struct child_iter *it, Dwarf_Die *unit_root)
{
	if (it->alloc_failed || it->cap_imports == (size_t)-1)
		return;
	if (it->n_imports == it->cap_imports) {
		size_t cap = it->cap_imports ? 2 * it->cap_imports : 8;
		void **grown = realloc(it->imports, cap * sizeof(*grown));

		if (!grown) {
			it->alloc_failed = true;
			return;
		}
		it->imports = grown;
		it->cap_imports = cap;
	}
	it->imports[it->n_imports++] = unit_root->addr;
}

/*
 * Settles on a real child: walks into imported units at the current one.
 * Returns 0 on a child, 1 at the end, -1 on an error (libdw's too, or an
 * import cycle).
 */
static int iter_settle(struct child_iter *it)
{
	while (dwarf_tag(&it->die) == DW_TAG_imported_unit) {
		Dwarf_Die orig = it->die, target, first;
		Dwarf_Attribute attr;
		int r;

		if (dwarf_formref_die(dwarf_attr(&orig, DW_AT_import, &attr), &target) &&
		    dwarf_tag(&target) != DW_TAG_compile_unit &&
		    dwarf_child(&target, &first) == 0) {
			for (int i = 0; i < it->depth; i++)
				if (it->stack[i].addr == orig.addr)
					return -1;
			if (it->depth == MAX_IMPORTS)
				return -1;
			it->stack[it->depth++] = orig;
			iter_note_import(it, &target);
			it->die = first;
			continue;
		}
		r = dwarf_siblingof(&orig, &it->die);
		while (r == 1 && it->depth > 0) {
			orig = it->stack[--it->depth];
			r = dwarf_siblingof(&orig, &it->die);
		}
		if (r != 0)
			return r < 0 ? -1 : 1;
	}
	return 0;
}

/* Same returns as iter_settle(). */
static int iter_first(struct child_iter *it, Dwarf_Die *parent)
{
	int r = dwarf_child(parent, &it->die);

	it->depth = 0;
	if (r != 0)
		return r < 0 ? -1 : 1;
	return iter_settle(it);
}

static int iter_next(struct child_iter *it)
{
	Dwarf_Die cur = it->die;
	int r = dwarf_siblingof(&cur, &it->die);

	while (r == 1 && it->depth > 0) {
		cur = it->stack[--it->depth];
		r = dwarf_siblingof(&cur, &it->die);
	}
	if (r != 0)
		return r < 0 ? -1 : 1;
	return iter_settle(it);
}

/*
 * dwarf_haspc(): 1, 0, or -1 on an error. libdw's lookup takes some errors
 * (a missing .debug_ranges) as no match and fails on others, by codes it
 * does not export: any error here sends the lookup to libdw itself.
 */
static int holds_pc(Dwarf_Die *die, Dwarf_Addr pc)
{
	return dwarf_haspc(die, pc);
}

static struct child_index *index_find(const struct dwarf_index *di, void *key, size_t *pos)
{
	size_t lo = 0, hi = di->n_idx;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (di->idx[mid]->key == key)
			return di->idx[mid];
		if ((uintptr_t)di->idx[mid]->key < (uintptr_t)key)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	return NULL;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct range_entry *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void index_free(struct child_index *ci)
{
	if (!ci)
		return;
	free(ci->e);
	free(ci->imports);
	free(ci);
}

static void charge(struct dwarf_index *di, size_t n)
{
	di->bytes += n;
	di->grown += n;
}

/*
 * Indexes parent's children (one walk of that level). Returns the index
 * (owned by di), or NULL when out of budget or memory.
 */
static struct child_index *index_build(struct dwarf_index *di, Dwarf_Die *parent, size_t pos)
{
	struct child_iter it = {0};
	struct child_index *ci = NULL;
	size_t cap = 0, bytes;
	uint32_t order = 0;
	int r;

	if (di->full || di->bytes >= di->max_bytes)
		return NULL;
	ci = calloc(1, sizeof(*ci));
	if (!ci)
		return NULL;
	ci->key = parent->addr;
	for (r = iter_first(&it, parent); r == 0; r = iter_next(&it), order++) {
		Dwarf_Addr base, begin, end;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(&it.die, off, &base, &begin, &end)) > 0) {
			if (begin >= end)
				continue;
			if (ci->n == cap) {
				size_t ncap = cap ? 2 * cap : 16;
				struct range_entry *grown = realloc(ci->e, ncap * sizeof(*grown));

				if (!grown)
					goto cleanup;
				ci->e = grown;
				cap = ncap;
			}
			ci->e[ci->n++] = (struct range_entry){
			    .begin = begin, .end = end, .die = it.die, .order = order};
		}
		if (off < 0) {
			ci->failed = true;
			break;
		}
		if ((size_t)ci->n * sizeof(*ci->e) + di->bytes > di->max_bytes) {
			di->full = true;
			goto cleanup;
		}
	}
	if (r < 0 || it.alloc_failed)
		ci->failed = true;
	if (ci->failed) {
		free(ci->e);
		ci->e = NULL;
		ci->n = 0;
	} else if (ci->n) {
		struct range_entry *fit;

		qsort(ci->e, ci->n, sizeof(*ci->e), entry_cmp);
		for (size_t i = 0; i < ci->n; i++)
			ci->e[i].max_end = i && ci->e[i - 1].max_end > ci->e[i].end
					       ? ci->e[i - 1].max_end
					       : ci->e[i].end;
		fit = realloc(ci->e, ci->n * sizeof(*fit));
		if (fit)
			ci->e = fit;
	}
	ci->imports = it.imports;
	ci->n_imports = it.n_imports;
	it.imports = NULL;
	if (di->n_idx == di->cap_idx) {
		size_t ncap = di->cap_idx ? 2 * di->cap_idx : 64;
		struct child_index **grown = realloc(di->idx, ncap * sizeof(*grown));

		if (!grown)
			goto cleanup;
		di->idx = grown;
		charge(di, (ncap - di->cap_idx) * sizeof(*grown));
		di->cap_idx = ncap;
	}
	memmove(&di->idx[pos + 1], &di->idx[pos], (di->n_idx - pos) * sizeof(*di->idx));
	di->idx[pos] = ci;
	di->n_idx++;
	bytes = sizeof(*ci) + ci->n * sizeof(*ci->e) + ci->n_imports * sizeof(*ci->imports);
	charge(di, bytes);
	return ci;

cleanup:
	free(it.imports);
	index_free(ci);
	return NULL;
}

/* The first child (in DIE order) whose ranges hold pc, from an index. */
static bool index_lookup(const struct child_index *ci, Dwarf_Addr pc, Dwarf_Die *out)
{
	size_t lo = 0, hi = ci->n;
	const struct range_entry *best = NULL;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ci->e[mid].begin <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Entries before lo begin at or below pc; max_end says when none further back can hold it.
	 */
	for (size_t i = lo; i > 0 && ci->e[i - 1].max_end > pc; i--) {
		const struct range_entry *e = &ci->e[i - 1];

		if (e->end > pc && (!best || e->order < best->order))
			best = e;
	}
	if (best)
		*out = best->die;
	return best != NULL;
}

/*
 * The first child of parent holding pc: 1 (in *out), 0 when none, -1 when
 * libdw would fail or this cannot tell exactly (the caller asks libdw).
 */
static int child_holding(struct dwarf_index *di, Dwarf_Die *parent, bool always_index,
			 Dwarf_Addr pc, Dwarf_Die *out)
{
	struct child_iter it = {.cap_imports = (size_t)-1};
	struct child_index *ci;
	size_t pos = 0, seen = 0;
	int r;

	ci = index_find(di, parent->addr, &pos);
	if (!ci && always_index)
		ci = index_build(di, parent, pos);
	if (ci)
		return ci->failed ? -1 : index_lookup(ci, pc, out);
	for (r = iter_first(&it, parent); r == 0; r = iter_next(&it)) {
		int h = holds_pc(&it.die, pc);

		if (h < 0)
			return -1;
		if (h) {
			*out = it.die;
			break;
		}
		seen++;
	}
	if (r < 0)
		return -1;
	/* A long level: index it for the next lookups that pass through it. */
	if (seen > INDEX_CHILDREN && !always_index)
		index_build(di, parent, pos);
	return r == 0;
}

/*
 * The DIEs enclosing target in the unit whose root is root, outermost
 * (root) first, into chain (max entries), as libdw's visit finds them:
 * every one may hold scopes. Returns how many, 0 when libdw would not
 * find target there.
 */
static int enclosing(Dwarf_Die *root, Dwarf_Die *target, Dwarf_Die *chain, int max)
{
	Dwarf_Off want = dwarf_dieoffset(target);
	Dwarf_Die cur = *root;
	int n = 0;

	while (n < max) {
		Dwarf_Die child, next;
		unsigned int steps = 0;
		int r;

		chain[n++] = cur;
		if (dwarf_child(&cur, &child) != 0)
			return 0;
		/* The child whose subtree spans want: the last one starting at or before it. */
		for (;;) {
			if (child.addr == target->addr)
				return n;
			r = dwarf_siblingof(&child, &next);
			if (r < 0 || ++steps > MAX_SIBLINGS)
				return 0;
			if (r == 1 || dwarf_dieoffset(&next) > want)
				break;
			child = next;
		}
		if (dwarf_dieoffset(&child) > want || !may_have_scopes(dwarf_tag(&child)) ||
		    !dwarf_haschildren(&child))
			return 0;
		cur = child;
	}
	return 0;
}

static size_t slot_of(const void *key, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (cap - 1);
}

/* The slot of key, or the empty one where it goes (the table is never full). */
static struct memo_slot *memo_slot(const struct memo *m, const void *key)
{
	size_t i = slot_of(key, m->cap);

	while (m->slots[i].key && m->slots[i].key != key)
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

/* The remembered answer for key, or NULL. */
static struct memo_slot *memo_find(const struct memo *m, const void *key)
{
	struct memo_slot *s;

	if (!m->slots)
		return NULL;
	s = memo_slot(m, key);
	return s->key ? s : NULL;
}

/*
 * Remembers val (len bytes, copied) for key, if the table may grow and the
 * budget allows; otherwise the caller just answers without remembering.
 */
static void memo_put(struct dwarf_index *di, struct memo *m, void *key, const void *val, size_t len)
{
	size_t cap = m->cap ? 2 * m->cap : 64;
	void *copy = NULL;

	if (di->bytes + len > di->max_bytes)
		return;
	if (!m->cap || m->n + 1 > m->cap / 4 * 3) {
		struct memo_slot *slots, *old = m->slots;
		size_t old_cap = m->cap;

		if (cap > MEMO_SLOTS || di->bytes + cap * sizeof(*slots) > di->max_bytes)
			return;
		slots = calloc(cap, sizeof(*slots));
		if (!slots)
			return;
		m->slots = slots;
		m->cap = cap;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].key)
				*memo_slot(m, old[i].key) = old[i];
		free(old);
		di->bytes -= old_cap * sizeof(*slots);
		charge(di, cap * sizeof(*slots));
	}
	if (len && !(copy = malloc(len)))
		return;
	if (len)
		memcpy(copy, val, len);
	*memo_slot(m, key) = (struct memo_slot){.key = key, .val = copy, .len = len};
	m->n++;
	charge(di, len);
}

static void memo_free(struct memo *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].val);
	free(m->slots);
}

/*
 * enclosing(unit, origin), remembered per origin: a big unit has thousands
 * of DIEs at its top level, and every address in an inlined call asks for
 * its origin. Same returns as enclosing().
 */
static int origin_enclosing(struct dwarf_index *di, Dwarf_Die *unit, Dwarf_Die *origin,
			    Dwarf_Die *chain, int max)
{
	struct memo_slot *s = memo_find(&di->origins, origin->addr);
	int n;

	if (s) {
		n = (int)(s->len / sizeof(*chain));
		if (n > max)
			return 0;
		if (n)
			memcpy(chain, s->val, s->len);
		return n;
	}
	n = enclosing(unit, origin, chain, max);
	memo_put(di, &di->origins, origin->addr, chain, (size_t)n * sizeof(*chain));
	return n;
}

static bool imported_by(const struct child_index *unit, void *root_addr)
{
	for (size_t i = 0; i < unit->n_imports; i++)
		if (unit->imports[i] == root_addr)
			return true;
	return false;
}

int dwarf_index__scopes(struct dwarf_index *di, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes)
{
	Dwarf_Die *path = NULL, *chain = NULL, *out = NULL, origin, ounit;
	struct child_index *unit;
	Dwarf_Attribute attr;
	size_t pos;
	int n = 0, inl = 0, nchain = 0, ret;

	if (!di || !cu)
		return dwarf_getscopes(cu, pc, scopes);
	path = malloc(2 * MAX_DEPTH * sizeof(*path));
	if (!path)
		return dwarf_getscopes(cu, pc, scopes);
	chain = path + MAX_DEPTH;
	path[n++] = *cu;
	for (;;) {
		Dwarf_Die *at = &path[n - 1];
		int tag;

		if (n > 1 && (!may_have_scopes(dwarf_tag(at)) || !dwarf_haschildren(at)))
			break;
		if (n == MAX_DEPTH)
			goto libdw;
		ret = child_holding(di, at, n == 1, pc, &path[n]);
		if (ret < 0)
			goto libdw;
		if (ret == 0)
			break;
		tag = dwarf_tag(&path[n]);
		if (tag == DW_TAG_inlined_subroutine)
			inl = n;
		n++;
	}
	if (n == 1) {
		ret = 0;
		goto cleanup;
	}
	if (inl) {
		if (!dwarf_formref_die(dwarf_attr(&path[inl], DW_AT_abstract_origin, &attr),
				       &origin)) {
			ret = -1;
			goto cleanup;
		}
		if (!dwarf_diecu(&origin, &ounit, NULL, NULL)) {
			ret = 0;
			goto cleanup;
		}
		if (ounit.addr == cu->addr) {
			nchain = origin_enclosing(di, cu, &origin, chain, MAX_DEPTH);
		} else {
			unit = index_find(di, cu->addr, &pos);
			/* Not indexed (over budget): which units cu imports is not known. */
			if (!unit)
				goto libdw;
			/* Found by libdw in a unit imported in place: enclosed by it, then by cu.
			 */
			if (imported_by(unit, ounit.addr) &&
			    (nchain = origin_enclosing(di, &ounit, &origin, chain, MAX_DEPTH)) > 0)
				chain[0] = *cu;
		}
		if (nchain <= 0) {
			ret = 0;
			goto cleanup;
		}
	}
	/* The path from its innermost DIE back to the inlined call (or the unit). */
	ret = (n - inl) + nchain;
	out = malloc((size_t)ret * sizeof(*out));
	if (!out) {
		ret = -1;
		goto cleanup;
	}
	for (int i = 0; i < n - inl; i++)
		out[i] = path[n - 1 - i];
	for (int i = 0; i < nchain; i++)
		out[n - inl + i] = chain[nchain - 1 - i];
	*scopes = out;
	goto cleanup;

libdw:
	free(path);
	return dwarf_getscopes(cu, pc, scopes);

cleanup:
	free(path);
	return ret;
}

static bool is_c(Dwarf_Die *unit)
{
	int lang = dwarf_srclang(unit);

	return lang == DW_LANG_C89 || lang == DW_LANG_C || lang == DW_LANG_C99 ||
	       lang == DW_LANG_C11 || lang == DW_LANG_C17_;
}

/*
 * Appends "name::" to buf (used of len bytes written) when scope names its
 * members (a namespace, class, struct or union); returns the new sum of what
 * each part wanted to write, as the old qualified_name() counted it.
 */
static size_t append_scope(Dwarf_Die *scope, char *buf, size_t used, size_t len)
{
	int tag = dwarf_tag(scope);
	const char *name;

	if (tag != DW_TAG_namespace && tag != DW_TAG_class_type && tag != DW_TAG_structure_type &&
	    tag != DW_TAG_union_type)
		return used;
	name = dwarf_diename(scope);
	return used + (size_t)snprintf(buf + used, len - used,
				       "%s::", name ? name : "(anonymous namespace)");
}

/*
 * The prefix of decl (in unit) as the old loop over dwarf_getscopes_die()
 * wrote it, into buf; returns the sum of what each part wanted to write.
 */
static size_t build_prefix(Dwarf_Die *unit, Dwarf_Die *decl, char *buf, size_t len)
{
	Dwarf_Die chain[64];
	size_t used = 0;
	int n;

	buf[0] = '\0';
	n = enclosing(unit, decl, chain, 64);
	/* chain[0] is the unit: prefixes from the outside in. */
	for (int i = 1; i < n && used < len; i++)
		used = append_scope(&chain[i], buf, used, len);
	return used;
}

size_t dwarf_index__prefix_libdw(Dwarf_Die *decl, char *buf, size_t len)
{
	Dwarf_Die *scopes = NULL;
	size_t used = 0;
	int n;

	if (!len)
		return 0;
	n = dwarf_getscopes_die(decl, &scopes);
	buf[0] = '\0';
	/* scopes[0] is the DIE itself, the CU last: prefixes from the outside in. */
	for (int i = n - 1; i >= 1 && used < len; i--)
		used = append_scope(&scopes[i], buf, used, len);
	free(scopes);
	return used;
}

size_t dwarf_index__prefix(struct dwarf_index *di, Dwarf_Die *decl, char *buf, size_t len)
{
	char full[PREFIX_MAX + 1];
	struct memo_slot *s;
	Dwarf_Die unit;
	size_t used;

	if (!len)
		return 0;
	/* A C function is in no namespace or class: nothing to walk or remember. */
	if (!dwarf_diecu(decl, &unit, NULL, NULL) || is_c(&unit)) {
		buf[0] = '\0';
		return 0;
	}
	if (di && (s = memo_find(&di->prefixes, decl->addr))) {
		/* Stored with its NUL; len 0: no prefix. */
		snprintf(buf, len, "%s", s->val ? (const char *)s->val : "");
		return s->len ? s->len - 1 : 0;
	}
	used = build_prefix(&unit, decl, full, sizeof(full));
	/* Remembered unless it was cut. */
	if (di && used < sizeof(full))
		memo_put(di, &di->prefixes, decl->addr, full, used ? used + 1 : 0);
	/* When cut (used >= sizeof(full) > len), full still holds more than buf can. */
	snprintf(buf, len, "%s", full);
	return used;
}

size_t dwarf_index__growth(struct dwarf_index *di)
{
	size_t n = di ? di->grown : 0;

	if (di)
		di->grown = 0;
	return n;
}

size_t dwarf_index__bytes(const struct dwarf_index *di)
{
	return di ? di->bytes : 0;
}

struct dwarf_index *dwarf_index__new(size_t max_bytes)
{
	struct dwarf_index *di = calloc(1, sizeof(*di));

	if (!di)
		return NULL;
	di->max_bytes = max_bytes;
	charge(di, sizeof(*di));
	return di;
}

void dwarf_index__free(struct dwarf_index *di)
{
	if (!di)
		return;
	for (size_t i = 0; i < di->n_idx; i++)
		index_free(di->idx[i]);
	free(di->idx);
	memo_free(&di->prefixes);
	memo_free(&di->origins);
	free(di);
}
