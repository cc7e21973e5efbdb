// SPDX-License-Identifier: Apache-2.0
#include "capture.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "case.h"
#include "elf/elf_file.h"
#include "proc/proc_maps.h"
#include "snapshot.h"
#include "space.h"
#include "testutil.h"
#include "proc/remote_memory.h"
#include "runtimes.h"
#include "unwind/user_unwind.h"
#include "util/read_file.h"

#define MAX_TRACEES	  64
#define MAX_ATTEMPTS	  200
#define STEPS_PER_ATTEMPT 20000
#define STACK_ABOVE_SP	  (1u << 20)   /* bytes of stack kept above each thread's sp */
#define STACK_BELOW_SP	  256	       /* and below it (the red zone, 128 bytes, and margin) */
#define WRITABLE_MAX	  (256u << 20) /* bytes of mappings copied (memory writable) */
#define WAIT_STOP_MS	  5000	       /* a thread that does not stop by then is gone */

struct tracee {
	pid_t tid;
	int pending_sig; /* a signal the thread stopped for, delivered when it resumes */
};

struct capture {
	pid_t pid;
	struct tracee t[MAX_TRACEES];
	int n;
	char *maps;
	struct space sp;
	bool sp_open;
	/* stop rt: the walk's rules and the runtimes, made on first use per space */
	struct user_unwind_tables *tables;
	struct runtimes rts;
	int rts_err;
	char *err;
	size_t err_len;
};

/* The stopped child's memory: proc/remote_memory's live source (ctx: the pid). */
static int live_read(void *ctx, void *dst, size_t len, uint64_t addr)
{
	return remote_memory__read_live((void *)(uintptr_t) * (pid_t *)ctx, addr, dst, len)
		   ? -EFAULT
		   : 0;
}

/*
 * Waits for tr's next stop and notes a signal to pass on. 0, or -ESRCH when
 * it is gone. Bounded: a thread group leader that exited reports nothing
 * until every other thread is reaped (a workload that ended while the
 * capture searched its stop point), so it counts as gone after
 * WAIT_STOP_MS.
 */
static int wait_stop(struct tracee *tr)
{
	struct timespec ms = {0, 1000000L};
	int st, spins = 0, waited = 0;
	pid_t got;

	/* A single step stops at once: yield first, sleep only when it takes long. */
	while ((got = waitpid(tr->tid, &st, __WALL | WNOHANG)) == 0 && waited < WAIT_STOP_MS) {
		if (spins++ < 1000) {
			sched_yield();
		} else {
			nanosleep(&ms, NULL);
			waited++;
		}
	}
	if (got <= 0 || !WIFSTOPPED(st))
		return -ESRCH;
	/* A signal-delivery stop (not our trap, not an event): the signal must go on. */
	if ((st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP)
		tr->pending_sig = WSTOPSIG(st);
	return 0;
}

static bool attached(const struct capture *cap, pid_t tid)
{
	for (int i = 0; i < cap->n; i++)
		if (cap->t[i].tid == tid)
			return true;
	return false;
}

/* Seizes and stops every thread, again until no new one appears. */
static int attach_all(struct capture *cap)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", cap->pid);
	for (int round = 0; round < 5; round++) {
		DIR *dir = opendir(path);
		struct dirent *de;
		int added = 0;

		if (!dir)
			return -errno;
		while ((de = readdir(dir)) && cap->n < MAX_TRACEES) {
			pid_t tid = atoi(de->d_name);
			struct tracee *tr = &cap->t[cap->n];

			if (tid <= 0 || attached(cap, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, 0) || ptrace(PTRACE_INTERRUPT, tid, 0, 0))
				continue; /* the thread just exited */
			*tr = (struct tracee){tid, 0};
			if (wait_stop(tr))
				continue;
			cap->n++;
			added++;
		}
		closedir(dir);
		if (!added)
			return cap->n ? 0 : -ESRCH;
	}
	return 0;
}

static void resume_all(struct capture *cap)
{
	for (int i = 0; i < cap->n; i++) {
		ptrace(PTRACE_CONT, cap->t[i].tid, 0, (void *)(long)cap->t[i].pending_sig);
		cap->t[i].pending_sig = 0;
	}
}

static void stop_all(struct capture *cap)
{
	for (int i = 0; i < cap->n; i++)
		if (ptrace(PTRACE_INTERRUPT, cap->t[i].tid, 0, 0) || wait_stop(&cap->t[i]))
			cap->t[i--] = cap->t[--cap->n]; /* gone */
}

/* (Re)builds the address space when the maps changed (dlopen). */
static int refresh_space(struct capture *cap)
{
	char path[64], *text = NULL;
	size_t len = 0;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", cap->pid);
	err = read_file(path, &text, &len);
	if (err)
		return err;
	if (cap->maps && !strcmp(cap->maps, text)) {
		free(text);
		return 0;
	}
	if (cap->sp_open)
		space__close(&cap->sp);
	user_unwind_tables__free(cap->tables);
	cap->tables = NULL;
	runtimes__close(&cap->rts);
	free(cap->maps);
	cap->maps = text;
	err = space__open(&cap->sp, text, len, live_read, &cap->pid);
	cap->sp_open = !err;
	return err;
}

/*
 * Is thread tid, stopped at pc, running function name of runtime? pc in one
 * of the runtime's code ranges (when in_ranges), and the first frame of that runtime in the
 * replay's own walk (over the live memory of the stopped process, named by
 * the runtime's resolve and describe) is name.
 */
static bool in_runtime_function(struct capture *cap, pid_t tid, uint64_t pc, const char *runtime,
				const char *name, bool in_ranges)
{
	static struct op_frame frames[OP_MAX_USER_FRAMES];
	struct user_unwind_ops ops = {live_read, user_unwind_tables__find_rule, &cap->pid, NULL};
	struct user_unwind_result r;
	struct user_regs_struct regs;
	struct user_unwind_regs wregs;
	bool match = false;

	if (!cap->tables) {
		if (user_unwind_tables__new(&cap->tables))
			return false;
		space__add_tables(&cap->sp, cap->tables);
		cap->rts_err = runtimes__open(&cap->rts, &cap->sp, cap->maps, strlen(cap->maps),
					      (uint32_t)cap->pid, NULL);
	}
	if (cap->rts_err || (in_ranges && !runtimes__in_ranges(&cap->rts, runtime, pc)) ||
	    ptrace(PTRACE_GETREGS, tid, 0, &regs))
		return false;
	ops.rule_ctx = cap->tables;
	wregs = (struct user_unwind_regs){.pc = regs.rip,
					  .sp = regs.rsp,
					  .fp = regs.rbp,
					  .fsbase = regs.fs_base,
					  .bx = regs.rbx,
					  .has_bx = true};
	r = runtimes__walk(&cap->rts, &ops, live_read, &cap->pid, &wregs, frames,
			   OP_MAX_USER_FRAMES, NULL);
	for (uint32_t i = 0; i < r.n_frames; i++) {
		struct interp_line line;
		const char *rt = NULL, *suffix = "";
		size_t n;

		if (!runtimes__name(&cap->rts, &frames[i], &rt, &suffix, &line, 1))
			continue;
		/* The name, or the name and its suffix (HotSpot's "_[j]": JIT-compiled). */
		n = line.name ? strlen(line.name) : 0;
		match = !strcmp(rt, runtime) && line.name && !strncmp(line.name, name, n) &&
			(!name[n] || !strcmp(name + n, suffix));
		break;
	}
	return match;
}

static bool at_place(struct capture *cap, const struct replay_case *c, uint64_t pc)
{
	const struct space_map *m;
	const char *name;
	uint64_t off = 0;

	switch (c->stop) {
	case STOP_RUNTIME:
		return true;
	case STOP_IN:
	case STOP_AT:
		name = space__function(&cap->sp, pc, false, &off);
		return name && case__name_matches(c->stop_name, false, name) &&
		       (c->stop == STOP_IN || off == 0);
	case STOP_PLT:
		return space__in_plt(&cap->sp, pc);
	case STOP_VDSO:
		m = space__find(&cap->sp, pc);
		return m && m->is_vdso;
	case STOP_ANON:
		m = space__find(&cap->sp, pc);
		return m && !m->file && !m->is_vdso;
	case STOP_FILE:
		m = space__find(&cap->sp, pc);
		if (!m || !m->file)
			return false;
		/* A pattern (libruby-3.1.so.3.1.*) matches the file's name: a distribution's
		 * point release renames the library, the case stays true. */
		if (strpbrk(c->stop_name, "*?[")) {
			const char *base = strrchr(m->file->path, '/');

			return !fnmatch(c->stop_name, base ? base + 1 : m->file->path, 0);
		}
		return strlen(m->file->path) >= strlen(c->stop_name) &&
		       !strcmp(m->file->path + strlen(m->file->path) - strlen(c->stop_name),
			       c->stop_name);
	}
	return false;
}

static bool at_stop_point(struct capture *cap, const struct replay_case *c, pid_t tid, uint64_t pc)
{
	if (!at_place(cap, c, pc))
		return false;
	return !c->stop_runtime ||
	       in_runtime_function(cap, tid, pc, c->stop_runtime, c->stop_rt_name, !c->stop_where);
}

static int get_pc(pid_t tid, uint64_t *pc)
{
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, tid, 0, &regs))
		return -errno;
	*pc = regs.rip;
	return 0;
}

/* The stopped thread at the stop point, or NULL. */
static struct tracee *find_stopped(struct capture *cap, const struct replay_case *c)
{
	uint64_t pc = 0;

	for (int i = 0; i < cap->n; i++)
		if (!get_pc(cap->t[i].tid, &pc) && at_stop_point(cap, c, cap->t[i].tid, pc))
			return &cap->t[i];
	return NULL;
}

/* Single-steps the main thread (others stay stopped) until it reaches the stop point. */
static struct tracee *step_main(struct capture *cap, const struct replay_case *c)
{
	struct tracee *tr = NULL;
	uint64_t pc = 0;

	for (int i = 0; i < cap->n; i++)
		if (cap->t[i].tid == cap->pid)
			tr = &cap->t[i];
	if (!tr)
		return NULL;
	for (int i = 0; i < STEPS_PER_ATTEMPT; i++) {
		if (ptrace(PTRACE_SINGLESTEP, tr->tid, 0, (void *)(long)tr->pending_sig))
			return NULL;
		tr->pending_sig = 0;
		if (wait_stop(tr) || get_pc(tr->tid, &pc))
			return NULL;
		if (at_stop_point(cap, c, tr->tid, pc))
			return tr;
	}
	return NULL;
}

struct range {
	uint64_t start, end;
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Copies one range of memory; runs of pages holding only zeros (memory
 * reserved and never written: a JVM's or V8's heap) are kept as ranges. */
static int copy_mem(struct capture *cap, struct snapshot *snap, uint64_t start, uint64_t end)
{
	static const uint8_t zero[4096];
	uint8_t *buf = malloc(end - start);
	uint64_t run = 0; /* where the current run starts (offset) */
	int err = -ENOMEM;

	if (!buf)
		return err;
	err = live_read(&cap->pid, buf, end - start, start) ? -EFAULT : 0;
	for (uint64_t off = 0; !err && off < end - start;) {
		uint64_t n = end - start - off < sizeof(zero) ? end - start - off : sizeof(zero);
		bool is_zero = !memcmp(buf + off, zero, n);
		uint64_t next = off + n;

		/* Extend the run while pages are of its kind. */
		while (next < end - start) {
			uint64_t m =
			    end - start - next < sizeof(zero) ? end - start - next : sizeof(zero);

			if (!memcmp(buf + next, zero, m) != is_zero)
				break;
			next += m;
		}
		run = off;
		err = is_zero ? snapshot__add_zero(snap, start + run, next - run)
			      : snapshot__add_mem(snap, start + run, buf + run, next - run);
		off = next;
	}
	free(buf);
	return err;
}

/*
 * Every writable mapping (heap, anonymous memory, files' data), RELRO, and
 * every readable mapping of no file on disk, within WRITABLE_MAX in all: what
 * a runtime's walker and naming read besides the stack. Added to ranges (room for n_maps more);
 * returns the new count.
 */
static size_t add_writable(const struct proc_map *maps, size_t n_maps, struct range *ranges,
			   size_t n_ranges)
{
	size_t n_stacks = n_ranges;
	uint64_t total = 0;

	for (size_t j = 0; j < n_maps; j++) {
		const struct proc_map *m = &maps[j];
		bool stack = false;

		/* [vvar] cannot be read; stacks are copied around each sp (ranges[0 ..
		 * n_stacks) hold those), not whole (8 MiB per thread). */
		for (size_t k = 0; k < n_stacks; k++)
			stack |= ranges[k].start >= m->start && ranges[k].start < m->end;
		/* RELRO: read-only now, but written by the loader (GOT, TLS offsets),
		 * so not the file's bytes; it lies just below the file's data. */
		bool relro = !(m->perms & (PROC_MAP_W | PROC_MAP_X)) && m->path[0] == '/' &&
			     j + 1 < n_maps && maps[j + 1].start == m->end &&
			     (maps[j + 1].perms & PROC_MAP_W) && !strcmp(maps[j + 1].path, m->path);

		/* Memory no file on disk holds: anonymous (a JIT's code, V8's
		 * read-only heap), shared memory, deleted files. */
		bool no_file = m->path[0] != '/' || strstr(m->path, " (deleted)") ||
			       !strncmp(m->path, "/memfd:", 7) || !strncmp(m->path, "/dev/", 5);

		if (!(m->perms & PROC_MAP_W) && !relro && !(no_file && (m->perms & PROC_MAP_R)))
			continue;
		if (stack || !strncmp(m->path, "[v", 2))
			continue;
		if (total + (m->end - m->start) > WRITABLE_MAX)
			break;
		total += m->end - m->start;
		ranges[n_ranges++] = (struct range){m->start, m->end};
	}
	return n_ranges;
}

static int take_snapshot(struct capture *cap, const struct replay_case *c, pid_t stopped,
			 struct snapshot *snap)
{
	struct proc_map *maps = NULL;
	struct range *ranges = NULL;
	size_t n_maps = 0, n_ranges = 0;
	int err;

	snap->pid = (uint32_t)cap->pid;
	snap->stopped_tid = (uint32_t)stopped;
	snap->maps = strdup(cap->maps);
	if (!snap->maps)
		return -ENOMEM;
	snap->maps_len = strlen(cap->maps);
	err = proc_maps__parse(cap->maps, snap->maps_len, &maps, &n_maps, NULL);
	if (err)
		return err;
	ranges = calloc(MAX_TRACEES + 1 + n_maps, sizeof(*ranges));
	if (!ranges) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (int i = 0; i < cap->n; i++) {
		struct snapshot_thread t = {.tid = (uint32_t)cap->t[i].tid};
		char path[96], *comm = NULL;
		size_t len;

		if (ptrace(PTRACE_GETREGS, t.tid, 0, &t.regs))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", cap->pid, cap->t[i].tid);
		if (!read_file(path, &comm, &len)) {
			comm[strcspn(comm, "\n")] = 0;
			snprintf(t.comm, sizeof(t.comm), "%s", comm);
		}
		free(comm);
		err = snapshot__add_thread(snap, &t);
		if (err)
			goto cleanup;
		/* The stack around sp, within the mapping that holds it. */
		for (size_t j = 0; j < n_maps; j++)
			if (t.regs.rsp >= maps[j].start && t.regs.rsp < maps[j].end) {
				uint64_t lo = t.regs.rsp - STACK_BELOW_SP,
					 hi = t.regs.rsp + STACK_ABOVE_SP;

				ranges[n_ranges].start = lo < maps[j].start ? maps[j].start : lo;
				ranges[n_ranges].end = hi > maps[j].end ? maps[j].end : hi;
				n_ranges++;
				break;
			}
	}
	for (size_t j = 0; j < n_maps; j++)
		if (!strcmp(maps[j].path, "[vdso]"))
			ranges[n_ranges++] = (struct range){maps[j].start, maps[j].end};
	if (c->copy_writable)
		n_ranges = add_writable(maps, n_maps, ranges, n_ranges);
	qsort(ranges, n_ranges, sizeof(ranges[0]), cmp_range);
	for (size_t j = 0; j < n_ranges; j++) {
		struct range r = ranges[j];

		/* Merge overlapping ranges (threads sharing a stack mapping, as Go's may). */
		while (j + 1 < n_ranges && ranges[j + 1].start <= r.end) {
			if (ranges[j + 1].end > r.end)
				r.end = ranges[j + 1].end;
			j++;
		}
		err = copy_mem(cap, snap, r.start, r.end);
		if (err)
			goto cleanup;
	}
	for (size_t i = 0; i < cap->sp.n_files; i++) {
		const struct space_file *f = cap->sp.files[i];

		if (f->path[0] != '/')
			continue;
		err = snapshot__add_file(snap, f->path,
					 f->ef && f->ef->build_id ? f->ef->build_id : "");
		if (err)
			goto cleanup;
	}
cleanup:
	free(ranges);
	proc_maps__free(maps, n_maps);
	return err;
}

static int capture_fail(struct capture *cap, int err, const char *fmt, const char *arg)
{
	snprintf(cap->err, cap->err_len, fmt, arg);
	return err ? err : -EINVAL;
}

/*
 * The command line: build/workloads/NAME ARGS, or for a Python case the
 * interpreter, the script in tests/workloads/python/ and ARGS with each
 * @PATH made build/workloads/PATH. bufs holds the strings built. 0 or -ENOENT.
 */
static int build_argv(const struct replay_case *c, const char *build_dir, char *exe, size_t len,
		      char **argv, char bufs[][512])
{
	int n = 0;

	if (c->perl) {
		snprintf(exe, len, "/usr/bin/perl");
	} else if (c->run) {
		snprintf(exe, len, "%s", c->workload);
	} else if (!c->python) {
		snprintf(exe, len, "%s/workloads/%s", build_dir, c->workload);
	} else if (c->python[0] == '/') {
		snprintf(exe, len, "%s", c->python);
	} else if (tu_pyenv_python(c->python, exe, len)) {
		return -ENOENT;
	}
	argv[n++] = exe;
	if (c->python || c->perl) {
		char rel[512], *abs;

		/* Absolute, as the code objects' file names then are. */
		snprintf(rel, sizeof(rel), "%s/../../workloads/%s/%s", c->dir,
			 c->perl ? "perl" : "python", c->workload);
		abs = realpath(rel, NULL);
		snprintf(bufs[0], 512, "%s", abs ? abs : rel);
		free(abs);
		argv[n++] = bufs[0];
	}
	for (int i = 0; i < c->n_args; i++) {
		if (c->args[i][0] == '@') {
			snprintf(bufs[i + 1], 512, "%s/workloads/%s", build_dir, c->args[i] + 1);
			argv[n++] = bufs[i + 1];
		} else if (c->args[i][0] == '%') {
			char rel[512], *abs;

			/* Absolute, as the runtimes' file names then are. */
			snprintf(rel, sizeof(rel), "%s/../../workloads/%s", c->dir, c->args[i] + 1);
			abs = realpath(rel, NULL);
			snprintf(bufs[i + 1], 512, "%s", abs ? abs : rel);
			free(abs);
			argv[n++] = bufs[i + 1];
		} else {
			argv[n++] = c->args[i];
		}
	}
	argv[n] = NULL;
	return 0;
}

int capture__run(const struct replay_case *c, const char *build_dir, struct snapshot *snap,
		 char *err_buf, size_t err_len)
{
	struct capture cap = {.err = err_buf, .err_len = err_len};
	char exe[512], *argv[CASE_MAX_ARGS + 3], bufs[CASE_MAX_ARGS + 1][512];
	struct tracee *found = NULL;
	struct timespec settle = {c->settle_ms / 1000, (c->settle_ms % 1000) * 1000000L};
	int err;

	err = build_argv(c, build_dir, exe, sizeof(exe), argv, bufs);
	if (err)
		return capture_fail(&cap, err, "no CPython %s (pyenv root's versions/)", c->python);
	cap.pid = tu_spawn_ready(argv);
	if (cap.pid < 0)
		return capture_fail(&cap, -ECHILD, "%s did not start (built?)", exe);
	nanosleep(&settle, NULL);
	err = attach_all(&cap);
	if (err) {
		capture_fail(&cap, err, "cannot stop %s with ptrace", exe);
		goto cleanup;
	}
	srand((unsigned int)cap.pid);
	for (int attempt = 0; attempt < MAX_ATTEMPTS && !found; attempt++) {
		struct timespec pause = {0, (2 + rand() % 15) * 1000000L};

		if (attempt) {
			resume_all(&cap);
			nanosleep(&pause, NULL);
			stop_all(&cap);
			if (!cap.n) {
				err = capture_fail(&cap, -ESRCH, "%s exited", exe);
				goto cleanup;
			}
		}
		err = refresh_space(&cap);
		if (err) {
			capture_fail(&cap, err, "cannot read the maps of %s", exe);
			goto cleanup;
		}
		found = find_stopped(&cap, c);
		if (!found && c->step_main)
			found = step_main(&cap, c);
	}
	if (!found) {
		err = capture_fail(&cap, -ETIMEDOUT, "%s never reached the stop point", exe);
		goto cleanup;
	}
	err = take_snapshot(&cap, c, found->tid, snap);
	if (err)
		capture_fail(&cap, err, "copying the memory of %s failed", exe);
cleanup:
	for (int i = 0; i < cap.n; i++)
		ptrace(PTRACE_DETACH, cap.t[i].tid, 0, 0);
	tu_reap(cap.pid);
	if (cap.sp_open)
		space__close(&cap.sp);
	user_unwind_tables__free(cap.tables);
	runtimes__close(&cap.rts);
	free(cap.maps);
	return err;
}
