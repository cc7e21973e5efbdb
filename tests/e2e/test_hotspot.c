// SPDX-License-Identifier: Apache-2.0
/*
 * End-to-end HotSpot: Debian's JDK 17 (openjdk-17-jdk-headless) runs
 * tests/workloads/hotspot_chain/HotspotChain.java, compiled by `make tests` with its
 * javac, with default flags but for the execution mode: interpreted only
 * (-Xint), C1 only (-XX:TieredStopAtLevel=1), C2 only
 * (-XX:-TieredCompilation) and default tiered; and 32 Java threads. Each
 * case records the running JVM with -p and requires, in at least 95% of the
 * samples of the leaf method, the whole Java chain main -> run -> a -> b -> c
 * -> work with the native frames below it (JavaMain ... JavaCalls::call_helper;
 * for the threads thread_native_entry ... Thread.run). In the compiled modes
 * a, b and c are inlined into run: each must still be a frame of its own.
 * main calls run once, so in the compiled modes its frame is OSR code: whole
 * chains through run_[j] are required, and the BPF step's nmethods
 * remembered across samples must have been taken (omniprof -v's counter).
 * In stacks.folded Java frames carry the Java palette's suffix: _[0] for every
 * frame under -Xint, _[i] for a, b and c in the compiled modes (their names
 * in the pprof stay plain). The pprof's lines of the calls in run, a, b and c must be the lines
 * javap -l gives for them (and the file HotspotChain.java). And Java -> JNI native method -> C ->
 * Java callback (HotspotJni.java and hotspot_jni.c, built by `make tests` with the JDK's headers),
 * the native frames between. And a JVM with a 1 GiB code cache whose plugin classes
 * (HotspotUnload.java: PluginA and PluginB, alternately, each with a class loader of its own) are
 * unloaded every 75 ms (about 65 unload rounds in the recording) and their memory reused: every
 * stack names the plugin that ran, never one plugin's method under the other's (the JVM's
 * collection epochs: omniprof -v's counters of names read again and of frames refused are printed),
 * and no frame of its growing code cache falls to the native rules (anonymous code, or no mapping).
 * And a JVM started 1 s into a whole-system recording (10 s of life, under a name of its own:
 * other JVMs on the machine are recorded too): its samples from the first
 * named Java frame on hold the whole chain (the HotSpot runtime attaches as soon as libjvm is
 * opened, not once its table is built). And compiled frames deoptimised while their callee runs
 * (HotspotDeopt.java: the leaf changes a MutableCallSite its caller's nmethod depends on, so that
 * frame returns to the deopt handler for the rest of the leaf's 100 ms): the chain main -> run ->
 * outer -> spin stays whole and named, and omniprof -v counts deoptimised frames named from their
 * original pc; and the same in a 3 MiB code cache, swept (nmethods freed) about every second with
 * no collection (its -Xlog counts both): the chain stays whole while remembered nmethods are taken
 * without their check read between sweeps (omniprof -v's counter); the JVM's compile log
 * (-XX:+LogCompilation: each nmethod's block address and method) shows blocks the sweeper freed
 * taken by another method's nmethod while omniprof ran (at least one is required), and no sample
 * has a frame named out of HotspotDeopt's one call path, as a frame named from a remembered entry
 * of the block's old nmethod would be (frames lost are counted apart, not failed); the walk's
 * refusals of remembered nmethods whose address a new nmethod took are printed (omniprof -v's
 * counters: chance decides whether a new return address equals a remembered one). And a JVM whose
 * own agent (its jar's Launcher-Agent-Class) redefines a class every 100 ms (HotspotRedefine.java;
 * old Methods freed with no collection): omniprof sees it can redefine (safepoints join its epochs)
 * and the chain main -> a -> b -> spin stays whole. And every other HotSpot JDK found under
 * /usr/lib/jvm (Temurin 25 on this machine image; none is fine, the JDK 17 cases still run):
 * -Xint, C2 only (inlined three deep) and default tiered, 4 s each, with the same assertions
 * (complete chains, inlined frames, OSR, lines from javap -l); which JDKs ran is printed.
 * Needs root and BPF.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
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

#include <signal.h>
#include <sys/wait.h>

#include "folded_check.h"
#include "omniprof_run.h"
#include "pprof_read.h"
#include "profile.pb-c.h"
#include "testutil.h"

#define JDK	       "/usr/lib/jvm/java-17-openjdk-amd64"
#define SOURCE	       "tests/workloads/hotspot_chain/HotspotChain.java"
#define RECORD_SECONDS "5"
/* Another JDK's short set (find_other_jdks): 4 s, keeping CI's added time about 25 s. */
#define OTHER_RECORD_SECONDS "4"
#define FREQUENCY	     "199"
#define MIN_LEAF	     20 /* fewer leaf samples than this says nothing */
#define THREADS		     "32"
#define EXPECT(call)	     assert_int_equal((call), 0)

enum workload { CHAIN, JNI, UNLOAD, DEOPT, SWEPT, REDEFINE };

struct jvm_case {
	const char *name;
	enum workload what;
	const char *flags; /* the execution mode's JVM flags, "" for default */
	const char *threads;
	const char *warmup_ms; /* before "ready": the JIT compiles the chain */
	/*
	 * nice(1) increment: 32 spinning threads on a small machine would starve
	 * omniprof's file worker (libjvm.so's table, 20 MB of code) for seconds.
	 */
	const char *nice;
	/* Another HotSpot JDK found under /usr/lib/jvm (NULL: JDK) and the classes it runs. */
	const char *java_home;
	const char *classes;
};

static char classes[512]; /* javac's (and gcc's) output, made once in main */

static char *omniprof(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/omniprof", tu_build_dir());
	return path;
}

/* ---- expected chains ------------------------------------------------------ */

/*
 * The suffix stacks.folded gives a Java frame (the flame-graph Java palette):
 * -Xint: every frame interpreted (_[0]); a compiled mode: a, b and c inlined
 * into run (_[i]); else, or for the other frames, any of the three.
 */
enum java_modes { ANY_MODE, INTERPRETED, INLINING };
static enum java_modes java_mode;

static void add_java(struct chain_spec *cs, const char *name, bool inlined)
{
	if (java_mode == INTERPRETED)
		EXPECT(chain_spec__add(cs, "%s_[0]", name));
	else if (java_mode == INLINING && inlined)
		EXPECT(chain_spec__add(cs, "%s_[i]", name));
	else
		EXPECT(chain_spec__add_like(cs, "%s_[0]|%s_[j]|%s_[i]", name, name, name));
}

/* Whether run must be compiled code (_[j]): main's one activation of run, in OSR code. */
static bool run_compiled;

static void add_java_chain(struct chain_spec *cs)
{
	if (run_compiled)
		EXPECT(chain_spec__add(cs, "HotspotChain.run_[j]"));
	else
		add_java(cs, "HotspotChain.run", false);
	add_java(cs, "HotspotChain.a", true);
	add_java(cs, "HotspotChain.b", true);
	add_java(cs, "HotspotChain.c", true);
	add_java(cs, "HotspotChain.work", false);
}

/* The launcher's main thread: JavaMain calls main through JNI and the call stub. */
static void expect_main(struct chain_spec *cs)
{
	EXPECT(chain_spec__add(cs, "JavaMain"));
	EXPECT(chain_spec__add_gap(cs, 1, 4)); /* jni_CallStaticVoidMethod, jni_invoke_static */
	EXPECT(chain_spec__add(cs, "JavaCalls::call_helper"));
	EXPECT(chain_spec__add_gap(cs, 0, 1)); /* the call stub */
	add_java(cs, "HotspotChain.main", false);
	add_java_chain(cs);
}

/* A thread started with new Thread: the JVM's thread entry, Thread.run, the lambda. */
static void expect_thread(struct chain_spec *cs)
{
	EXPECT(chain_spec__add(cs, "thread_native_entry"));
	EXPECT(chain_spec__add_gap(cs, 1, 10)); /* JavaThread::run ... JavaCalls::call_virtual */
	EXPECT(chain_spec__add(cs, "JavaCalls::call_helper"));
	EXPECT(chain_spec__add_gap(cs, 0, 1)); /* the call stub */
	add_java(cs, "java.lang.Thread.run", false);
	EXPECT(chain_spec__add_gap(cs, 0, 1)); /* the lambda's proxy class */
	add_java(cs, "HotspotChain.lambda$main$0", false);
	add_java_chain(cs);
}

/* Java -> JNI native method -> C -> Java callback (HotspotJni.java). */
static void expect_jni(struct chain_spec *cs)
{
	EXPECT(chain_spec__add(cs, "JavaMain"));
	EXPECT(chain_spec__add_gap(cs, 1, 4));
	EXPECT(chain_spec__add(cs, "JavaCalls::call_helper"));
	EXPECT(chain_spec__add_gap(cs, 0, 1));
	add_java(cs, "HotspotJni.main", false);
	add_java(cs, "HotspotJni.run", false);
	add_java(cs, "HotspotJni.viaNative", false);
	EXPECT(chain_spec__add(cs, "Java_HotspotJni_viaNative"));
	EXPECT(chain_spec__add_gap(cs, 1, 4)); /* call_back, jni_CallStaticLongMethod, ... */
	EXPECT(chain_spec__add(cs, "JavaCalls::call_helper"));
	EXPECT(chain_spec__add_gap(cs, 0, 1));
	add_java(cs, "HotspotJni.callback", false);
}

/* HotspotDeopt.java: outer (perhaps inlined into run) under its deopt handler, then spin. */
static void expect_deopt(struct chain_spec *cs)
{
	EXPECT(chain_spec__add(cs, "JavaMain"));
	EXPECT(chain_spec__add_gap(cs, 1, 4));
	EXPECT(chain_spec__add(cs, "JavaCalls::call_helper"));
	EXPECT(chain_spec__add_gap(cs, 0, 1));
	add_java(cs, "HotspotDeopt.main", false);
	add_java(cs, "HotspotDeopt.run", false);
	add_java(cs, "HotspotDeopt.outer", false);
	add_java(cs, "HotspotDeopt.spin", false);
}

/* HotspotRedefine.java: main, then RedefineHot's chain (a class its agent redefines). */
static void expect_redefine(struct chain_spec *cs)
{
	EXPECT(chain_spec__add(cs, "JavaMain"));
	EXPECT(chain_spec__add_gap(cs, 1, 4));
	EXPECT(chain_spec__add(cs, "JavaCalls::call_helper"));
	EXPECT(chain_spec__add_gap(cs, 0, 1));
	add_java(cs, "HotspotRedefine.main", false);
	add_java(cs, "RedefineHot.a", false);
	add_java(cs, "RedefineHot.b", false);
	add_java(cs, "RedefineHot.spin", false);
}

/* The value of omniprof -v's counter name in out, -1 when it is not there. */
static long counter(const char *out, const char *name)
{
	const char *at = out ? strstr(out, name) : NULL;

	return at ? strtol(at + strlen(name), NULL, 10) : -1;
}

/* HotspotUnload.java: the plugin loaded in this cycle, its method and leaf. */
static void expect_plugin(struct chain_spec *cs, char p)
{
	char name[64];

	add_java(cs, "HotspotUnload.main", false);
	add_java(cs, "HotspotUnload.cycle", false);
	snprintf(name, sizeof(name), "Plugin%c.applyAsLong", p);
	add_java(cs, name, false);
	snprintf(name, sizeof(name), "Plugin%c.spin%c", p, p);
	add_java(cs, name, false);
}

/* Lines of text that hold what. */
static long count_lines(const char *text, const char *what)
{
	long n = 0;

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		const char *hit = strstr(line, what);

		if (hit && (!end || hit < end))
			n++;
		line = end ? end + 1 : NULL;
	}
	return n;
}

/* Lines of stacks.folded that name methods of both plugins: a name left from an unloaded class. */
static long mixed_plugins(const char *text)
{
	long n = 0;

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (memmem(line, len, "PluginA.", 8) && memmem(line, len, "PluginB.", 8)) {
			printf("      mixed: %.*s\n", (int)(len > 600 ? 600 : len), line);
			n++;
		}
		line = end ? end + 1 : NULL;
	}
	return n;
}

/* ---- SWEPT: blocks the JVM reused, and names against the program's calls ---- */

/* One nmethod the JVM installed (its -XX:+LogCompilation log): block address, time, method. */
struct nm_install {
	unsigned long long addr;
	double stamp; /* seconds since the JVM started */
	const char *method;
	size_t method_len;
};

static int nm_install_cmp(const void *a, const void *b)
{
	const struct nm_install *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->stamp < y->stamp ? -1 : x->stamp > y->stamp;
}

/* The value of attribute name="..." (name='...') in the line [line, end), or NULL. */
static const char *xml_attr(const char *line, const char *end, const char *name, size_t *len)
{
	char key[32];
	const char *at, *close;

	snprintf(key, sizeof(key), " %s='", name);
	at = memmem(line, (size_t)(end - line), key, strlen(key));
	if (!at)
		return NULL;
	at += strlen(key);
	close = memchr(at, '\'', (size_t)(end - at));
	if (!close)
		return NULL;
	*len = (size_t)(close - at);
	return at;
}

struct block_reuse {
	long installs; /* nmethods installed */
	long reused;   /* ... into a block that held another method's nmethod before */
	long in_run;   /* ... of them while omniprof ran */
	long deopt;    /* ... of those, one of the two a HotspotDeopt method (sampled) */
	long same;     /* installed while omniprof ran where the method's previous nmethod was */
};

/*
 * From the JVM's compile log: nmethods installed at the block address of an earlier nmethod of
 * another method (the block freed by the sweeper, then taken). [from_s, to_s]: omniprof's run,
 * in the JVM's seconds.
 */
static struct block_reuse block_reuse(const char *log, double from_s, double to_s)
{
	struct block_reuse r = {0};
	struct nm_install *v = NULL;
	size_t n = 0, cap = 0;

	for (const char *line = log; line && *line;) {
		const char *end = strchr(line, '\n'), *a, *m, *t;
		size_t alen, mlen, tlen;

		if (!end)
			end = line + strlen(line);
		if (!strncmp(line, "<nmethod ", 9) && (a = xml_attr(line, end, "address", &alen)) &&
		    (m = xml_attr(line, end, "method", &mlen)) &&
		    (t = xml_attr(line, end, "stamp", &tlen))) {
			if (n == cap) {
				cap = cap ? 2 * cap : 256;
				v = realloc(v, cap * sizeof(*v));
				assert_non_null(v);
			}
			v[n++] =
			    (struct nm_install){strtoull(a, NULL, 16), strtod(t, NULL), m, mlen};
		}
		line = *end ? end + 1 : NULL;
	}
	qsort(v, n, sizeof(*v), nm_install_cmp);
	r.installs = (long)n;
	for (size_t i = 1; i < n; i++) {
		const struct nm_install *old = &v[i - 1], *now = &v[i];
		bool in_run = now->stamp >= from_s && now->stamp <= to_s;

		if (old->addr != now->addr)
			continue;
		if (old->method_len == now->method_len &&
		    !memcmp(old->method, now->method, now->method_len)) {
			/* Same method, same size: a return address there is the old one's. */
			r.same += in_run;
			continue;
		}
		r.reused++;
		r.in_run += in_run;
		if (in_run && (!strncmp(old->method, "HotspotDeopt ", 13) ||
			       !strncmp(now->method, "HotspotDeopt ", 13))) {
			if (r.deopt++ < 4)
				printf("      block 0x%llx at %.3f s: %.*s, then %.*s\n", now->addr,
				       now->stamp, (int)old->method_len, old->method,
				       (int)now->method_len, now->method);
		}
	}
	free(v);
	return r;
}

/* The HotspotDeopt method a folded frame names ("HotspotDeopt.outer_[j]" -> "outer"), or NULL. */
static const char *deopt_method(const char *frame, size_t len, size_t *mlen)
{
	const char *suffix;

	if (len <= 13 || memcmp(frame, "HotspotDeopt.", 13))
		return NULL;
	suffix = memmem(frame, len, "_[", 2);
	*mlen = (size_t)((suffix ? suffix : frame + len) - frame) - 13;
	return frame + 13;
}

/* A HotspotDeopt method's depth in its one call path (main -> run -> outer -> spin, or outer's
 * call site's target), -1 for any other. */
static int deopt_depth(const char *m, size_t len)
{
	static const char *const path[] = {"main", "run", "outer", "spin", "plusOne", "timesThree"};

	for (int i = 0; i < 6; i++)
		if (strlen(path[i]) == len && !memcmp(m, path[i], len))
			return i < 3 ? i : 3;
	return -1;
}

struct deopt_names {
	long wrong; /* samples with a frame named out of the program's calls */
	long lost;  /* samples with a HotspotDeopt frame missing between two named ones */
};

/*
 * The samples of stacks.folded whose named HotspotDeopt frames break the program's one call
 * path: one under another at its depth or deeper (outer under outer, run under outer), an
 * unknown HotspotDeopt method, or other code between them (but for the method handles between
 * outer and its call site's target). A frame named from a remembered nmethod whose block another
 * method's nmethod took names the old method at the new code, which breaks the path; a frame the
 * walk lost (one depth skipped, nothing between) does not and is counted apart. An unnamed frame
 * ("[unknown Java code]", a stub) breaks the pair.
 */
static struct deopt_names deopt_names(const char *text)
{
	struct deopt_names r = {0};

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n'), *stack_end;
		bool wrong = false, lost = false, other = false, not_invoke = false;
		int prev = -1;

		if (!end)
			end = line + strlen(line);
		stack_end = end;
		while (stack_end > line && stack_end[-1] != ' ')
			stack_end--; /* the count */
		for (const char *f = line; f < stack_end && !wrong;) {
			const char *semi = memchr(f, ';', (size_t)(stack_end - f)), *m;
			size_t len = (size_t)((semi ? semi : stack_end - 1) - f), mlen;

			if (len && f[0] == '[') {
				prev = -1;
			} else if ((m = deopt_method(f, len, &mlen))) {
				int d = deopt_depth(m, mlen);

				if (d < 0 || (prev >= 0 && d <= prev))
					wrong = true;
				else if (prev >= 0 && other && (not_invoke || prev != 2 || d != 3))
					wrong = true;
				else if (prev >= 0 && !other && d > prev + 1)
					lost = true;
				prev = d;
				other = not_invoke = false;
			} else if (prev >= 0) {
				other = true;
				not_invoke |= len < 17 || memcmp(f, "java.lang.invoke.", 17);
			}
			f = semi ? semi + 1 : stack_end;
		}
		if (wrong || lost)
			printf("      %s: %.*s\n", wrong ? "wrong name" : "frame lost",
			       (int)(end - line > 600 ? 600 : end - line), line);
		r.wrong += wrong ? strtol(stack_end, NULL, 10) : 0;
		r.lost += lost && !wrong ? strtol(stack_end, NULL, 10) : 0;
		line = *end ? end + 1 : NULL;
	}
	return r;
}

static void report(const char *what, struct chain_count c)
{
	printf("    %s: %ld of %ld leaf samples complete (%.1f%%)\n", what, c.complete, c.leaf,
	       c.leaf ? 100.0 * (double)c.complete / (double)c.leaf : 0.0);
	if (c.worst && c.complete * 100 < c.leaf * 95)
		printf("      most frequent incomplete stack (%ld samples): %.*s\n", c.worst_count,
		       (int)(c.worst_len > 1500 ? 1500 : c.worst_len), c.worst);
	fflush(stdout);
}

/* ---- pprof: file names and lines ------------------------------------------ */

/* Whether javap -l lists `line N` in method's line number table. */
static bool javap_has_line(const char *javap, const char *method, long n)
{
	const char *at = strstr(javap, method), *end;
	char needle[32];

	if (!at)
		return false;
	end = strstr(at + strlen(method), "\n\n");
	snprintf(needle, sizeof(needle), "line %ld:", n);
	at = strstr(at, needle);
	return at && (!end || at < end);
}

struct line_check {
	const char *function;
	long line;     /* the call's line: it must be seen, and javap -l must list it */
	long min, max; /* every location of the function is in its body */
	long seen;     /* locations at the call's line */
};

/*
 * Every location of each checked function carries HotspotChain.java and a
 * line of its body; the line of its call in the chain is among them, and is
 * in javap -l's table for the method.
 */
static void check_lines(const char *pprof, const char *class_dir)
{
	char *src = tu_read_file(SOURCE, NULL), *javap = NULL;
	struct line_check checks[] = {
	    {"HotspotChain.run", 0, 0, 0, 0},
	    {"HotspotChain.a", 0, 0, 0, 0},
	    {"HotspotChain.b", 0, 0, 0, 0},
	    {"HotspotChain.c", 0, 0, 0, 0},
	};
	const char *calls[] = {"t += a(t);", "return b(x) + 3;", "return c(x) + 2;",
			       "return work(x) + 1;"};
	const char *methods[] = {"void run(long)", "long a(long)", "long b(long)", "long c(long)"};
	Perftools__Profiles__Profile *p;
	int rc;

	assert_non_null(src);
	rc = tu_run(&javap, JDK "/bin/javap -l -cp %s HotspotChain", class_dir);
	assert_int_equal(rc, 0);
	for (size_t c = 0; c < 4; c++) {
		checks[c].line = tu_line_of(src, calls[c]);
		assert_true(checks[c].line > 0);
		checks[c].min = checks[c].max = checks[c].line;
		if (!javap_has_line(javap, methods[c], checks[c].line))
			fail_msg("javap -l has no line %ld in %s", checks[c].line, methods[c]);
	}
	/* run's loop: a sample may be at its while or for line too. */
	checks[0].min = tu_line_of(src, "static void run(");
	checks[0].max = tu_line_of(src, "sink = t;");
	free(src);
	free(javap);
	p = tu_read_pprof(pprof);
	assert_non_null(p);
	for (size_t l = 0; l < p->n_location; l++) {
		const Perftools__Profiles__Location *loc = p->location[l];

		for (size_t j = 0; j < loc->n_line; j++) {
			const Perftools__Profiles__Function *f = NULL;
			const char *name, *file;

			for (size_t k = 0; k < p->n_function && !f; k++)
				if (p->function[k]->id == loc->line[j]->function_id)
					f = p->function[k];
			if (!f || f->name >= (int64_t)p->n_string_table ||
			    f->filename >= (int64_t)p->n_string_table)
				continue;
			name = p->string_table[f->name];
			file = p->string_table[f->filename];
			for (size_t c = 0; c < 4; c++) {
				if (strcmp(name, checks[c].function))
					continue;
				checks[c].seen += loc->line[j]->line == checks[c].line;
				if (strcmp(file, "HotspotChain.java") ||
				    loc->line[j]->line < checks[c].min ||
				    loc->line[j]->line > checks[c].max)
					fail_msg(
					    "%s: file %s line %lld, expected HotspotChain.java "
					    "lines %ld-%ld",
					    name, file, (long long)loc->line[j]->line,
					    checks[c].min, checks[c].max);
			}
		}
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	for (size_t c = 0; c < 4; c++) {
		printf("    %s: %ld location(s) at its call, HotspotChain.java:%ld\n",
		       checks[c].function, checks[c].seen, checks[c].line);
		assert_true(checks[c].seen > 0);
	}
}

/* ---- one case ----------------------------------------------------------------- */

static void test_case(void **state)
{
	const struct jvm_case *jc = *state;
	char *dir = tu_mkdtemp(), *out = NULL, *text = NULL, folded[1024], pprof[1024];
	char libpath[600], jar[600], jvm_log[1100], compile_log[1100], java[600];
	char *argv[24] = {"/usr/bin/nice",   "-n", (char *)jc->nice, java, "-Xmx64m",
			  "-XX:+UseSerialGC"};
	const char *class_dir = jc->classes ? jc->classes : classes;
	struct chain_spec *cs = chain_spec__new(), *cs_b = chain_spec__new();
	struct chain_spec *cs_osr = chain_spec__new();
	struct chain_count c = {0}, c_b = {0}, c_osr = {0};
	/* main alone runs the chain in a compiled mode: run in OSR code (HotspotChain.java). */
	bool osr = jc->what == CHAIN && !strcmp(jc->threads, "0") && strcmp(jc->flags, "-Xint");
	/* SWEPT: HotspotDeopt in a code cache small enough to be swept every second or so. */
	bool deopt = jc->what == DEOPT || jc->what == SWEPT;
	long sweeps = -1, collections = -1;
	struct deopt_names names = {-1, -1};
	struct block_reuse reuse = {0};
	uint64_t spawned_ms, record_ms = 0, recorded_ms = 0;
	long recompiled = -1, replaced = -1, mixed = 0, deopted = -1, redefinable = -1, anon = -1,
	     no_mapping = -1, remembered = -1, unchanged = -1;
	int argc = 6, rc;
	pid_t pid;

	assert_non_null(dir);
	assert_non_null(cs);
	assert_non_null(cs_b);
	assert_non_null(cs_osr);
	snprintf(java, sizeof(java), "%s/bin/java", jc->java_home ? jc->java_home : JDK);
	java_mode = jc->what != CHAIN		  ? ANY_MODE
		    : !strcmp(jc->flags, "-Xint") ? INTERPRETED
						  : INLINING;
	expect_plugin(cs_b, 'B');
	if (deopt)
		argv[argc++] = "-XX:CompileCommand=quiet"; /* "ready" is its first line */
	if (jc->what == SWEPT) {
		/* Its sweeps and collections logged, for the test to count. */
		snprintf(jvm_log, sizeof(jvm_log), "-Xlog:codecache+sweep=debug,gc:file=%s/jvm.log",
			 dir);
		argv[argc++] = "-XX:ReservedCodeCacheSize=3m";
		argv[argc++] = jvm_log;
		/* Each nmethod's block address and method: which blocks another method took. */
		snprintf(compile_log, sizeof(compile_log), "-XX:LogFile=%s/compile.log", dir);
		argv[argc++] = "-XX:+UnlockDiagnosticVMOptions";
		argv[argc++] = "-XX:+LogCompilation";
		argv[argc++] = compile_log;
	}
	if (*jc->flags)
		argv[argc++] = (char *)jc->flags;
	if (jc->what == JNI) {
		snprintf(libpath, sizeof(libpath), "-Djava.library.path=%s", classes);
		argv[argc++] = libpath;
	}
	if (jc->what == REDEFINE) {
		/* Its manifest starts its agent: no flag but -jar. */
		snprintf(jar, sizeof(jar), "%s/redefine.jar", classes);
		argv[argc++] = "-jar";
		argv[argc++] = jar;
	} else {
		argv[argc++] = "-cp";
		argv[argc++] = (char *)class_dir;
		argv[argc++] = jc->what == JNI	    ? "HotspotJni"
			       : jc->what == UNLOAD ? "HotspotUnload"
			       : deopt		    ? "HotspotDeopt"
						    : "HotspotChain";
	}
	argv[argc++] = "60";
	if (jc->what == CHAIN)
		argv[argc++] = (char *)jc->threads;
	if (jc->what == UNLOAD) {
		snprintf(libpath, sizeof(libpath), "%s/plugins", classes);
		argv[argc++] = libpath;
		argv[argc++] = "75"; /* ms per plugin: twice the unload rounds of the default */
	} else {
		argv[argc++] = (char *)jc->warmup_ms;
	}
	argv[argc] = NULL;
	if (jc->what == JNI)
		expect_jni(cs);
	else if (jc->what == UNLOAD)
		expect_plugin(cs, 'A');
	else if (deopt)
		expect_deopt(cs);
	else if (jc->what == REDEFINE)
		expect_redefine(cs);
	else if (strcmp(jc->threads, "0"))
		expect_thread(cs);
	else
		expect_main(cs);
	if (osr) {
		run_compiled = true;
		expect_main(cs_osr);
		run_compiled = false;
	}
	spawned_ms = tu_now_ms();
	pid = tu_spawn_ready(argv);
	if (pid <= 0) {
		tu_rmtree(dir);
		fail_msg("%s did not start", jc->name);
	}
	record_ms = tu_now_ms();
	rc = tu_run(&out, "%s record -p %d -d %s -F " FREQUENCY " -o %s -v", omniprof(), pid,
		    jc->java_home ? OTHER_RECORD_SECONDS : RECORD_SECONDS, dir);
	recorded_ms = tu_now_ms();
	if (jc->what == SWEPT) {
		/* A clean exit: the JVM writes its compiler threads' logs into compile.log then. */
		kill(pid, SIGTERM);
		tu_wait_bounded(pid, 30000, 50, NULL);
	} else {
		tu_reap(pid);
	}
	if (rc)
		print_error("omniprof record failed (%d):\n%s\n", rc, out ? out : "");
	if (jc->what == UNLOAD) {
		printf(
		    "    Method addresses reused %ld, names read again after a collection %ld, "
		    "frames refused (a collection since their sample) %ld\n",
		    counter(out, "hotspot: Method addresses reused"),
		    counter(out, "hotspot: names read again after a collection"),
		    counter(out, "hotspot: frames not named: a collection ran since their sample"));
		/* The code cache grows past what the maps showed: HotSpot's range (all of the
		 * reserved cache) still takes its frames, none left to the native rules. */
		anon = counter(out, "frames: in anonymous (JIT) code");
		no_mapping = counter(out, "fallback to frame pointers: no mapping");
		printf("    frames in anonymous code %ld, in no mapping %ld\n", anon, no_mapping);
	}
	if (jc->what == REDEFINE) {
		redefinable = counter(
		    out, "hotspot: JVMs that can redefine classes (safepoints in the epoch)");
		printf(
		    "    JVMs that can redefine classes %ld, frames refused (a safepoint or "
		    "collection since their sample) %ld\n",
		    redefinable,
		    counter(out, "hotspot: frames not named: a collection ran since their sample"));
	}
	/* The BPF step's cross-sample nmethods: the chains below went through them. */
	remembered = counter(out, "hotspot: nmethods taken from the cross-sample cache");
	recompiled = counter(
	    out,
	    "hotspot: remembered nmethods refused, their method's new nmethod at their address");
	replaced = counter(
	    out, "hotspot: remembered nmethods refused, another method's nmethod at their address");
	printf("    nmethods taken from the cross-sample cache: %ld (refused: their block freed "
	       "%ld, their method's new nmethod there %ld, another method's nmethod there %ld)\n",
	       remembered, counter(out, "hotspot: remembered nmethods refused, their block freed"),
	       recompiled, replaced);
	printf("    leaf nmethods taken from the cross-sample cache: %ld\n",
	       counter(out, "hotspot: leaf nmethods taken from the cross-sample cache"));
	unchanged = counter(
	    out, "hotspot: remembered nmethods taken without a check read (code count unchanged)");
	printf("    ... of them taken without a check read (code count unchanged): %ld\n",
	       unchanged);
	if (deopt) {
		deopted = counter(out, "hotspot: deoptimised frames named from their original pc");
		printf("    deoptimised frames named from their original pc: %ld\n", deopted);
	}
	if (jc->what == SWEPT) {
		char log_path[1100], *log;

		snprintf(log_path, sizeof(log_path), "%s/jvm.log", dir);
		log = tu_read_file(log_path, NULL);
		sweeps = log ? count_lines(log, "[codecache,sweep] CodeCache: size=") : -1;
		collections = log ? count_lines(log, "[gc] GC(") : -1;
		printf("    the JVM's sweeps %ld (each a traversal), collections %ld\n", sweeps,
		       collections);
		free(log);
		snprintf(log_path, sizeof(log_path), "%s/compile.log", dir);
		log = tu_read_file(log_path, NULL);
		assert_non_null(log);
		/* The JVM's clock starts after the spawn: omniprof's run in its seconds, at most.
		 */
		reuse = block_reuse(log, (double)(record_ms - spawned_ms) / 1000.0,
				    (double)(recorded_ms - spawned_ms) / 1000.0);
		printf(
		    "    nmethods installed %ld, into a block another method's nmethod held %ld, "
		    "%ld of them while omniprof ran (%ld with a HotspotDeopt method); into the "
		    "block of the same method's previous nmethod while omniprof ran %ld\n",
		    reuse.installs, reuse.reused, reuse.in_run, reuse.deopt, reuse.same);
		free(log);
	}
	free(out);
	snprintf(folded, sizeof(folded), "%s/stacks.folded", dir);
	snprintf(pprof, sizeof(pprof), "%s/profile.pb.gz", dir);
	text = tu_read_file(folded, NULL);
	if (text) {
		c = chain_spec__count_folded(cs, text, "java");
		report(jc->what == UNLOAD ? "PluginA" : jc->name, c);
	}
	if (text && osr) {
		c_osr = chain_spec__count_folded(cs_osr, text, "java");
		report("run compiled (its OSR nmethod)", c_osr);
	}
	if (text && jc->what == UNLOAD) {
		c_b = chain_spec__count_folded(cs_b, text, "java");
		report("PluginB", c_b);
		mixed = mixed_plugins(text);
	}
	if (!rc && text && jc->what == CHAIN)
		check_lines(pprof, class_dir);
	if (text && jc->what == SWEPT) {
		names = deopt_names(text);
		printf(
		    "    samples with a frame named out of HotspotDeopt's calls %ld, with a frame "
		    "lost %ld\n",
		    names.wrong, names.lost);
	}
	tu_rmtree(dir);
	free(dir);
	free(text);
	chain_spec__free(cs);
	chain_spec__free(cs_b);
	chain_spec__free(cs_osr);
	assert_int_equal(rc, 0);
	/* OSR code named and unwound: whole chains through run's OSR frame. */
	if (osr) {
		assert_true(c_osr.complete > 0);
		assert_true(remembered > 0);
	}
	if (jc->what == UNLOAD) {
		/* Both plugins seen, each named right, never one under the other's frames. */
		assert_int_equal(mixed, 0);
		assert_true(c.leaf > 0 && c_b.leaf > 0 && c.leaf + c_b.leaf >= MIN_LEAF);
		assert_true(c_b.complete * 100 >= c_b.leaf * 95);
		assert_int_equal(anon, 0);
		assert_int_equal(no_mapping, 0);
	} else {
		assert_true(c.leaf >= MIN_LEAF);
	}
	if (deopt)
		assert_true(deopted > 0);
	if (jc->what == SWEPT) {
		/* Sweeps freed nmethods while the cache's entries were taken unread. */
		assert_true(sweeps >= 3);
		assert_true(unchanged > 0);
		/* Blocks were taken by other methods' nmethods while sampled, and no frame was
		 * named from a remembered entry of the block's old nmethod. */
		assert_true(reuse.in_run > 0);
		assert_int_equal(names.wrong, 0);
	}
	if (jc->what == REDEFINE)
		assert_int_equal(redefinable, 1);
	assert_true(c.complete * 100 >= c.leaf * 95);
}

/*
 * A JVM started during a whole-system recording: the samples that name its
 * leaf (those after its first named Java frame) hold the whole chain. The
 * recording holds every process of the machine, other tests' JVMs too (another
 * test_hotspot's 32 threads running HotspotChain: 579 samples whose thread
 * chain is not main's, at load 15), so this JVM runs under a name of its own:
 * java through a symbolic link named for this test's pid, which the kernel
 * takes as its comm, and only the samples of that comm are counted.
 */
static void test_young(void **state)
{
	char *dir = tu_mkdtemp(), log[1024], out_dir[1024], folded[1100], java[1100], comm[16];
	char *argv[] = {
	    java,  "-Xmx64m", "-XX:+UseSerialGC", "-cp", classes, "HotspotChain", "10", "0",
	    "500", NULL};
	const char *args[] = {"-F", FREQUENCY, "-o", out_dir, "-v", NULL};
	struct chain_spec *cs = chain_spec__new();
	struct chain_count c = {0};
	char *text;
	pid_t rec, pid;
	int status;

	(void)state;
	assert_non_null(dir);
	assert_non_null(cs);
	java_mode = ANY_MODE;
	expect_main(cs);
	snprintf(log, sizeof(log), "%s/record.log", dir);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	/* The launcher finds its JDK through /proc/self/exe, so the link runs it as java does. */
	snprintf(comm, sizeof(comm), "young-%d", (int)getpid());
	snprintf(java, sizeof(java), "%s/%s", dir, comm);
	assert_int_equal(symlink(JDK "/bin/java", java), 0);
	rec = tu_omniprof_start(log, "record", args);
	assert_true(rec > 0);
	if (!tu_wait_log(log, "sampling", 30000)) {
		kill(rec, SIGKILL);
		tu_wait_bounded(rec, 10000, 20, NULL);
		fail_msg("omniprof did not start sampling within 30 s");
	}
	sleep(1);
	pid = tu_spawn_ready(argv);
	assert_true(pid > 0);
	/* Its 10 s of life (tu_reap would kill it now). */
	tu_wait_bounded(pid, 60000, 50, NULL);
	kill(rec, SIGHUP);
	status = tu_wait_bounded(rec, 120000, 20, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		tu_print_log("record", log);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	snprintf(folded, sizeof(folded), "%s/stacks.folded", out_dir);
	text = tu_read_file(folded, NULL);
	assert_non_null(text);
	c = chain_spec__count_folded(cs, text, comm);
	report("started during the recording", c);
	if (c.leaf < MIN_LEAF || c.complete * 100 < c.leaf * 95)
		tu_print_log("record", log);
	free(text);
	chain_spec__free(cs);
	tu_rmtree(dir);
	free(dir);
	assert_true(c.leaf >= MIN_LEAF);
	assert_true(c.complete * 100 >= c.leaf * 95);
}

static const struct jvm_case cases[] = {
    {"interpreted only (-Xint)", CHAIN, "-Xint", "0", "200", "0", NULL, NULL},
    {"C1 only (-XX:TieredStopAtLevel=1)", CHAIN, "-XX:TieredStopAtLevel=1", "0", "1500", "0", NULL,
     NULL},
    {"C2 only (-XX:-TieredCompilation)", CHAIN, "-XX:-TieredCompilation", "0", "2500", "0", NULL,
     NULL},
    {"default tiered", CHAIN, "", "0", "2500", "0", NULL, NULL},
    {"default tiered, 32 threads", CHAIN, "", THREADS, "3000", "15", NULL, NULL},
    {"Java -> JNI -> Java callback", JNI, "", "0", "2000", "0", NULL, NULL},
    {"1 GiB code cache, classes unloaded and their memory reused", UNLOAD,
     "-XX:ReservedCodeCacheSize=1g", "0", "0", "0", NULL, NULL},
    {"compiled frames deoptimised under their callee", DEOPT,
     "-XX:CompileCommand=dontinline,HotspotDeopt::spin", "0", "2000", "0", NULL, NULL},
    /* A 3 MiB code cache: the deoptimised nmethods swept (freed) about every second, no
     * collection, their blocks taken by the compilations that follow (outer's, run's, method
     * handles': the compile log shows which). */
    {"deoptimised nmethods swept (freed), no collection", SWEPT,
     "-XX:CompileCommand=dontinline,HotspotDeopt::spin", "0", "2000", "0", NULL, NULL},
    /* warmup_ms: its period of redefinitions */
    {"a class redefined by the JVM's own agent every 100 ms", REDEFINE, "", "0", "100", "0", NULL,
     NULL},
};

/*
 * Every other HotSpot JDK under /usr/lib/jvm: a JDK (bin/java, bin/javac's
 * not needed) whose libjvm.so exports HotSpot's self-description
 * (gHotSpotVMStructs), one entry per real directory, JDK itself left out
 * (its cases above). Each runs a short set of the chain cases.
 */
#define JVM_DIR	   "/usr/lib/jvm"
#define MAX_OTHERS 8
static char other_homes[MAX_OTHERS][300], other_versions[MAX_OTHERS][64];
static char release8[600]; /* HotspotChain for a JDK before 17 (javac --release 8) */

/* The JDK's major version from its `release` file (JAVA_VERSION="1.8.0_x" or "25.0.3"), 0. */
static int jdk_major(const char *home, char *version, size_t cap)
{
	char path[400], *text, *v, *end;
	int major = 0;

	snprintf(path, sizeof(path), "%.299s/release", home);
	text = tu_read_file(path, NULL);
	if (!text)
		return 0;
	v = strstr(text, "JAVA_VERSION=\"");
	if (v) {
		v += 14;
		end = strchr(v, '"');
		snprintf(version, cap, "%.*s", end ? (int)(end - v) : 0, v);
		major = !strncmp(v, "1.", 2) ? atoi(v + 2) : atoi(v);
	}
	free(text);
	return major;
}

/* Whether libjvm.so under home is HotSpot's (it exports gHotSpotVMStructs). */
static bool is_hotspot(const char *home)
{
	static const char *const libs[] = {"lib/server/libjvm.so",
					   "jre/lib/amd64/server/libjvm.so"};
	char path[400];
	bool found = false;

	for (size_t i = 0; i < 2 && !found; i++) {
		size_t len = 0;
		char *data;

		snprintf(path, sizeof(path), "%s/%s", home, libs[i]);
		data = tu_read_file(path, &len);
		if (data)
			found = memmem(data, len, "gHotSpotVMStructs", 17) != NULL;
		free(data);
	}
	return found;
}

/* The other HotSpot JDKs (at most MAX_OTHERS) into other_homes: how many. */
static size_t find_other_jdks(void)
{
	char self[PATH_MAX], real[PATH_MAX], java[400];
	struct dirent *d;
	size_t n = 0;
	DIR *dir;

	if (!realpath(JDK, self))
		return 0;
	dir = opendir(JVM_DIR);
	if (!dir)
		return 0;
	while ((d = readdir(dir)) && n < MAX_OTHERS) {
		bool seen = false;

		if (d->d_name[0] == '.' || strlen(d->d_name) > 200)
			continue;
		snprintf(java, sizeof(java), JVM_DIR "/%s", d->d_name);
		if (!realpath(java, real) || !strcmp(real, self) || strlen(real) >= 300)
			continue;
		for (size_t i = 0; i < n; i++)
			seen |= !strcmp(other_homes[i], real);
		snprintf(java, sizeof(java), "%s/bin/java", real);
		if (seen || access(java, X_OK) || !is_hotspot(real))
			continue;
		snprintf(other_homes[n++], sizeof(other_homes[0]), "%s", real);
	}
	closedir(dir);
	return n;
}

/* The cases each other JDK runs: interpreted, C2 inlining three deep, default tiered. */
static const struct jvm_case other_cases[] = {
    {"interpreted only (-Xint)", CHAIN, "-Xint", "0", "200", "0", NULL, NULL},
    {"C2 only (-XX:-TieredCompilation)", CHAIN, "-XX:-TieredCompilation", "0", "2000", "0", NULL,
     NULL},
    {"default tiered", CHAIN, "", "0", "2000", "0", NULL, NULL},
};
#define N_OTHER_CASES (sizeof(other_cases) / sizeof(other_cases[0]))
static struct jvm_case others[MAX_OTHERS * N_OTHER_CASES];
static char other_names[MAX_OTHERS * N_OTHER_CASES][400];

int main(void)
{
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) + 1 + MAX_OTHERS * N_OTHER_CASES];
	size_t n = sizeof(cases) / sizeof(cases[0]), n_others, n_tests;
	char built[600];
	int failed;

	/* The classes live in the build folder (`make tests` builds them with the
	 * JDK, whose absence fails the build, never skips this suite). */
	snprintf(classes, sizeof(classes), "%s/tests/hotspot_classes", tu_build_dir());
	snprintf(built, sizeof(built), "%s/.built", classes);
	if (access(built, R_OK)) {
		fprintf(stderr, "%s is missing: `make tests` builds the Java workloads\n", built);
		return 1;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tests[i] = (struct CMUnitTest){.name = cases[i].name,
					       .test_func = test_case,
					       .initial_state = (void *)&cases[i]};
	tests[n] = (struct CMUnitTest){.name = "JVM started during a whole-system recording",
				       .test_func = test_young};
	n_tests = n + 1;
	/* Every other HotSpot JDK present: the short set, the same assertions. */
	n_others = find_other_jdks();
	printf("HotSpot JDKs: %s (all cases)", JDK);
	for (size_t j = 0; j < n_others; j++) {
		int major = jdk_major(other_homes[j], other_versions[j], sizeof(other_versions[0]));
		const char *dir = classes;

		/* JDK 17's classes (version 61) need 17+; an older JDK runs a --release 8 build. */
		if (major < 17) {
			if (!*release8) {
				snprintf(release8, sizeof(release8), "%s/release8", classes);
				if (tu_run(NULL, JDK "/bin/javac --release 8 -d %s " SOURCE,
					   release8)) {
					fprintf(stderr, "javac --release 8 failed\n");
					return 1;
				}
			}
			dir = release8;
		}
		printf(", %s (%s: %zu cases)", other_homes[j],
		       *other_versions[j] ? other_versions[j] : "version unknown", N_OTHER_CASES);
		for (size_t c = 0; c < N_OTHER_CASES; c++) {
			size_t k = j * N_OTHER_CASES + c;

			others[k] = other_cases[c];
			others[k].java_home = other_homes[j];
			others[k].classes = dir;
			snprintf(other_names[k], sizeof(other_names[k]), "%.299s: %s",
				 other_homes[j], other_cases[c].name);
			others[k].name = other_names[k];
			tests[n_tests++] = (struct CMUnitTest){.name = other_names[k],
							       .test_func = test_case,
							       .initial_state = (void *)&others[k]};
		}
	}
	printf("%s\n", n_others ? "" : "; no other HotSpot JDK under " JVM_DIR);
	fflush(stdout);
	/* OMNIPROF_HOTSPOT_CASE: run only the cases whose name matches (a cmocka pattern). */
	if (getenv("OMNIPROF_HOTSPOT_CASE"))
		cmocka_set_test_filter(getenv("OMNIPROF_HOTSPOT_CASE"));
	failed = _cmocka_run_group_tests("hotspot", tests, n_tests, NULL, NULL);
	return failed;
}
