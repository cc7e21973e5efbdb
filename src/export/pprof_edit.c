// SPDX-License-Identifier: Apache-2.0
#include "export/pprof_edit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "export/output_set.h"
#include "symbol/native_symbols.h"
#include "util/log.h"

/* ---- reading and writing gzip'ed (or plain) pprof -------------------------- */

/* Reads a whole gzip or plain file. *buf is malloc'd (caller frees). 0 or -errno. */
static int read_gz(const char *path, uint8_t **buf, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 20, n = 0;
	uint8_t *b = NULL;
	int err = 0;

	if (!gz)
		return errno ? -errno : -ENOMEM;
	for (;;) {
		int got;

		if (n == cap || !b) {
			uint8_t *nb;

			if (b)
				cap *= 2;
			if (cap > PPROF_EDIT_MAX_BYTES) {
				err = -EFBIG;
				break;
			}
			nb = realloc(b, cap);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			b = nb;
		}
		got = gzread(gz, b + n, (unsigned)(cap - n > (1u << 30) ? 1u << 30 : cap - n));
		if (got < 0) {
			err = -EIO;
			break;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	gzclose(gz);
	if (err) {
		free(b);
		return err;
	}
	*buf = b;
	*len = n;
	return 0;
}

struct gz_data {
	const uint8_t *data;
	size_t len;
};

/* Writes the bytes gzip'ed to fd (left open). 0 or -errno. */
static int gz_cb(int fd, void *ctx)
{
	const struct gz_data *g = ctx;
	const uint8_t *data = g->data;
	size_t len = g->len;
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0), err = 0, rc;
	gzFile gz;

	if (copy < 0)
		return -errno;
	gz = gzdopen(copy, "wb");
	if (!gz) {
		close(copy);
		return -ENOMEM;
	}
	while (len && !err) {
		unsigned part = len > (1u << 30) ? 1u << 30 : (unsigned)len;

		errno = 0;
		if (gzwrite(gz, data, part) != (int)part)
			err = errno ? -errno : -EIO;
		data += part;
		len -= part;
	}
	errno = 0;
	rc = gzclose(gz);
	if (rc != Z_OK && !err)
		err = rc == Z_ERRNO && errno ? -errno : -EIO;
	return err;
}

/*
 * Writes data gzip'ed to path through the shared output writer: the folder
 * under the output folder rules, a temporary name, then a rename. 0, or
 * -errno after one clear line.
 */
static int write_gz(const char *path, const uint8_t *data, size_t len)
{
	struct gz_data g = {data, len};
	struct output_dir d = {.fd = -1};
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	char *dir = NULL;
	int err;

	if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) {
		pr_err("cannot write %s: not a file name", path);
		return -EINVAL;
	}
	if (asprintf(&dir, "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".") < 0) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	err = output_dir__open(&d, dir, 0);
	if (!err)
		err = output_file__write(&d, name, gz_cb, &g);
	output_dir__close(&d);
	free(dir);
	return err;
}

int pprof__read_file(const char *path, pb_profile **out)
{
	uint8_t *buf = NULL;
	size_t len;
	int err = read_gz(path, &buf, &len);

	if (err)
		return err;
	*out = perftools__profiles__profile__unpack(NULL, len, buf);
	free(buf);
	return *out ? 0 : -EBADMSG;
}

int pprof__write_file(const char *path, const pb_profile *p)
{
	size_t len = perftools__profiles__profile__get_packed_size(p);
	uint8_t *buf = malloc(len ? len : 1);
	int err;

	if (!buf) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	perftools__profiles__profile__pack(p, buf);
	err = write_gz(path, buf, len);
	free(buf);
	return err;
}

const char *pprof__str_at(const pb_profile *p, int64_t i)
{
	return i > 0 && (uint64_t)i < p->n_string_table ? p->string_table[i] : "";
}

/* ---- editing the message ------------------------------------------------------ */

static bool string_equal(const void *entry, const void *key, void *ctx)
{
	const pb_profile *p = ctx;

	return !strcmp(p->string_table[(uintptr_t)entry - 1], key);
}

struct function_key {
	int64_t name, system_name, filename;
};

static bool function_equal(const void *entry, const void *key, void *ctx)
{
	const pb_profile *p = ctx;
	const Perftools__Profiles__Function *f = p->function[(uintptr_t)entry - 1];
	const struct function_key *k = key;

	return f->name == k->name && f->system_name == k->system_name && f->filename == k->filename;
}

static uint64_t function_hash(const struct function_key *k)
{
	return hash_u64((uint64_t)k->name * 0x9e3779b97f4a7c15ull ^ (uint64_t)k->system_name * 31 ^
			(uint64_t)k->filename);
}

int pprof_editor__init(struct pprof_editor *e, pb_profile *p)
{
	memset(e, 0, sizeof(*e));
	e->p = p;
	hashmap__init(&e->strings, string_equal, p);
	hashmap__init(&e->functions, function_equal, p);
	e->cap_strings = p->n_string_table;
	e->cap_functions = p->n_function;
	for (size_t i = 0; i < p->n_string_table; i++) {
		uint64_t h = hash_str(p->string_table[i], 0);

		if (!hashmap__find(&e->strings, h, p->string_table[i]) &&
		    hashmap__insert(&e->strings, h, (void *)(uintptr_t)(i + 1)))
			return -ENOMEM;
	}
	for (size_t i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];
		struct function_key k = {f->name, f->system_name, f->filename};

		if (f->id >= e->next_function_id)
			e->next_function_id = f->id + 1;
		if (!hashmap__find(&e->functions, function_hash(&k), &k) &&
		    hashmap__insert(&e->functions, function_hash(&k), (void *)(uintptr_t)(i + 1)))
			return -ENOMEM;
	}
	if (!e->next_function_id)
		e->next_function_id = 1;
	return 0;
}

void pprof_editor__clear(struct pprof_editor *e)
{
	hashmap__clear(&e->strings);
	hashmap__clear(&e->functions);
}

/* Grows *arr (n used of *cap elements of size elem) for one more: 0 or -ENOMEM. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t new_cap;
	void *mem;

	if (n < *cap)
		return 0;
	new_cap = *cap ? *cap * 2 : 16;
	mem = realloc(*arr, new_cap * elem);
	if (!mem)
		return -ENOMEM;
	*arr = mem;
	*cap = new_cap;
	return 0;
}

/* The string-table index of s (added when new). Errors are kept in e->err. */
int64_t pprof_editor__str(struct pprof_editor *e, const char *s)
{
	pb_profile *p = e->p;
	uint64_t h;
	void *found;
	char *copy;

	if (!s || !*s)
		return 0;
	h = hash_str(s, 0);
	found = hashmap__find(&e->strings, h, s);
	if (found)
		return (int64_t)(uintptr_t)found - 1;
	/* The message owns its strings: protobuf-c frees each with free(). */
	copy = strdup(s);
	if (!copy ||
	    grow((void **)&p->string_table, &e->cap_strings, p->n_string_table, sizeof(char *))) {
		free(copy);
		e->err = -ENOMEM;
		return 0;
	}
	p->string_table[p->n_string_table++] = copy;
	if (hashmap__insert(&e->strings, h, (void *)(uintptr_t)p->n_string_table))
		e->err = -ENOMEM;
	return (int64_t)p->n_string_table - 1;
}

/* The id of the function for a frame (added when new); 0 on ENOMEM. */
uint64_t pprof_editor__function(struct pprof_editor *e, const struct sym_frame *fr)
{
	pb_profile *p = e->p;
	struct function_key k;
	Perftools__Profiles__Function *f;
	void *found;

	k.name = pprof_editor__str(e, fr->name);
	k.system_name = pprof_editor__str(e, fr->system_name);
	k.filename = pprof_editor__str(e, fr->file);
	if (e->err)
		return 0;
	found = hashmap__find(&e->functions, function_hash(&k), &k);
	if (found)
		return p->function[(uintptr_t)found - 1]->id;
	f = malloc(sizeof(*f));
	if (!f || grow((void **)&p->function, &e->cap_functions, p->n_function, sizeof(f))) {
		free(f);
		e->err = -ENOMEM;
		return 0;
	}
	perftools__profiles__function__init(f);
	f->id = e->next_function_id++;
	f->name = k.name;
	f->system_name = k.system_name;
	f->filename = k.filename;
	p->function[p->n_function++] = f;
	if (hashmap__insert(&e->functions, function_hash(&k), (void *)(uintptr_t)p->n_function))
		e->err = -ENOMEM;
	return f->id;
}

/* Replaces loc's lines with frames (n >= 1). 0 or -ENOMEM (loc unchanged). */
int pprof_editor__replace_lines(struct pprof_editor *e, Perftools__Profiles__Location *loc,
				const struct sym_frame *frames, size_t n)
{
	Perftools__Profiles__Line **lines = calloc(n, sizeof(*lines));

	if (!lines)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		lines[i] = malloc(sizeof(**lines));
		if (!lines[i])
			goto enomem;
		perftools__profiles__line__init(lines[i]);
		lines[i]->function_id = pprof_editor__function(e, &frames[i]);
		lines[i]->line = frames[i].line;
		if (!lines[i]->function_id)
			goto enomem;
	}
	for (size_t i = 0; i < loc->n_line; i++)
		protobuf_c_message_free_unpacked(&loc->line[i]->base, NULL);
	free(loc->line);
	loc->line = lines;
	loc->n_line = n;
	return 0;
enomem:
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	return -ENOMEM;
}

void pprof__update_mapping_flags(pb_profile *p, Perftools__Profiles__Mapping *pm)
{
	bool all_named = true, files = false, lines = false, inl = false;

	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *loc = p->location[i];

		if (loc->mapping_id != pm->id)
			continue;
		inl |= loc->n_line > 1;
		all_named &= loc->n_line > 0;
		for (size_t j = 0; j < loc->n_line; j++) {
			lines |= loc->line[j]->line > 0;
			for (size_t f = 0; f < p->n_function; f++) {
				if (p->function[f]->id != loc->line[j]->function_id)
					continue;
				files |= p->function[f]->filename != 0;
				all_named &= p->function[f]->system_name != 0;
				break;
			}
		}
	}
	pm->has_functions = all_named;
	pm->has_filenames = files;
	pm->has_line_numbers = lines;
	pm->has_inline_frames = inl;
}
