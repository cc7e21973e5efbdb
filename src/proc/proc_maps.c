// SPDX-License-Identifier: Apache-2.0
#include "proc/proc_maps.h"
#include "util/array.h"
#include "util/read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A cursor over one line; every read is bounded by end. */
struct cursor {
	const char *p;
	const char *end;
};

static bool parse_hex(struct cursor *c, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	for (; c->p < c->end; c->p++, digits++) {
		char ch = *c->p;
		int d;

		if (ch >= '0' && ch <= '9')
			d = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			d = ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			d = ch - 'A' + 10;
		else
			break;
		if (digits >= 16)
			return false; /* would overflow 64 bits */
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return digits > 0;
}

static bool parse_dec(struct cursor *c, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	for (; c->p < c->end && *c->p >= '0' && *c->p <= '9'; c->p++, digits++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*c->p - '0');
	}
	*out = v;
	return digits > 0;
}

static bool expect(struct cursor *c, char ch)
{
	if (c->p >= c->end || *c->p != ch)
		return false;
	c->p++;
	return true;
}

static void skip_spaces(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

/* "start-end perms offset major:minor inode   path" */
static int parse_line(const char *line, const char *end, struct proc_map *m)
{
	struct cursor c = {line, end};
	uint64_t major, minor;
	const char *perms;
	size_t path_len;

	memset(m, 0, sizeof(*m));
	if (!parse_hex(&c, &m->start) || !expect(&c, '-') || !parse_hex(&c, &m->end) ||
	    !expect(&c, ' '))
		return -EINVAL;
	if (c.end - c.p < 5)
		return -EINVAL;
	perms = c.p;
	m->perms = (perms[0] == 'r' ? PROC_MAP_R : 0) | (perms[1] == 'w' ? PROC_MAP_W : 0) |
		   (perms[2] == 'x' ? PROC_MAP_X : 0) | (perms[3] == 'p' ? PROC_MAP_P : 0);
	c.p += 4;
	if (!expect(&c, ' ') || !parse_hex(&c, &m->offset) || !expect(&c, ' ') ||
	    !parse_hex(&c, &major) || !expect(&c, ':') || !parse_hex(&c, &minor) ||
	    !expect(&c, ' ') || !parse_dec(&c, &m->inode))
		return -EINVAL;
	if (m->end < m->start || major > UINT32_MAX || minor > UINT32_MAX)
		return -EINVAL;
	m->dev_major = (uint32_t)major;
	m->dev_minor = (uint32_t)minor;
	skip_spaces(&c);
	path_len = (size_t)(c.end - c.p);
	m->path = strndup(c.p, path_len);
	return m->path ? 0 : -ENOMEM;
}

int proc_maps__parse(const char *buf, size_t len, struct proc_map **out, size_t *n, size_t *skipped)
{
	const char *p = buf, *end = buf + len;
	struct proc_map *maps = NULL;
	size_t count = 0, cap = 0, bad = 0;
	int err;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;

		if (line_end > p) {
			if (array__grow(maps, cap, count)) {
				err = -ENOMEM;
				goto cleanup;
			}
			err = parse_line(p, line_end, &maps[count]);
			if (err == -ENOMEM)
				goto cleanup;
			if (err)
				bad++;
			else
				count++;
		}
		p = nl ? nl + 1 : end;
	}
	*out = maps;
	*n = count;
	if (skipped)
		*skipped = bad;
	return 0;

cleanup:
	proc_maps__free(maps, count);
	return err;
}

int proc_maps__read(pid_t pid, struct proc_map **out, size_t *n)
{
	char path[64], *buf;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	err = read_file(path, &buf, &len);
	if (err)
		return err == -ESRCH ? -ENOENT : err;
	err = proc_maps__parse(buf, len, out, n, NULL);
	free(buf);
	return err;
}

void proc_maps__free(struct proc_map *maps, size_t n)
{
	if (!maps)
		return;
	for (size_t i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}
