// SPDX-License-Identifier: Apache-2.0
#include "folded_shapes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ORIGIN_PREFIX ";[sampled: "
#define TOO_DEEP      "[unwind stopped: too many frames]"
#define SHAPES_MAX    256

struct shape {
	char key[400];
	long n;
};

static bool is_kernel(const char *f, size_t len)
{
	return len > 4 && !strncmp(f + len - 4, "_[k]", 4);
}

/* The frame at f (up to the next ';' before end): its length. */
static size_t frame_len(const char *f, const char *end)
{
	const char *semi = memchr(f, ';', (size_t)(end - f));

	return (size_t)((semi ? semi : end) - f);
}

static void add_shape(struct shape *shapes, size_t *n_shapes, const char *key, long n)
{
	size_t i;

	for (i = 0; i < *n_shapes && strcmp(shapes[i].key, key); i++)
		;
	if (i == *n_shapes) {
		if (*n_shapes == SHAPES_MAX)
			i = SHAPES_MAX - 1; /* the last row gathers the rest */
		else
			snprintf(shapes[(*n_shapes)++].key, sizeof(shapes[i].key), "%s", key);
	}
	shapes[i].n += n;
}

long folded_shapes__print(const char *text, const char *comm, folded_root_fn is_root,
			  const char *indent)
{
	/* (static: 100 KiB, and the tests run one at a time) */
	static struct shape shapes[SHAPES_MAX], origins[16];
	size_t n_shapes = 0, n_origins = 0, comm_len = strlen(comm);
	long total = 0;

	memset(shapes, 0, sizeof(shapes));
	memset(origins, 0, sizeof(origins));
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n'), *count_at, *stack, *origin, *stop_end;
		size_t len = end ? (size_t)(end - line) : strlen(line), first_len;
		char key[400], how[80] = "not marked", stop[120] = "none";
		bool marker;
		long count;

		count_at = memrchr(line, ' ', len);
		if (!count_at || len <= comm_len || strncmp(line, comm, comm_len) ||
		    line[comm_len] != ';')
			goto next;
		count = strtol(count_at + 1, NULL, 10);
		stack = line + comm_len + 1;
		stop_end = count_at;
		/* (from comm's ';': a sample with no other frame) */
		origin = memmem(stack - 1, (size_t)(count_at - stack + 1), ORIGIN_PREFIX,
				strlen(ORIGIN_PREFIX));
		if (origin) {
			snprintf(how, sizeof(how), "%.*s",
				 (int)strcspn(origin + strlen(ORIGIN_PREFIX), "]"),
				 origin + strlen(ORIGIN_PREFIX));
			stop_end = origin;
		}
		add_shape(origins, &n_origins, how, count);
		if (stop_end <= stack ||
		    memmem(stack, (size_t)(stop_end - stack), TOO_DEEP, strlen(TOO_DEEP)))
			goto next;
		marker = !strncmp(stack, "[unwind", 7);
		first_len = frame_len(stack, stop_end);
		if (!marker && is_root(stack, first_len))
			goto next;
		/* No user stack (an exiting process's, its mm gone): not judged, shown apart. */
		if (!marker && is_kernel(stack, first_len)) {
			snprintf(key, sizeof(key),
				 "kernel only (not judged) | outermost %.*s | via %s",
				 (int)(first_len > 120 ? 120 : first_len), stack, how);
			add_shape(shapes, &n_shapes, key, count);
			goto next;
		}
		if (marker) {
			snprintf(stop, sizeof(stop), "%.*s", (int)first_len, stack);
			stack += first_len + (stack + first_len < stop_end);
			first_len = frame_len(stack, stop_end);
		}
		snprintf(key, sizeof(key), "stop %s | outermost %.*s | via %s", stop,
			 (int)(first_len > 120 ? 120 : first_len), stack, how);
		add_shape(shapes, &n_shapes, key, count);
		total += count;
	next:
		line = end ? end + 1 : NULL;
	}
	printf("%s%s: samples by origin:", indent, comm);
	for (size_t i = 0; i < n_origins; i++)
		printf("%s %s %ld", i ? "," : "", origins[i].key, origins[i].n);
	printf("\n%s%s: %ld unrooted samples with user frames%s\n", indent, comm, total,
	       n_shapes ? "; every shape:" : "");
	for (size_t shown = 0; shown < n_shapes; shown++) {
		size_t best = shown;
		struct shape tmp;

		for (size_t i = shown + 1; i < n_shapes; i++)
			if (shapes[i].n > shapes[best].n)
				best = i;
		tmp = shapes[best];
		shapes[best] = shapes[shown];
		shapes[shown] = tmp;
		printf("%s  %5ld %s\n", indent, shapes[shown].n, shapes[shown].key);
	}
	fflush(stdout);
	return total;
}

void folded_shapes__strip(char *text)
{
	char *out = text;

	for (const char *in = text; *in;) {
		const char *at = strstr(in, ORIGIN_PREFIX), *close;

		if (!at) {
			size_t rest = strlen(in);

			memmove(out, in, rest);
			out += rest;
			break;
		}
		memmove(out, in, (size_t)(at - in));
		out += at - in;
		close = strchr(at + 1, ']');
		in = close ? close + 1 : at + strlen(at);
	}
	*out = '\0';
}
