// SPDX-License-Identifier: Apache-2.0
/*
 * The replay suite: the BPF native unwinder (through src/unwind/user_unwind)
 * run in user space over process snapshots, with stack-delta tables built by
 * the agent's own ELF code and frames named by src/symbol. Needs no BPF and
 * no privilege beyond tracing its own children.
 *
 *   replay [-v] [-b BUILD] [-s DIR] CASE...  run cases; -s keeps the snapshots in
 *                                       DIR, -v prints every stack
 *   replay -c CASE -o FILE               capture a snapshot to commit
 *   replay -r FILE CASE                  replay one snapshot (e.g. under gdb)
 *
 * One line per case (PASS, FAIL, XFAIL, XPASS), then "N passed, M failed".
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "case.h"
#include "elf/elf_file.h"
#include "interp/perl/perl_sub.h"
#include "interp/perl/perl_unwind.h"
#include "interp/python/python_code.h"
#include "interp/python/python_layout.h"
#include "interp/python/python_lines.h"
#include "snapshot.h"
#include "space.h"
#include "symbol/symbolizer.h"
#include "testutil.h"
#include "interp/python/python_unwind.h"
#include "unwind/user_unwind.h"

#define NAME_LEN 256

static bool verbose; /* -v: print every stack, not only failing ones */

struct named_frame {
	char name[NAME_LEN];
	char where[NAME_LEN]; /* Python frames: FILE:LINE */
	bool error;
	bool python;
	bool perl;
};

/* The unwinder's reads: the snapshot's memory (ctx: its remote_memory source). */
static int snap_read(void *ctx, void *dst, size_t len, uint64_t addr)
{
	return remote_memory__read(ctx, addr, dst, len);
}

/* The process's memory besides its stacks: what the snapshot copied, else
 * what a read-only file mapping holds (the file). */
struct full_mem {
	struct remote_memory snap;
	const struct space *sp;
};

static int full_read(void *ctx, void *dst, size_t len, uint64_t addr)
{
	const struct full_mem *m = ctx;

	if (!remote_memory__read(&m->snap, addr, dst, len))
		return 0;
	return space__read_file(m->sp, dst, len, addr);
}

/* The snapshot as a struct remote_memory. */
static int full_read_py(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return full_read(ctx, buf, len, addr);
}

/* Does a Python frame's FILE:LINE match the expected FILE[:LINE]? FILE is a
 * suffix of the file name (the path depends on the checkout). */
static bool where_matches(const char *want, const char *where)
{
	const char *colon = strrchr(want, ':'), *have_colon = strrchr(where, ':');
	size_t flen = colon ? (size_t)(colon - want) : strlen(want);
	size_t have_flen = have_colon ? (size_t)(have_colon - where) : strlen(where);

	if (flen > have_flen || strncmp(where + have_flen - flen, want, flen))
		return false;
	return !colon || (have_colon && !strcmp(colon, have_colon));
}

static bool frame_matches(const struct expect *e, const struct named_frame *f)
{
	switch (e->kind) {
	case EXPECT_FRAME:
		return !f->error && !f->python && !f->perl &&
		       case__name_matches(e->text, false, f->name);
	case EXPECT_LIKE:
		return !f->error && !f->python && !f->perl &&
		       case__name_matches(e->text, true, f->name);
	case EXPECT_ERROR:
		return f->error && strstr(f->name, e->text);
	case EXPECT_GAP:
		return !f->error && !f->python && !f->perl;
	case EXPECT_PERL:
		return f->perl && !strcmp(e->text, f->name) &&
		       (!e->where || where_matches(e->where, f->where));
	case EXPECT_PYTHON:
		return f->python && !strcmp(e->text, f->name) &&
		       (!e->where || where_matches(e->where, f->where));
	}
	return false;
}

/* Whole-stack match with gaps; *deepest records the furthest frame that matched. */
static bool match(const struct expect *exp, size_t n_exp, size_t j, const struct named_frame *f,
		  size_t n, size_t i, size_t *deepest, size_t *deepest_exp)
{
	if (i > *deepest || (i == *deepest && j > *deepest_exp)) {
		*deepest = i;
		*deepest_exp = j;
	}
	if (j == n_exp)
		return i == n;
	if (exp[j].kind == EXPECT_GAP) {
		for (size_t k = 0; k <= exp[j].max && i + k <= n; k++) {
			if (k && (f[i + k - 1].error || f[i + k - 1].python || f[i + k - 1].perl))
				break;
			if (k >= exp[j].min &&
			    match(exp, n_exp, j + 1, f, n, i + k, deepest, deepest_exp))
				return true;
		}
		return false;
	}
	return i < n && frame_matches(&exp[j], &f[i]) &&
	       match(exp, n_exp, j + 1, f, n, i + 1, deepest, deepest_exp);
}

static const char *expect_text(const struct expect *e, char *buf, size_t len)
{
	switch (e->kind) {
	case EXPECT_GAP:
		snprintf(buf, len, "gap %u..%u", e->min, e->max);
		break;
	case EXPECT_ERROR:
		snprintf(buf, len, "error '%s'", e->text);
		break;
	case EXPECT_PYTHON:
		snprintf(buf, len, "Python %s%s%s", e->text, e->where ? " at " : "",
			 e->where ? e->where : "");
		break;
	case EXPECT_PERL:
		snprintf(buf, len, "Perl %s%s%s", e->text, e->where ? " at " : "",
			 e->where ? e->where : "");
		break;
	default:
		snprintf(buf, len, "%s%s", e->kind == EXPECT_LIKE ? "like " : "", e->text);
	}
	return buf;
}

static void print_stack(const struct named_frame *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (n > 48 && i == 24) {
			printf("      ... %zu frames ...\n", n - 40);
			i = n - 16;
		}
		if (f[i].python)
			printf("      #%-3zu py %s (%s)\n", i, f[i].name, f[i].where);
		else if (f[i].perl)
			printf("      #%-3zu pl %s (%s)\n", i, f[i].name, f[i].where);
		else
			printf("      #%-3zu %s\n", i, f[i].name);
	}
}

static const struct snapshot_thread *pick_thread(const struct snapshot *s, const char *select)
{
	if (!strncmp(select, "oldest+", 7)) {
		/* The one with N older threads (lower thread ids). */
		size_t n = (size_t)atoi(select + 7);

		for (size_t i = 0; i < s->n_threads; i++) {
			size_t older = 0;

			for (size_t j = 0; j < s->n_threads; j++)
				older += s->threads[j].tid < s->threads[i].tid;
			if (older == n)
				return &s->threads[i];
		}
		return NULL;
	}
	for (size_t i = 0; i < s->n_threads; i++) {
		const struct snapshot_thread *t = &s->threads[i];

		if (!strcmp(select, "stopped") ? t->tid == s->stopped_tid
					       : !strcmp(select, t->comm))
			return t;
	}
	return NULL;
}

/*
 * Names a Python frame as the agent does (python__resolve and
 * python__describe): the code object read by python_code from the
 * snapshot's memory, checked against the walker's fingerprint.
 */
static void name_python(struct full_mem *full, const struct space_python *py,
			const struct op_frame *f, struct named_frame *out)
{
	struct remote_memory mem = {full_read_py, full};
	struct python_code *code = NULL;
	int err = python_code__read_from(&mem, py->layout, f->addr, f->data, &code);

	out->python = true;
	if (err) {
		snprintf(out->name, NAME_LEN, "[unknown Python code]");
		snprintf(out->where, NAME_LEN, "code 0x%llx: %s", (unsigned long long)f->addr,
			 strerror(-err));
		return;
	}
	snprintf(out->name, NAME_LEN, "%s", code->name);
	snprintf(out->where, NAME_LEN, "%s:%lld", code->filename,
		 (long long)python_lines__find(code->line_kind, code->lines, code->n_lines,
					       code->firstlineno, f->aux));
	python_code__free(code);
}

/*
 * Names a Perl frame as the agent does (perl_resolve and perl_describe): the
 * CV or COP read by perl_sub from the snapshot's memory; the line is the
 * frame's aux.
 */
static void name_perl(struct full_mem *full, const struct space_perl *pl, const struct op_frame *f,
		      struct named_frame *out)
{
	struct remote_memory mem = {full_read_py, full};
	struct perl_sub *sub = NULL;
	int err = perl_sub__read(&mem, pl->layout, f->addr, f->data, &sub);

	out->perl = true;
	if (err) {
		snprintf(out->name, NAME_LEN, "[unknown Perl sub]");
		snprintf(out->where, NAME_LEN, "0x%llx: %s", (unsigned long long)f->addr,
			 strerror(-err));
		return;
	}
	snprintf(out->name, NAME_LEN, "%s", sub->name);
	snprintf(out->where, NAME_LEN, "%s:%u", sub->file, f->aux);
	perl_sub__free(sub);
}

/* Checks one thread of the case. true when it matches; prints why not. */
static bool replay_thread(const struct replay_case *c, const struct case_thread *ct,
			  const struct snapshot *s, const struct space *sp,
			  const struct space_python *py, const struct space_perl *pl,
			  struct user_unwind_tables *tables, char *summary, size_t len)
{
	static struct op_frame frames[OP_MAX_USER_FRAMES];
	static struct named_frame named[OP_MAX_USER_FRAMES];
	const struct snapshot_thread *t = pick_thread(s, ct->select);
	struct remote_memory snap = snapshot__memory(s);
	struct user_unwind_ops ops = {snap_read, user_unwind_tables__find_rule, &snap, tables};
	struct full_mem full = {snapshot__memory(s), sp};
	struct python_unwind walk_py = {.read = full_read, .read_ctx = &full};
	struct perl_unwind walk_pl = {.read = full_read, .read_ctx = &full};
	struct user_unwind_result r;
	size_t deepest = 0, deepest_exp = 0, n_python = 0;
	char want[NAME_LEN];

	if (!t) {
		snprintf(summary, len, "no thread '%s' in the snapshot", ct->select);
		return false;
	}
	/* As the sampler: frames in the eval loop go to Python's step when the
	 * pid has interp_procs and py_procs entries. */
	walk_py.proc = py ? &py->proc : NULL;
	walk_py.thread_ptr = t->regs.fs_base;
	/* Perl likewise (perl_procs, its runops ranges); a process runs one of them. */
	walk_pl.proc = pl ? &pl->proc : NULL;
	walk_pl.thread_ptr = t->regs.fs_base;
	walk_pl.main_thread = t->tid == (uint32_t)s->pid;
	r = user_unwind__walk(
	    &ops,
	    &(struct user_unwind_interp){py   ? &py->ranges
					 : pl ? &pl->ranges
					      : NULL,
					 {[OP_INTERP_PYTHON] = python_unwind__runtime(&walk_py),
					  [OP_INTERP_PERL] = perl_unwind__runtime(&walk_pl)}},
	    s->pid, t->regs.rip, t->regs.rsp, t->regs.rbp, frames, OP_MAX_USER_FRAMES);
	for (uint32_t i = 0; i < r.n_frames; i++) {
		memset(&named[i], 0, sizeof(named[i]));
		named[i].error = frames[i].kind == OP_FRAME_ERROR;
		if (named[i].error)
			snprintf(named[i].name, NAME_LEN, "%s", symbolizer__error(frames[i].addr));
		else if (frames[i].kind == OP_FRAME_PYTHON && py)
			name_python(&full, py, &frames[i], &named[i]);
		else if (frames[i].kind == OP_FRAME_PERL && pl)
			name_perl(&full, pl, &frames[i], &named[i]);
		else
			space__name(sp, frames[i].addr, frames[i].flags & OP_FRAME_F_RETURN_ADDRESS,
				    named[i].name, NAME_LEN);
		n_python += named[i].python;
	}
	if (match(ct->exp, ct->n_exp, 0, named, r.n_frames, 0, &deepest, &deepest_exp)) {
		if (py)
			snprintf(summary, len, "thread %s: %u frames, %zu Python", t->comm,
				 r.n_frames, n_python);
		else
			snprintf(summary, len, "thread %s: %u frames", t->comm, r.n_frames);
		if (verbose) {
			printf("     %s, thread %s:\n", c->name, t->comm);
			print_stack(named, r.n_frames);
		}
		return true;
	}
	if (deepest_exp < ct->n_exp)
		expect_text(&ct->exp[deepest_exp], want, sizeof(want));
	else
		snprintf(want, sizeof(want), "the end of the stack");
	snprintf(summary, len, "thread %s (tid %u): frame #%zu is '%s', expected %s", t->comm,
		 t->tid, deepest, deepest < r.n_frames ? named[deepest].name : "(none)", want);
	printf("     %s, %s:\n", c->name, summary);
	print_stack(named, r.n_frames);
	return false;
}

/* Replays every thread of the case over s. 0 when all match. */
static int replay_snapshot(const struct replay_case *c, const struct snapshot *s, char *summary,
			   size_t len)
{
	struct user_unwind_tables *tables = NULL;
	struct remote_memory snap;
	struct space_python py;
	struct space_perl pl;
	struct space sp;
	int err, failed = 0, py_err, pl_err;
	size_t used = 0;

	snap = snapshot__memory(s);
	err = space__open(&sp, s->maps, s->maps_len, snap_read, &snap);
	if (err) {
		snprintf(summary, len, "cannot read the snapshot's maps: %s", strerror(-err));
		return err;
	}
	/* Files are referenced by path: one rebuilt since the capture would lie. */
	for (size_t i = 0; i < sp.n_files; i++) {
		const struct space_file *f = sp.files[i];
		const char *bid = snapshot__build_id(s, f->path);

		if (bid && *bid && (!f->ef || !f->ef->build_id || strcmp(bid, f->ef->build_id))) {
			snprintf(summary, len, "%s is not the file captured (build id %s)", f->path,
				 bid);
			err = -ESTALE;
			goto cleanup;
		}
	}
	err = user_unwind_tables__new(&tables);
	if (err)
		goto cleanup;
	space__add_tables(&sp, tables);
	py_err = space__python(&sp, &py);
	if (py_err && c->python) {
		snprintf(summary, len, "no supported CPython found in the snapshot: %s",
			 strerror(-py_err));
		err = py_err;
		goto cleanup;
	}
	if (!py_err) {
		used = (size_t)snprintf(summary, len, "CPython %u.%u: ", py.proc.version >> 8,
					py.proc.version & 0xff);
		if (used >= len)
			used = len;
	}
	pl_err = space__perl(&sp, &pl);
	if (pl_err && c->perl) {
		snprintf(summary, len, "no supported Perl found in the snapshot: %s",
			 strerror(-pl_err));
		err = pl_err;
		goto cleanup;
	}
	if (!pl_err) {
		used = (size_t)snprintf(summary, len, "Perl 5.%u: ", pl.proc.version & 0xff);
		if (used >= len)
			used = len;
	}
	for (size_t i = 0; i < c->n_threads; i++) {
		char one[512];

		if (!replay_thread(c, &c->threads[i], s, &sp, py_err ? NULL : &py,
				   pl_err ? NULL : &pl, tables, one, sizeof(one)))
			failed++;
		used += (size_t)snprintf(summary + used, used < len ? len - used : 0, "%s%s",
					 i && used ? "; " : "", one);
		if (used >= len)
			used = len;
	}
	if (used < len)
		snprintf(summary + used, len - used,
			 "; rules: %llu from tables, %llu frame pointers, %llu anonymous code",
			 (unsigned long long)user_unwind_tables__stats(tables)->frames_cfi,
			 (unsigned long long)user_unwind_tables__stats(tables)->fp_no_mapping,
			 (unsigned long long)user_unwind_tables__stats(tables)->frames_anon);
	err = failed ? -EINVAL : 0;
cleanup:
	user_unwind_tables__free(tables);
	space__close(&sp);
	return err;
}

/* Loads or captures the case's snapshot. */
static int get_snapshot(const struct replay_case *c, const char *build, const char *save_dir,
			struct snapshot *s, char *msg, size_t len)
{
	char path[1024];
	int err;

	snapshot__init(s);
	if (c->snapshot) {
		snprintf(path, sizeof(path), "%s/%s", c->dir, c->snapshot);
		err = snapshot__read(s, path);
		if (err)
			snprintf(msg, len, "cannot read %s: %s", path, strerror(-err));
		return err;
	}
	err = capture__run(c, build, s, msg, len);
	if (err)
		return err;
	/* Written and read back, so the suite also exercises the file format. */
	snprintf(path, sizeof(path), "%s/%s.snap", save_dir, c->name);
	err = snapshot__write(s, path);
	snapshot__clear(s);
	if (!err)
		err = snapshot__read(s, path);
	if (err)
		snprintf(msg, len, "snapshot file %s: %s", path, strerror(-err));
	return err;
}

enum outcome { PASSED, FAILED, XFAILED };

static enum outcome run_case(const char *case_path, const char *build, const char *save_dir,
			     const char *snap_path)
{
	struct replay_case c;
	struct snapshot s;
	char msg[2048] = "";
	bool known;
	int err;

	err = case__load(case_path, &c, msg, sizeof(msg));
	if (err) {
		printf("FAIL %s: %s\n", case_path, msg);
		return FAILED;
	}
	known = c.known_failure != NULL;
	if (snap_path) {
		snapshot__init(&s);
		err = snapshot__read(&s, snap_path);
		if (err)
			snprintf(msg, sizeof(msg), "cannot read %s: %s", snap_path, strerror(-err));
	} else {
		err = get_snapshot(&c, build, save_dir, &s, msg, sizeof(msg));
	}
	if (!err)
		err = replay_snapshot(&c, &s, msg, sizeof(msg));
	snapshot__clear(&s);
	if (c.known_failure) {
		printf("%s %s: %s (known: %s)\n", err ? "XFAIL" : "XPASS", c.name, msg,
		       c.known_failure);
		if (!err)
			printf("     %s now passes: remove its known_failure line\n", c.name);
	} else {
		printf("%s %s: %s\n", err ? "FAIL" : "PASS", c.name, msg);
	}
	fflush(stdout);
	case__free(&c);
	if (known)
		return err ? XFAILED : FAILED;
	return err ? FAILED : PASSED;
}

static int capture_only(const char *case_path, const char *build, const char *out)
{
	struct replay_case c;
	struct snapshot s;
	char msg[1024] = "";
	int err;

	err = case__load(case_path, &c, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "%s: %s\n", case_path, msg);
		return 1;
	}
	snapshot__init(&s);
	err = capture__run(&c, build, &s, msg, sizeof(msg));
	if (!err)
		err = snapshot__write(&s, out);
	if (err)
		fprintf(stderr, "capture failed: %s %s\n", msg, strerror(-err));
	snapshot__clear(&s);
	case__free(&c);
	return err ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: replay [-v] [-b BUILD] [-s DIR] CASE...\n"
			"       replay [-b BUILD] -c CASE -o FILE\n"
			"       replay -r SNAPSHOT CASE\n");
}

int main(int argc, char **argv)
{
	const char *build = getenv("OMNIPROF_BUILD"), *save_dir = NULL, *capture = NULL,
		   *out = NULL, *snap = NULL;
	char *tmp = NULL;
	int opt, passed = 0, failed = 0, xfailed = 0;

	if (!build)
		build = "build";
	while ((opt = getopt(argc, argv, "b:s:c:o:r:vh")) != -1) {
		switch (opt) {
		case 'b':
			build = optarg;
			break;
		case 's':
			save_dir = optarg;
			break;
		case 'c':
			capture = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'r':
			snap = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (capture) {
		if (!out) {
			usage();
			return 2;
		}
		return capture_only(capture, build, out);
	}
	if (optind >= argc) {
		usage();
		return 2;
	}
	if (!save_dir && !snap) {
		tmp = tu_mkdtemp();
		if (!tmp) {
			fprintf(stderr, "replay: cannot create a temporary folder\n");
			return 1;
		}
		save_dir = tmp;
	}
	for (int i = optind; i < argc; i++) {
		switch (run_case(argv[i], build, save_dir, snap)) {
		case PASSED:
			passed++;
			break;
		case XFAILED:
			xfailed++;
			break;
		default:
			failed++;
		}
	}
	printf("\n");
	if (xfailed)
		printf("%d known failures (XFAIL, not counted)\n", xfailed);
	printf("%d passed, %d failed\n", passed, failed);
	if (tmp)
		tu_rmtree(tmp);
	free(tmp);
	return failed || !passed ? 1 : 0;
}
