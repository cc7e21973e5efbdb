// SPDX-License-Identifier: Apache-2.0
/*
 * The profile model: growable arrays of mappings, functions, locations and
 * samples, with hash indexes so that adding an existing mapping, function or
 * location returns its id instead of a duplicate.
 *
 * Strings, line arrays and sample stacks live in a block pool owned by the
 * profile, so a profile with millions of samples costs a handful of large
 * allocations rather than millions of small ones, and pointers handed to
 * exporters stay valid while the arrays that refer to them grow.
 */
#include "profile/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/array.h"
#include "util/clock.h"
#include "util/hashmap.h"

#define POOL_BLOCK_SIZE (64 * 1024)
#define POOL_ALIGN	8

struct pool_block {
	struct pool_block *next;
	size_t used;
	size_t size;
	char data[];
};

struct profile_intern {
	struct pool_block *blocks; /* newest first; allocation happens in the head */

	struct hashmap strings;	  /* entry: char * in the pool */
	struct hashmap mappings;  /* entry: (void *)(uintptr_t)id */
	struct hashmap functions; /* entry: (void *)(uintptr_t)id */
	struct hashmap locations; /* entry: (void *)(uintptr_t)id */
	struct hashmap pids;	  /* entry: (void *)(uintptr_t)(pid + 1) */

	size_t cap_mappings;
	size_t cap_functions;
	size_t cap_locations;
	size_t cap_samples;
};

/* Lookup keys: strings are already interned, so they compare by pointer. */
struct mapping_key {
	uint64_t start, limit, file_offset;
	const char *filename, *build_id, *go_build_id, *file_hash;
};

struct function_key {
	const char *name, *system_name, *filename;
	int64_t start_line;
};

struct location_key {
	uint32_t mapping_id;
	uint64_t address;
	enum profile_frame_kind kind;
	const struct profile_line *lines;
	uint32_t n_lines;
};

static void *id_entry(uint32_t id)
{
	return (void *)(uintptr_t)id;
}

static uint32_t entry_id(const void *entry)
{
	return (uint32_t)(uintptr_t)entry;
}

static uint64_t mix(uint64_t h, uint64_t x)
{
	return hash_u64((h ^ x) + 0x9e3779b97f4a7c15ull);
}

/* ---- block pool ---------------------------------------------------------- */

/* Memory lives until pool_free(); NULL on ENOMEM. */
static void *pool_alloc(struct profile_intern *in, size_t size)
{
	struct pool_block *b = in->blocks;
	size_t need = (size + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1);
	void *mem;

	if (!b || b->size - b->used < need) {
		/* Big requests get their own block; small ones keep filling the current one. */
		size_t bsize = need > POOL_BLOCK_SIZE / 4 ? need : POOL_BLOCK_SIZE;

		b = malloc(sizeof(*b) + bsize);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = bsize;
		if (bsize == need && in->blocks) {
			b->next = in->blocks->next;
			in->blocks->next = b;
		} else {
			b->next = in->blocks;
			in->blocks = b;
		}
	}
	mem = b->data + b->used;
	b->used += need;
	return mem;
}

static void pool_free(struct profile_intern *in)
{
	struct pool_block *b = in->blocks, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	in->blocks = NULL;
}

/* ---- strings ------------------------------------------------------------- */

static bool string_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return strcmp(entry, key) == 0;
}

/* Returns the pool's copy of s (NULL counts as ""), or NULL on ENOMEM. */
static const char *intern_string(struct profile_intern *in, const char *s)
{
	uint64_t hash;
	char *copy;
	size_t len;

	if (!s)
		s = "";
	hash = hash_str(s, 0);
	copy = hashmap__find(&in->strings, hash, s);
	if (copy)
		return copy;
	len = strlen(s);
	copy = pool_alloc(in, len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len + 1);
	if (hashmap__insert(&in->strings, hash, copy))
		return NULL;
	return copy;
}

/* ---- equality callbacks (ctx is the profile) ------------------------------ */

static bool mapping_equal(const void *entry, const void *key, void *ctx)
{
	const struct profile *p = ctx;
	const struct profile_mapping *m = &p->mappings[entry_id(entry) - 1];
	const struct mapping_key *k = key;

	return m->start == k->start && m->limit == k->limit && m->file_offset == k->file_offset &&
	       m->filename == k->filename && m->build_id == k->build_id &&
	       m->go_build_id == k->go_build_id && m->file_hash == k->file_hash;
}

static bool function_equal(const void *entry, const void *key, void *ctx)
{
	const struct profile *p = ctx;
	const struct profile_function *f = &p->functions[entry_id(entry) - 1];
	const struct function_key *k = key;

	return f->name == k->name && f->system_name == k->system_name &&
	       f->filename == k->filename && f->start_line == k->start_line;
}

static bool location_equal(const void *entry, const void *key, void *ctx)
{
	const struct profile *p = ctx;
	const struct profile_location *l = &p->locations[entry_id(entry) - 1];
	const struct location_key *k = key;

	if (l->mapping_id != k->mapping_id || l->address != k->address || l->kind != k->kind ||
	    l->n_lines != k->n_lines)
		return false;
	for (uint32_t i = 0; i < k->n_lines; i++)
		if (l->lines[i].function_id != k->lines[i].function_id ||
		    l->lines[i].line != k->lines[i].line)
			return false;
	return true;
}

static bool pid_equal(const void *entry, const void *key, void *ctx)
{
	(void)ctx;
	return (uintptr_t)entry - 1 == *(const uint32_t *)key;
}

/* ---- public API ---------------------------------------------------------- */

struct profile *profile__new(uint32_t frequency_hz)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->intern = calloc(1, sizeof(*p->intern));
	if (!p->intern) {
		free(p);
		return NULL;
	}
	hashmap__init(&p->intern->strings, string_equal, NULL);
	hashmap__init(&p->intern->mappings, mapping_equal, p);
	hashmap__init(&p->intern->functions, function_equal, p);
	hashmap__init(&p->intern->locations, location_equal, p);
	hashmap__init(&p->intern->pids, pid_equal, NULL);

	p->frequency_hz = frequency_hz;
	p->period_ns = frequency_hz ? 1000000000ull / frequency_hz : 0;
	/* A default start time; the session that records the profile sets the exact one. */
	p->time_ns = clock__ns(CLOCK_REALTIME);
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	if (p->intern) {
		hashmap__clear(&p->intern->strings);
		hashmap__clear(&p->intern->mappings);
		hashmap__clear(&p->intern->functions);
		hashmap__clear(&p->intern->locations);
		hashmap__clear(&p->intern->pids);
		pool_free(p->intern);
		free(p->intern);
	}
	free(p->mappings);
	free(p->functions);
	free(p->locations);
	free(p->samples);
	free(p);
}

uint32_t profile__add_mapping(struct profile *p, uint64_t start, uint64_t limit,
			      uint64_t file_offset, const char *filename, const char *build_id)
{
	return profile__add_file_mapping(p, start, limit, file_offset, filename, build_id, "", "");
}

uint32_t profile__add_file_mapping(struct profile *p, uint64_t start, uint64_t limit,
				   uint64_t file_offset, const char *filename, const char *build_id,
				   const char *go_build_id, const char *file_hash)
{
	struct profile_intern *in = p->intern;
	struct mapping_key k = {.start = start, .limit = limit, .file_offset = file_offset};
	struct profile_mapping *m;
	uint64_t hash;
	void *found;

	k.filename = intern_string(in, filename);
	k.build_id = intern_string(in, build_id);
	k.go_build_id = intern_string(in, go_build_id);
	k.file_hash = intern_string(in, file_hash);
	if (!k.filename || !k.build_id || !k.go_build_id || !k.file_hash)
		return 0;
	hash = mix(mix(mix(mix(hash_u64(start), limit), file_offset), (uintptr_t)k.filename),
		   (uintptr_t)k.build_id);
	hash = mix(mix(hash, (uintptr_t)k.go_build_id), (uintptr_t)k.file_hash);
	found = hashmap__find(&in->mappings, hash, &k);
	if (found)
		return entry_id(found);

	if (array__reserve_max(p->mappings, in->cap_mappings, p->n_mappings + 1, UINT32_MAX))
		return 0;
	m = &p->mappings[p->n_mappings];
	m->start = start;
	m->limit = limit;
	m->file_offset = file_offset;
	m->filename = k.filename;
	m->build_id = k.build_id;
	m->go_build_id = k.go_build_id;
	m->file_hash = k.file_hash;
	if (hashmap__insert(&in->mappings, hash, id_entry(p->n_mappings + 1)))
		return 0;
	return ++p->n_mappings;
}

uint32_t profile__add_function(struct profile *p, const char *name, const char *system_name,
			       const char *filename)
{
	return profile__add_function_at(p, name, system_name, filename, 0);
}

uint32_t profile__add_function_at(struct profile *p, const char *name, const char *system_name,
				  const char *filename, int64_t start_line)
{
	struct profile_intern *in = p->intern;
	struct function_key k;
	struct profile_function *f;
	uint64_t hash;
	void *found;

	k.name = intern_string(in, name);
	k.system_name = intern_string(in, system_name);
	k.filename = intern_string(in, filename);
	k.start_line = start_line;
	if (!k.name || !k.system_name || !k.filename)
		return 0;
	hash = mix(
	    mix(mix(hash_u64((uintptr_t)k.name), (uintptr_t)k.system_name), (uintptr_t)k.filename),
	    (uint64_t)start_line);
	found = hashmap__find(&in->functions, hash, &k);
	if (found)
		return entry_id(found);

	if (array__reserve_max(p->functions, in->cap_functions, p->n_functions + 1, UINT32_MAX))
		return 0;
	f = &p->functions[p->n_functions];
	f->name = k.name;
	f->system_name = k.system_name;
	f->filename = k.filename;
	f->start_line = start_line;
	if (hashmap__insert(&in->functions, hash, id_entry(p->n_functions + 1)))
		return 0;
	return ++p->n_functions;
}

uint32_t profile__add_location(struct profile *p, uint32_t mapping_id, uint64_t address,
			       enum profile_frame_kind kind, const struct profile_line *lines,
			       uint32_t n_lines)
{
	struct profile_intern *in = p->intern;
	struct location_key k = {
	    .mapping_id = mapping_id,
	    .address = address,
	    .kind = kind,
	    .lines = lines,
	    .n_lines = n_lines,
	};
	struct profile_location *l;
	struct profile_line *copy;
	uint64_t hash;
	void *found;

	/* Exporters index functions and mappings by these ids without checking. */
	if (!n_lines || !lines || mapping_id > p->n_mappings) {
		errno = EINVAL;
		return 0;
	}
	for (uint32_t i = 0; i < n_lines; i++) {
		if (!lines[i].function_id || lines[i].function_id > p->n_functions) {
			errno = EINVAL;
			return 0;
		}
	}

	hash = mix(mix(mix(hash_u64(mapping_id), address), (uint64_t)kind), n_lines);
	for (uint32_t i = 0; i < n_lines; i++)
		hash = mix(mix(hash, lines[i].function_id), (uint64_t)lines[i].line);
	found = hashmap__find(&in->locations, hash, &k);
	if (found)
		return entry_id(found);

	copy = pool_alloc(in, sizeof(*copy) * n_lines);
	if (!copy)
		goto enomem;
	if (n_lines) /* lines may be NULL then: memcpy(x, NULL, 0) is undefined */
		memcpy(copy, lines, sizeof(*copy) * n_lines);
	if (array__reserve_max(p->locations, in->cap_locations, p->n_locations + 1, UINT32_MAX))
		goto enomem;
	l = &p->locations[p->n_locations];
	l->mapping_id = mapping_id;
	l->address = address;
	l->kind = kind;
	l->n_lines = n_lines;
	l->lines = copy;
	if (hashmap__insert(&in->locations, hash, id_entry(p->n_locations + 1)))
		goto enomem;
	return ++p->n_locations;

enomem:
	errno = ENOMEM;
	return 0;
}

int profile__add_sample(struct profile *p, const uint32_t *location_ids, uint32_t n_locations,
			uint32_t pid, uint32_t tid, const char *comm, const char *thread_name,
			int64_t count)
{
	struct profile_intern *in = p->intern;
	struct profile_sample *s;
	const char *comm_copy, *thread_copy;
	uint32_t *ids = NULL;
	uint64_t pid_hash;
	bool new_pid;

	if (count < 0 || (n_locations && !location_ids))
		return -EINVAL;
	for (uint32_t i = 0; i < n_locations; i++)
		if (!location_ids[i] || location_ids[i] > p->n_locations)
			return -EINVAL;

	/* Everything that can fail happens before the sample becomes visible. */
	if (array__reserve_max(p->samples, in->cap_samples, p->n_samples + 1, UINT32_MAX))
		return -ENOMEM;
	if (n_locations) {
		ids = pool_alloc(in, sizeof(*ids) * n_locations);
		if (!ids)
			return -ENOMEM;
		memcpy(ids, location_ids, sizeof(*ids) * n_locations);
	}
	comm_copy = intern_string(in, comm);
	thread_copy = intern_string(in, thread_name);
	if (!comm_copy || !thread_copy)
		return -ENOMEM;
	pid_hash = hash_u64(pid);
	new_pid = !hashmap__find(&in->pids, pid_hash, &pid);
	if (new_pid && hashmap__insert(&in->pids, pid_hash, (void *)((uintptr_t)pid + 1)))
		return -ENOMEM;

	s = &p->samples[p->n_samples++];
	s->n_locations = n_locations;
	s->location_ids = ids;
	s->pid = pid;
	s->tid = tid;
	s->comm = comm_copy;
	s->thread_name = thread_copy;
	s->count = count;
	s->cpu = 0;
	s->n_timestamps = 0;
	s->timestamps = NULL;
	p->stats.samples += (uint64_t)count;
	if (new_pid)
		p->stats.processes++;
	return 0;
}

int profile__set_sample_events(struct profile *p, uint32_t cpu, const uint64_t *timestamps,
			       uint32_t n)
{
	struct profile_sample *s;
	uint64_t *copy = NULL;

	if (!p->n_samples || (n && !timestamps))
		return -EINVAL;
	s = &p->samples[p->n_samples - 1];
	if (n && (int64_t)n != s->count)
		return -EINVAL;
	if (n) {
		copy = pool_alloc(p->intern, sizeof(*copy) * n);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, timestamps, sizeof(*copy) * n);
	}
	s->cpu = cpu;
	s->timestamps = copy;
	s->n_timestamps = n;
	return 0;
}

#define FRAME_KIND_OTLP(name, value, otlp, display) [value] = otlp,
#define FRAME_KIND_NAME(name, value, otlp, display) [value] = display,
static const char *const frame_kind_otlp[PROFILE_FRAME_KIND_COUNT] = {
    OP_FRAME_KINDS(FRAME_KIND_OTLP)};
static const char *const frame_kind_name[PROFILE_FRAME_KIND_COUNT] = {
    OP_FRAME_KINDS(FRAME_KIND_NAME)};

const char *profile_frame_kind__otlp_type(enum profile_frame_kind kind)
{
	/* A value no row has yet: machine code is the one kind every stack has. */
	if ((unsigned)kind < PROFILE_FRAME_KIND_COUNT && frame_kind_otlp[kind])
		return frame_kind_otlp[kind];
	return "native";
}

const char *profile_frame_kind__name(enum profile_frame_kind kind)
{
	return (unsigned)kind < PROFILE_FRAME_KIND_COUNT ? frame_kind_name[kind] : NULL;
}

bool profile_location__unnamed(const struct profile *p, const struct profile_location *l)
{
	const struct profile_function *f;

	if (l->kind != PROFILE_FRAME_NATIVE || l->n_lines != 1 || !l->mapping_id)
		return false;
	f = profile__function(p, l->lines[0].function_id);
	return !f->system_name || !*f->system_name;
}
