// SPDX-License-Identifier: Apache-2.0
/*
 * Each group's pprof holds that group's samples and only the mappings,
 * functions, locations and strings they use, renumbered. What Pyroscope's
 * ingest validation keeps decides the rest: a service name of letters,
 * digits and `_ . - /`, no `__`-prefixed labels but `__session_id__` (the
 * container id goes as container_id), and only string-valued sample labels
 * (pid and tid are written as decimal strings).
 */
#include "export/pyroscope.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "export/exporters.h"
#include "profile/profile.h"

struct group {
	char service[128];
	char container[80];
	size_t *samples; /* indices into p->samples */
	size_t n;
};

/*
 * Pyroscope refuses a push (HTTP 400) whose service name holds anything but
 * letters, digits and `_ . - /`, so every other character becomes '_'. Label
 * values go through the same filter: container ids and sanitized names are
 * within it anyway.
 */
static void sanitize(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	for (; src && *src && n + 1 < size; src++) {
		char c = *src;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == '/';

		dst[n++] = ok ? c : '_';
	}
	dst[n] = '\0';
	if (!n)
		snprintf(dst, size, "unspecified");
}

/* Old id -> new id tables of subset() (0: not added yet). */
struct subset_ids {
	uint32_t *mappings, *functions, *locations;
};

/* The id in s of p's location id (added with its mapping and functions), 0 on ENOMEM. */
static uint32_t subset_location(struct profile *s, const struct profile *p, struct subset_ids *ids,
				uint32_t id)
{
	const struct profile_location *l = profile__location(p, id);
	struct profile_line lines[64], *heap = NULL, *use = lines;
	uint32_t mapping = 0, out = 0;

	if (ids->locations[id - 1])
		return ids->locations[id - 1];
	if (l->mapping_id) {
		const struct profile_mapping *m = &p->mappings[l->mapping_id - 1];

		if (!ids->mappings[l->mapping_id - 1])
			ids->mappings[l->mapping_id - 1] = profile__add_file_mapping(
			    s, m->start, m->limit, m->file_offset, m->filename, m->build_id,
			    m->go_build_id, m->file_hash);
		mapping = ids->mappings[l->mapping_id - 1];
		if (!mapping)
			return 0;
	}
	if (l->n_lines > sizeof(lines) / sizeof(lines[0])) {
		heap = calloc(l->n_lines, sizeof(*heap));
		if (!heap)
			return 0;
		use = heap;
	}
	for (uint32_t j = 0; j < l->n_lines; j++) {
		uint32_t fid = l->lines[j].function_id;
		const struct profile_function *f = profile__function(p, fid);

		if (!ids->functions[fid - 1])
			ids->functions[fid - 1] = profile__add_function_at(
			    s, f->name, f->system_name, f->filename, f->start_line);
		use[j].function_id = ids->functions[fid - 1];
		use[j].line = l->lines[j].line;
		if (!use[j].function_id)
			goto cleanup;
	}
	out = profile__add_location(s, mapping, l->address, l->kind, use, l->n_lines);
	ids->locations[id - 1] = out;
cleanup:
	free(heap);
	return out;
}

/*
 * A copy of p with only samples idx[0..n) and the mappings, functions,
 * locations and strings they use (a push carries only its own tables). NULL
 * on error.
 */
static struct profile *subset(const struct profile *p, const size_t *idx, size_t n)
{
	struct profile *s = profile__new(p->frequency_hz);
	struct subset_ids ids = {
	    .mappings = calloc(p->n_mappings + 1, sizeof(uint32_t)),
	    .functions = calloc(p->n_functions + 1, sizeof(uint32_t)),
	    .locations = calloc(p->n_locations + 1, sizeof(uint32_t)),
	};
	uint32_t stack_buf[256], *stack = NULL;

	if (!s || !ids.mappings || !ids.functions || !ids.locations)
		goto fail;
	s->time_ns = p->time_ns;
	s->off_cpu = p->off_cpu;
	s->duration_ns = p->duration_ns;
	for (size_t k = 0; k < n; k++) {
		const struct profile_sample *ps = &p->samples[idx[k]];
		uint32_t *use = stack_buf;

		if (ps->n_locations > sizeof(stack_buf) / sizeof(stack_buf[0])) {
			free(stack);
			stack = calloc(ps->n_locations, sizeof(*stack));
			if (!stack)
				goto fail;
			use = stack;
		}
		for (uint32_t j = 0; j < ps->n_locations; j++) {
			use[j] = subset_location(s, p, &ids, ps->location_ids[j]);
			if (!use[j])
				goto fail;
		}
		if (profile__add_sample(s, use, ps->n_locations, ps->pid, ps->tid, ps->comm,
					ps->thread_name, ps->count))
			goto fail;
	}
	free(stack);
	free(ids.mappings);
	free(ids.functions);
	free(ids.locations);
	return s;
fail:
	free(stack);
	free(ids.mappings);
	free(ids.functions);
	free(ids.locations);
	profile__free(s);
	return NULL;
}

/* pprof bytes of p (gzip'ed, as pprof files are). 0 with *buf (malloc'ed) and *len, or -errno. */
static int pprof_bytes(const struct profile *p, uint8_t **buf, size_t *len)
{
	int fd = memfd_create("omniprof-pprof", MFD_CLOEXEC);
	off_t size;
	uint8_t *out = NULL;
	int err;

	if (fd < 0)
		return -errno;
	err = pprof__write_fd_flags(p, fd, PPROF_STRING_LABELS);
	if (err)
		goto cleanup;
	size = lseek(fd, 0, SEEK_END);
	out = malloc(size > 0 ? (size_t)size : 1);
	if (size < 0 || !out) {
		err = size < 0 ? -errno : -ENOMEM;
		goto cleanup;
	}
	if (pread(fd, out, (size_t)size, 0) != size) {
		err = -EIO;
		goto cleanup;
	}
	*buf = out;
	*len = (size_t)size;
	out = NULL;
cleanup:
	free(out);
	close(fd);
	return err;
}

/* Percent-encodes s for a query string into dst. */
static void url_encode(char *dst, size_t size, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *s && n + 4 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~') {
			dst[n++] = (char)c;
		} else {
			dst[n++] = '%';
			dst[n++] = hex[c >> 4];
			dst[n++] = hex[c & 15];
		}
	}
	dst[n] = '\0';
}

static struct group *find_group(struct group *groups, size_t n, const char *service,
				const char *container)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(groups[i].service, service) && !strcmp(groups[i].container, container))
			return &groups[i];
	return NULL;
}

struct export_batch *pyroscope__batch(const struct profile *p, const char *base_url,
				      otlp_resource_fn describe, void *ctx)
{
	struct export_batch *b = NULL;
	struct group *groups = NULL;
	size_t n_groups = 0;
	uint64_t from_s = p->time_ns / 1000000000ull;
	uint64_t until_s = (p->time_ns + p->duration_ns + 999999999ull) / 1000000000ull;
	int err = -ENOMEM;

	groups = calloc(p->n_samples ? p->n_samples : 1, sizeof(*groups));
	if (!groups)
		goto cleanup;
	for (size_t i = 0; i < p->n_samples; i++) {
		const struct profile_sample *s = &p->samples[i];
		struct otlp_resource r = {0};
		char service[128], container[80];
		struct group *g;
		size_t *more;

		if (!describe || describe(ctx, s->pid, s->comm, &r))
			r.service_name = s->comm;
		sanitize(service, sizeof(service), r.service_name);
		sanitize(container, sizeof(container), r.container_id ? r.container_id : "");
		if (!r.container_id || !*r.container_id)
			container[0] = '\0';
		g = find_group(groups, n_groups, service, container);
		if (!g) {
			g = &groups[n_groups++];
			memcpy(g->service, service, sizeof(service));
			memcpy(g->container, container, sizeof(container));
		}
		more = realloc(g->samples, (g->n + 1) * sizeof(*more));
		if (!more)
			goto cleanup;
		g->samples = more;
		g->samples[g->n++] = i;
	}

	b = export_batch__new(n_groups);
	if (!b)
		goto cleanup;
	for (size_t i = 0; i < n_groups; i++) {
		struct export_request *r = &b->requests[i];
		struct profile *sub = subset(p, groups[i].samples, groups[i].n);
		char name[512], name_enc[1600];

		if (!sub)
			goto cleanup;
		err = pprof_bytes(sub, &r->body, &r->len);
		profile__free(sub);
		if (err)
			goto cleanup;
		if (groups[i].container[0])
			snprintf(name, sizeof(name), "%s{service_name=%s,container_id=%s}",
				 groups[i].service, groups[i].service, groups[i].container);
		else
			snprintf(name, sizeof(name), "%s{service_name=%s}", groups[i].service,
				 groups[i].service);
		url_encode(name_enc, sizeof(name_enc), name);
		/* Off-CPU: the pprof's off_cpu/nanoseconds type is its own profile type
		 * there; a sample rate would read its values as CPU samples. */
		if ((p->off_cpu ? asprintf(&r->url,
					   "%s/ingest?name=%s&from=%llu&until=%llu"
					   "&spyName=omniprof&format=pprof",
					   base_url, name_enc, (unsigned long long)from_s,
					   (unsigned long long)until_s)
				: asprintf(&r->url,
					   "%s/ingest?name=%s&from=%llu&until=%llu&sampleRate=%u"
					   "&spyName=omniprof&format=pprof",
					   base_url, name_enc, (unsigned long long)from_s,
					   (unsigned long long)until_s, p->frequency_hz)) < 0) {
			r->url = NULL;
			err = -ENOMEM;
			goto cleanup;
		}
		r->content_type = "application/octet-stream";
	}
	err = 0;
cleanup:
	for (size_t i = 0; i < n_groups; i++)
		free(groups[i].samples);
	free(groups);
	if (err) {
		export_batch__free(b);
		errno = -err;
		return NULL;
	}
	return b;
}
