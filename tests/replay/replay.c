// SPDX-License-Identifier: Apache-2.0
/*
 * The replay suite: the BPF native unwinder (through src/unwind/user_unwind)
 * run in user space over process snapshots, with stack-delta tables built by
 * the agent's own ELF code and frames named by src/symbol. Needs no BPF and
 * no privilege beyond tracing its own children, except cases with `copy`
 * (a stack copy unwound as the agent does, its tables in BPF maps: root).
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
#include "copy_walk.h"
#include "elf/elf_file.h"
#include "runtimes.h"
#include "snapshot.h"
#include "space.h"
#include "symbol/symbolizer.h"
#include "testutil.h"
#include "unwind/user_unwind.h"

#define NAME_LEN 256

static bool verbose; /* -v: print every stack, not only failing ones */

struct named_frame {
	char name[NAME_LEN];
	char where[NAME_LEN]; /* a runtime's frames: FILE:LINE */
	bool error;
	const char *runtime; /* a runtime's frame: interp_ops.name; NULL: native */
	const char *suffix;  /* a runtime's frame: its folded suffix (HotSpot's "_[j]"), or "" */
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

/* The snapshot as a struct remote_memory (what the runtimes read). */
static int full_read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return full_read(ctx, buf, len, addr);
}

/* Does a runtime frame's FILE:LINE match the expected FILE[:LINE]? FILE is a
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

/* Is text the frame's name followed by its folded suffix ("HotspotChain.work_[j]")? */
static bool name_with_suffix(const char *text, const struct named_frame *f)
{
	size_t n = strlen(f->name);

	return f->suffix && *f->suffix && !strncmp(text, f->name, n) &&
	       !strcmp(text + n, f->suffix);
}

static bool frame_matches(const struct expect *e, const struct named_frame *f)
{
	switch (e->kind) {
	case EXPECT_FRAME:
		return !f->error && !f->runtime && case__name_matches(e->text, false, f->name);
	case EXPECT_LIKE:
		return !f->error && !f->runtime && case__name_matches(e->text, true, f->name);
	case EXPECT_ERROR:
		return f->error && strstr(f->name, e->text);
	case EXPECT_GAP:
		return !f->error && !f->runtime;
	case EXPECT_RUNTIME:
		return f->runtime && !strcmp(e->runtime, f->runtime) &&
		       (!strcmp(e->text, f->name) || name_with_suffix(e->text, f)) &&
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
			if (k && (f[i + k - 1].error || f[i + k - 1].runtime))
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
	case EXPECT_RUNTIME:
		snprintf(buf, len, "%s '%s'%s%s", e->runtime, e->text, e->where ? " at " : "",
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
		if (f[i].runtime)
			printf("      #%-3zu %s %s%s (%s)\n", i, f[i].runtime, f[i].name,
			       f[i].suffix, f[i].where);
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
 * Names frame f (its runtime's functions through the agent's resolve and
 * describe, else the native function) into out[0 ..): an inlined runtime
 * frame gives one named frame per function, innermost first. Returns how many.
 */
static size_t name_frame(struct runtimes *rts, const struct space *sp, const struct op_frame *f,
			 struct named_frame *out, size_t room)
{
	struct interp_line lines[INTERP_MAX_LINES];
	const char *runtime = NULL, *suffix = "";
	size_t n;

	memset(out, 0, sizeof(*out));
	if (f->kind == OP_FRAME_ERROR) {
		out->error = true;
		snprintf(out->name, NAME_LEN, "%s", symbolizer__error(f->addr));
		return 1;
	}
	n = runtimes__name(rts, f, &runtime, &suffix, lines,
			   room < INTERP_MAX_LINES ? room : INTERP_MAX_LINES);
	if (!n) {
		space__name(sp, f->addr, f->flags & OP_FRAME_F_RETURN_ADDRESS, out->name, NAME_LEN);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].runtime = runtime;
		out[i].suffix = suffix;
		snprintf(out[i].name, NAME_LEN, "%s", lines[i].name ? lines[i].name : "?");
		snprintf(out[i].where, NAME_LEN, "%s:%lld",
			 lines[i].filename ? lines[i].filename : "?", (long long)lines[i].line);
	}
	return n;
}

/*
 * The same thread from a stack copy (the case's `copy`): the record a sample
 * taken before the process's tables existed sends, unwound by the agent's
 * stack_copy__to_trace() once they do. The expectations are the direct
 * walk's. true when they match; prints why not.
 */
static bool replay_copy(const struct replay_case *c, const struct case_thread *ct,
			const struct snapshot *s, const struct snapshot_thread *t,
			const struct space *sp, struct runtimes *rts,
			const struct named_frame *direct, size_t n_direct, char *summary,
			size_t len)
{
	static struct op_frame frames[OP_MAX_USER_FRAMES];
	static struct named_frame named[OP_MAX_USER_FRAMES * 2];
	struct stack_copy_stats st = {0};
	size_t deepest = 0, deepest_exp = 0, n = 0, used = strlen(summary);
	uint32_t n_frames = 0, stack_len = 0;
	char want[NAME_LEN];
	int err;

	err = copy_walk__run(s, t, sp, frames, &n_frames, c->copy_go, &stack_len, &st);
	if (err) {
		snprintf(summary, len,
			 "thread %s: the stack copy could not be unwound: %s (BPF maps need root)",
			 t->comm, strerror(-err));
		return false;
	}
	for (uint32_t i = 0; i < n_frames; i++)
		n += name_frame(rts, sp, &frames[i], &named[n],
				sizeof(named) / sizeof(named[0]) - n);
	if (c->copy_stop) {
		/* The direct walk's first frames, then the stop where it goes on. */
		bool ok = n >= 2 && n - 1 < n_direct && named[n - 1].error &&
			  strstr(named[n - 1].name, c->copy_stop) && st.truncated == 1;

		for (size_t i = 0; ok && i + 1 < n; i++)
			ok = !strcmp(named[i].name, direct[i].name);
		if (ok) {
			snprintf(summary + used, len - used,
				 "; from a stack copy (%u bytes): %zu frames, then '%s'", stack_len,
				 n - 1, named[n - 1].name);
			return true;
		}
		snprintf(summary, len,
			 "thread %s (tid %u), from a stack copy of %u bytes: not the direct "
			 "walk's first frames ending with '%s'",
			 t->comm, t->tid, stack_len, c->copy_stop);
		printf("     %s, %s:\n", c->name, summary);
		print_stack(named, n);
		return false;
	}
	if (match(ct->exp, ct->n_exp, 0, named, n, 0, &deepest, &deepest_exp) && st.complete == 1) {
		snprintf(summary + used, len - used,
			 "; from a stack copy (%u bytes): %zu frames, %llu by tables", stack_len, n,
			 (unsigned long long)st.frames_cfi);
		if (verbose) {
			printf("     %s, thread %s, from a stack copy:\n", c->name, t->comm);
			print_stack(named, n);
		}
		return true;
	}
	if (deepest_exp < ct->n_exp)
		expect_text(&ct->exp[deepest_exp], want, sizeof(want));
	else
		snprintf(want, sizeof(want), "the end of the stack");
	snprintf(
	    summary, len,
	    "thread %s (tid %u), from a stack copy of %u bytes: frame #%zu is '%s', expected %s",
	    t->comm, t->tid, stack_len, deepest, deepest < n ? named[deepest].name : "(none)",
	    want);
	printf("     %s, %s:\n", c->name, summary);
	printf("     copy: %llu frames by tables, %llu by frame pointers, %llu past the copy\n",
	       (unsigned long long)st.frames_cfi, (unsigned long long)st.frames_fp,
	       (unsigned long long)st.beyond_copy);
	print_stack(named, n);
	return false;
}

/* Checks one thread of the case. true when it matches; prints why not. */
static bool replay_thread(const struct replay_case *c, const struct case_thread *ct,
			  const struct snapshot *s, const struct space *sp, struct runtimes *rts,
			  struct user_unwind_tables *tables, char *summary, size_t len)
{
	static struct op_frame frames[OP_MAX_USER_FRAMES];
	static struct named_frame named[OP_MAX_USER_FRAMES * 2];
	struct interp_walk_stats stats[OP_INTERP__COUNT];
	const struct snapshot_thread *t = pick_thread(s, ct->select);
	struct remote_memory snap = snapshot__memory(s);
	struct user_unwind_ops ops = {snap_read, user_unwind_tables__find_rule, &snap, tables};
	struct full_mem full = {snapshot__memory(s), sp};
	struct user_unwind_regs wregs;
	struct user_unwind_result r;
	size_t deepest = 0, deepest_exp = 0, n_runtime = 0, n = 0;
	char want[NAME_LEN];

	if (!t) {
		snprintf(summary, len, "no thread '%s' in the snapshot", ct->select);
		return false;
	}
	/* As the sampler: frames in a runtime's code ranges go to its walker. */
	/* The sampler's registers: rbx too (OP_RULE_CFA_RBX). */
	wregs = (struct user_unwind_regs){.pc = t->regs.rip,
					  .sp = t->regs.rsp,
					  .fp = t->regs.rbp,
					  .fsbase = t->regs.fs_base,
					  .bx = t->regs.rbx,
					  .has_bx = true};
	r = runtimes__walk(rts, &ops, full_read, &full, &wregs, frames, OP_MAX_USER_FRAMES, stats);
	for (uint32_t i = 0; i < r.n_frames; i++) {
		size_t k = name_frame(rts, sp, &frames[i], &named[n],
				      sizeof(named) / sizeof(named[0]) - n);

		n_runtime += named[n].runtime ? k : 0;
		n += k;
	}
	if (match(ct->exp, ct->n_exp, 0, named, n, 0, &deepest, &deepest_exp)) {
		snprintf(summary, len, "thread %s: %zu frames, %zu of runtimes", t->comm, n,
			 n_runtime);
		if (verbose) {
			printf("     %s, thread %s:\n", c->name, t->comm);
			print_stack(named, n);
		}
		return !c->from_copy || replay_copy(c, ct, s, t, sp, rts, named, n, summary, len);
	}
	if (deepest_exp < ct->n_exp)
		expect_text(&ct->exp[deepest_exp], want, sizeof(want));
	else
		snprintf(want, sizeof(want), "the end of the stack");
	snprintf(summary, len, "thread %s (tid %u): frame #%zu is '%s', expected %s", t->comm,
		 t->tid, deepest, deepest < n ? named[deepest].name : "(none)", want);
	printf("     %s, %s:\n", c->name, summary);
	print_stack(named, n);
	for (unsigned int i = 1; i < OP_INTERP__COUNT; i++)
		if (stats[i].walks)
			printf("     %s's walk: %llu frames, %llu without its state, %llu errors\n",
			       interp__of_id(i)->name, (unsigned long long)stats[i].frames,
			       (unsigned long long)stats[i].no_state,
			       (unsigned long long)stats[i].errors);
	return false;
}

/* Replays every thread of the case over s. 0 when all match. */
static int replay_snapshot(const struct replay_case *c, const struct snapshot *s, char *summary,
			   size_t len)
{
	struct user_unwind_tables *tables = NULL;
	struct remote_memory snap, mem;
	struct runtimes rts = {0};
	struct full_mem full;
	struct space sp;
	char names[128];
	int err, failed = 0;
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
	/* The agent's runtimes, reading the snapshot (else a read-only file's bytes). */
	full = (struct full_mem){snapshot__memory(s), &sp};
	mem = (struct remote_memory){full_read_mem, &full};
	err = runtimes__open(&rts, &sp, s->maps, s->maps_len, s->pid, &mem);
	if (err) {
		snprintf(summary, len, "the runtimes cannot start: %s", strerror(-err));
		goto cleanup;
	}
	/* A runtime the case expects frames of must have attached. */
	for (size_t i = 0; i < c->n_threads; i++)
		for (size_t j = 0; j < c->threads[i].n_exp; j++) {
			const struct expect *e = &c->threads[i].exp[j];

			if (e->kind == EXPECT_RUNTIME && !runtimes__running(&rts, e->runtime)) {
				snprintf(summary, len, "no supported %s found in the snapshot",
					 e->runtime);
				err = -ENOENT;
				goto cleanup;
			}
		}
	if (*runtimes__names(&rts, names, sizeof(names))) {
		used = (size_t)snprintf(summary, len, "%s: ", names);
		if (used >= len)
			used = len;
	}
	for (size_t i = 0; i < c->n_threads; i++) {
		char one[512];

		if (!replay_thread(c, &c->threads[i], s, &sp, &rts, tables, one, sizeof(one)))
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
	runtimes__close(&rts);
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
