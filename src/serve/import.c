// SPDX-License-Identifier: Apache-2.0
/*
 * `serve --import`: record's pprof output into the store. pprof has no
 * frame-type field, so the type comes back from what record writes: kernel
 * frames in the "[kernel.kallsyms]" mapping, interpreted frames without a
 * mapping, named after their source file's language (OTLP values of
 * omniprof/frame_kinds.h). Samples are dated at the profile's start; each
 * file is one transaction.
 */
#include "serve/ingest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile.pb-c.h"
#include "serve/server.h"
#include "serve/store.h"
#include "util/read_file.h"

#define MAX_FILE (256u << 20)

static const char *pp_str(const Perftools__Profiles__Profile *p, int64_t i)
{
	return i > 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "";
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

static const char *guess_type(const char *mapping, const char *file, bool has_mapping)
{
	if (!strncmp(mapping, "[kernel", 7))
		return "kernel";
	if (has_mapping && *mapping)
		return "native";
	if (ends_with(file, ".py"))
		return "cpython";
	if (ends_with(file, ".rb"))
		return "ruby";
	if (ends_with(file, ".php"))
		return "php";
	if (ends_with(file, ".pl") || ends_with(file, ".pm"))
		return "perl";
	if (ends_with(file, ".js") || ends_with(file, ".mjs") || ends_with(file, ".cjs"))
		return "v8js";
	if (ends_with(file, ".java"))
		return "jvm";
	return "native";
}

static const Perftools__Profiles__Mapping *find_mapping(const Perftools__Profiles__Profile *p,
							uint64_t id)
{
	for (size_t i = 0; id && i < p->n_mapping; i++)
		if (p->mapping[i]->id == id)
			return p->mapping[i];
	return NULL;
}

static const Perftools__Profiles__Function *find_function(const Perftools__Profiles__Profile *p,
							  uint64_t id)
{
	/* record numbers them 1..n in order; fall back to a scan. */
	if (id && id <= p->n_function && p->function[id - 1]->id == id)
		return p->function[id - 1];
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	return NULL;
}

static int import_profile(struct store *s, const Perftools__Profiles__Profile *p, int64_t *n)
{
	int64_t *loc_ids = NULL, *frames = NULL, ptype, res, thread;
	size_t n_frames_cap = 0;
	int64_t ts = p->time_nanos > 0 ? p->time_nanos / 1000000000 : 0;
	struct store_resource r = {.host = "", .comm = "imported"};
	int err = -ENOMEM;

	/* Location id -> store frames: record numbers locations 1..n, like functions. */
	loc_ids = calloc(p->n_location + 1, sizeof(*loc_ids));
	if (!loc_ids)
		return -ENOMEM;
	if ((err = store__begin(s)))
		goto out;
	ptype = store__ptype(s, "cpu");
	thread = store__thread(s, 0, "");
	if (ptype < 0 || thread < 0) {
		err = -EIO;
		goto rollback;
	}
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *sm = p->sample[i];
		size_t nf = 0;
		int64_t count = sm->n_value ? sm->value[0] : 0, stack, pid = 0;
		const char *comm = "imported";

		for (size_t k = 0; k < sm->n_label; k++) {
			const char *key = pp_str(p, sm->label[k]->key);

			if (!strcmp(key, "pid"))
				pid = sm->label[k]->num;
			else if (!strcmp(key, "comm") && *pp_str(p, sm->label[k]->str))
				comm = pp_str(p, sm->label[k]->str);
		}
		if (count <= 0)
			continue;
		for (size_t j = 0; j < sm->n_location_id; j++) {
			const Perftools__Profiles__Location *l = NULL;

			if (sm->location_id[j] && sm->location_id[j] <= p->n_location &&
			    p->location[sm->location_id[j] - 1]->id == sm->location_id[j])
				l = p->location[sm->location_id[j] - 1];
			for (size_t q = 0; !l && q < p->n_location; q++)
				if (p->location[q]->id == sm->location_id[j])
					l = p->location[q];
			if (!l) {
				err = -EINVAL;
				goto rollback;
			}
			for (size_t li = 0; li < (l->n_line ? l->n_line : 1); li++) {
				const Perftools__Profiles__Mapping *m =
				    find_mapping(p, l->mapping_id);
				const Perftools__Profiles__Function *fn =
				    l->n_line ? find_function(p, l->line[li]->function_id) : NULL;
				char addr[64];
				struct store_frame f = {
				    .mapping = m ? pp_str(p, m->filename) : "",
				    .build_id = m ? pp_str(p, m->build_id) : "",
				    .file = fn ? pp_str(p, fn->filename) : "",
				    .function = fn ? pp_str(p, fn->name) : "",
				    .line = l->n_line ? l->line[li]->line : 0,
				};
				int64_t id;

				if (!*f.function) {
					snprintf(addr, sizeof(addr), "0x%llx",
						 (unsigned long long)l->address);
					f.function = addr;
				}
				f.type = guess_type(f.mapping, f.file, m != NULL);
				id = store__frame(s, &f);
				if (id < 0) {
					err = (int)id;
					goto rollback;
				}
				if (nf == n_frames_cap) {
					size_t cap = n_frames_cap ? n_frames_cap * 2 : 64;
					int64_t *nb = realloc(frames, cap * sizeof(*nb));

					if (!nb) {
						err = -ENOMEM;
						goto rollback;
					}
					frames = nb;
					n_frames_cap = cap;
				}
				frames[nf++] = id;
			}
		}
		r.comm = comm;
		r.pid = pid;
		res = store__resource(s, &r);
		stack = store__stack(s, frames, nf);
		if (res < 0 || stack < 0) {
			err = -EIO;
			goto rollback;
		}
		if ((err = store__add(s, ts, ptype, res, stack, thread, -1, count)))
			goto rollback;
		*n += count;
	}
	err = store__commit(s);
	if (!err)
		goto out;
rollback:
	store__rollback(s);
out:
	free(loc_ids);
	free(frames);
	return err;
}

static int import_file(struct store *s, const char *name, int64_t *n)
{
	uint8_t *raw = NULL, *plain = NULL;
	size_t len = 0, plain_len = 0;
	Perftools__Profiles__Profile *p = NULL;
	int64_t before = *n;
	struct stat st;
	int err;

	/* Not through a symbolic link someone else may have placed. */
	if (lstat(name, &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "serve: --import %s: not a regular file\n", name);
		return -EINVAL;
	}
	err = read_file(name, (char **)&raw, &len);
	if (err) {
		fprintf(stderr, "serve: --import %s: %s\n", name, strerror(-err));
		return err;
	}
	if (len >= 2 && raw[0] == 0x1f && raw[1] == 0x8b) {
		err = serve__gunzip(raw, len, MAX_FILE, &plain, &plain_len);
		if (err) {
			fprintf(stderr, "serve: --import %s: bad gzip data\n", name);
			goto cleanup;
		}
	}
	p = perftools__profiles__profile__unpack(NULL, plain ? plain_len : len,
						 plain ? plain : raw);
	if (!p) {
		fprintf(stderr, "serve: --import %s: not a pprof profile\n", name);
		err = -EINVAL;
		goto cleanup;
	}
	err = import_profile(s, p, n);
	if (err)
		fprintf(stderr, "serve: --import %s: %s\n", name, strerror(-err));
	else
		printf("serve: imported %s (%lld samples)\n", name, (long long)(*n - before));
cleanup:
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(plain);
	return err;
}

int serve_import(struct store *s, const char *path, int64_t *n_samples)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	char sub[4096];
	int dfd, err = 0, found = 0;

	*n_samples = 0;
	if (lstat(path, &st)) {
		fprintf(stderr, "serve: --import %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode))
		return import_file(s, path, n_samples);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		err = -errno;
		fprintf(stderr, "serve: --import %s: %s\n", path, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return err;
	}
	/* A record folder holds profile.pb.gz; a folder of them, one per subfolder. */
	while ((e = readdir(d)) && !err) {
		if (e->d_name[0] == '.')
			continue;
		if (ends_with(e->d_name, ".pb.gz") || ends_with(e->d_name, ".pb")) {
			found++;
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			err = import_file(s, sub, n_samples);
		} else if (e->d_type == DT_DIR) {
			snprintf(sub, sizeof(sub), "%s/%s/profile.pb.gz", path, e->d_name);
			if (!faccessat(dfd, sub + strlen(path) + 1, R_OK, AT_SYMLINK_NOFOLLOW)) {
				found++;
				err = import_file(s, sub, n_samples);
			}
		}
	}
	closedir(d);
	if (!err && !found) {
		fprintf(stderr, "serve: --import %s: no profile.pb.gz there\n", path);
		return -ENOENT;
	}
	return err;
}
