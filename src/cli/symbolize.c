// SPDX-License-Identifier: Apache-2.0
/*
 * `omniprof symbolize IN.pb.gz --debug-dir DIR... -o OUT.pb.gz`: names the
 * frames of a pprof profile afterwards, from binaries or debug files
 * gathered elsewhere. Each mapping is matched to a file under the folders by
 * its GNU build id (Mapping.build_id) or, from the comments omniprof writes
 * ("omniprof.mapping id=N htlhash=H go_build_id=G"), by Go build id or file
 * hash; every location of a matched mapping is looked up again at its
 * address (omniprof records file-relative addresses) and gets the frames
 * found, inline frames and file:line included. Everything else in the
 * profile is kept as it was: the message is edited, not rebuilt.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "elf/elf_file.h"
#include "export/output_set.h"
#include "profile.pb-c.h"
#include "symbol/file_index.h"
#include "symbol/symbolizer.h"
#include "util/hashmap.h"
#include "util/log.h"

typedef Perftools__Profiles__Profile pb_profile;

#define MAX_INPUT_BYTES (1ull << 31)
#define MAX_MATCHES	16
#define MAPPING_COMMENT "omniprof.mapping "

struct symbolize_opts {
	struct cli_common common; /* symbols, -v */
	const char *input;
	const char *output;
};

/* What one mapping is matched with. */
struct mapping_state {
	const char *go_build_id; /* from the comments; point into the string table */
	const char *file_hash;
	struct elf_file *ef;
	struct native_symbols *ns;
	bool seen_identity;
};

/* Interning of the strings and functions added to the profile. */
struct editor {
	pb_profile *p;
	struct hashmap strings;	  /* entry: (void *)(index + 1) */
	struct hashmap functions; /* entry: (void *)(index in p->function + 1) */
	size_t cap_strings, cap_functions;
	uint64_t next_function_id;
	int err;
};

static const struct cli_option symbolize_options[] = {
    {.key = CLI_KEY_DEBUG_DIR, .help = "folder with binaries / debug files (repeatable)"},
    {.key = 'o',
     .name = "output",
     .arg = "FILE",
     .help = "where to write (default: IN with .symbolized.pb.gz)"},
    {.key = CLI_KEY_DEMANGLE, .help = "none, simplified, templates or full\n(default %s)"},
    {.key = CLI_KEY_NO_DEBUGINFOD, .help = "do not ask debuginfod servers (DEBUGINFOD_URLS)"},
    {.key = CLI_KEY_SYMBOL_CACHE_MB},
    {.key = CLI_KEY_VERBOSE, .help = "say which file names each mapping"},
};

static int symbolize_option(void *ctx, int key, const char *arg)
{
	struct symbolize_opts *o = ctx;

	if (key != 'o')
		return -EINVAL;
	o->output = arg;
	return 0;
}

static const struct cli_command symbolize_command = {
    .name = "symbolize",
    .synopsis = "IN.pb.gz --debug-dir DIR... [-o OUT.pb.gz]\n"
		"[--demangle MODE] [--no-debuginfod]\n"
		"[--symbol-cache-mb MB] [-v]",
    .intro = "Names the frames of a pprof profile from binaries or debug files found under\n"
	     "the --debug-dir folders (matched by GNU build id, Go build id or file hash).",
    .options = symbolize_options,
    .n_options = sizeof(symbolize_options) / sizeof(symbolize_options[0]),
    .own = symbolize_option,
};

static int parse_args(int argc, char **argv, struct symbolize_opts *o)
{
	int first_arg, err;

	cli_common__init(&o->common, true);
	err = cli__parse(&symbolize_command, argc, argv, &o->common, o, &first_arg);
	if (err)
		return err;
	if (first_arg != argc - 1) {
		pr_err(first_arg < argc ? "one input profile, please" : "no input profile given");
		cli__usage(&symbolize_command, stderr);
		return -EINVAL;
	}
	o->input = argv[first_arg];
	return 0;
}

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
			if (cap > MAX_INPUT_BYTES) {
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

static int editor__init(struct editor *e, pb_profile *p)
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

static void editor__clear(struct editor *e)
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
static int64_t editor__str(struct editor *e, const char *s)
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
static uint64_t editor__function(struct editor *e, const struct sym_frame *fr)
{
	pb_profile *p = e->p;
	struct function_key k;
	Perftools__Profiles__Function *f;
	void *found;

	k.name = editor__str(e, fr->name);
	k.system_name = editor__str(e, fr->system_name);
	k.filename = editor__str(e, fr->file);
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
static int replace_lines(struct editor *e, Perftools__Profiles__Location *loc,
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
		lines[i]->function_id = editor__function(e, &frames[i]);
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

/* ---- matching mappings to files ---------------------------------------------- */

static const char *str_at(const pb_profile *p, int64_t i)
{
	return i > 0 && (uint64_t)i < p->n_string_table ? p->string_table[i] : "";
}

/* Reads "omniprof.mapping id=N htlhash=H go_build_id=G" comments into st. */
static void read_mapping_comments(const pb_profile *p, struct mapping_state *st)
{
	for (size_t i = 0; i < p->n_comment; i++) {
		const char *c = str_at(p, p->comment[i]);
		char *copy, *tok, *save = NULL;
		uint64_t id = 0;
		size_t m;

		if (strncmp(c, MAPPING_COMMENT, strlen(MAPPING_COMMENT)))
			continue;
		copy = strdup(c + strlen(MAPPING_COMMENT));
		if (!copy)
			return;
		for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			if (!strncmp(tok, "id=", 3))
				id = strtoull(tok + 3, NULL, 10);
		free(copy);
		for (m = 0; m < p->n_mapping && p->mapping[m]->id != id; m++)
			;
		if (m == p->n_mapping)
			continue;
		/* Values point into the comment string itself (they run to a space or the end). */
		for (const char *v = strstr(c, " htlhash="); v; v = NULL)
			st[m].file_hash = v + strlen(" htlhash=");
		for (const char *v = strstr(c, " go_build_id="); v; v = NULL)
			st[m].go_build_id = v + strlen(" go_build_id=");
		st[m].seen_identity = true;
	}
}

/* Copies a comment value (up to a space) into buf. */
static const char *value(const char *v, char *buf, size_t len)
{
	if (!v)
		return NULL;
	snprintf(buf, len, "%.*s", (int)strcspn(v, " "), v);
	return buf;
}

/*
 * Opens the best of the files matching mapping m: the one whose symbols say
 * most (DWARF, then a symbol table or Go table). 0 or -ENOENT.
 */
static int open_best(struct symbolizer *s, const struct file_index *fi,
		     const Perftools__Profiles__Mapping *pm, const pb_profile *p,
		     struct mapping_state *st)
{
	const struct indexed_file *matches[MAX_MATCHES];
	char go[300], hash[64];
	int best_score = -1;
	size_t n;

	n = file_index__match(fi, str_at(p, pm->build_id), value(st->go_build_id, go, sizeof(go)),
			      value(st->file_hash, hash, sizeof(hash)), matches, MAX_MATCHES);
	for (size_t i = 0; i < n; i++) {
		struct native_symbols_info info;
		struct native_symbols *ns;
		struct elf_file *ef;
		int score;

		if (elf_file__open(matches[i]->path, -1, &ef))
			continue;
		if (native_symbols__open_opts(ef, &s->sym_opts, &ns)) {
			elf_file__close(ef);
			continue;
		}
		native_symbols__info(ns, &info);
		score = 4 * info.has_dwarf + 2 * info.has_gopclntab + (info.n_funcs > 0);
		if (score > best_score) {
			native_symbols__free(st->ns);
			elf_file__close(st->ef);
			st->ns = ns;
			st->ef = ef;
			best_score = score;
		} else {
			native_symbols__free(ns);
			elf_file__close(ef);
		}
	}
	return st->ns ? 0 : -ENOENT;
}

/* Kernel and pseudo mappings ("[kernel.kallsyms]", "[vdso]") have no file to match. */
static bool is_file_mapping(const pb_profile *p, const Perftools__Profiles__Mapping *m)
{
	return str_at(p, m->filename)[0] != '[';
}

static int symbolize_profile(pb_profile *p, const struct symbolize_opts *o, struct symbolizer *s,
			     const struct file_index *fi)
{
	struct mapping_state *st = calloc(p->n_mapping + 1, sizeof(*st));
	struct editor e;
	size_t named = 0, unnamed = 0, matched = 0;
	int err;

	(void)o;
	if (!st)
		return -ENOMEM;
	err = editor__init(&e, p);
	if (err)
		goto cleanup;
	read_mapping_comments(p, st);
	for (size_t m = 0; m < p->n_mapping; m++) {
		const Perftools__Profiles__Mapping *pm = p->mapping[m];

		if (!is_file_mapping(p, pm))
			continue;
		if (open_best(s, fi, pm, p, &st[m])) {
			pr_info("%s: no matching file under the --debug-dir folders",
				str_at(p, pm->filename));
			continue;
		}
		matched++;
		pr_info("%s: named from %s", str_at(p, pm->filename), st[m].ef->path);
	}
	for (size_t i = 0; i < p->n_location; i++) {
		Perftools__Profiles__Location *loc = p->location[i];
		const struct sym_frame *frames;
		struct mapping_state *ms = NULL;
		size_t n;

		for (size_t m = 0; m < p->n_mapping; m++)
			if (p->mapping[m]->id == loc->mapping_id && loc->mapping_id)
				ms = &st[m];
		if (!ms || !ms->ns)
			continue;
		n = symbolizer__native_in(s, ms->ns, loc->address, &frames);
		if (!n) {
			unnamed++;
			continue;
		}
		err = replace_lines(&e, loc, frames, n);
		if (!err)
			err = e.err;
		if (err)
			goto cleanup;
		named++;
	}
	/* The has_* flags tell the truth about what the locations now carry. */
	for (size_t m = 0; m < p->n_mapping; m++) {
		Perftools__Profiles__Mapping *pm = p->mapping[m];
		bool all_named = true, files = false, lines = false, inl = false;

		if (!st[m].ns)
			continue;
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
	fprintf(stderr,
		"omniprof symbolize: %zu of %zu mappings matched a file, %zu locations named, "
		"%zu left as they were\n",
		matched, p->n_mapping, named, unnamed);
cleanup:
	for (size_t m = 0; m < p->n_mapping; m++) {
		native_symbols__free(st[m].ns);
		elf_file__close(st[m].ef);
	}
	free(st);
	editor__clear(&e);
	return err;
}

int cmd_symbolize(int argc, char **argv)
{
	struct symbolize_opts o = {0};
	struct file_index fi = {0};
	struct symbolizer s = {0};
	pb_profile *p = NULL;
	uint8_t *in = NULL, *out = NULL;
	char *out_path = NULL;
	size_t len, out_len;
	int ret = 1, err;

	err = parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? 0 : 2;
	if (!o.common.sym.n_debug_dirs)
		pr_warn("no --debug-dir given: only /usr/lib/debug and debuginfod are searched, "
			"and only for files named by build id");
	err = read_gz(o.input, &in, &len);
	if (err) {
		pr_err("cannot read %s: %s", o.input, strerror(-err));
		goto cleanup;
	}
	p = perftools__profiles__profile__unpack(NULL, len, in);
	if (!p) {
		pr_err("%s: not a pprof profile", o.input);
		goto cleanup;
	}
	if (symbolizer__init(&s, NULL, &o.common.sym) ||
	    file_index__build(&fi, o.common.debug_dirs, o.common.sym.n_debug_dirs)) {
		pr_err("out of memory");
		goto cleanup;
	}
	err = symbolize_profile(p, &o, &s, &fi);
	if (err) {
		pr_err("symbolizing %s failed: %s", o.input, strerror(-err));
		goto cleanup;
	}
	out_len = perftools__profiles__profile__get_packed_size(p);
	out = malloc(out_len ? out_len : 1);
	if (!out) {
		pr_err("out of memory");
		goto cleanup;
	}
	perftools__profiles__profile__pack(p, out);
	if (o.output) {
		out_path = strdup(o.output);
	} else {
		size_t n = strlen(o.input);

		if (n > 6 && !strcmp(o.input + n - 6, ".pb.gz"))
			n -= 6;
		if (asprintf(&out_path, "%.*s.symbolized.pb.gz", (int)n, o.input) < 0)
			out_path = NULL;
	}
	if (!out_path) {
		pr_err("out of memory");
		goto cleanup;
	}
	if (write_gz(out_path, out, out_len))
		goto cleanup; /* write_gz said why */
	printf("wrote %s\n", out_path);
	ret = 0;
cleanup:
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	free(in);
	free(out);
	free(out_path);
	file_index__clear(&fi);
	symbolizer__clear(&s);
	return ret;
}
