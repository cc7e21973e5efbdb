// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end PHP with Debian's php8.2 (CLI, a non-ZTS build without DWARF)
 * and php-fpm8.2, recorded with -p:
 *   - a chain of static and instance methods and a plain function
 *     (tests/workloads/php_chain.php), with OPcache's tracing JIT off and
 *     on: the whole chain, from the native php_execute_script down to the
 *     leaf, in >= 95% of the leaf's samples, and in the pprof output each
 *     frame's file and, where it calls the next function of the chain, the
 *     exact line of that call (the leaf: a line of its body; sampled in the
 *     VM, >= 90% at its loop's lines, read from the VM's opline register);
 *     with the JIT on, samples in JIT code must have been unwound
 *     (`php: JIT code frames unwound` > 0) and the leaf marked as JIT code
 *     in >= half its samples (folded "_[j]", never with the JIT off nor on
 *     an internal function); and once with every sample
 *     unwound in user space from a stack copy (--copy-all-stacks);
 *   - PHP called back from C (tests/workloads/php_callbacks.php): usort with
 *     a PHP comparator and array_map with a closure, the PHP frames around
 *     the C ones in order;
 *   - a fiber: its frames on its own C stack, never the resumer's;
 *   - php-fpm with two workers (pm = static) each serving a CPU-bound
 *     request sent by cgi-fcgi, started while the whole system is recorded
 *     (its workers forked during the recording): both workers' samples
 *     carry the request's chain; and with each worker recycled after its request while it is
 *     recorded: the recording goes on, the exited workers' frames named.
 * Needs root, BPF, php8.2, php8.2-opcache, php-fpm8.2 and cgi-fcgi: none
 * is skipped.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "folded_check.h"
#include "pprof_read.h"
#include "profile.pb-c.h"
#include "testutil.h"

#define PHP	 "/usr/bin/php8.2"
#define PHP_FPM	 "/usr/sbin/php-fpm8.2"
#define CGI_FCGI "/usr/bin/cgi-fcgi"
/* php-fpm's cases: a 7 s request (and its recycled worker's) inside the recording. */
#define RECORD_SECONDS "8"
/* php-cli's cases: one busy process, 199 Hz: hundreds of leaf samples even on a loaded machine. */
#define CLI_SECONDS "5"
#define FREQUENCY   "199"
#define MIN_LEAF    20
#define JIT_FLAGS                                                                                  \
	"-d opcache.enable_cli=1 -d opcache.jit=tracing -d opcache.jit_buffer_size=64M "           \
	"-d opcache.jit_hot_loop=1 -d opcache.jit_hot_func=1"

#define EXPECT(call) assert_int_equal((call), 0)

static char *omniprof(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/omniprof", tu_build_dir());
	return path;
}

/* tests/workloads/NAME as an absolute path (php-fpm wants one). */
static void workload(const char *name, char *buf, size_t len)
{
	char cwd[512];

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(buf, len, "%.400s/tests/workloads/%.60s", cwd, name);
}

static void report(const char *what, struct chain_count c)
{
	printf("    %s: %ld of %ld leaf samples complete (%.1f%%)\n", what, c.complete, c.leaf,
	       c.leaf ? 100.0 * (double)c.complete / (double)c.leaf : 0.0);
	if (c.worst && c.complete * 100 < c.leaf * 95)
		printf("      most frequent incomplete stack (%ld samples): %.*s\n", c.worst_count,
		       (int)(c.worst_len < 1500 ? c.worst_len : 1500), c.worst);
	fflush(stdout);
}

static void assert_share(struct chain_count c)
{
	assert_true(c.leaf >= MIN_LEAF);
	assert_true(c.complete * 100 >= c.leaf * 95);
}

/* ---- pprof ------------------------------------------------------------------ */

static const Perftools__Profiles__Function *function_of(const Perftools__Profiles__Profile *p,
							uint64_t id)
{
	for (size_t k = 0; k < p->n_function; k++)
		if (p->function[k]->id == id)
			return p->function[k];
	return NULL;
}

static const char *str_of(const Perftools__Profiles__Profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "";
}

struct line_check {
	const char *function;
	long min, max;
	long seen;
	bool caller; /* checked only where it called a checked function */
};

/* Every location of each checked function: file *file_suffix, a line in [min, max]. */
static void check_lines(const char *pprof, const char *file_suffix, struct line_check *checks,
			size_t n)
{
	Perftools__Profiles__Profile *p = tu_read_pprof(pprof);
	size_t suffix_len = strlen(file_suffix);

	assert_non_null(p);
	for (size_t s = 0; s < p->n_sample; s++) {
		const Perftools__Profiles__Sample *sm = p->sample[s];
		bool below = false; /* a checked function runs below this frame */

		for (size_t i = 0; i < sm->n_location_id; i++) {
			const Perftools__Profiles__Location *loc = NULL;
			const Perftools__Profiles__Function *f;
			const char *name, *file;
			size_t flen;
			bool checked = false;

			for (size_t k = 0; k < p->n_location && !loc; k++)
				if (p->location[k]->id == sm->location_id[i])
					loc = p->location[k];
			if (!loc || !loc->n_line)
				continue;
			f = function_of(p, loc->line[0]->function_id);
			if (!f)
				continue;
			name = str_of(p, f->name);
			file = str_of(p, f->filename);
			flen = strlen(file);
			for (size_t c = 0; c < n; c++) {
				if (strcmp(name, checks[c].function))
					continue;
				checked = true;
				/* A caller's line is its call's; one running its own code
				 * (or an internal function it called) is anywhere in it. */
				if (checks[c].caller && !below)
					continue;
				checks[c].seen++;
				if (flen < suffix_len ||
				    strcmp(file + flen - suffix_len, file_suffix) ||
				    loc->line[0]->line < checks[c].min ||
				    loc->line[0]->line > checks[c].max)
					fail_msg(
					    "%s: file %s line %lld, expected *%s lines %ld-%ld",
					    name, file, (long long)loc->line[0]->line, file_suffix,
					    checks[c].min, checks[c].max);
			}
			below |= checked;
		}
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	for (size_t c = 0; c < n; c++) {
		printf("    %s: %ld frame(s) at %s:%ld%s\n", checks[c].function, checks[c].seen,
		       file_suffix, checks[c].min, checks[c].min == checks[c].max ? "" : "+");
		assert_true(checks[c].seen > 0);
	}
}

/*
 * The calls of php_chain.php: each frame at its `// call: NAME` line. From
 * stack copies (copies), the PHP frames are read from the live process
 * after the sample (they live on the VM's heap stack, not in the copied
 * native stack), so a caller may have moved on to its loop's line, the one
 * before the call, or (a new call) to its first line, the one before that,
 * or out of its loop to its `return`, two lines after the call (CI saw
 * Cart::total there once in 1589 samples).
 */
static void check_chain_lines(const char *pprof, bool copies)
{
	static const char *const callers[] = {"{main}", "Router::dispatch", "Cart::total",
					      "Price::round"};
	struct line_check checks[5] = {{0}};
	char script[512], needle[64], *text;
	size_t n = 0;

	workload("php_chain.php", script, sizeof(script));
	text = tu_read_file(script, NULL);
	assert_non_null(text);
	for (size_t i = 0; i < 4; i++) {
		snprintf(needle, sizeof(needle), "// call: %s\n", callers[i]);
		checks[n] =
		    (struct line_check){callers[i], tu_line_of(text, needle) - (copies ? 2 : 0),
					tu_line_of(text, needle) + (copies ? 2 : 0), 0, true};
		assert_true(checks[n].min > 0);
		n++;
	}
	/* The leaf runs its loop: any line of its body. */
	checks[n++] = (struct line_check){"php_leaf", tu_line_of(text, "function php_leaf"),
					  tu_line_of(text, "class Price") - 1, 0, false};
	free(text);
	check_lines(pprof, "/php_chain.php", checks, n);
}

/*
 * Samples whose leaf is php_leaf (its frame the sample's first), in *leaf,
 * and those of them at a line of its loop (php_chain.php's `// loop` lines)
 * in *in_loop: the line of the opline running, not the last one saved.
 */
static void leaf_lines(const char *pprof, long *leaf, long *in_loop)
{
	Perftools__Profiles__Profile *p = tu_read_pprof(pprof);
	char script[512], *text;
	long first, last;

	workload("php_chain.php", script, sizeof(script));
	text = tu_read_file(script, NULL);
	assert_non_null(text);
	first = tu_line_of(text, "// loop: php_leaf\n");
	last = tu_line_of(text, "// loop body: php_leaf\n");
	free(text);
	assert_true(first > 0 && last == first + 1);
	assert_non_null(p);
	*leaf = *in_loop = 0;
	for (size_t s = 0; s < p->n_sample; s++) {
		const Perftools__Profiles__Sample *sm = p->sample[s];
		const Perftools__Profiles__Location *loc = NULL;
		const Perftools__Profiles__Function *f;
		long v = sm->n_value ? (long)sm->value[0] : 0;

		for (size_t k = 0; sm->n_location_id && k < p->n_location && !loc; k++)
			if (p->location[k]->id == sm->location_id[0])
				loc = p->location[k];
		f = loc && loc->n_line ? function_of(p, loc->line[0]->function_id) : NULL;
		if (!f || strcmp(str_of(p, f->name), "php_leaf"))
			continue;
		*leaf += v;
		if (loc->line[0]->line >= first && loc->line[0]->line <= last)
			*in_loop += v;
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/* ---- the CLI cases ------------------------------------------------------------ */

/* A PHP frame of the chain: with the JIT on, it may be marked as run in JIT code. */
static void expect_php(struct chain_spec *cs, const char *name, bool jit)
{
	if (jit)
		EXPECT(chain_spec__add_like(cs, "%s", name));
	else
		EXPECT(chain_spec__add(cs, "%s", name));
}

static void expect_chain(struct chain_spec *cs, bool jit)
{
	EXPECT(chain_spec__add(cs, "php_execute_script"));
	EXPECT(chain_spec__add(cs, "zend_execute_scripts"));
	EXPECT(chain_spec__add(cs, "zend_execute"));
	expect_php(cs, "{main}", jit);
	expect_php(cs, "Router::dispatch", jit);
	expect_php(cs, "Cart::total", jit);
	expect_php(cs, "Price::round", jit);
	expect_php(cs, "php_leaf", jit);
}

/* Samples of the folded text ("comm;root;...;leaf count") with a frame named exactly frame. */
static long samples_with(const char *text, const char *frame)
{
	size_t len = strlen(frame);
	long n = 0;

	for (const char *line = text; *line;) {
		const char *end = strchrnul(line, '\n'), *count = end;

		while (count > line && count[-1] != ' ')
			count--;
		for (const char *at = strchr(line, ';'); at && at + 1 + len < count;
		     at = strchr(at + 1, ';'))
			if (!strncmp(at + 1, frame, len) && strchr("; ", at[1 + len])) {
				n += strtol(count, NULL, 10);
				break;
			}
		line = *end ? end + 1 : end;
	}
	return n;
}

/* {main} -> caller -> internal -> [its C code, then zend_call_function] -> callback. */
static void expect_callback(struct chain_spec *cs, const char *caller, const char *internal,
			    const char *callback, bool jit)
{
	EXPECT(chain_spec__add(cs, "zend_execute"));
	expect_php(cs, "{main}", jit);
	expect_php(cs, caller, jit);
	EXPECT(chain_spec__add(cs, "%s", internal));
	EXPECT(chain_spec__add_gap(cs, 1, 24));
	EXPECT(chain_spec__add(cs, "zend_call_function"));
	expect_php(cs, callback, jit);
}

/* The value of `record -v`'s counter line starting with name, -1 when absent. */
static long counter(const char *out, const char *name)
{
	const char *at = out ? strstr(out, name) : NULL;

	return at ? strtol(at + strlen(name), NULL, 10) : -1;
}

/* Runs php (flags, script) and records it: the folded text and the pprof path in dir. */
static char *record_cli_for(const char *flags, const char *script, const char *dir, bool copies,
			    const char *seconds, char **verbose)
{
	char path[512], cmd[1024], folded[600];
	char *argv[16] = {0};
	char *text, *out = NULL, *save = NULL, *tok;
	size_t n = 0;
	pid_t pid;
	int rc;

	workload(script, path, sizeof(path));
	snprintf(cmd, sizeof(cmd), "%s %s", PHP, flags);
	for (tok = strtok_r(cmd, " ", &save); tok && n < 12; tok = strtok_r(NULL, " ", &save))
		argv[n++] = tok;
	argv[n++] = path;
	argv[n++] = "60";
	pid = tu_spawn_ready(argv);
	if (pid <= 0)
		fail_msg("%s %s did not start", PHP, path);
	/* Let the JIT compile its traces before the recording starts. */
	usleep(500 * 1000);
	rc = tu_run(&out, "%s record -v -p %d -d %s -F " FREQUENCY " -o %s%s", omniprof(), pid,
		    seconds, dir, copies ? " --copy-all-stacks" : "");
	tu_reap(pid);
	if (rc)
		print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
	assert_int_equal(rc, 0);
	snprintf(folded, sizeof(folded), "%s/stacks.folded", dir);
	text = tu_read_file(folded, NULL);
	assert_non_null(text);
	*verbose = out;
	return text;
}

static char *record_cli(const char *flags, const char *script, const char *dir, bool copies,
			char **verbose)
{
	return record_cli_for(flags, script, dir, copies, CLI_SECONDS, verbose);
}

/* copies: every sample unwound in user space from a stack copy (the walker's C build). */
static void chain_case(bool jit, bool copies)
{
	char *dir = tu_mkdtemp(), *verbose = NULL, *text, pprof[600];
	struct chain_spec *cs = chain_spec__new();
	struct chain_count c;
	long jit_frames, leaf_jit, leaf_vm, leaf, in_loop;

	assert_non_null(dir);
	assert_non_null(cs);
	expect_chain(cs, jit);
	text = record_cli(jit ? JIT_FLAGS : "-n", "php_chain.php", dir, copies, &verbose);
	c = chain_spec__count_folded(cs, text, "php8.2");
	report(copies ? "chain, stack copies" : jit ? "chain, JIT on" : "chain, JIT off", c);
	if (copies) {
		printf("    copies: php walks %ld\n", counter(verbose, "copies: php walks"));
		assert_true(counter(verbose, "copies: php walks") >= MIN_LEAF);
	}
	jit_frames = counter(verbose, "php: JIT code frames unwound");
	printf("    JIT code frames unwound: %ld, PHP frames walked: %ld\n", jit_frames,
	       counter(verbose, "php: frames walked in BPF"));
	/* Frames run in JIT code are marked (folded "_[j]"), the others not. */
	leaf_jit = samples_with(text, "php_leaf_[j]");
	leaf_vm = samples_with(text, "php_leaf");
	printf("    php_leaf: %ld samples in JIT code, %ld in the VM\n", leaf_jit, leaf_vm);
	snprintf(pprof, sizeof(pprof), "%s/profile.pb.gz", dir);
	check_chain_lines(pprof, copies);
	leaf_lines(pprof, &leaf, &in_loop);
	printf("    php_leaf as the leaf: %ld samples, %ld at its loop's lines; lines from the "
	       "VM's opline register: %ld\n",
	       leaf, in_loop, counter(verbose, "php: leaf lines from the VM's opline register"));
	if (!jit && !copies) {
		/* In the VM the leaf's line is the running opline's (r15), not the
		 * one saved when php_leaf was called (its first line). */
		assert_true(leaf >= MIN_LEAF);
		assert_true(in_loop * 100 >= leaf * 90);
		assert_true(counter(verbose, "php: leaf lines from the VM's opline register") *
				100 >=
			    leaf * 90);
	}
	if (jit) {
		assert_true(jit_frames > 0);
		/* The tracing JIT compiled the leaf's loop: most of its samples ran there. */
		assert_true(leaf_jit * 2 >= c.leaf);
	} else {
		assert_int_equal(jit_frames, 0);
		assert_null(strstr(text, "_[j]"));
	}
	assert_share(c);
	free(verbose);
	free(text);
	chain_spec__free(cs);
	tu_rmtree(dir);
	free(dir);
}

static void test_chain_jit_off(void **state)
{
	(void)state;
	chain_case(false, false);
}

static void test_chain_jit_on(void **state)
{
	(void)state;
	chain_case(true, false);
}

static void test_chain_stack_copies(void **state)
{
	(void)state;
	chain_case(false, true);
}

static void callbacks_case(bool jit)
{
	char *dir = tu_mkdtemp(), *verbose = NULL, *text;
	struct chain_spec *sort = chain_spec__new(), *map = chain_spec__new();
	struct chain_count cs, cm;

	assert_non_null(dir);
	assert_non_null(sort);
	assert_non_null(map);
	expect_callback(sort, "sort_all", "usort", "php_cmp", jit);
	expect_callback(map, "map_all", "array_map", "{closure}", jit);
	text = record_cli(jit ? JIT_FLAGS : "-n", "php_callbacks.php", dir, false, &verbose);
	cs = chain_spec__count_folded(sort, text, "php8.2");
	cm = chain_spec__count_folded(map, text, "php8.2");
	report(jit ? "usort comparator, JIT on" : "usort comparator", cs);
	report(jit ? "array_map closure, JIT on" : "array_map closure", cm);
	/* Only user code runs in JIT code: internal functions are never marked. */
	printf("    frames marked as JIT code: php_cmp %ld, {closure} %ld\n",
	       samples_with(text, "php_cmp_[j]"), samples_with(text, "{closure}_[j]"));
	assert_null(strstr(text, "usort_[j]"));
	assert_null(strstr(text, "array_map_[j]"));
	if (!jit)
		assert_null(strstr(text, "_[j]"));
	free(verbose);
	free(text);
	chain_spec__free(sort);
	chain_spec__free(map);
	tu_rmtree(dir);
	free(dir);
	assert_share(cs);
	assert_share(cm);
}

static void test_callbacks(void **state)
{
	(void)state;
	callbacks_case(false);
}

static void test_callbacks_jit_on(void **state)
{
	(void)state;
	callbacks_case(true);
}

/*
 * A fiber (tests/workloads/php_fibers.php) runs on its own C stack, which
 * ends at the fiber's start (zend_fiber_execute, make_fcontext): the walk
 * gives its PHP frames above the zend_call_function that started it, and
 * never the frames of the code that resumed it (drive, {main}), which run
 * on the thread's own stack.
 */
static void test_fiber(void **state)
{
	char *dir = tu_mkdtemp(), *verbose = NULL, *text;
	struct chain_spec *cs = chain_spec__new();
	struct chain_count c;
	long spliced;

	(void)state;
	assert_non_null(dir);
	assert_non_null(cs);
	EXPECT(chain_spec__add(cs, "zend_call_function"));
	EXPECT(chain_spec__add(cs, "fiber_body"));
	EXPECT(chain_spec__add(cs, "fiber_leaf"));
	text = record_cli("-n", "php_fibers.php", dir, false, &verbose);
	c = chain_spec__count_folded(cs, text, "php8.2");
	report("fiber", c);
	/* Fiber samples (fiber_leaf's) with a frame of the resumer. */
	spliced = 0;
	for (const char *line = text; *line;) {
		const char *end = strchrnul(line, '\n'), *count = end;
		char *one;

		while (count > line && count[-1] != ' ')
			count--;
		one = strndup(line, (size_t)(end - line));
		assert_non_null(one);
		if (strstr(one, ";fiber_leaf") && (strstr(one, ";drive;") || strstr(one, "{main}")))
			spliced += strtol(count, NULL, 10);
		free(one);
		line = *end ? end + 1 : end;
	}
	printf("    fiber samples with the resumer's frames: %ld\n", spliced);
	free(verbose);
	free(text);
	chain_spec__free(cs);
	tu_rmtree(dir);
	free(dir);
	assert_share(c);
	assert_int_equal(spliced, 0);
}

/* ---- php-fpm -------------------------------------------------------------------- */

/* The children of pid (its workers), at most max: how many. */
static size_t children_of(pid_t pid, pid_t *out, size_t max)
{
	char path[64];
	size_t n = 0;
	FILE *f;
	long v;

	/* A /proc file: read as a stream, its size says nothing. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (n < max && fscanf(f, "%ld", &v) == 1)
		out[n++] = (pid_t)v;
	fclose(f);
	return n;
}

/* Samples of pid whose stack holds {main} -> handle_request -> fpm_leaf, and of its leaf. */
static void fpm_samples(const char *pprof, pid_t pid, long *leaf, long *complete)
{
	Perftools__Profiles__Profile *p = tu_read_pprof(pprof);

	*leaf = *complete = 0;
	assert_non_null(p);
	for (size_t s = 0; s < p->n_sample; s++) {
		const Perftools__Profiles__Sample *sm = p->sample[s];
		long v = sm->n_value ? (long)sm->value[0] : 0;
		int step = 0; /* leaf first: fpm_leaf, handle_request, {main} */
		bool mine = false, has_leaf = false;

		for (size_t l = 0; l < sm->n_label; l++)
			if (!strcmp(str_of(p, sm->label[l]->key), "pid") &&
			    sm->label[l]->num == pid)
				mine = true;
		if (!mine)
			continue;
		for (size_t i = 0; i < sm->n_location_id; i++) {
			static const char *const chain[] = {"fpm_leaf", "handle_request", "{main}"};
			const Perftools__Profiles__Location *loc = NULL;

			for (size_t k = 0; k < p->n_location && !loc; k++)
				if (p->location[k]->id == sm->location_id[i])
					loc = p->location[k];
			for (size_t j = 0; loc && j < loc->n_line; j++) {
				const Perftools__Profiles__Function *f =
				    function_of(p, loc->line[j]->function_id);
				const char *name = f ? str_of(p, f->name) : "";

				if (!strcmp(name, "fpm_leaf"))
					has_leaf = true;
				if (step < 3 && !strcmp(name, chain[step]))
					step++;
			}
		}
		if (has_leaf) {
			*leaf += v;
			*complete += step == 3 ? v : 0;
		}
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/*
 * Starts php-fpm (pm = static, two workers, each recycled after max_requests
 * requests, 0: never) listening on dir/fpm.sock: its master's pid, the
 * workers in workers[0..1]. Fails the test when it does not come up.
 */
/* Writes dir/fpm.conf (see fpm_start()), its path in conf. */
static void fpm_conf(const char *dir, int max_requests, char *conf, size_t len)
{
	char text[2048];

	snprintf(conf, len, "%s/fpm.conf", dir);
	snprintf(text, sizeof(text),
		 "[global]\nerror_log = %s/fpm.log\ndaemonize = no\n"
		 "[work]\nlisten = %s/fpm.sock\npm = static\npm.max_children = 2\n"
		 "pm.max_requests = %d\ncatch_workers_output = yes\n",
		 dir, dir, max_requests);
	EXPECT(tu_write_file(conf, text));
}

static pid_t fpm_start(const char *dir, int max_requests, pid_t *workers)
{
	char conf[600], sock[600];
	size_t n_workers = 0;
	pid_t master;

	snprintf(sock, sizeof(sock), "%s/fpm.sock", dir);
	fpm_conf(dir, max_requests, conf, sizeof(conf));
	master = fork();
	assert_true(master >= 0);
	if (master == 0) {
		execl(PHP_FPM, PHP_FPM, "-n", "-R", "-F", "-y", conf, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100 && n_workers < 2; i++) {
		struct stat st;

		usleep(50 * 1000);
		if (!stat(sock, &st))
			n_workers = children_of(master, workers, 2);
	}
	if (n_workers != 2) {
		/* SIGTERM: the master takes its workers down with it (SIGKILL would orphan them).
		 */
		kill(master, SIGTERM);
		waitpid(master, NULL, 0);
		fail_msg("php-fpm did not start two workers (%zu)", n_workers);
	}
	return master;
}

/* Shell text sending n requests of s seconds at once to dir's php-fpm (their pids added to $p). */
static void fpm_requests(char *buf, size_t len, const char *dir, int n, int s)
{
	char script[512];

	workload("php_fpm_work.php", script, sizeof(script));
	snprintf(buf, len,
		 "for i in $(seq %d); do SCRIPT_FILENAME=%s REQUEST_METHOD=GET QUERY_STRING=s=%d "
		 "%s -bind -connect %s/fpm.sock >/dev/null 2>&1 & p=\"$p $!\"; done",
		 n, script, s, CGI_FCGI, dir);
}

/*
 * The whole system is recorded, and php-fpm starts once the recording
 * samples: its two workers are forked (not exec'd) by the master while the
 * recording runs and are found by their first samples; each serves one
 * request, whose samples carry its whole chain. At 999 Hz: a whole-system
 * recording shares the CPUs with all the machine runs.
 */
static void test_fpm_two_workers(void **state)
{
	char *dir = tu_mkdtemp(), *out = NULL, *text, pprof[600], send[2048], conf[600], path[700];
	pid_t workers[2] = {0, 0};
	int rc;

	(void)state;
	assert_non_null(dir);
	fpm_conf(dir, 0, conf, sizeof(conf));
	/* Two requests at once: each worker serves one. */
	fpm_requests(send, sizeof(send), dir, 2, 7);
	rc =
	    tu_run(&out,
		   "%s record -d " RECORD_SECONDS " -F 999 -o %s >%s/rec.out "
		   "2>%s/rec.err & rec=$!; "
		   "for i in $(seq 300); do grep -q sampling %s/rec.err && break; sleep 0.1; done; "
		   "%s -n -R -F -y %s & m=$!; "
		   "for i in $(seq 100); do test -S %s/fpm.sock && break; sleep 0.05; done; "
		   "p=; %s; sleep 1; cat /proc/$m/task/$m/children >%s/workers; wait $p; "
		   "wait $rec; r=$?; kill $m; wait $m; cat %s/rec.err; exit $r",
		   omniprof(), dir, dir, dir, dir, PHP_FPM, conf, dir, send, dir, dir);
	if (rc)
		print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
	free(out);
	assert_int_equal(rc, 0);
	snprintf(path, sizeof(path), "%s/workers", dir);
	text = tu_read_file(path, NULL);
	assert_non_null(text);
	assert_int_equal(sscanf(text, "%d %d", &workers[0], &workers[1]), 2);
	free(text);
	snprintf(pprof, sizeof(pprof), "%s/profile.pb.gz", dir);
	for (size_t w = 0; w < 2; w++) {
		long leaf, complete;

		fpm_samples(pprof, workers[w], &leaf, &complete);
		printf("    worker %d (forked while recording): %ld of %ld leaf samples complete\n",
		       workers[w], complete, leaf);
		assert_share((struct chain_count){.leaf = leaf, .complete = complete});
	}
	tu_rmtree(dir);
	free(dir);
}

/*
 * Workers recycled while recording (pm.max_requests = 1: each worker exits
 * after its request and the master forks a new one): the two workers are
 * recorded with -p while they serve a 7 s request each, exit, and are
 * replaced while the recording goes on. The recording ends normally and the
 * exited workers' samples keep their whole chain, named: a recycled worker
 * costs nothing but its own frames.
 */
static void test_fpm_recycled_workers(void **state)
{
	char *dir = tu_mkdtemp(), *out = NULL, pprof[600], send[2048];
	pid_t master, workers[2], after[2];
	size_t n_after = 0;
	int rc;

	(void)state;
	assert_non_null(dir);
	master = fpm_start(dir, 1, workers);
	fpm_requests(send, sizeof(send), dir, 2, 7);
	rc = tu_run(&out,
		    "p=; %s; sleep 1; %s record -p %d,%d -d " RECORD_SECONDS " -F " FREQUENCY
		    " -o %s & rec=$!; wait $p; sleep 1; p=; %s; wait $p; wait $rec",
		    send, omniprof(), workers[0], workers[1], dir, send);
	/*
	 * Both workers were recycled: the master has two new ones. The second round's workers
	 * exit after their request too, just before this, and the master forks their
	 * replacements when it gets to it (one child of two seen at once, at load 3-6): up to
	 * 10 s for two.
	 */
	for (int i = 0; i < 200 && (n_after = children_of(master, after, 2)) != 2; i++)
		usleep(50 * 1000);
	kill(master, SIGTERM);
	waitpid(master, NULL, 0);
	assert_int_equal(n_after, 2);
	if (rc)
		print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
	free(out);
	assert_int_equal(rc, 0);
	for (size_t w = 0; w < 2; w++) {
		assert_int_not_equal(after[w], workers[0]);
		assert_int_not_equal(after[w], workers[1]);
		assert_int_equal(kill(workers[w], 0), -1);
	}
	snprintf(pprof, sizeof(pprof), "%s/profile.pb.gz", dir);
	for (size_t w = 0; w < 2; w++) {
		long leaf, complete;

		fpm_samples(pprof, workers[w], &leaf, &complete);
		printf("    recycled worker %d: %ld of %ld leaf samples complete\n", workers[w],
		       complete, leaf);
		assert_share((struct chain_count){.leaf = leaf, .complete = complete});
	}
	tu_rmtree(dir);
	free(dir);
}

/* The machine must have what this suite is about: no silent skip. */
static void test_php_present(void **state)
{
	(void)state;
	TU_SH("%s -v | grep -q '^PHP 8.2'", PHP);
	TU_SH("%s -d opcache.enable_cli=1 -r 'exit(function_exists(\"opcache_get_status\") ? 0 : "
	      "1);'",
	      PHP);
	TU_SH("test -x %s && test -x %s", PHP_FPM, CGI_FCGI);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_php_present),
	    cmocka_unit_test(test_chain_jit_off),
	    cmocka_unit_test(test_chain_jit_on),
	    cmocka_unit_test(test_chain_stack_copies),
	    cmocka_unit_test(test_callbacks),
	    cmocka_unit_test(test_callbacks_jit_on),
	    cmocka_unit_test(test_fiber),
	    cmocka_unit_test(test_fpm_two_workers),
	    cmocka_unit_test(test_fpm_recycled_workers),
	};

	return cmocka_run_group_tests_name("e2e_php", tests, NULL, NULL);
}
