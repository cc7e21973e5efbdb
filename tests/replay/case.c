// SPDX-License-Identifier: Apache-2.0
#include "case.h"

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "omniprof/abi.h"

#define MAX_REPEAT 4096

bool case__name_matches(const char *pattern, bool like, const char *name)
{
	const char *p = pattern;

	while (*p) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		bool sub = like || *p == '~';
		const char *alt = *p == '~' ? p + 1 : p;
		size_t alen = n - (size_t)(alt - p);

		if (sub) {
			for (const char *s = name; alen && *s; s++)
				if (!strncmp(s, alt, alen))
					return true;
		} else if (strlen(name) == alen && !strncmp(name, alt, alen)) {
			return true;
		}
		p += n + (bar ? 1 : 0);
	}
	return false;
}

/* The registry's name of runtime name (its folder, interp_ops.name), or NULL. */
static const char *runtime_named(const char *name)
{
	for (size_t r = 0; r < interp_registry_len; r++)
		if (!strcmp(interp_registry[r]->name, name))
			return interp_registry[r]->name;
	return NULL;
}

static int fail(char *err, size_t len, int line, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, len, "line %d: ", line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < len)
		vsnprintf(err + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int add_expect(struct case_thread *t, enum expect_kind kind, const char *text,
		      unsigned int min, unsigned int max)
{
	struct expect *exp = realloc(t->exp, (t->n_exp + 1) * sizeof(*exp));
	char *copy = strdup(text ? text : "");

	if (exp)
		t->exp = exp;
	if (!exp || !copy) {
		free(copy);
		return -ENOMEM;
	}
	t->exp[t->n_exp++] = (struct expect){kind, copy, min, max, NULL, NULL};
	return 0;
}

/* One frame of runtime named text, where NULL or FILE[:LINE]. */
static int add_runtime(struct case_thread *t, const char *runtime, const char *text,
		       const char *where)
{
	if (add_expect(t, EXPECT_RUNTIME, text, 1, 1))
		return -ENOMEM;
	t->exp[t->n_exp - 1].runtime = runtime;
	if (where && !(t->exp[t->n_exp - 1].where = strdup(where)))
		return -ENOMEM;
	return 0;
}

/* Splits line into at most max words (in place); returns the count. */
static int split(char *line, char **words, int max)
{
	int n = 0;
	char *save = NULL;

	for (char *w = strtok_r(line, " \t", &save); w && n < max; w = strtok_r(NULL, " \t", &save))
		words[n++] = w;
	return n;
}

/* The rest of the line after the first word (the line has no trailing blanks). */
static char *rest_of(char *line)
{
	char *p = line + strcspn(line, " \t");

	p += strspn(p, " \t");
	return p;
}

static int parse_line(struct replay_case *c, char *line, int lineno, char *err, size_t len)
{
	char *words[CASE_MAX_ARGS + 2], *rest = rest_of(line), copy[512];
	struct case_thread *t = c->n_threads ? &c->threads[c->n_threads - 1] : NULL;
	int n;

	snprintf(copy, sizeof(copy), "%s", line);
	n = split(copy, words, CASE_MAX_ARGS + 2);
	if (!n)
		return 0;
	if (!strcmp(words[0], "workload") && n >= 2) {
		c->workload = strdup(words[1]);
		for (int i = 2; i < n && c->n_args < CASE_MAX_ARGS; i++)
			c->args[c->n_args++] = strdup(words[i]);
		return c->workload ? 0 : -ENOMEM;
	}
	if (!strcmp(words[0], "python") && n >= 3) {
		c->python = strdup(words[1]);
		c->workload = strdup(words[2]);
		for (int i = 3; i < n && c->n_args < CASE_MAX_ARGS; i++)
			c->args[c->n_args++] = strdup(words[i]);
		return c->python && c->workload ? 0 : -ENOMEM;
	}
	if (!strcmp(words[0], "perl") && n >= 2) {
		c->perl = true;
		c->workload = strdup(words[1]);
		for (int i = 2; i < n && c->n_args < CASE_MAX_ARGS; i++)
			c->args[c->n_args++] = strdup(words[i]);
		return c->workload ? 0 : -ENOMEM;
	}
	if (!strcmp(words[0], "run") && n >= 2 && words[1][0] == '/') {
		c->run = true;
		c->workload = strdup(words[1]);
		for (int i = 2; i < n && c->n_args < CASE_MAX_ARGS; i++)
			c->args[c->n_args++] = strdup(words[i]);
		return c->workload ? 0 : -ENOMEM;
	}
	if (!strcmp(words[0], "copy") && n == 1) {
		c->from_copy = true;
		return 0;
	}
	if (!strcmp(words[0], "copy") && n == 3 && !strcmp(words[1], "go")) {
		char *end;
		unsigned long v = strtoul(words[2], &end, 10);

		if (*end || !v || v > OP_STACK_COPY_GO_MAX)
			return fail(err, len, lineno, "copy go: 1 to %d bytes",
				    OP_STACK_COPY_GO_MAX);
		c->from_copy = true;
		c->copy_go = (uint32_t)v;
		return 0;
	}
	if (!strcmp(words[0], "copy") && n >= 3 && !strcmp(words[1], "stops")) {
		c->from_copy = true;
		free(c->copy_stop);
		c->copy_stop = strdup(rest_of(rest_of(line)));
		return c->copy_stop ? 0 : -ENOMEM;
	}
	if (!strcmp(words[0], "memory") && n == 2 && !strcmp(words[1], "writable")) {
		c->copy_writable = true;
		return 0;
	}
	if (!strcmp(words[0], "snapshot") && n == 2)
		return (c->snapshot = strdup(words[1])) ? 0 : -ENOMEM;
	if (!strcmp(words[0], "stop") && n >= 3 &&
	    (!strcmp(words[1], "python") || (n >= 4 && !strcmp(words[1], "rt")))) {
		/* A condition on the runtime's innermost frame, alone or with another stop. */
		c->stop_runtime = runtime_named(n == 3 ? "python" : words[2]);
		if (!c->stop_runtime)
			return fail(err, len, lineno, "no runtime '%s'", words[2]);
		if (!c->stop_where)
			c->stop = STOP_RUNTIME;
		free(c->stop_rt_name);
		/* The name is the rest of the line (Ruby's "block in X"). */
		return (c->stop_rt_name = strdup(n == 3 ? words[2] : rest_of(rest_of(rest))))
			   ? 0
			   : -ENOMEM;
	}
	if (!strcmp(words[0], "stop") && n >= 2) {
		if (!strcmp(words[1], "plt"))
			c->stop = STOP_PLT;
		else if (!strcmp(words[1], "vdso"))
			c->stop = STOP_VDSO;
		else if (!strcmp(words[1], "anon"))
			c->stop = STOP_ANON;
		else if (n == 3 && (!strcmp(words[1], "in") || !strcmp(words[1], "at")))
			c->stop = words[1][0] == 'i' ? STOP_IN : STOP_AT;
		else if (n >= 3 && !strcmp(words[1], "file"))
			c->stop = STOP_FILE;
		else
			return fail(err, len, lineno,
				    "stop in|at|python|file NAME, stop rt RUNTIME NAME, stop plt, "
				    "stop vdso or stop anon");
		c->stop_where = true;
		/* A file's path may hold spaces ("/dev/zero (deleted)"): the rest of the line. */
		if (c->stop == STOP_FILE)
			return (c->stop_name = strdup(rest_of(rest))) ? 0 : -ENOMEM;
		if (c->stop == STOP_IN || c->stop == STOP_AT)
			return (c->stop_name = strdup(words[2])) ? 0 : -ENOMEM;
		return 0;
	}
	if (!strcmp(words[0], "settle") && n == 2) {
		c->settle_ms = atoi(words[1]);
		return 0;
	}
	if (!strcmp(words[0], "step") && n == 2) {
		c->step_main = !strcmp(words[1], "main");
		return 0;
	}
	if (!strcmp(words[0], "known_failure") && n >= 2)
		return (c->known_failure = strdup(rest)) ? 0 : -ENOMEM;
	if (!strcmp(words[0], "thread") && n == 2) {
		struct case_thread *threads =
		    realloc(c->threads, (c->n_threads + 1) * sizeof(*threads));

		if (!threads)
			return -ENOMEM;
		c->threads = threads;
		c->threads[c->n_threads] = (struct case_thread){strdup(words[1]), NULL, 0};
		return c->threads[c->n_threads++].select ? 0 : -ENOMEM;
	}
	if (!t)
		return fail(err, len, lineno, "'%s' before any 'thread' line, or unknown",
			    words[0]);
	/* Names may hold spaces (demangled C++): the rest of the line. */
	if (!strcmp(words[0], "frame") && n >= 2)
		return add_expect(t, EXPECT_FRAME, rest, 1, 1);
	if (!strcmp(words[0], "like") && n >= 2)
		return add_expect(t, EXPECT_LIKE, rest, 1, 1);
	if (!strcmp(words[0], "error") && n >= 2)
		return add_expect(t, EXPECT_ERROR, rest, 1, 1);
	if ((!strcmp(words[0], "py") || !strcmp(words[0], "pl")) && (n == 2 || n == 3))
		return add_runtime(t, runtime_named(words[0][1] == 'y' ? "python" : "perl"),
				   words[1], n == 3 ? words[2] : NULL);
	if (!strcmp(words[0], "rt") && n >= 3) {
		/* rt RUNTIME NAME [@ FILE[:LINE]]: NAME may hold spaces. */
		char name[512], *at;
		const char *runtime = runtime_named(words[1]);

		if (!runtime)
			return fail(err, len, lineno, "no runtime '%s'", words[1]);
		snprintf(name, sizeof(name), "%s", rest_of(rest));
		at = strstr(name, " @ ");
		if (at) {
			*at = 0;
			at += 3;
			at += strspn(at, " \t");
		}
		return add_runtime(t, runtime, name, at);
	}
	if (!strcmp(words[0], "gap") && n == 3) {
		unsigned int min = (unsigned int)atoi(words[1]), max = (unsigned int)atoi(words[2]);

		if (min > max || max > MAX_REPEAT)
			return fail(err, len, lineno, "gap MIN MAX with MIN <= MAX <= %d",
				    MAX_REPEAT);
		return add_expect(t, EXPECT_GAP, NULL, min, max);
	}
	if (!strcmp(words[0], "repeat") && n == 3) {
		int count = atoi(words[1]);

		if (count < 1 || count > MAX_REPEAT)
			return fail(err, len, lineno, "repeat N NAME with 1 <= N <= %d",
				    MAX_REPEAT);
		for (int i = 0; i < count; i++)
			if (add_expect(t, EXPECT_FRAME, words[2], 1, 1))
				return -ENOMEM;
		return 0;
	}
	if (!strcmp(words[0], "seq") && n == 4) {
		int from = atoi(words[2]), to = atoi(words[3]), step = from <= to ? 1 : -1;
		char name[256];

		if (!strchr(words[1], '%') || abs(to - from) > MAX_REPEAT)
			return fail(err, len, lineno, "seq FORMAT FROM TO (FORMAT holds one %%d)");
		for (int i = from;; i += step) {
			snprintf(name, sizeof(name), words[1], i);
			if (add_expect(t, EXPECT_FRAME, name, 1, 1))
				return -ENOMEM;
			if (i == to)
				break;
		}
		return 0;
	}
	return fail(err, len, lineno, "cannot parse '%s'", line);
}

int case__load(const char *path, struct replay_case *c, char *err, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[512], *copy, *base;
	int lineno = 0, rc = 0;

	memset(c, 0, sizeof(*c));
	c->settle_ms = 200;
	c->step_main = true;
	if (!f) {
		snprintf(err, len, "%s", strerror(errno));
		return -errno;
	}
	copy = strdup(path);
	if (!copy) {
		fclose(f);
		return -ENOMEM;
	}
	c->dir = strdup(dirname(copy));
	strcpy(copy, path);
	base = basename(copy);
	if (strlen(base) > 5 && !strcmp(base + strlen(base) - 5, ".case"))
		base[strlen(base) - 5] = 0;
	c->name = strdup(base);
	free(copy);
	while (!rc && fgets(line, sizeof(line), f)) {
		char *hash = line;

		lineno++;
		/* A comment starts with '#' at the start or after a blank (Ruby's "Shop#leaf" is a
		 * name). */
		while ((hash = strchr(hash, '#')) && hash != line && hash[-1] != ' ' &&
		       hash[-1] != '\t')
			hash++;
		if (hash)
			*hash = 0;
		line[strcspn(line, "\r\n")] = 0;
		for (size_t n = strlen(line); n && (line[n - 1] == ' ' || line[n - 1] == '\t'); n--)
			line[n - 1] = 0;
		rc = parse_line(c, line + strspn(line, " \t"), lineno, err, len);
	}
	fclose(f);
	if (!rc && !c->workload && !c->snapshot)
		rc = fail(err, len, lineno, "no 'workload' or 'snapshot' line");
	if (!rc && !c->n_threads)
		rc = fail(err, len, lineno, "no 'thread' line: the case would assert nothing");
	for (size_t i = 0; !rc && i < c->n_threads; i++)
		if (!c->threads[i].n_exp)
			rc = fail(err, len, lineno, "thread %s expects no frames",
				  c->threads[i].select);
	if (rc == -ENOMEM)
		snprintf(err, len, "out of memory");
	if (rc)
		case__free(c);
	return rc;
}

void case__free(struct replay_case *c)
{
	free(c->name);
	free(c->dir);
	free(c->workload);
	free(c->copy_stop);
	free(c->python);
	for (int i = 0; i < c->n_args; i++)
		free(c->args[i]);
	free(c->snapshot);
	free(c->stop_name);
	free(c->stop_rt_name);
	free(c->known_failure);
	for (size_t i = 0; i < c->n_threads; i++) {
		for (size_t j = 0; j < c->threads[i].n_exp; j++) {
			free(c->threads[i].exp[j].text);
			free(c->threads[i].exp[j].where);
		}
		free(c->threads[i].exp);
		free(c->threads[i].select);
	}
	free(c->threads);
	memset(c, 0, sizeof(*c));
}
