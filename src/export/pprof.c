// SPDX-License-Identifier: Apache-2.0
/*
 * pprof exporter: struct profile -> gzip-compressed perftools.profiles.Profile.
 *
 * The profile is streamed rather than built as one message. Protobuf defines
 * the concatenation of two encodings of a message as their merge (repeated
 * fields append), so each sample, mapping, location and function is packed as
 * a Profile holding just that one element and the bytes go straight into
 * deflate. Memory stays at a few scratch arrays plus the string index however
 * many locations the profile has, and the output is still in field-number
 * order like any other pprof writer's: string_table (6) is emitted after the
 * functions (5), once every string has been interned.
 *
 * pprof__write() goes through the shared output writer (output_set.h): a
 * temporary name, fsync and a rename, so a reader never sees a half-written
 * profile and a failed write leaves nothing.
 */
#include "export/exporters.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "export/output_set.h"
#include "profile.pb-c.h"
#include "profile/profile.h"
#include "util/string_intern.h"
#include "util/utf8.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

#define SINK_CHUNK (64 * 1024)

/* ---- gzip sink: a ProtobufCBuffer that deflates into a file descriptor ---- */

struct pb_sink {
	ProtobufCBuffer base; /* first: protobuf-c hands back &base */
	int fd;
	int err; /* first failure, -errno; later appends are ignored */
	z_stream zs;
	bool zs_ready;
	/*
	 * protobuf-c appends a few bytes at a time (a tag, a varint); batching
	 * them keeps deflate's per-call overhead off the hot path.
	 */
	size_t n_in;
	uint8_t in[SINK_CHUNK];
	uint8_t out[SINK_CHUNK];
};

static void sink__write_all(struct pb_sink *s, const uint8_t *buf, size_t len)
{
	while (len && !s->err) {
		ssize_t n = write(s->fd, buf, len);

		if (n < 0) {
			if (errno != EINTR)
				s->err = -errno;
			continue;
		}
		buf += n;
		len -= (size_t)n;
	}
}

static void sink__deflate(struct pb_sink *s, const uint8_t *data, size_t len, int flush)
{
	do {
		/* avail_in is a uInt: feed huge inputs in slices. */
		uInt part = len > UINT_MAX ? UINT_MAX : (uInt)len;
		int last = part == len ? flush : Z_NO_FLUSH;

		s->zs.next_in = (Bytef *)data; /* zlib does not write through it */
		s->zs.avail_in = part;
		data += part;
		len -= part;
		for (;;) {
			int ret;

			s->zs.next_out = s->out;
			s->zs.avail_out = sizeof(s->out);
			ret = deflate(&s->zs, last);
			if (ret == Z_STREAM_ERROR) {
				s->err = -EIO;
				return;
			}
			sink__write_all(s, s->out, sizeof(s->out) - s->zs.avail_out);
			if (s->err)
				return;
			/* Z_NO_FLUSH is done once deflate left room in out[]. */
			if (last == Z_FINISH ? ret == Z_STREAM_END : s->zs.avail_out != 0)
				break;
		}
	} while (len);
}

static void sink__append(ProtobufCBuffer *buf, size_t len, const uint8_t *data)
{
	struct pb_sink *s = (struct pb_sink *)buf;

	if (s->err)
		return;
	if (s->n_in + len > sizeof(s->in)) {
		sink__deflate(s, s->in, s->n_in, Z_NO_FLUSH);
		s->n_in = 0;
	}
	if (len >= sizeof(s->in)) {
		sink__deflate(s, data, len, Z_NO_FLUSH);
		return;
	}
	memcpy(s->in + s->n_in, data, len);
	s->n_in += len;
}

/* Returns a sink ready for its fd (free with sink__free()), or NULL on ENOMEM. */
static struct pb_sink *sink__new(void)
{
	struct pb_sink *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->base.append = sink__append;
	s->fd = -1;
	/* windowBits 15 + 16 selects the gzip wrapper that pprof expects. */
	if (deflateInit2(&s->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(s);
		return NULL;
	}
	s->zs_ready = true;
	return s;
}

/* Compresses what is buffered and writes the gzip trailer: 0 or -errno. */
static int sink__finish(struct pb_sink *s)
{
	if (!s->err)
		sink__deflate(s, s->in, s->n_in, Z_FINISH);
	s->n_in = 0;
	return s->err;
}

static void sink__free(struct pb_sink *s)
{
	if (!s)
		return;
	if (s->zs_ready)
		deflateEnd(&s->zs);
	free(s);
}

/* ---- the writer ---- */

/* Per-mapping symbolization facts, gathered before the mappings are written. */
#define MAP_HAS_FILENAMES    0x1
#define MAP_HAS_LINE_NUMBERS 0x2
#define MAP_HAS_INLINE	     0x4
#define MAP_UNNAMED	     0x8 /* a native location nothing could name */

#define FN_USED	   0x1
#define FN_RUNTIME 0x2

struct pprof_writer {
	const struct profile *p;
	unsigned int flags; /* PPROF_* */
	struct pb_sink *sink;
	int err; /* first failure to intern a string (-ENOMEM), reported by emit */
	/* Index 0 is ""; borrowed: profile strings, literals, the trailer's comment. */
	struct string_intern strings;
	struct string_intern owned; /* copies of the strings made here (labels' numbers) */
	uint8_t *map_flags;	    /* n_mappings entries */
	/* n_functions entries: FN_USED (some written line names it), FN_RUNTIME
	 * (a runtime's frame: its name is no symbol). */
	uint8_t *fn_used;
	/* The mapping identity comments (see writer__mapping_comments), owned. */
	char **comments;
	int64_t *comment_idx;
	size_t n_comments;

	/* Scratch reused across elements, sized to the largest seen. */
	uint64_t *loc_ids;
	size_t loc_ids_cap;
	pb_line *lines;
	pb_line **line_ptrs;
	size_t lines_cap;
};

/*
 * Packs one record (a Profile carrying one element) into the sink: 0 or
 * -errno, including an interning failure while the record was filled in.
 */
static int writer__emit(struct pprof_writer *w, const pb_profile *rec)
{
	if (w->err)
		return w->err;
	protobuf_c_message_pack_to_buffer(&rec->base, &w->sink->base);
	return w->sink->err;
}

/*
 * s's string-table index. On ENOMEM it returns 0 and leaves the error for the
 * next writer__emit(), so filling in a message needs no check per field.
 */
static int64_t writer__str(struct pprof_writer *w, const char *s)
{
	int64_t i;

	/* Names from other processes' files and paths are any bytes; the format's
	 * strings are UTF-8 (Pyroscope refuses the whole profile otherwise): an
	 * invalid byte becomes U+FFFD, in a copy. */
	if (s && !utf8__valid(s)) {
		char *clean = utf8__sanitize(s);

		i = clean ? string_intern__add(&w->owned, clean) : -ENOMEM;
		free(clean);
		if (i < 0) {
			if (!w->err)
				w->err = (int)i;
			return 0;
		}
		s = string_intern__at(&w->owned, (size_t)i);
	}
	i = string_intern__add(&w->strings, s);

	if (i < 0) {
		if (!w->err)
			w->err = (int)i;
		return 0;
	}
	return i;
}

/* writer__str() of a copy of s (for a string in a scratch buffer). */
static int64_t writer__str_copy(struct pprof_writer *w, const char *s)
{
	int64_t i = string_intern__add(&w->owned, s);

	if (i < 0) {
		if (!w->err)
			w->err = (int)i;
		return 0;
	}
	return writer__str(w, string_intern__at(&w->owned, (size_t)i));
}

/*
 * Checks every id the locations hold and notes what symbol information each
 * mapping's locations carry, so the has_* flags tell viewers the truth about
 * whether re-symbolizing could add anything.
 */
static int writer__scan_locations(struct pprof_writer *w)
{
	const struct profile *p = w->p;

	for (size_t i = 0; i < p->n_locations; i++) {
		const struct profile_location *loc = &p->locations[i];
		uint8_t flags = 0;

		if (loc->mapping_id > p->n_mappings || (loc->n_lines && !loc->lines))
			return -EINVAL;
		if (loc->n_lines > 1)
			flags |= MAP_HAS_INLINE;
		for (uint32_t j = 0; j < loc->n_lines; j++) {
			uint32_t fid = loc->lines[j].function_id;

			if (!fid || fid > p->n_functions)
				return -EINVAL;
			if (loc->lines[j].line > 0)
				flags |= MAP_HAS_LINE_NUMBERS;
			if (p->functions[fid - 1].filename && *p->functions[fid - 1].filename)
				flags |= MAP_HAS_FILENAMES;
			if (loc->kind == PROFILE_FRAME_NATIVE &&
			    !(p->functions[fid - 1].system_name &&
			      *p->functions[fid - 1].system_name))
				flags |= MAP_UNNAMED;
		}
		if (loc->mapping_id)
			w->map_flags[loc->mapping_id - 1] |= flags;
		if (!profile_location__unnamed(p, loc))
			for (uint32_t j = 0; j < loc->n_lines; j++)
				w->fn_used[loc->lines[j].function_id - 1] |=
				    FN_USED |
				    (profile_frame_kind__is_runtime(loc->kind) ? FN_RUNTIME : 0);
	}
	return 0;
}

static int writer__header(struct pprof_writer *w, int64_t *cpu_idx)
{
	pb_value_type types[2] = {PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
				  PERFTOOLS__PROFILES__VALUE_TYPE__INIT};
	pb_value_type *type_ptrs[2] = {&types[0], &types[1]};
	pb_profile rec = PERFTOOLS__PROFILES__PROFILE__INIT;

	/* Off-CPU: one value, the time off CPU (as the reference agent's off_cpu profile). */
	if (w->p->off_cpu) {
		types[0].type = writer__str(w, "off_cpu");
		types[0].unit = writer__str(w, "nanoseconds");
		*cpu_idx = types[0].type;
		rec.n_sample_type = 1;
		rec.sample_type = type_ptrs;
		return writer__emit(w, &rec);
	}
	types[0].type = writer__str(w, "samples");
	types[0].unit = writer__str(w, "count");
	types[1].type = writer__str(w, "cpu");
	types[1].unit = writer__str(w, "nanoseconds");
	*cpu_idx = types[1].type;
	rec.n_sample_type = 2;
	rec.sample_type = type_ptrs;
	return writer__emit(w, &rec);
}

/* Returns count * period, saturated: a wrapped total would be a wrong profile. */
static int64_t cpu_ns(int64_t count, uint64_t period_ns)
{
	int64_t v;

	if (period_ns > INT64_MAX || __builtin_mul_overflow(count, (int64_t)period_ns, &v))
		return count < 0 ? INT64_MIN : INT64_MAX;
	return v;
}

static int writer__samples(struct pprof_writer *w)
{
	const struct profile *p = w->p;
	pb_label labels[4] = {PERFTOOLS__PROFILES__LABEL__INIT, PERFTOOLS__PROFILES__LABEL__INIT,
			      PERFTOOLS__PROFILES__LABEL__INIT, PERFTOOLS__PROFILES__LABEL__INIT};
	pb_label *label_ptrs[4] = {&labels[0], &labels[1], &labels[2], &labels[3]};
	pb_sample sample = PERFTOOLS__PROFILES__SAMPLE__INIT;
	pb_sample *sample_ptr = &sample;
	pb_profile rec = PERFTOOLS__PROFILES__PROFILE__INIT;
	int64_t values[2];
	int err;

	labels[0].key = writer__str(w, "pid");
	labels[1].key = writer__str(w, "tid");
	labels[2].key = writer__str(w, "comm");
	labels[3].key = writer__str(w, "thread_name");

	sample.value = values;
	sample.n_value = p->off_cpu ? 1 : 2;
	sample.label = label_ptrs;
	sample.n_label = 4;
	rec.sample = &sample_ptr;
	rec.n_sample = 1;
	for (size_t i = 0; i < p->n_samples; i++) {
		const struct profile_sample *s = &p->samples[i];

		if (s->n_locations > w->loc_ids_cap) {
			uint64_t *ids = realloc(w->loc_ids, s->n_locations * sizeof(*ids));

			if (!ids)
				return -ENOMEM;
			w->loc_ids = ids;
			w->loc_ids_cap = s->n_locations;
		}
		for (uint32_t j = 0; j < s->n_locations; j++) {
			uint32_t id = s->location_ids[j];

			if (!id || id > p->n_locations)
				return -EINVAL;
			w->loc_ids[j] = id;
		}
		sample.location_id = w->loc_ids;
		sample.n_location_id = s->n_locations;
		values[0] = s->count;
		values[1] = cpu_ns(s->count, p->period_ns);
		if (w->flags & PPROF_STRING_LABELS) {
			char pid[16], tid[16];

			snprintf(pid, sizeof(pid), "%u", s->pid);
			snprintf(tid, sizeof(tid), "%u", s->tid);
			/* Interned copies: the table outlives these buffers. */
			labels[0].str = writer__str_copy(w, pid);
			labels[1].str = writer__str_copy(w, tid);
		} else {
			labels[0].num = s->pid;
			labels[1].num = s->tid;
		}
		/* An empty name has index 0, which readers take as "no label". */
		labels[2].str = writer__str(w, s->comm);
		labels[3].str = writer__str(w, s->thread_name);
		err = writer__emit(w, &rec);
		if (err)
			return err;
	}
	return 0;
}

/* A shared library's file name ("libc.so.6", "ld-linux-x86-64.so.2", "x.so"). */
static bool is_library(const char *file)
{
	const char *base = strrchr(file, '/'), *so;

	base = base ? base + 1 : file;
	for (so = strstr(base, ".so"); so; so = strstr(so + 1, ".so"))
		if (so[3] == '\0' || so[3] == '.')
			return true;
	return false;
}

/*
 * The index of the main binary's mapping: pprof names a profile after its
 * first mapping (the `File:` line), so it goes first. The program file most
 * samples (by count) ran in, its outermost frame of a file that is no
 * shared library: the program, not libc's thread start or the library the
 * leaves were in. With no such frame, the outermost file's.
 */
static size_t main_mapping(const struct profile *p)
{
	uint64_t *weight = calloc(p->n_mappings ? p->n_mappings : 1, sizeof(*weight));
	size_t best = 0;

	if (!weight)
		return 0; /* only the header's name is at stake */
	for (size_t i = 0; i < p->n_samples; i++) {
		const struct profile_sample *s = &p->samples[i];
		uint32_t lib = 0; /* the outermost library's mapping id, if no program comes */

		for (uint32_t j = s->n_locations; j-- > 0;) {
			uint32_t id = s->location_ids[j];
			const struct profile_location *l;
			const char *file;

			if (!id || id > p->n_locations)
				break; /* writer__samples reports it */
			l = profile__location(p, id);
			if (!l->mapping_id || l->mapping_id > p->n_mappings)
				continue;
			file = p->mappings[l->mapping_id - 1].filename;
			if (!file || !*file || file[0] == '[')
				continue;
			if (is_library(file)) {
				if (!lib)
					lib = l->mapping_id;
				continue;
			}
			lib = l->mapping_id; /* the program */
			break;
		}
		if (lib)
			weight[lib - 1] += s->count > 0 ? (uint64_t)s->count : 0;
	}
	for (size_t i = 1; i < p->n_mappings; i++)
		if (weight[i] > weight[best])
			best = i;
	free(weight);
	return best;
}

static int writer__mappings(struct pprof_writer *w)
{
	const struct profile *p = w->p;
	pb_mapping m;
	pb_mapping *m_ptr = &m;
	pb_profile rec = PERFTOOLS__PROFILES__PROFILE__INIT;
	size_t first = main_mapping(p);
	int err;

	rec.mapping = &m_ptr;
	rec.n_mapping = 1;
	/* Ids stay the model's; only the order changes: the main binary, then the rest. */
	for (size_t k = 0; k < p->n_mappings; k++) {
		size_t i = !k ? first : k <= first ? k - 1 : k;
		const struct profile_mapping *pm = &p->mappings[i];
		uint8_t flags = w->map_flags[i];

		perftools__profiles__mapping__init(&m);
		m.id = i + 1;
		m.memory_start = pm->start;
		m.memory_limit = pm->limit;
		m.file_offset = pm->file_offset;
		/* False when some frame stayed "file+0xOFFSET": naming it later could help. */
		m.has_functions = !(flags & MAP_UNNAMED);
		m.has_filenames = !!(flags & MAP_HAS_FILENAMES);
		m.has_line_numbers = !!(flags & MAP_HAS_LINE_NUMBERS);
		m.has_inline_frames = !!(flags & MAP_HAS_INLINE);
		m.filename = writer__str(w, pm->filename);
		m.build_id = writer__str(w, pm->build_id);
		err = writer__emit(w, &rec);
		if (err)
			return err;
	}
	return 0;
}

static int writer__locations(struct pprof_writer *w)
{
	const struct profile *p = w->p;
	pb_location loc = PERFTOOLS__PROFILES__LOCATION__INIT;
	pb_location *loc_ptr = &loc;
	pb_profile rec = PERFTOOLS__PROFILES__PROFILE__INIT;
	int err;

	rec.location = &loc_ptr;
	rec.n_location = 1;
	for (size_t i = 0; i < p->n_locations; i++) {
		const struct profile_location *pl = &p->locations[i];

		if (pl->n_lines > w->lines_cap) {
			size_t cap = pl->n_lines;
			pb_line *lines = realloc(w->lines, cap * sizeof(*lines));
			pb_line **ptrs;

			if (!lines)
				return -ENOMEM;
			w->lines = lines;
			ptrs = realloc(w->line_ptrs, cap * sizeof(*ptrs));
			if (!ptrs)
				return -ENOMEM;
			w->line_ptrs = ptrs;
			w->lines_cap = cap;
		}
		/* The model's order (innermost first) is pprof's order too. */
		for (uint32_t j = 0; j < pl->n_lines; j++) {
			perftools__profiles__line__init(&w->lines[j]);
			w->lines[j].function_id = pl->lines[j].function_id;
			w->lines[j].line = pl->lines[j].line;
			w->line_ptrs[j] = &w->lines[j];
		}
		loc.id = i + 1;
		loc.mapping_id = pl->mapping_id;
		loc.address = pl->address;
		loc.line = w->line_ptrs;
		/* Unnamed: mapping and address only, for a symbolizer to name later. */
		loc.n_line = profile_location__unnamed(p, pl) ? 0 : pl->n_lines;
		err = writer__emit(w, &rec);
		if (err)
			return err;
	}
	return 0;
}

static int writer__functions(struct pprof_writer *w)
{
	const struct profile *p = w->p;
	pb_function fn;
	pb_function *fn_ptr = &fn;
	pb_profile rec = PERFTOOLS__PROFILES__PROFILE__INIT;
	int err;

	rec.function = &fn_ptr;
	rec.n_function = 1;
	for (size_t i = 0; i < p->n_functions; i++) {
		const struct profile_function *pf = &p->functions[i];

		if (!w->fn_used[i])
			continue; /* only an unnamed frame's "file+0xOFFSET" */
		perftools__profiles__function__init(&fn);
		fn.id = i + 1;
		fn.name = writer__str(w, pf->name);
		/*
		 * A runtime's function has no system name: pprof demangles a
		 * name equal to its system name and strips "<module>",
		 * "<lambda>" or "<listcomp>" to nothing on the way.
		 */
		fn.system_name = writer__str(w, w->fn_used[i] & FN_RUNTIME ? "" : pf->system_name);
		fn.filename = writer__str(w, pf->filename);
		fn.start_line = pf->start_line;
		err = writer__emit(w, &rec);
		if (err)
			return err;
	}
	return 0;
}

/*
 * pprof's Mapping has one build_id field (the GNU build id goes there, as
 * every pprof tool expects) and no attributes. A file without a GNU build id
 * needs its other identities to be found again later, so it gets one profile
 * comment (one per file, whatever its mappings):
 *   "omniprof.file htlhash=<32 hex> go_build_id=<id> path=<mapping file name>"
 * (a key left out when unknown; the path last, it may hold spaces). Keyed by
 * the file name, not a mapping id: `go tool pprof -proto` renumbers mappings
 * but keeps their file names and the comments. `omniprof symbolize` reads
 * them back (pprof_file_ids__read()); files with a build id add no line to
 * the header viewers show.
 */
static int writer__mapping_comments(struct pprof_writer *w)
{
	const struct profile *p = w->p;

	w->comments = calloc(p->n_mappings + 1, sizeof(*w->comments));
	w->comment_idx = calloc(p->n_mappings + 1, sizeof(*w->comment_idx));
	if (!w->comments || !w->comment_idx)
		return -ENOMEM;
	w->n_comments = 1; /* [0] is the trailer's "omniprof, N Hz" */
	for (size_t i = 0; i < p->n_mappings; i++) {
		const struct profile_mapping *m = &p->mappings[i];
		bool hash = m->file_hash && *m->file_hash, go = m->go_build_id && *m->go_build_id;
		bool seen = false;
		char *c;

		if ((!hash && !go) || (m->build_id && *m->build_id) || !m->filename ||
		    !*m->filename || m->filename[0] == '[')
			continue;
		/* The profile interns its strings: one file name is one pointer. */
		for (size_t j = 0; j < i && !seen; j++)
			seen = p->mappings[j].filename == m->filename &&
			       !(p->mappings[j].build_id && *p->mappings[j].build_id) &&
			       p->mappings[j].file_hash == m->file_hash &&
			       p->mappings[j].go_build_id == m->go_build_id;
		if (seen)
			continue;
		if (asprintf(&c, PPROF_FILE_COMMENT "%s%s%s%s path=%s", hash ? " htlhash=" : "",
			     hash ? m->file_hash : "", go ? " go_build_id=" : "",
			     go ? m->go_build_id : "", m->filename) < 0)
			return -ENOMEM;
		w->comments[w->n_comments] = c;
		w->comment_idx[w->n_comments++] = writer__str(w, c);
	}
	return 0;
}

/* The scalar fields and the string table, which must come after every intern. */
static int writer__trailer(struct pprof_writer *w, int64_t cpu_idx)
{
	const struct profile *p = w->p;
	pb_value_type period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	pb_profile rec = PERFTOOLS__PROFILES__PROFILE__INIT;
	char comment[64];
	int err;

	/* The table borrows comment: it must outlive the writer__emit() below. */
	snprintf(comment, sizeof(comment), "omniprof, %u Hz", p->frequency_hz);
	err = writer__mapping_comments(w);
	if (err)
		return err;
	w->comment_idx[0] = writer__str(w, comment);
	period_type.type = writer__str(w, p->off_cpu ? "off_cpu" : "cpu");
	period_type.unit = writer__str(w, "nanoseconds");

	/* protobuf-c's repeated string field is char **, but it only reads. */
	rec.string_table = (char **)string_intern__strings(&w->strings);
	rec.n_string_table = string_intern__count(&w->strings);
	rec.time_nanos = p->time_ns > INT64_MAX ? INT64_MAX : (int64_t)p->time_ns;
	rec.duration_nanos = p->duration_ns > INT64_MAX ? INT64_MAX : (int64_t)p->duration_ns;
	rec.period_type = &period_type;
	rec.period = p->off_cpu ? 1 : p->period_ns > INT64_MAX ? INT64_MAX : (int64_t)p->period_ns;
	rec.comment = w->comment_idx;
	rec.n_comment = w->n_comments;
	rec.default_sample_type = cpu_idx;
	return writer__emit(w, &rec);
}

/* Every record in field-number order, then the gzip trailer: 0 or -errno. */
static int writer__write(struct pprof_writer *w)
{
	int64_t cpu_idx;
	int err;

	err = writer__header(w, &cpu_idx);
	if (err)
		return err;
	err = writer__samples(w);
	if (err)
		return err;
	err = writer__mappings(w);
	if (err)
		return err;
	err = writer__locations(w);
	if (err)
		return err;
	err = writer__functions(w);
	if (err)
		return err;
	err = writer__trailer(w, cpu_idx);
	if (err)
		return err;
	return sink__finish(w->sink);
}

static void writer__free(struct pprof_writer *w)
{
	sink__free(w->sink);
	string_intern__free(&w->strings);
	string_intern__free(&w->owned);
	free(w->map_flags);
	free(w->fn_used);
	for (size_t i = 0; i < w->n_comments; i++)
		free(w->comments[i]);
	free(w->comments);
	free(w->comment_idx);
	free(w->loc_ids);
	free(w->lines);
	free(w->line_ptrs);
}

static int write_fd_cb(int fd, void *ctx)
{
	return pprof__write_fd(ctx, fd);
}

int pprof__write(const struct profile *p, const char *path)
{
	struct output_dir d = {.fd = -1};
	const char *slash, *name;
	char *dir = NULL;
	int err;

	if (!p || !path || !*path)
		return -EINVAL;
	slash = strrchr(path, '/');
	name = slash ? slash + 1 : path;
	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	if (asprintf(&dir, "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".") < 0)
		return -ENOMEM;
	/* The one writer of output files: folder rules, temporary name, rename. */
	err = output_dir__open(&d, dir, 0);
	if (!err)
		err = output_file__write(&d, name, write_fd_cb, (void *)p);
	output_dir__close(&d);
	free(dir);
	return err;
}

int pprof__write_fd(const struct profile *p, int fd)
{
	return pprof__write_fd_flags(p, fd, 0);
}

int pprof__write_fd_flags(const struct profile *p, int fd, unsigned int flags)
{
	struct pprof_writer w = {.p = p, .flags = flags};
	int err;

	if (!p || fd < 0)
		return -EINVAL;
	err = string_intern__init(&w.strings, STRING_INTERN_EMPTY_ZERO);
	if (!err)
		err = string_intern__init(&w.owned, STRING_INTERN_COPY);
	if (err)
		goto cleanup;
	w.sink = sink__new();
	w.map_flags = calloc(p->n_mappings ? p->n_mappings : 1, 1);
	w.fn_used = calloc(p->n_functions ? p->n_functions : 1, 1);
	if (!w.sink || !w.map_flags || !w.fn_used) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = writer__scan_locations(&w);
	if (err)
		goto cleanup;
	w.sink->fd = fd;
	err = writer__write(&w);
cleanup:
	writer__free(&w);
	return err;
}
