// SPDX-License-Identifier: Apache-2.0
/*
 * The interactive flame graph: one HTML file, the page template (built into
 * the binary from flamegraph.html) with the profile's call tree inserted as
 * JSON. Everything the page needs is inline, so it opens offline and can be
 * mailed or attached to a ticket.
 *
 * JSON layout (read by the page's script):
 *   names: every frame text once; nodes refer to them by index
 *   kinds: kind names; a node's kind is an index into it
 *   nodes: flat pre-order array, 4 numbers per node:
 *          name index, kind index, total samples, number of children
 * A flat array of numbers is several times smaller than an object per node
 * and parses much faster for trees with hundreds of thousands of nodes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export/exporters.h"
#include "export/frame_text.h"
#include "util/utf8.h"

extern const char flamegraph_html_start[];
extern const char flamegraph_html_end[];

#define DATA_PLACEHOLDER "@@OMNIPROF_PROFILE_JSON@@"

/*
 * Writes s as a JSON string that is also safe inside a <script> element: '<',
 * '>' and '&' are escaped so no "</script>" or "<!--" can appear, and invalid
 * UTF-8 becomes U+FFFD so the page's parser never sees broken text.
 */
static void json_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len;

		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			i++;
		} else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
		} else if ((len = utf8__seq_len(s + i, n - i))) {
			fwrite(s + i, 1, len, f);
			i += len;
		} else {
			fputs("\\ufffd", f);
			i++;
		}
	}
	fputc('"', f);
}

/* Writes the JSON document: 0 or -ENOMEM (write errors are checked by the caller). */
static int write_json(const struct profile *p, const struct frame_tree *t, FILE *f,
		      const char *title)
{
	uint32_t *remap; /* text id -> index in the page's name table, 0 = unused */
	uint32_t n_names = 0, node;
	int32_t max_kind = FRAME_KIND_END - 1;

	remap = calloc(frame_names__count(&t->names) + 1, sizeof(*remap));
	if (!remap)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_nodes; i++) {
		if (t->nodes[i].kind > max_kind)
			max_kind = t->nodes[i].kind;
	}

	fputs("{\"version\":1,\"title\":", f);
	json_string(f, title);
	fprintf(f,
		",\"samples\":%" PRIu64 ",\"processes\":%" PRIu64 ",\"dropped\":%" PRIu64
		",\"truncated\":%" PRIu64 ",\"frequencyHz\":%" PRIu32 ",\"durationNs\":%" PRIu64
		",\"timeNs\":%" PRIu64 ",\"total\":%" PRIu64 ",\"maxDepth\":%" PRIu32,
		p->stats.samples, p->stats.processes, p->stats.dropped, p->stats.truncated,
		p->frequency_hz, p->duration_ns, p->time_ns, t->nodes[0].total, t->max_depth);
	/* What the counts are: samples, or an off-CPU profile's nanoseconds. */
	fprintf(f, ",\"unit\":\"%s\"", p->off_cpu ? "ns off CPU" : "samples");

	fputs(",\"kinds\":[", f);
	for (int32_t k = FRAME_KIND_ROOT; k <= max_kind; k++) {
		if (k != FRAME_KIND_ROOT)
			fputc(',', f);
		json_string(f, frame_text__kind_name(k));
	}

	/* Names in order of first use, so the table only holds texts the tree shows. */
	fputs("],\"names\":[", f);
	for (size_t i = 0; i < t->n_nodes; i++) {
		uint32_t text = t->nodes[i].text;

		if (remap[text])
			continue;
		remap[text] = ++n_names;
		if (n_names > 1)
			fputc(',', f);
		json_string(f, frame_names__text(&t->names, text));
	}

	/* Pre-order walk (the order the page rebuilds the tree in). */
	fputs("],\"nodes\":[", f);
	node = 0;
	for (;;) {
		const struct frame_tree_node *n = &t->nodes[node];
		uint32_t children = 0;

		for (uint32_t c = n->first_child; c; c = t->nodes[c].next_sibling)
			children++;
		fprintf(f, "%s%" PRIu32 ",%" PRId32 ",%" PRIu64 ",%" PRIu32, node ? "," : "",
			remap[n->text] - 1, n->kind - FRAME_KIND_ROOT, n->total, children);
		if (n->first_child) {
			node = n->first_child;
			continue;
		}
		while (node && !t->nodes[node].next_sibling)
			node = t->nodes[node].parent;
		if (!node)
			break;
		node = t->nodes[node].next_sibling;
	}
	fputs("]}", f);
	free(remap);
	return 0;
}

int flamegraph__write(const struct profile *p, FILE *f, const char *title)
{
	const char *tmpl = flamegraph_html_start;
	size_t tmpl_len = (size_t)(flamegraph_html_end - flamegraph_html_start);
	const char *mark = memmem(tmpl, tmpl_len, DATA_PLACEHOLDER, strlen(DATA_PLACEHOLDER));
	struct frame_tree t;
	size_t head;
	int err;

	if (!mark)
		return -EINVAL; /* a broken template is a build problem, not the user's */
	head = (size_t)(mark - tmpl);
	err = frame_tree__build(&t, p);
	if (err)
		return err;

	fwrite(tmpl, 1, head, f);
	err = write_json(p, &t, f, title && title[0] ? title : "omniprof");
	if (!err) {
		head += strlen(DATA_PLACEHOLDER);
		fwrite(tmpl + head, 1, tmpl_len - head, f);
		if (fflush(f) || ferror(f))
			err = -errno ?: -EIO;
	}
	frame_tree__free(&t);
	return err;
}
