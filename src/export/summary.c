// SPDX-License-Identifier: Apache-2.0
/*
 * The terminal report printed after a recording: totals, then the functions
 * that burned the most CPU themselves (self) and with their callees (total).
 * Functions are grouped by their frame text, so a name here is exactly the
 * name in the folded file and the flame graph.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export/exporters.h"
#include "export/frame_text.h"

struct fn_counts {
	const struct frame_names *names;
	uint64_t *self;
	uint64_t *total;
};

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int cmp_counts(uint64_t a1, uint64_t a2, uint64_t b1, uint64_t b2)
{
	if (a1 != b1)
		return a1 < b1 ? 1 : -1;
	if (a2 != b2)
		return a2 < b2 ? 1 : -1;
	return 0;
}

static int by_self(const void *a, const void *b, void *ctx)
{
	const struct fn_counts *c = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return cmp_counts(c->self[x], c->total[x], c->self[y], c->total[y])
		   ?: strcmp(frame_names__text(c->names, x), frame_names__text(c->names, y));
}

static int by_total(const void *a, const void *b, void *ctx)
{
	const struct fn_counts *c = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return cmp_counts(c->total[x], c->self[x], c->total[y], c->self[y])
		   ?: strcmp(frame_names__text(c->names, x), frame_names__text(c->names, y));
}

static int digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* Prints up to top_n rows of order; the first pair of columns is the sort key. */
static void print_table(FILE *f, const char *title, const struct fn_counts *c,
			const uint32_t *order, size_t n, bool self_first, uint64_t samples)
{
	const uint64_t *first = self_first ? c->self : c->total;
	const uint64_t *second = self_first ? c->total : c->self;
	int w = 5;

	for (size_t i = 0; i < n; i++) {
		if (digits(c->total[order[i]]) > w)
			w = digits(c->total[order[i]]);
	}
	fprintf(f, "\n%s\n", title);
	fprintf(f, "  %*s %7s  %*s %7s  %s\n", w, self_first ? "SELF" : "TOTAL", "%", w,
		self_first ? "TOTAL" : "SELF", "%", "FUNCTION");
	for (size_t i = 0; i < n; i++) {
		uint32_t id = order[i];

		fprintf(f, "  %*" PRIu64 " %6.2f%%  %*" PRIu64 " %6.2f%%  %s\n", w, first[id],
			percent(first[id], samples), w, second[id], percent(second[id], samples),
			frame_names__text(c->names, id));
	}
}

void summary__print(const struct profile *p, FILE *f, int top_n)
{
	struct frame_names names;
	struct fn_counts c = {.names = &names};
	size_t *seen = NULL; /* seen[text]: 1 + index of the last sample that counted it */
	uint32_t *order = NULL;
	uint64_t samples = 0;
	size_t n_self = 0, n_total = 0;

	fprintf(f, "Samples:    %" PRIu64, p->stats.samples);
	if (p->duration_ns && p->frequency_hz)
		fprintf(f, " in %.1f s at %" PRIu32 " Hz", (double)p->duration_ns / 1e9,
			p->frequency_hz);
	fprintf(f, "\nProcesses:  %" PRIu64 "\n", p->stats.processes);
	fprintf(f, "Dropped:    %" PRIu64 " (%.2f%% of all samples taken)\n", p->stats.dropped,
		percent(p->stats.dropped, p->stats.samples + p->stats.dropped));
	fprintf(f, "Truncated:  %" PRIu64 " (%.2f%% of samples kept)\n", p->stats.truncated,
		percent(p->stats.truncated, p->stats.samples));
	if (top_n <= 0)
		return;

	if (frame_names__build(&names, p)) {
		fprintf(f, "(no function table: out of memory)\n");
		return;
	}
	c.self = calloc(frame_names__count(&names) + 1, sizeof(*c.self));
	c.total = calloc(frame_names__count(&names) + 1, sizeof(*c.total));
	seen = calloc(frame_names__count(&names) + 1, sizeof(*seen));
	order = malloc((frame_names__count(&names) + 1) * sizeof(*order));
	if (!c.self || !c.total || !seen || !order) {
		fprintf(f, "(no function table: out of memory)\n");
		goto cleanup;
	}

	for (size_t i = 0; i < p->n_samples; i++) {
		const struct profile_sample *s = &p->samples[i];
		uint64_t count = (uint64_t)s->count;

		if (s->count <= 0)
			continue;
		samples += count;
		if (!s->n_locations)
			continue;
		c.self[frame_names__line(&names, s->location_ids[0], 0)] += count;
		/* A recursive function appears many times in one stack but used the CPU once. */
		for (uint32_t l = 0; l < s->n_locations; l++) {
			const struct profile_location *loc =
			    profile__location(p, s->location_ids[l]);

			for (uint32_t j = 0; j < loc->n_lines; j++) {
				uint32_t text = frame_names__line(&names, s->location_ids[l], j);

				if (seen[text] == i + 1)
					continue;
				seen[text] = i + 1;
				c.total[text] += count;
			}
		}
	}

	for (uint32_t id = 0; id < frame_names__count(&names); id++)
		if (c.self[id])
			order[n_self++] = id;
	qsort_r(order, n_self, sizeof(*order), by_self, &c);
	print_table(f, "Top functions by self samples (the function itself was running):", &c,
		    order, n_self < (size_t)top_n ? n_self : (size_t)top_n, true, samples);

	for (uint32_t id = 0; id < frame_names__count(&names); id++)
		if (c.total[id])
			order[n_total++] = id;
	qsort_r(order, n_total, sizeof(*order), by_total, &c);
	print_table(f, "Top functions by total samples (the function or its callees were running):",
		    &c, order, n_total < (size_t)top_n ? n_total : (size_t)top_n, false, samples);

cleanup:
	free(order);
	free(seen);
	free(c.total);
	free(c.self);
	frame_names__free(&names);
}

/* Frames of a stack the off-CPU table shows: the innermost ones (where it waits). */
#define SUMMARY_STACK_FRAMES 12

struct stack_row {
	uint64_t ns;
	uint32_t node;
};

static int by_ns(const void *a, const void *b)
{
	const struct stack_row *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : (x->node > y->node) - (x->node < y->node);
}

/*
 * "comm;...;user frames;kernel frames" of a tree node: the process, the
 * innermost SUMMARY_STACK_FRAMES frames, less the scheduler's own at the
 * leaf (schedule, __schedule: every off-CPU stack ends in them).
 */
static void stack_text(const struct frame_tree *t, uint32_t node, char *buf, size_t size)
{
	const char *parts[SUMMARY_STACK_FRAMES];
	size_t n = 0, len;
	uint32_t up = node;
	const char *name;

	while (up && t->nodes[up].depth > 1 && t->nodes[up].kind == PROFILE_FRAME_KERNEL) {
		name = frame_tree__text(t, up);
		if (strncmp(name, "schedule", 8) && strncmp(name, "__schedule", 10))
			break;
		up = t->nodes[up].parent;
	}
	while (up && t->nodes[up].depth > 1 && n < SUMMARY_STACK_FRAMES) {
		parts[n++] = frame_tree__text(t, up);
		up = t->nodes[up].parent;
	}
	len = (size_t)snprintf(buf, size, "%s", "");
	if (up && t->nodes[up].depth > 1) {
		while (up && t->nodes[up].depth > 1)
			up = t->nodes[up].parent;
		len = (size_t)snprintf(buf, size, "%s;...", up ? frame_tree__text(t, up) : "");
	} else if (up) {
		len = (size_t)snprintf(buf, size, "%s", frame_tree__text(t, up));
	}
	for (size_t i = n; i-- > 0 && len < size;)
		len += (size_t)snprintf(buf + len, size - len, ";%s", parts[i]);
}

void summary__print_offcpu(const struct profile *p, FILE *f, int top_n)
{
	struct frame_tree t;
	struct stack_row *rows = NULL;
	size_t n = 0;
	uint64_t total = 0;
	char text[1024];

	if (frame_tree__build(&t, p)) {
		fprintf(f, "\n(no off-CPU table: out of memory)\n");
		return;
	}
	rows = malloc(t.n_nodes * sizeof(*rows));
	if (!rows) {
		fprintf(f, "\n(no off-CPU table: out of memory)\n");
		goto cleanup;
	}
	for (uint32_t i = 1; i < t.n_nodes; i++) {
		if (!t.nodes[i].self)
			continue;
		rows[n++] = (struct stack_row){.ns = t.nodes[i].self, .node = i};
		total += t.nodes[i].self;
	}
	qsort(rows, n, sizeof(*rows), by_ns);
	fprintf(f, "\nOff-CPU:    %.3f s waited (scaled by 1/P)\n", (double)total / 1e9);
	fprintf(f, "\nTop off-CPU stacks (where threads waited; innermost frames last):\n");
	fprintf(f, "  %12s %7s  %s\n", "MS", "%", "STACK");
	for (size_t i = 0; i < n && i < (size_t)top_n; i++) {
		stack_text(&t, rows[i].node, text, sizeof(text));
		fprintf(f, "  %12.3f %6.2f%%  %s\n", (double)rows[i].ns / 1e6,
			percent(rows[i].ns, total), text);
	}
cleanup:
	free(rows);
	frame_tree__free(&t);
}
