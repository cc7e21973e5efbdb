/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the folded, flame graph and summary exporters show for a frame, in one
 * place so the three outputs always agree and a name found in one can be
 * searched for in the others.
 *
 * A frame is one line of a location: the function's display name, with "_[k]"
 * appended for kernel code and brackets around error frames ("[truncated]").
 * Characters that would break the folded format (';', newlines and other
 * control characters) are replaced. Frames without a name show as
 * "file+0xaddr" (or "0xaddr") so they are never dropped.
 */
#ifndef OMNIPROF_EXPORT_FRAME_TEXT_H
#define OMNIPROF_EXPORT_FRAME_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/hashmap.h"
#include "util/string_intern.h"

/* Node kinds beyond enum profile_frame_kind used by struct frame_tree. */
#define FRAME_KIND_ROOT	   (-2) /* the "all" node */
#define FRAME_KIND_PROCESS (-1) /* a comm */

/*
 * Writes the text of line line_idx of loc into buf (at most size bytes, always
 * NUL-terminated when size > 0) and returns the length of the full text, like
 * snprintf: a result >= size means buf was too small.
 */
size_t frame_text__format(const struct profile *p, const struct profile_location *loc,
			  uint32_t line_idx, char *buf, size_t size);
/* The same for a process's command name ("[unknown]" when empty). */
size_t frame_text__comm(const char *comm, char *buf, size_t size);
/* Short lower-case name of a node kind ("native", "kernel", "process", ...). */
const char *frame_text__kind_name(int kind);
/* One more than the largest kind frame_text__kind_name() knows. */
#define FRAME_KIND_END PROFILE_FRAME_KIND_COUNT

/*
 * Every distinct frame text of a profile, numbered from 0, and the text id of
 * each line of each location (computed once, so exporters walking millions of
 * frames do not format names again).
 */
struct frame_names {
	struct string_intern texts; /* text id = index; owned copies */
	/* Text id of line j of location id: line_text[loc_first[id - 1] + j]. */
	uint32_t *line_text;
	uint32_t *loc_first;

	/* private */
	char *buf;
	size_t buf_size;
};

/* The text of id (id < frame_names__count(n)). */
static inline const char *frame_names__text(const struct frame_names *n, uint32_t id)
{
	return string_intern__at(&n->texts, id);
}

/* How many distinct texts (ids 0 .. count - 1). */
static inline size_t frame_names__count(const struct frame_names *n)
{
	return string_intern__count(&n->texts);
}

/* Fills n for p: 0 or -ENOMEM (n is then freed). Free with frame_names__free(). */
int frame_names__build(struct frame_names *n, const struct profile *p);
void frame_names__free(struct frame_names *n); /* accepts NULL */
/* Id of text (copied when new) in *id: 0 or -ENOMEM. */
int frame_names__intern(struct frame_names *n, const char *text, uint32_t *id);

static inline uint32_t frame_names__line(const struct frame_names *n, uint32_t location_id,
					 uint32_t line_idx)
{
	return n->line_text[n->loc_first[location_id - 1] + line_idx];
}

/*
 * The call tree the folded file and the flame graph show: "all" → comm →
 * frames from the outermost caller to the leaf, samples merged by text (so
 * threads and different addresses in one function add up). Children are
 * linked in ascending order of text, then kind.
 */
struct frame_tree_node {
	uint32_t text; /* id in names */
	int32_t kind;  /* enum profile_frame_kind or FRAME_KIND_ROOT / FRAME_KIND_PROCESS */
	uint32_t parent;
	uint32_t first_child; /* 0 = none (node 0, the root, is nobody's child) */
	uint32_t next_sibling;
	uint32_t depth; /* root 0, comm 1, outermost frame 2, ... */
	uint64_t total; /* samples in this node and below */
	uint64_t self;	/* samples that stopped here */
};

struct frame_tree {
	struct frame_names names;
	struct frame_tree_node *nodes; /* nodes[0] is the root */
	size_t n_nodes;
	uint32_t max_depth;

	/* private */
	size_t cap_nodes;
	struct hashmap children;
};

/* Builds the tree of p's samples with positive counts: 0 or -ENOMEM. */
int frame_tree__build(struct frame_tree *t, const struct profile *p);
void frame_tree__free(struct frame_tree *t); /* accepts NULL */

static inline const char *frame_tree__text(const struct frame_tree *t, uint32_t node)
{
	return frame_names__text(&t->names, t->nodes[node].text);
}

#endif
