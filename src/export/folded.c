// SPDX-License-Identifier: Apache-2.0
/*
 * Folded stacks (off-CPU profiles: COUNT is microseconds off CPU), the line format flamegraph.pl,
 * inferno, speedscope and Pyroscope read: "comm;outermost;...;leaf COUNT". Lines come from the
 * frame tree, so stacks that only differ by thread or by address inside a function are one line,
 * and the order is that of the tree (sorted by text).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export/exporters.h"
#include "export/frame_text.h"
#include "util/array.h"

struct path_buf {
	char *s;
	size_t len, cap;
};

static int path_append(struct path_buf *b, const char *sep, const char *text)
{
	size_t ls = strlen(sep), lt = strlen(text);

	if (array__reserve(b->s, b->cap, b->len + ls + lt + 1))
		return -ENOMEM;
	memcpy(b->s + b->len, sep, ls);
	memcpy(b->s + b->len + ls, text, lt + 1);
	b->len += ls + lt;
	return 0;
}

int folded__write(const struct profile *p, FILE *f)
{
	struct frame_tree t;
	struct path_buf path = {0};
	size_t *ends = NULL; /* ends[d]: path length through the node at depth d */
	uint32_t node;
	int err;

	err = frame_tree__build(&t, p);
	if (err)
		return err;
	err = -ENOMEM;
	ends = calloc(t.max_depth + 1, sizeof(*ends));
	if (!ends)
		goto cleanup;

	/* Pre-order walk over the first-child / next-sibling links, no recursion. */
	node = t.nodes[0].first_child;
	while (node) {
		const struct frame_tree_node *n = &t.nodes[node];
		uint64_t self;

		path.len = n->depth > 1 ? ends[n->depth - 1] : 0;
		if (path_append(&path, n->depth > 1 ? ";" : "", frame_tree__text(&t, node)))
			goto cleanup;
		ends[n->depth] = path.len;
		/* Off-CPU counts are nanoseconds: written in microseconds (rounded;
		 * a stack under half a microsecond has no line). */
		self = p->off_cpu ? (n->self + 500) / 1000 : n->self;
		if (self && fprintf(f, "%s %" PRIu64 "\n", path.s, self) < 0) {
			err = -errno ?: -EIO;
			goto cleanup;
		}

		if (n->first_child) {
			node = n->first_child;
			continue;
		}
		while (node && !t.nodes[node].next_sibling)
			node = t.nodes[node].parent;
		if (node)
			node = t.nodes[node].next_sibling;
	}
	err = ferror(f) ? -EIO : 0;

cleanup:
	free(ends);
	free(path.s);
	frame_tree__free(&t);
	return err;
}
