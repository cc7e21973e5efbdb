// SPDX-License-Identifier: Apache-2.0
#include "proc/cgroup.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/read_file.h"

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * Finds a run of exactly 64 hex digits in [s, end) bounded by separators
 * ('-', '.', ':', '_' or the component's ends). Returns its start or NULL.
 */
static const char *find_id(const char *s, const char *end)
{
	const char *p = s;

	while (p < end) {
		const char *q = p;

		while (q < end && is_hex(*q))
			q++;
		if (q - p == CGROUP_ID_LEN && (p == s || strchr("-.:_", p[-1])) &&
		    (q == end || strchr("-.:_", *q)))
			return p;
		p = q < end ? q + 1 : q;
	}
	return NULL;
}

/* The id of the innermost container component of one cgroup path, or NULL. */
static const char *path_id(const char *path, const char *end)
{
	const char *found = NULL;

	while (path < end) {
		const char *slash = memchr(path, '/', (size_t)(end - path));
		const char *comp_end = slash ? slash : end;
		const char *id = find_id(path, comp_end);

		/* "libpod-conmon-ID.scope", "crio-conmon-ID.scope": the monitor, not the container.
		 */
		if (id && !memmem(path, (size_t)(comp_end - path), "conmon", 6))
			found = id;
		path = slash ? slash + 1 : end;
	}
	return found;
}

int cgroup__parse_container_id(const char *text, char out[CGROUP_ID_LEN + 1])
{
	const char *line = text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		const char *end = nl ? nl : line + strlen(line);
		/* "hierarchy-id:controllers:path"; the path may itself hold ':'. */
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
		const char *id = c2 ? path_id(c2 + 1, end) : NULL;

		if (id) {
			for (int i = 0; i < CGROUP_ID_LEN; i++)
				out[i] = (char)tolower((unsigned char)id[i]);
			out[CGROUP_ID_LEN] = '\0';
			return 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

int cgroup__container_id(uint32_t pid, char out[CGROUP_ID_LEN + 1])
{
	char path[64];
	char *text;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	err = read_file(path, &text, &len);
	if (err)
		return err;
	err = cgroup__parse_container_id(text, out);
	free(text);
	return err;
}

/*
 * The JSON string value that follows "key": in text, unescaped into out.
 * A search, not a parser: the files read here are written by the runtimes and
 * the keys looked up are unique in them. 0 or -ENOENT.
 */
static int json_string_after(const char *text, const char *key, char *out, size_t size)
{
	char pattern[128];
	const char *p;
	size_t n = 0;

	snprintf(pattern, sizeof(pattern), "\"%s\"", key);
	p = strstr(text, pattern);
	if (!p)
		return -ENOENT;
	p += strlen(pattern);
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (*p++ != ':')
		return -ENOENT;
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (*p++ != '"')
		return -ENOENT;
	for (; *p && *p != '"'; p++) {
		char c = *p;

		if (c == '\\' && p[1])
			c = *++p; /* \" and \\ ; other escapes do not occur in names */
		if (n + 1 < size)
			out[n++] = c;
	}
	if (*p != '"' || !n)
		return -ENOENT;
	out[n] = '\0';
	return 0;
}

int cgroup__container_name(const char *root, const char *id, char *out, size_t size)
{
	/* Where each runtime keeps a container's configuration, and the key naming it. */
	static const struct {
		const char *fmt;
		const char *key;
	} sources[] = {
	    {"%s/var/lib/docker/containers/%s/config.v2.json", "Name"},
	    {"%s/run/containerd/io.containerd.runtime.v2.task/k8s.io/%s/config.json",
	     "io.kubernetes.cri.container-name"},
	    {"%s/run/containers/storage/overlay-containers/%s/userdata/config.json",
	     "io.kubernetes.container.name"},
	};
	char path[4096], name[256];

	if (!size)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		char *text;
		size_t len;
		int err;

		snprintf(path, sizeof(path), sources[i].fmt, strcmp(root, "/") ? root : "", id);
		if (read_file(path, &text, &len))
			continue;
		err = json_string_after(text, sources[i].key, name, sizeof(name));
		free(text);
		if (err)
			continue;
		/* docker stores "/name" */
		snprintf(out, size, "%s", name[0] == '/' ? name + 1 : name);
		if (out[0])
			return 0;
	}
	return -ENOENT;
}
