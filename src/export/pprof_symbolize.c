// SPDX-License-Identifier: Apache-2.0
/*
 * Naming the frames of a pprof profile afterwards, from binaries or debug
 * files gathered elsewhere. Each mapping is matched to a file by its GNU
 * build id (Mapping.build_id) or, from the comments omniprof writes for
 * files without one ("omniprof.file htlhash=H go_build_id=G path=P", keyed
 * by the mapping's file name so that `go tool pprof -proto`'s renumbering
 * keeps them right), by Go build id or file hash. Profiles of older
 * versions carry "omniprof.mapping id=N ..." comments, read as well. Every
 * location of a matched mapping is looked up again at its
 * address (omniprof records file-relative addresses) and gets the frames
 * found, inline frames and file:line included.
 */
#include "export/pprof_symbolize.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_file.h"
#include "export/exporters.h"
#include "export/pprof_edit.h"
#include "symbol/file_index.h"
#include "symbol/native_symbols.h"
#include "symbol/symbolizer.h"
#include "util/log.h"

#define MAX_MATCHES	16
#define MAPPING_COMMENT "omniprof.mapping "

/* What one mapping is matched with. */
struct mapping_state {
	const char *go_build_id; /* from the comments; point into the string table */
	const char *file_hash;
	struct elf_file *ef;
	struct native_symbols *ns;
	bool seen_identity;
};

/* Reads an older version's "omniprof.mapping id=N htlhash=H go_build_id=G" comments into st. */
static void read_mapping_comments(const pb_profile *p, struct mapping_state *st)
{
	for (size_t i = 0; i < p->n_comment; i++) {
		const char *c = pprof__str_at(p, p->comment[i]);
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

/* A copy of the value of key (" key=") in c, up to a space (to the end for path). */
static char *comment_value(const char *c, const char *key, bool to_end)
{
	const char *v = strstr(c, key);

	if (!v)
		return NULL;
	v += strlen(key);
	return strndup(v, to_end ? strlen(v) : strcspn(v, " "));
}

int pprof_file_ids__read(const pb_profile *p, struct pprof_file_ids *out)
{
	const size_t plen = strlen(PPROF_FILE_COMMENT " ");

	memset(out, 0, sizeof(*out));
	out->v = calloc(p->n_comment ? p->n_comment : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_comment; i++) {
		const char *c = pprof__str_at(p, p->comment[i]);
		struct pprof_file_id *id = &out->v[out->n];
		const char *path;

		if (strncmp(c, PPROF_FILE_COMMENT " ", plen))
			continue;
		/* Keys before " path=", which runs to the end. */
		path = strstr(c, " path=");
		if (!path)
			continue;
		id->path = strdup(path + strlen(" path="));
		{
			char *head = strndup(c, (size_t)(path - c));

			if (head) {
				id->go_build_id = comment_value(head, " go_build_id=", false);
				id->file_hash = comment_value(head, " htlhash=", false);
			}
			free(head);
			if (!head || !id->path) {
				free(id->path);
				free(id->go_build_id);
				free(id->file_hash);
				pprof_file_ids__free(out);
				return -ENOMEM;
			}
		}
		out->n++;
	}
	return 0;
}

void pprof_file_ids__find(const struct pprof_file_ids *ids, const char *path, const char *build_id,
			  const char **go, const char **hash)
{
	*go = *hash = NULL;
	if (build_id && *build_id)
		return;
	for (size_t i = 0; i < ids->n; i++)
		if (!strcmp(ids->v[i].path, path)) {
			*go = ids->v[i].go_build_id;
			*hash = ids->v[i].file_hash;
			return;
		}
}

void pprof_file_ids__free(struct pprof_file_ids *ids)
{
	if (!ids)
		return;
	for (size_t i = 0; i < ids->n; i++) {
		free(ids->v[i].path);
		free(ids->v[i].go_build_id);
		free(ids->v[i].file_hash);
	}
	free(ids->v);
	ids->v = NULL;
	ids->n = 0;
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

	n = file_index__match(fi, pprof__str_at(p, pm->build_id),
			      value(st->go_build_id, go, sizeof(go)),
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
	return pprof__str_at(p, m->filename)[0] != '[';
}

int pprof__symbolize(pb_profile *p, struct symbolizer *s, const struct file_index *fi,
		     struct pprof_symbolize_stats *stats)
{
	struct mapping_state *st = calloc(p->n_mapping + 1, sizeof(*st));
	struct pprof_file_ids ids = {0};
	struct pprof_editor e;
	size_t named = 0, unnamed = 0, matched = 0;
	int err;

	memset(stats, 0, sizeof(*stats));
	if (!st)
		return -ENOMEM;
	err = pprof_editor__init(&e, p);
	if (!err)
		err = pprof_file_ids__read(p, &ids);
	if (err)
		goto cleanup;
	read_mapping_comments(p, st);
	for (size_t m = 0; m < p->n_mapping; m++)
		if (!st[m].seen_identity) {
			const Perftools__Profiles__Mapping *pm = p->mapping[m];

			pprof_file_ids__find(&ids, pprof__str_at(p, pm->filename),
					     pprof__str_at(p, pm->build_id), &st[m].go_build_id,
					     &st[m].file_hash);
		}
	for (size_t m = 0; m < p->n_mapping; m++) {
		const Perftools__Profiles__Mapping *pm = p->mapping[m];

		if (!is_file_mapping(p, pm))
			continue;
		if (open_best(s, fi, pm, p, &st[m])) {
			pr_info("%s: no matching file under the --debug-dir folders",
				pprof__str_at(p, pm->filename));
			continue;
		}
		matched++;
		pr_info("%s: named from %s", pprof__str_at(p, pm->filename), st[m].ef->path);
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
		err = pprof_editor__replace_lines(&e, loc, frames, n);
		if (!err)
			err = e.err;
		if (err)
			goto cleanup;
		named++;
	}
	/* The has_* flags tell the truth about what the locations now carry. */
	for (size_t m = 0; m < p->n_mapping; m++)
		if (st[m].ns)
			pprof__update_mapping_flags(p, p->mapping[m]);
	stats->mappings = p->n_mapping;
	stats->matched = matched;
	stats->named = named;
	stats->unnamed = unnamed;
cleanup:
	for (size_t m = 0; m < p->n_mapping; m++) {
		native_symbols__free(st[m].ns);
		elf_file__close(st[m].ef);
	}
	free(st);
	pprof_file_ids__free(&ids);
	pprof_editor__clear(&e);
	return err;
}
