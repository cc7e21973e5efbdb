// SPDX-License-Identifier: Apache-2.0
/*
 * Pyroscope pushes checked against the rules of Pyroscope's ingest
 * validation (pkg/validation in grafana/pyroscope), which the agent's pushes
 * must pass or be refused (HTTP 400) or silently thinned:
 *   - a service name holds only letters, digits and `_ . - /`;
 *   - label names are [a-zA-Z_][a-zA-Z0-9_.]*, and of those starting with
 *     `__` only `__session_id__` is kept;
 *   - sample labels with a numeric value (num) are dropped.
 * And each push carries only the tables its own samples use. The bodies are
 * read back with protobuf-c's pprof decoder after gunzip.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "export/pyroscope.h"
#include "pprof_read.h"
#include "profile.pb-c.h"
#include "profile/profile.h"

typedef Perftools__Profiles__Profile pb_profile;

#define PID_WEB	   100
#define PID_KWORK  200
#define PID_MEMFD  300
#define CONTAINER  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define WEB_FUNC   "web_handler"
#define KWORK_FUNC "worker_thread"
#define MEMFD_FUNC "memfd_main"

static int describe(void *ctx, uint32_t pid, const char *comm, struct otlp_resource *out)
{
	(void)ctx;
	(void)comm;
	memset(out, 0, sizeof(*out));
	if (pid == PID_WEB) {
		out->service_name = "web";
		out->container_id = CONTAINER;
	} else if (pid == PID_KWORK) {
		out->service_name = "kworker/0:1H-events";
	} else {
		out->service_name = "memfd:jit (deleted)";
	}
	return 0;
}

/* Three processes, each with its own function, mapping and location. */
static struct profile *three_services(void)
{
	struct profile *p = profile__new(99);
	static const struct {
		uint32_t pid;
		const char *comm, *file, *func;
	} procs[] = {
	    {PID_WEB, "web", "/srv/web", WEB_FUNC},
	    {PID_KWORK, "kworker/0:1H", "/lib/modules/k.ko", KWORK_FUNC},
	    {PID_MEMFD, "memfd:jit", "/memfd:jit (deleted)", MEMFD_FUNC},
	};

	assert_non_null(p);
	p->time_ns = 1700000000000000000ull;
	p->duration_ns = 1000000000ull;
	for (size_t i = 0; i < 3; i++) {
		uint32_t m = profile__add_mapping(p, 0x1000, 0x9000, 0, procs[i].file, "");
		uint32_t f = profile__add_function(p, procs[i].func, procs[i].func, "");
		struct profile_line line = {f, 10};
		uint32_t loc = profile__add_location(p, m, 0x1234, PROFILE_FRAME_NATIVE, &line, 1);

		assert_true(m && f && loc);
		assert_int_equal(profile__add_sample(p, &loc, 1, procs[i].pid, procs[i].pid + 1,
						     procs[i].comm, "t", 5),
				 0);
	}
	return p;
}

static pb_profile *decode(const struct export_request *r)
{
	uint8_t out[1 << 16];
	z_stream zs = {0};
	pb_profile *pp;

	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = r->body;
	zs.avail_in = (uInt)r->len;
	zs.next_out = out;
	zs.avail_out = sizeof(out);
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	pp = perftools__profiles__profile__unpack(NULL, zs.total_out, out);
	inflateEnd(&zs);
	assert_non_null(pp);
	assert_true(tu_pprof_spec_ok(pp));
	return pp;
}

/* The query's name parameter, percent-decoded. */
static void url_name(const char *url, char *dst, size_t size)
{
	const char *s = strstr(url, "name=");
	size_t n = 0;

	assert_non_null(s);
	for (s += 5; *s && *s != '&' && n + 1 < size; s++) {
		if (*s == '%') {
			unsigned int c;

			assert_int_equal(sscanf(s + 1, "%2x", &c), 1);
			dst[n++] = (char)c;
			s += 2;
		} else {
			dst[n++] = *s;
		}
	}
	dst[n] = '\0';
}

static bool service_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-' || c == '/';
}

static bool label_name_ok(const char *s, size_t len)
{
	if (!len || (len >= 2 && s[0] == '_' && s[1] == '_' &&
		     !(len == 14 && !strncmp(s, "__session_id__", 14))))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' ||
		      (i && c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

/* name = SERVICE{k=v,...}: the service and every label checked; returns the labels part. */
static void check_name(const char *name, char *service, size_t size)
{
	const char *brace = strchr(name, '{'), *s;

	assert_non_null(brace);
	assert_true((size_t)(brace - name) < size);
	snprintf(service, size, "%.*s", (int)(brace - name), name);
	for (const char *c = service; *c; c++)
		assert_true(service_char_ok(*c));
	for (s = brace + 1; *s && *s != '}';) {
		const char *eq = strchr(s, '='), *end = strpbrk(s, ",}");

		assert_non_null(eq);
		assert_non_null(end);
		assert_true(label_name_ok(s, (size_t)(eq - s)));
		if (!strncmp(s, "service_name=", 13))
			for (const char *c = eq + 1; c < end; c++)
				assert_true(service_char_ok(*c));
		s = *end == ',' ? end + 1 : end;
	}
	assert_string_equal(s, "}");
}

static bool has_string(const pb_profile *pp, const char *s)
{
	for (size_t i = 0; i < pp->n_string_table; i++)
		if (!strcmp(pp->string_table[i], s))
			return true;
	return false;
}

static void test_pushes_pass_validation(void **state)
{
	struct profile *p = three_services();
	struct export_batch *b;
	bool seen_container = false;

	(void)state;
	b = pyroscope__batch(p, "http://127.0.0.1:4040", describe, NULL);
	assert_non_null(b);
	assert_int_equal(b->n, 3);
	for (size_t i = 0; i < b->n; i++) {
		char name[1024], service[256];
		pb_profile *pp = decode(&b->requests[i]);
		size_t pid_labels = 0;

		url_name(b->requests[i].url, name, sizeof(name));
		check_name(name, service, sizeof(service));
		if (strstr(name, "container_id=" CONTAINER))
			seen_container = true;
		assert_null(strstr(name, "__container_id__"));

		/* Only this push's own tables. */
		assert_int_equal(pp->n_sample, 1);
		assert_int_equal(pp->n_location, 1);
		assert_int_equal(pp->n_function, 1);
		assert_int_equal(pp->n_mapping, 1);
		assert_int_equal(has_string(pp, WEB_FUNC) + has_string(pp, KWORK_FUNC) +
				     has_string(pp, MEMFD_FUNC),
				 1);
		/* Every label string-valued (Pyroscope drops numeric ones), pid among them. */
		for (size_t l = 0; l < pp->sample[0]->n_label; l++) {
			const Perftools__Profiles__Label *lb = pp->sample[0]->label[l];
			const char *key = pp->string_table[lb->key];

			assert_int_equal(lb->num, 0);
			assert_true(lb->str > 0);
			assert_true(label_name_ok(key, strlen(key)));
			if (!strcmp(key, "pid")) {
				char *end;
				unsigned long v = strtoul(pp->string_table[lb->str], &end, 10);

				assert_true(v == PID_WEB || v == PID_KWORK || v == PID_MEMFD);
				assert_int_equal(*end, '\0');
				pid_labels++;
			}
		}
		assert_int_equal(pid_labels, 1);
		perftools__profiles__profile__free_unpacked(pp, NULL);
	}
	assert_true(seen_container);
	export_batch__free(b);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pushes_pass_validation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
