// SPDX-License-Identifier: Apache-2.0
/*
 * The runtime seam: every registered runtime owns a frame kind of the
 * frame-kind table and no two share one, every kind has an OTLP frame type
 * and a display name, the generic resolve/describe keep (id, offset) for a
 * runtime's frame and leave other frames alone, and the process table tells
 * its listeners about maps reads, exits and forgotten processes (this
 * test's own process), a waiting process published by a later read included;
 * and, on real BPF maps, that publishing a process's ranges bumps the
 * generation the sampler's CPUs check before they skip the lookup.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/bpf.h>

#include "engine/collector.h"
#include "interp/interp.h"
#include "profile/profile.h"
#include "unwind/interp_ranges.h"

/* The profile.frame.type values of the semantic conventions (v1.44). */
static bool semconv_frame_type(const char *t)
{
	static const char *const known[] = {"dotnet",  "jvm",  "kernel", "native", "perl", "php",
					    "cpython", "ruby", "v8js",	 "beam",   "go",   "rust"};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(t, known[i]))
			return true;
	return false;
}

static void test_frame_kinds(void **state)
{
	(void)state;
	unsigned int rows = 0;

	assert_int_equal(OP_FRAME_KIND_COUNT, PROFILE_FRAME_KIND_COUNT);
	for (unsigned int k = 0; k < OP_FRAME_KIND_COUNT; k++) {
		const char *otlp = profile_frame_kind__otlp_type(k);
		const char *name = profile_frame_kind__name(k);

		/* A value no row has (a runtime merged before the one below it). */
		if (!name) {
			assert_string_equal(otlp, "native");
			continue;
		}
		assert_non_null(otlp);
		assert_true(semconv_frame_type(otlp));
		for (unsigned int j = 0; j < k; j++) {
			if (!profile_frame_kind__name(j))
				continue;
			/* The unwinder's stop is typed as the native frames it stopped among. */
			if (j != PROFILE_FRAME_ERROR && k != PROFILE_FRAME_ERROR)
				assert_string_not_equal(profile_frame_kind__otlp_type(j), otlp);
			assert_string_not_equal(profile_frame_kind__name(j), name);
		}
		rows++;
	}
	/* Every row has its value: none is shadowed by a duplicate value. */
	assert_int_equal(rows, OP_FRAME_KIND_ROWS);
	assert_null(profile_frame_kind__name(OP_FRAME_KIND_COUNT));
	assert_string_equal(profile_frame_kind__otlp_type(OP_FRAME_KIND_COUNT), "native");
	assert_string_equal(profile_frame_kind__otlp_type(PROFILE_FRAME_ERROR), "native");
	assert_string_equal(profile_frame_kind__otlp_type(PROFILE_FRAME_NATIVE), "native");
	assert_string_equal(profile_frame_kind__otlp_type(PROFILE_FRAME_KERNEL), "kernel");
}

static void test_registry(void **state)
{
	(void)state;
	assert_true(interp_registry_len >= 1);
	assert_null(interp__of_kind(OP_FRAME_NATIVE));
	assert_null(interp__of_kind(OP_FRAME_KERNEL));
	assert_null(interp__of_kind(OP_FRAME_ERROR));
	assert_null(interp__of_kind(OP_FRAME_KIND_COUNT));
	for (size_t r = 0; r < interp_registry_len; r++) {
		const struct interp_ops *ops = interp_registry[r];
		struct op_frame f = {.addr = 0x1234, .aux = 42, .kind = (uint8_t)ops->kind};
		const char *name = NULL, *file = NULL;
		uint32_t id = 99;
		uint64_t offset = 0;
		int64_t line = -1;

		assert_true((unsigned)ops->kind < OP_FRAME_KIND_COUNT);
		assert_ptr_equal(interp__of_kind(ops->kind), ops);
		/* Markers of two characters or more (interp__new refuses others). */
		for (const char *const *m = ops->file_markers; m && *m; m++)
			assert_true(strlen(*m) >= 2 && (*m)[1] != '*');
		for (size_t q = 0; q < r; q++)
			assert_int_not_equal(interp_registry[q]->kind, ops->kind);
		/* No runtime state: the frame is kept unnamed, its offset kept. */
		assert_true(interp__resolve(NULL, 1, &f, &id, &offset));
		assert_int_equal(id, 0);
		assert_int_equal(offset, 42);
		assert_true(interp__describe(NULL, ops->kind, 0, 42, &name, &file, &line));
		assert_non_null(name);
		assert_non_null(file);
		assert_int_equal(line, 0);
	}
	{
		struct op_frame f = {.addr = 0x1234, .aux = 42, .kind = OP_FRAME_NATIVE};
		uint32_t id = 99;
		uint64_t offset = 7;

		assert_false(interp__resolve(NULL, 1, &f, &id, &offset));
		assert_int_equal(id, 99);
		assert_int_equal(offset, 7);
	}
}

struct seen {
	uint32_t maps_read, maps_seen, exited, forget;
	uint32_t pid;
};

/* A fake runtime whose frame id ran `id` functions: f<id>_<index>, line 10 * index + 1. */
static char inline_names[4][8] = {"inner", "middle", "outer", "extra"};

static bool fake_describe_inline(const void *rt, uint32_t id, uint64_t offset, uint32_t index,
				 const char **name, const char **filename, int64_t *line)
{
	(void)rt;
	(void)offset;
	if (index >= id)
		return false;
	*name = inline_names[index];
	*filename = "fake.js";
	*line = 10 * index + 1;
	return true;
}

static void fake_describe(const void *rt, uint32_t id, uint64_t offset, const char **name,
			  const char **filename, int64_t *line)
{
	(void)rt;
	(void)id;
	*name = "single";
	*filename = "one.js";
	*line = (int64_t)offset;
}

static void test_describe_inline(void **state)
{
	struct interp_ops ops = {.name = "fake", .describe = fake_describe};
	struct interp_line out[INTERP_MAX_LINES];
	size_t n;

	(void)state;
	/* No describe_inline: describe's one function. */
	n = interp__describe_ops(&ops, NULL, 3, 7, out, INTERP_MAX_LINES);
	assert_int_equal(n, 1);
	assert_string_equal(out[0].name, "single");
	assert_string_equal(out[0].filename, "one.js");
	assert_int_equal(out[0].line, 7);

	/* Three functions, innermost first, each with its own line. */
	ops.describe_inline = fake_describe_inline;
	n = interp__describe_ops(&ops, NULL, 3, 7, out, INTERP_MAX_LINES);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(out[i].name, inline_names[i]);
		assert_string_equal(out[i].filename, "fake.js");
		assert_int_equal(out[i].line, 10 * (int64_t)i + 1);
	}
	/* Bounded by max. */
	n = interp__describe_ops(&ops, NULL, 4, 7, out, 2);
	assert_int_equal(n, 2);
	assert_string_equal(out[1].name, "middle");
	/* False at index 0 (nothing inlined known): describe's one function. */
	n = interp__describe_ops(&ops, NULL, 0, 5, out, INTERP_MAX_LINES);
	assert_int_equal(n, 1);
	assert_string_equal(out[0].name, "single");
	assert_int_equal(out[0].line, 5);

	/* Every registered runtime describes an unnamed frame as one function. */
	for (size_t r = 0; r < interp_registry_len; r++) {
		n = interp__describe_lines(NULL, interp_registry[r]->kind, 0, 42, out,
					   INTERP_MAX_LINES);
		assert_int_equal(n, 1);
		assert_non_null(out[0].name);
	}
	assert_int_equal(interp__describe_lines(NULL, OP_FRAME_NATIVE, 0, 42, out, 1), 0);
}

static void on_maps_read(void *ctx, const struct process *p)
{
	((struct seen *)ctx)->maps_read++;
	((struct seen *)ctx)->pid = p->pid;
}

static void on_exited(void *ctx, const struct process *p)
{
	assert_true(p->exited);
	((struct seen *)ctx)->exited++;
}

static void on_forget(void *ctx, const struct process *p)
{
	(void)p;
	((struct seen *)ctx)->forget++;
}

static void test_listeners(void **state)
{
	struct seen a = {0}, b = {0};
	struct process_listener la = {
	    .maps_read = on_maps_read, .exited = on_exited, .forget = on_forget, .ctx = &a};
	struct process_listener lb = {.exited = on_exited, .ctx = &b};
	struct collector c;
	uint32_t self = (uint32_t)getpid();
	struct interp_env env = {0};
	struct interp *in = NULL;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	assert_int_equal(process_table__add_listener(&c.procs, &la), 0);
	assert_int_equal(process_table__add_listener(&c.procs, &lb), 0);
	/* The runtimes' listener too: no BPF object, nothing to publish. */
	env.files = &c.files;
	assert_int_equal(interp__new(&env, &c.procs, &in), 0);
	assert_int_equal(c.procs.n_listeners, 3);
	assert_non_null(process_table__get(&c.procs, self));
	collector__poll_files(&c);
	for (int i = 0; i < 200 && c.procs.n_waiting; i++) {
		usleep(10000);
		collector__poll_files(&c);
	}
	assert_int_equal(c.procs.n_waiting, 0);
	assert_true(a.maps_read >= 1);
	assert_int_equal(a.pid, self);
	/* This test's files (libc, libelf, ...) were read once for every runtime's
	 * markers, and are none's. */
	{
		unsigned long long scanned = 0, none = 1;
		size_t len = 0;
		char *text = NULL, *at;
		FILE *f = open_memstream(&text, &len);

		assert_non_null(f);
		interp__print_counters(in, f);
		fclose(f);
		at = strstr(text, "runtimes: files' symbols read once");
		assert_non_null(at);
		scanned = strtoull(at + strlen("runtimes: files' symbols read once"), NULL, 10);
		at = strstr(text, "runtimes: files of no runtime");
		assert_non_null(at);
		none = strtoull(at + strlen("runtimes: files of no runtime"), NULL, 10);
		free(text);
		assert_true(scanned >= 3);
		assert_int_equal(none, scanned);
	}
	process_table__mark_exited(&c.procs, self);
	assert_int_equal(a.exited, 1);
	assert_int_equal(b.exited, 1);
	process_table__remove_listener(&c.procs, &b);
	assert_int_equal(process_table__purge(&c.procs, false), 1);
	assert_int_equal(a.forget, 1);
	assert_int_equal(b.forget, 0);
	interp__free(in);
	assert_int_equal(c.procs.n_listeners, 1);
	/* Full: the cap is reported, not overrun. */
	for (size_t i = c.procs.n_listeners; i < PROCESS_LISTENERS_MAX; i++)
		assert_int_equal(process_table__add_listener(&c.procs, &lb), 0);
	assert_int_equal(process_table__add_listener(&c.procs, &lb), -ENOSPC);
	collector__clear(&c);
}

static void count_job(void *ctx, struct file_job *job, bool abandoned)
{
	struct collector *c = ctx;

	if (job->kind == FILE_JOB_OPEN)
		file_cache__install(&c->files, (struct file_open_job *)job, abandoned);
	if (!abandoned)
		job->free(job);
}

/*
 * A process read while its files were being opened waits; read again once
 * they are (before the collector's poll published it), that read publishes
 * it: it must wait no longer (issue 16: still "waiting", its next read took
 * its published maps for unpublished ones and it was never purged).
 */
static void test_refresh_after_wait(void **state)
{
	struct seen a = {0};
	struct process_listener la = {.maps_read = on_maps_read, .ctx = &a};
	struct file_worker *fw = NULL;
	struct collector c;
	struct process *p;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	assert_int_equal(file_worker__new(0, 0, &fw), 0);
	c.files.worker = fw; /* as a session has it: files open off the reading thread */
	assert_int_equal(process_table__add_listener(&c.procs, &la), 0);
	p = process_table__get(&c.procs, (uint32_t)getpid());
	assert_non_null(p);
	assert_true(p->waiting);
	assert_int_equal(c.procs.n_waiting, 1);
	/* The opens come back without publish_ready() (no collector poll). */
	for (int i = 0; i < 500; i++) {
		bool pending = false;

		file_worker__poll(c.files.worker, count_job, &c);
		for (size_t k = 0; k < p->n_maps; k++) {
			const struct cached_file *f =
			    file_cache__at(&c.files, p->maps[k].file_slot);

			pending |= f && f->pending;
		}
		if (!pending)
			break;
		usleep(10000);
	}
	assert_true(p->waiting);
	assert_int_equal(a.maps_read, 0);
	assert_int_equal(process_table__refresh(&c.procs, p), 0);
	assert_int_equal(a.maps_read, 1);
	assert_false(p->waiting);
	assert_int_equal(c.procs.n_waiting, 0);
	/* A later read is an ordinary one: the published maps become the old ones. */
	assert_int_equal(process_table__refresh(&c.procs, p), 0);
	assert_int_equal(a.maps_read, 2);
	assert_false(p->waiting);
	process_table__mark_exited(&c.procs, p->pid);
	assert_int_equal(process_table__purge(&c.procs, false), 1);
	collector__clear(&c);
	file_worker__free(fw);
}

static void on_maps_seen(void *ctx, const struct process *p)
{
	assert_true(p->waiting);
	((struct seen *)ctx)->maps_seen++;
}

/* The open jobs the worker handed back, kept to be installed one by one. */
struct kept_jobs {
	struct file_job *job[64];
	size_t n;
};

static void keep_job(void *ctx, struct file_job *job, bool abandoned)
{
	struct kept_jobs *k = ctx;

	assert_false(abandoned);
	assert_int_equal(job->kind, FILE_JOB_OPEN);
	assert_true(k->n < sizeof(k->job) / sizeof(k->job[0]));
	k->job[k->n++] = job;
}

static uint32_t pending_files(struct collector *c, const struct process *p)
{
	uint32_t n = 0;

	for (size_t k = 0; k < p->n_maps; k++) {
		const struct cached_file *f = file_cache__at(&c->files, p->maps[k].file_slot);

		n += f && f->pending;
	}
	return n;
}

/*
 * A waiting process is offered again (maps_seen) when a file that was being
 * opened at its last offer is open, while it still waits for the rest (in a
 * recording: node's table, built for seconds): a runtime cannot inspect a
 * file still being opened, and was told of the process again only once it
 * was published (issue 16: a node process attached only after its 100 MB
 * table was built, some never within the recording). Once per file opened,
 * never again without one: bounded.
 */
static void test_reoffer_when_opened(void **state)
{
	struct seen a = {0};
	struct process_listener la = {
	    .maps_read = on_maps_read, .maps_seen = on_maps_seen, .ctx = &a};
	struct file_worker *fw = NULL;
	struct kept_jobs kept = {0};
	struct collector c;
	struct process *p;
	uint32_t pending;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	assert_int_equal(file_worker__new(0, 0, &fw), 0);
	c.files.worker = fw;
	assert_int_equal(process_table__add_listener(&c.procs, &la), 0);
	p = process_table__get(&c.procs, (uint32_t)getpid());
	assert_non_null(p);
	assert_true(p->waiting);
	assert_int_equal(a.maps_seen, 1);
	pending = pending_files(&c, p);
	/* The test binary, libc, cmocka, the loader at least: more than one. */
	assert_true(pending >= 2);
	assert_int_equal(p->offered_pending, pending);
	for (int i = 0; i < 500 && kept.n < pending; i++) {
		file_worker__poll(c.files.worker, keep_job, &kept);
		if (kept.n < pending)
			usleep(10000);
	}
	assert_int_equal(kept.n, pending);
	/* Nothing installed yet: nothing new to offer, however often it is polled. */
	assert_int_equal(process_table__publish_ready(&c.procs, NULL, NULL), 0);
	assert_int_equal(a.maps_seen, 1);
	/* One file open: offered again, with it no longer pending. */
	assert_int_not_equal(
	    file_cache__install(&c.files, (struct file_open_job *)kept.job[0], false), 0);
	kept.job[0]->free(kept.job[0]);
	assert_int_equal(process_table__publish_ready(&c.procs, NULL, NULL), 0);
	assert_int_equal(a.maps_seen, 2);
	assert_int_equal(c.procs.stats.reoffered, 1);
	assert_int_equal(p->offered_pending, pending - 1);
	assert_int_equal(pending_files(&c, p), pending - 1);
	assert_true(p->waiting);
	assert_int_equal(process_table__publish_ready(&c.procs, NULL, NULL), 0);
	assert_int_equal(a.maps_seen, 2);
	/* The rest: published (maps_read), not offered as waiting again. */
	for (size_t i = 1; i < kept.n; i++) {
		file_cache__install(&c.files, (struct file_open_job *)kept.job[i], false);
		kept.job[i]->free(kept.job[i]);
	}
	assert_int_equal(process_table__publish_ready(&c.procs, NULL, NULL), 1);
	assert_false(p->waiting);
	assert_int_equal(a.maps_read, 1);
	assert_int_equal(a.maps_seen, 2);
	assert_int_equal(c.procs.stats.reoffered, 1);
	assert_int_equal(p->offered_pending, 0);
	collector__clear(&c);
	file_worker__free(fw);
}

/* interp__print_counters' "runtimes: files' symbols read once". */
static unsigned long long files_scanned(struct interp *in)
{
	const char *label = "runtimes: files' symbols read once";
	unsigned long long n;
	size_t len = 0;
	char *text = NULL, *at;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	interp__print_counters(in, f);
	fclose(f);
	at = strstr(text, label);
	assert_non_null(at);
	n = strtoull(at + strlen(label), NULL, 10);
	free(text);
	return n;
}

/* Polls the worker until no file of p is pending, installing what comes back. */
static void opens_done(struct collector *c, const struct process *p)
{
	for (int i = 0; i < 500 && pending_files(c, p); i++) {
		file_worker__poll(c->files.worker, count_job, c);
		usleep(10000);
	}
	assert_int_equal(pending_files(c, p), 0);
}

/*
 * A file whose open failed because the process it went through was gone is
 * opened again through the next process that maps it (file_cache.h,
 * FILE_CACHE_OPENS). The runtimes inspect it then, not before: a mapping of
 * a file without an ELF has no bias, which they skip, so nothing is
 * remembered of it (a libpython opened through a gone process must not leave
 * later Python processes walked as native). libc stands for the file here:
 * its symbols are read once it is open, not while it is not.
 */
static void test_inspected_once_opened_again(void **state)
{
	struct file_worker *fw = NULL;
	struct kept_jobs kept = {0};
	struct interp_env env = {0};
	struct interp *in = NULL;
	struct process *self, *other;
	struct collector c;
	uint32_t libc_slot = 0, pending;
	unsigned long long scanned;
	pid_t child;

	(void)state;
	assert_int_equal(collector__init(&c), 0);
	assert_int_equal(file_worker__new(0, 0, &fw), 0);
	c.files.worker = fw;
	env.files = &c.files;
	assert_int_equal(interp__new(&env, &c.procs, &in), 0);
	self = process_table__get(&c.procs, (uint32_t)getpid());
	assert_non_null(self);
	pending = pending_files(&c, self);
	for (int i = 0; i < 500 && kept.n < pending; i++) {
		file_worker__poll(c.files.worker, keep_job, &kept);
		if (kept.n < pending)
			usleep(10000);
	}
	assert_int_equal(kept.n, pending);
	/* libc's open fails as an open through a process gone since fails. */
	for (size_t i = 0; i < kept.n; i++) {
		struct file_open_job *j = (struct file_open_job *)kept.job[i];
		const char *base = strrchr(j->map.path, '/');

		if (base && !strncmp(base, "/libc.so", 8)) {
			libc_slot = j->file_slot;
			j->job.err = -ENOENT;
			j->opened = false;
		}
		file_cache__install(&c.files, j, false);
		kept.job[i]->free(kept.job[i]);
	}
	assert_true(libc_slot != 0);
	assert_null(file_cache__at(&c.files, libc_slot)->elf);
	/* Published without it: the runtimes look at its files, libc among them. */
	assert_int_equal(process_table__publish_ready(&c.procs, NULL, NULL), 1);
	scanned = files_scanned(in);
	assert_true(scanned >= 2); /* the test binary, cmocka, ...: not libc */

	/* Another process maps libc: opened again through it, and read once open. */
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		for (;;)
			pause();
	}
	other = process_table__get(&c.procs, (uint32_t)child);
	assert_non_null(other);
	assert_int_equal(c.files.stats.open_retries, 1);
	opens_done(&c, other);
	assert_int_equal(process_table__publish_ready(&c.procs, NULL, NULL), 1);
	assert_non_null(file_cache__at(&c.files, libc_slot)->elf);
	assert_int_equal(files_scanned(in), scanned + 1);

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	interp__free(in);
	collector__clear(&c);
	file_worker__free(fw);
}

static uint64_t generation(int fd)
{
	uint32_t zero = 0;
	uint64_t gen = ~0ull;

	assert_int_equal(bpf_map_lookup_elem(fd, &zero, &gen), 0);
	return gen;
}

/* The sampler remembers a pid found without ranges until interp_gen changes
 * (bpf/sampler.bpf.c interp_procs_of): every publication must change it after
 * the entry is in; a removal need not. */
static void test_publish_bumps_generation(void **state)
{
	struct op_interp_proc v, got;
	uint32_t pid = 4000000;
	int map = bpf_map_create(BPF_MAP_TYPE_HASH, "test_interp", 4, sizeof(v), 16, NULL);
	int gen = bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_interp_gen", 4, 8, 1, NULL);

	(void)state;
	/* Real maps: fails loudly without BPF (root). */
	assert_true(map >= 0);
	assert_true(gen >= 0);
	memset(&v, 0, sizeof(v));
	assert_int_equal(op_interp_proc__add(&v, 1, 0x1000, 0x2000, 0), 0);
	assert_int_equal(generation(gen), 0);
	assert_int_equal(interp_procs__publish(map, gen, pid, &v), 0);
	assert_int_equal(bpf_map_lookup_elem(map, &pid, &got), 0);
	assert_memory_equal(&got, &v, sizeof(v));
	assert_int_equal(generation(gen), 1);
	assert_int_equal(interp_procs__publish(map, gen, pid, &v), 0);
	assert_int_equal(generation(gen), 2);
	assert_int_equal(interp_procs__remove(map, pid), 0);
	assert_true(bpf_map_lookup_elem(map, &pid, &got) < 0);
	assert_int_equal(generation(gen), 2);
	/* No generation map: the entry still goes in. */
	assert_int_equal(interp_procs__publish(map, -1, pid, &v), 0);
	assert_int_equal(generation(gen), 2);
	close(map);
	close(gen);
}

/* A publication whose generation cannot be bumped (here: a generation map
 * without key 0) fails and leaves no entry: the caller, told it failed, never
 * takes the pid out, and the CPUs that remember the pid without one would not
 * see it. */
static void test_publish_unbumped_leaves_nothing(void **state)
{
	struct op_interp_proc v, got;
	uint32_t pid = 4000001;
	int map = bpf_map_create(BPF_MAP_TYPE_HASH, "test_interp", 4, sizeof(v), 16, NULL);
	int gen = bpf_map_create(BPF_MAP_TYPE_HASH, "test_interp_gen", 4, 8, 1, NULL);

	(void)state;
	/* Real maps: fails loudly without BPF (root). */
	assert_true(map >= 0);
	assert_true(gen >= 0);
	memset(&v, 0, sizeof(v));
	assert_int_equal(op_interp_proc__add(&v, 1, 0x1000, 0x2000, 0), 0);
	assert_int_equal(interp_procs__publish(map, gen, pid, &v), -ENOENT);
	assert_true(bpf_map_lookup_elem(map, &pid, &got) < 0);
	/* An entry there before goes too: its value is not what was asked. */
	assert_int_equal(interp_procs__publish(map, -1, pid, &v), 0);
	assert_int_equal(interp_procs__publish(map, gen, pid, &v), -ENOENT);
	assert_true(bpf_map_lookup_elem(map, &pid, &got) < 0);
	close(map);
	close(gen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frame_kinds),
	    cmocka_unit_test(test_publish_bumps_generation),
	    cmocka_unit_test(test_publish_unbumped_leaves_nothing),
	    cmocka_unit_test(test_registry),
	    cmocka_unit_test(test_describe_inline),
	    cmocka_unit_test(test_listeners),
	    cmocka_unit_test(test_refresh_after_wait),
	    cmocka_unit_test(test_reoffer_when_opened),
	    cmocka_unit_test(test_inspected_once_opened_again),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
