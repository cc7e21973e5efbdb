// SPDX-License-Identifier: Apache-2.0
#include "pprof_read.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#define RULE(cond, ...)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "pprof spec: " __VA_ARGS__);                               \
			fputc('\n', stderr);                                                       \
			return false;                                                              \
		}                                                                                  \
	} while (0)

static bool str_ok(const Perftools__Profiles__Profile *p, int64_t i)
{
	return i >= 0 && (uint64_t)i < p->n_string_table;
}

/* "file+0xHEX": the name our own displays give a frame nothing named. */
static bool made_up_name(const char *name)
{
	const char *plus = strstr(name, "+0x");

	if (!plus || !plus[3])
		return false;
	for (const char *c = plus + 3; *c; c++)
		if (!isxdigit((unsigned char)*c))
			return false;
	return true;
}

bool tu_pprof_spec_ok(const Perftools__Profiles__Profile *p)
{
	RULE(p->n_string_table > 0 && !strcmp(p->string_table[0], ""),
	     "string_table[0] is not \"\"");
	for (size_t i = 0; i < p->n_sample_type; i++)
		RULE(str_ok(p, p->sample_type[i]->type) && str_ok(p, p->sample_type[i]->unit),
		     "sample_type %zu: string index out of range", i);
	RULE(!p->period_type ||
		 (str_ok(p, p->period_type->type) && str_ok(p, p->period_type->unit)),
	     "period_type: string index out of range");
	RULE(str_ok(p, p->default_sample_type) && str_ok(p, p->drop_frames) &&
		 str_ok(p, p->keep_frames),
	     "a profile string index out of range");
	for (size_t i = 0; i < p->n_comment; i++)
		RULE(str_ok(p, p->comment[i]), "comment %zu out of range", i);
	for (size_t i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = p->mapping[i];

		RULE(m->id != 0, "mapping %zu has id 0", i);
		for (size_t j = 0; j < i; j++)
			RULE(p->mapping[j]->id != m->id, "mapping id %llu twice",
			     (unsigned long long)m->id);
		RULE(str_ok(p, m->filename) && str_ok(p, m->build_id),
		     "mapping %llu: string index out of range", (unsigned long long)m->id);
	}
	for (size_t i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];

		RULE(f->id != 0, "function %zu has id 0", i);
		for (size_t j = 0; j < i; j++)
			RULE(p->function[j]->id != f->id, "function id %llu twice",
			     (unsigned long long)f->id);
		RULE(str_ok(p, f->name) && str_ok(p, f->system_name) && str_ok(p, f->filename),
		     "function %llu: string index out of range", (unsigned long long)f->id);
	}
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		bool mapped = !l->mapping_id, file = false;

		RULE(l->id != 0, "location %zu has id 0", i);
		for (size_t j = 0; j < i; j++)
			RULE(p->location[j]->id != l->id, "location id %llu twice",
			     (unsigned long long)l->id);
		for (size_t m = 0; m < p->n_mapping && !mapped; m++)
			if (p->mapping[m]->id == l->mapping_id) {
				mapped = true;
				/* Not "[kernel.kallsyms]" and the like: "[kernel]+0x..." is the
				 * kernel's own fallback (kallsyms unreadable), no file to name it.
				 */
				file = p->string_table[p->mapping[m]->filename][0] != '[';
			}
		RULE(mapped, "location %llu: mapping %llu does not exist",
		     (unsigned long long)l->id, (unsigned long long)l->mapping_id);
		for (size_t k = 0; k < l->n_line; k++) {
			const Perftools__Profiles__Function *f = NULL;

			for (size_t j = 0; j < p->n_function && !f; j++)
				if (p->function[j]->id == l->line[k]->function_id)
					f = p->function[j];
			RULE(f, "location %llu: function %llu does not exist",
			     (unsigned long long)l->id,
			     (unsigned long long)l->line[k]->function_id);
			/* Unnamed frames go as mapping + address, for a symbolizer to name. */
			RULE(!file || !made_up_name(p->string_table[f->name]),
			     "location %llu: a line names %s", (unsigned long long)l->id,
			     p->string_table[f->name]);
		}
	}
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		RULE(s->n_value == p->n_sample_type, "sample %zu: %zu values for %zu sample types",
		     i, s->n_value, p->n_sample_type);
		for (size_t k = 0; k < s->n_location_id; k++) {
			bool found = false;

			/* Linear: the e2e profiles are small. */
			for (size_t j = 0; j < p->n_location && !found; j++)
				found = p->location[j]->id == s->location_id[k];
			RULE(found, "sample %zu: location %llu does not exist", i,
			     (unsigned long long)s->location_id[k]);
		}
		for (size_t k = 0; k < s->n_label; k++)
			RULE(str_ok(p, s->label[k]->key) && str_ok(p, s->label[k]->str) &&
				 str_ok(p, s->label[k]->num_unit),
			     "sample %zu: label string index out of range", i);
	}
	return true;
}

Perftools__Profiles__Profile *tu_read_pprof(const char *path)
{
	gzFile gz = gzopen(path, "rb");
	size_t len = 0, cap = 1 << 16;
	uint8_t *buf = malloc(cap);
	Perftools__Profiles__Profile *p = NULL;
	int n;

	if (!gz || !buf)
		goto cleanup;
	while ((n = gzread(gz, buf + len, (unsigned int)(cap - len))) > 0) {
		len += (size_t)n;
		if (len == cap) {
			uint8_t *tmp = realloc(buf, cap * 2);

			if (!tmp)
				goto cleanup;
			buf = tmp;
			cap *= 2;
		}
	}
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	/* Every profile a test reads must keep the spec's rules. */
	if (p && !tu_pprof_spec_ok(p)) {
		perftools__profiles__profile__free_unpacked(p, NULL);
		p = NULL;
	}
cleanup:
	if (gz)
		gzclose(gz);
	free(buf);
	return p;
}

long tu_line_of(const char *text, const char *needle)
{
	const char *at = strstr(text, needle);
	long line = 1;

	if (!at)
		return 0;
	for (const char *p = text; p < at; p++)
		line += *p == '\n';
	return line;
}

bool *tu_pprof_pid_locations(const Perftools__Profiles__Profile *p, int pid)
{
	int64_t key = -1;
	bool *used;

	for (size_t i = 0; i < p->n_string_table; i++)
		if (!strcmp(p->string_table[i], "pid"))
			key = (int64_t)i;
	if (key <= 0)
		return NULL;
	used = calloc(p->n_location ? p->n_location : 1, sizeof(*used));
	if (!used)
		return NULL;
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *sm = p->sample[i];
		bool ours = false;

		for (size_t k = 0; k < sm->n_label; k++)
			ours |= sm->label[k]->key == key && sm->label[k]->num == pid;
		for (size_t j = 0; ours && j < sm->n_location_id; j++) {
			/* Ids are usually index + 1; else searched. */
			size_t l = sm->location_id[j] - 1;

			if (l >= p->n_location || p->location[l]->id != sm->location_id[j])
				for (l = 0; l < p->n_location; l++)
					if (p->location[l]->id == sm->location_id[j])
						break;
			if (l < p->n_location)
				used[l] = true;
		}
	}
	return used;
}
