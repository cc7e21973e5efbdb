/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A replay test case (tests/replay/cases/NAME.case): which workload to run
 * and where to stop it, or which committed snapshot to load, and per thread
 * the frames the unwinder must produce, innermost first. Line format
 * ('#' at the start or after a blank starts a comment):
 *
 *   workload NAME [ARG...]   build/workloads/NAME, run until it prints "ready"
 *   python VERSION SCRIPT [ARG...]
 *                            tests/workloads/python/SCRIPT run by CPython VERSION
 *                            (3.8: pyenv root's versions/3.8.*; or an absolute
 *                            path); an ARG @PATH is build/workloads/PATH
 *   memory writable          also copy every writable mapping (an interpreter's
 *                            heap and data: what the Python walker reads)
 *   snapshot PATH            a committed snapshot instead (relative to the case file)
 *   stop in NAME             capture when a thread's innermost function is NAME
 *   stop at NAME             ... when a thread is at NAME's first instruction
 *   stop plt                 ... when a thread is inside a .plt section
 *   stop vdso                ... when a thread is inside the vDSO
 *   stop anon                ... when a thread is in executable memory of no
 *                            file (a JIT's code)
 *   stop file SUFFIX         ... when a thread is in a file whose path ends with
 *                            SUFFIX (an interpreter's code with no symbols), or
 *                            whose name matches SUFFIX when it holds * ? or [
 *                            (fnmatch: a point release renames the library)
 *   stop rt RUNTIME NAME     ... when a thread's innermost RUNTIME frame is NAME
 *                            (src/interp/<RUNTIME>: python, ruby, hotspot, perl,
 *                            v8, php; the replay's walk and naming, over the live
 *                            process; NAME may hold spaces and end with the
 *                            frame's folded suffix, as in `rt`) and its pc is in one
 *                            of RUNTIME's code ranges, or, with another stop
 *                            line, where that one says
 *   stop python NAME         stop rt python NAME
 *   copy                     also unwind each thread from a stack copy, as a sample
 *                            taken before its process's tables existed
 *                            (tests/replay/copy_walk.h; needs BPF maps): the same
 *                            expectations must hold
 *   copy stops TEXT          the same, but the copy's walk (after the process is
 *                            gone) ends with an error naming TEXT where the direct
 *                            walk goes on, its frames before it the direct walk's
 *   copy go BYTES            the copy also captures a Go switch at the sample, as
 *                            the sampler does (struct op_stack_copy's go_*), with
 *                            at most BYTES of the goroutine's stack
 *   settle MS                wait MS after "ready" before stopping (default 200)
 *   step main|none           single-step the main thread towards the stop (default main)
 *   known_failure REASON     the case documents a known gap: failing is reported as
 *                            XFAIL, passing as XPASS (a failure: drop the line)
 *   thread stopped|COMM|oldest+N
 *                            the expectations that follow are for this thread
 *                            (oldest+N: the one with N lower thread ids)
 *   frame NAME[|NAME...]     one frame named exactly one of these
 *   like TEXT[|TEXT...]      one frame whose name contains one of these
 *   seq FORMAT FROM TO       frames FORMAT % i for i from FROM to TO (either direction)
 *   repeat N NAME            N frames named NAME
 *   rt RUNTIME NAME [@ FILE[:LINE]]
 *                            one frame of RUNTIME (as `stop rt`) named NAME (may
 *                            hold spaces), by the runtime's own resolve and
 *                            describe, in a file whose name ends with FILE, at LINE;
 *                            NAME may end with the frame's folded suffix
 *                            (HotSpot: _[j] JIT-compiled, _[0] interpreted)
 *   py NAME [FILE[:LINE]]    rt python NAME [@ FILE[:LINE]]: function NAME
 *                            (qualified from 3.11)
 *   perl SCRIPT [ARG...]     tests/workloads/perl/SCRIPT run by /usr/bin/perl
 *   run PROGRAM [ARG...]     any program (an absolute path: an interpreter);
 *                            an ARG %PATH is tests/workloads/PATH (absolute),
 *                            @PATH is build/workloads/PATH
 *   pl NAME [FILE[:LINE]]    rt perl NAME [@ FILE[:LINE]]: sub NAME
 *                            ("Package::sub", "(eval)", "(main)")
 *   gap MIN MAX              MIN to MAX native frames of any name (never an error
 *                            or a runtime's frame)
 *   error TEXT               an error frame whose text contains TEXT
 *
 * The expectations of a thread describe its whole stack: every frame must be
 * matched, and a stack that ends in an error frame fails unless `error` says so.
 * In `stop in/at` and `frame`, NAME matches exactly; write ~TEXT to match a
 * substring instead (mangled and demangled C++ and Rust names).
 */
#ifndef OMNIPROF_TESTS_REPLAY_CASE_H
#define OMNIPROF_TESTS_REPLAY_CASE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

enum expect_kind {
	EXPECT_FRAME, /* text: alternatives, exact */
	EXPECT_LIKE,  /* text: alternatives, substring */
	EXPECT_GAP,
	EXPECT_ERROR,
	EXPECT_RUNTIME, /* runtime: its name; text: the function; where: FILE[:LINE] or NULL */
};

struct expect {
	enum expect_kind kind;
	char *text; /* owned */
	unsigned int min, max;
	char *where;	     /* owned; EXPECT_RUNTIME only */
	const char *runtime; /* EXPECT_RUNTIME: interp_ops.name of a registry runtime */
};

struct case_thread {
	char *select;	    /* owned: "stopped" or a thread name (comm) */
	struct expect *exp; /* owned */
	size_t n_exp;
};

enum stop_kind {
	STOP_IN,
	STOP_AT,
	STOP_PLT,
	STOP_VDSO,
	STOP_FILE,
	STOP_ANON,
	STOP_RUNTIME,
};

#define CASE_MAX_ARGS 8

struct replay_case {
	char *name;	/* the file name without .case; owned */
	char *dir;	/* the case file's folder; owned */
	char *workload; /* a program in build/workloads, or a script (python) */
	char *python;	/* the interpreter: a version or a path; NULL: not Python */
	bool perl;	/* workload: a script in tests/workloads/perl/ run by /usr/bin/perl */
	bool run;	/* workload: a program run with args as they are (run) */
	bool copy_writable;
	bool from_copy;	  /* copy: also walk from a stack copy */
	uint32_t copy_go; /* copy go BYTES (0: the copy captures no Go switch) */
	/* copy stops TEXT: the copy's walk, done after the process is gone, ends
	 * with an error naming TEXT where the direct walk goes on (its frames
	 * before it are the direct walk's first ones). NULL: it matches the
	 * expectations as the direct walk does. */
	char *copy_stop;
	char *args[CASE_MAX_ARGS + 1];
	int n_args;
	char *snapshot;
	enum stop_kind stop;
	char *stop_name;	  /* STOP_IN, STOP_AT, STOP_FILE */
	bool stop_where;	  /* a stop line other than stop rt/python */
	const char *stop_runtime; /* stop rt: interp_ops.name, else NULL */
	char *stop_rt_name;	  /* stop rt: the function */
	int settle_ms;
	bool step_main;
	char *known_failure;
	struct case_thread *threads;
	size_t n_threads;
};

/* Parses a case file. 0, or -errno with a message in err (len bytes). Free with case__free. */
int case__load(const char *path, struct replay_case *c, char *err, size_t len);
void case__free(struct replay_case *c); /* accepts a zeroed case */

/* Whether name matches a `frame`/`stop` pattern: '|' alternatives, a leading '~' for substrings. */
bool case__name_matches(const char *pattern, bool like, const char *name);

#endif
