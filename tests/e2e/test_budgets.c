// SPDX-License-Identifier: Apache-2.0
/*
 * Budgets and identity: no process of another user can make the profiler
 * serve it a victim's unwind table, fill the shared maps so a victim's
 * stacks go unwound, or grow the agent's memory without bound.
 *
 *  - table poisoning: the attacker maps a copy of a library with the same
 *    htlhash (first and last 4 KiB and length) but other .eh_frame bytes in
 *    the middle; a victim of root mapping the real library is still fully
 *    unwound, and the two files got different table ids (-vv);
 *  - LPM exhaustion: attacker processes map thousands of small files at
 *    addresses that split into many LPM prefixes until their budget is hit;
 *    a victim started afterwards is fully unwound, refusals are counted;
 *  - Python code objects sharing a 1 MiB line table and long names: the
 *    profiler's peak RSS stays bounded and a normal Python process recorded
 *    at the same time is named.
 * Needs root and BPF.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "attacker.h"
#include "elf/file_id.h"
#include "folded_check.h"
#include "omniprof_run.h"
#include "testutil.h"

#define RECORD_SECONDS 4
#define MIN_LEAF       20
#define MIN_SHARE      0.9

/* Absolute, so the attacker (another cwd) finds the files too. */
static void build_path(char *buf, size_t size, const char *rel)
{
	char cwd[4096];
	int n;

	if (tu_build_dir()[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		n = snprintf(buf, size, "%s/%s", tu_build_dir(), rel);
	else
		n = snprintf(buf, size, "%s/%s/%s", cwd, tu_build_dir(), rel);
	assert_true(n > 0 && (size_t)n < size);
}

/* A folder the attacker owns, inside a fresh temporary folder (caller frees *top). */
static char *attacker_dir(char **top)
{
	static char dir[512];
	uid_t uid;
	gid_t gid;

	assert_int_equal(attacker__ensure(&uid, &gid), 0);
	*top = tu_mkdtemp();
	assert_non_null(*top);
	assert_int_equal(chmod(*top, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/atk", *top);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chown(dir, uid, gid), 0);
	return dir;
}

static void hash_file(const char *path, uint8_t out[FILE_ID_HTLHASH_LEN])
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(file_id__htlhash(fd, (uint64_t)st.st_size, out), 0);
	close(fd);
}

static void expect_late_lib(struct chain_spec *cs)
{
	assert_int_equal(chain_spec__add(cs, "main"), 0);
	assert_int_equal(chain_spec__add(cs, "run_late"), 0);
	assert_int_equal(chain_spec__add(cs, "lib_outer"), 0);
	assert_int_equal(chain_spec__add(cs, "lib_mid"), 0);
	assert_int_equal(chain_spec__add(cs, "lib_leaf"), 0);
}

static void report(const char *what, struct chain_count c)
{
	print_message("%s: %ld of %ld leaf samples complete\n", what, c.complete, c.leaf);
	if (c.worst)
		print_message("  most frequent incomplete stack (%ld): %.*s\n", c.worst_count,
			      (int)c.worst_len, c.worst);
}

/* Records pids (a -p list) and counts comm's samples of the chain; *log gets -vv's output. */
static struct chain_count record_chain(const char *pids, const char *comm,
				       void (*expect)(struct chain_spec *), char **log)
{
	struct chain_spec *cs = chain_spec__new();
	char *dir = tu_mkdtemp(), folded[600], *text;
	struct chain_count c = {0};
	int rc;

	assert_non_null(cs);
	assert_non_null(dir);
	expect(cs);
	rc = tu_run(log, "%s record -vv -p %s -d %d -F 99 -o %s 2>&1", tu_omniprof_path(), pids,
		    RECORD_SECONDS, dir);
	if (rc)
		print_message("record failed (%d):\n%s\n", rc, *log ? *log : "");
	assert_int_equal(rc, 0);
	snprintf(folded, sizeof(folded), "%s/stacks.folded", dir);
	text = tu_read_file(folded, NULL);
	assert_non_null(text);
	c = chain_spec__count_folded(cs, text, comm);
	report(pids, c);
	c.worst = NULL; /* points into text */
	free(text);
	chain_spec__free(cs);
	tu_rmtree(dir);
	free(dir);
	return c;
}

/* The table id -vv printed for the file at path ("table ID for PATH: ..."), or 0. */
static unsigned long long table_id_in(const char *log, const char *path)
{
	char needle[700];

	for (const char *p = log; (p = strstr(p, "table ")); p++) {
		unsigned long long id;
		int n = 0;

		if (sscanf(p, "table %llx for %n", &id, &n) != 1 || !n)
			continue;
		snprintf(needle, sizeof(needle), "%s:", path);
		if (!strncmp(p + n, needle, strlen(needle)))
			return id;
	}
	return 0;
}

/*
 * Rewrites the CFI in the middle of an ELF library, in place: its
 * .eh_frame becomes one CIE and one FDE that claim every function of .text
 * is at its first instruction (CFA = rsp + 8), valid CFI that is wrong past
 * each prologue. .eh_frame must lie past the first 4 KiB and before the last
 * 4 KiB, so the htlhash stays the same (exit 3 otherwise).
 */
static const char poison_eh_frame_py[] =
    "import struct, sys\n"
    "p = sys.argv[1]\n"
    "b = bytearray(open(p, 'rb').read())\n"
    "shoff, = struct.unpack_from('<Q', b, 0x28)\n"
    "shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)\n"
    "def sh(i):\n"
    "    return struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize)\n"
    "stroff = sh(shstrndx)[4]\n"
    "secs = {}\n"
    "for i in range(shnum):\n"
    "    s = sh(i)\n"
    "    secs[bytes(b[stroff + s[0]:b.index(0, stroff + s[0])])] = s\n"
    "eh, text = secs[b'.eh_frame'], secs[b'.text']\n"
    "off, addr, size = eh[4], eh[3], eh[5]\n"
    "if off < 4096 or off + size > len(b) - 4096:\n"
    "    sys.exit(3)\n"
    "cie = b'\\0\\0\\0\\0\\x01zR\\0\\x01\\x78\\x10\\x01\\x1b\\x0c\\x07\\x08\\x90\\x01'\n"
    "cie = struct.pack('<I', 20) + cie.ljust(20, b'\\0')\n"
    "fde = struct.pack('<Iii', 28, text[3] - (addr + 32), text[5]) + b'\\0'\n"
    "fde = struct.pack('<I', 20) + fde.ljust(20, b'\\0')\n"
    "new = cie + fde + bytes(4)\n"
    "if len(new) > size:\n"
    "    sys.exit(4)\n"
    "b[off:off + size] = new + bytes(size - len(new))\n"
    "open(p, 'r+b').write(b)\n";

static void test_table_poisoning(void **state)
{
	char *top, *atk = attacker_dir(&top), genuine[600], exe[600], copy[700], cmd[3000];
	char victim_exe[600], pids[64], *log = NULL, *script;
	uint8_t h_genuine[FILE_ID_HTLHASH_LEN], h_copy[FILE_ID_HTLHASH_LEN];
	unsigned long long id_genuine, id_copy;
	struct chain_count control, attacked;
	pid_t victim, attacker;
	FILE *f;
	int n;

	(void)state;
	build_path(genuine, sizeof(genuine), "workloads/lib/late_lib.so");
	build_path(exe, sizeof(exe), "workloads/dlopen_late");
	build_path(victim_exe, sizeof(victim_exe), "workloads/dlopen_late");
	assert_true(asprintf(&script, "%s/poison_eh_frame.py", top) > 0);
	f = fopen(script, "w");
	assert_non_null(f);
	fputs(poison_eh_frame_py, f);
	fclose(f);
	chmod(script, 0644);
	/* The attacker's copy: the same program (as atk_late) and the library with
	 * its .eh_frame rewritten, made by the attacker in its own folder. */
	n = snprintf(cmd, sizeof(cmd),
		     "cp %s %s/atk_late && mkdir %s/lib && cp %s %s/lib/late_lib.so && "
		     "python3 %s %s/lib/late_lib.so",
		     exe, atk, atk, genuine, atk, script, atk);
	assert_true(n > 0 && (size_t)n < sizeof(cmd));
	assert_int_equal(attacker__system(cmd), 0);
	snprintf(copy, sizeof(copy), "%s/lib/late_lib.so", atk);
	hash_file(genuine, h_genuine);
	hash_file(copy, h_copy);
	assert_memory_equal(h_genuine, h_copy, FILE_ID_HTLHASH_LEN);
	assert_int_not_equal(tu_run(NULL, "cmp -s %s %s", genuine, copy), 0);

	/* Control: the victim alone. */
	{
		char *argv[] = {victim_exe, "60", "0", NULL};

		victim = tu_spawn_ready(argv);
		assert_true(victim > 0);
		usleep(300 * 1000); /* the dlopen */
		snprintf(pids, sizeof(pids), "%d", (int)victim);
		control = record_chain(pids, "dlopen_late", expect_late_lib, &log);
		tu_reap(victim);
		free(log);
		log = NULL;
	}
	/* Attacked: the attacker's process is read first (first in -p), so its
	 * table would be the one shared under a common id. */
	{
		char atk_exe[600];
		/* Niced: its spinning must not starve the victim of samples. */
		char *aargv[] = {"/usr/bin/nice", "-n", "19", atk_exe, "60", "0", NULL};
		char *vargv[] = {victim_exe, "60", "0", NULL};

		snprintf(atk_exe, sizeof(atk_exe), "%s/atk_late", atk);
		attacker = attacker__spawn_ready(aargv, atk);
		assert_true(attacker > 0);
		victim = tu_spawn_ready(vargv);
		assert_true(victim > 0);
		usleep(300 * 1000);
		snprintf(pids, sizeof(pids), "%d,%d", (int)attacker, (int)victim);
		attacked = record_chain(pids, "dlopen_late", expect_late_lib, &log);
		tu_reap(victim);
		tu_reap(attacker);
	}
	id_genuine = table_id_in(log, genuine);
	id_copy = table_id_in(log, copy);
	print_message("table ids: genuine %016llx, attacker's copy %016llx\n", id_genuine, id_copy);
	free(log);
	tu_rmtree(top);
	free(top);
	free(script);
	assert_true(control.leaf >= MIN_LEAF);
	assert_true(control.complete >= MIN_SHARE * control.leaf);
	assert_true(attacked.leaf >= MIN_LEAF);
	assert_true(attacked.complete >= MIN_SHARE * attacked.leaf);
	assert_true(id_genuine != 0);
	assert_true(id_copy != 0);
	assert_true(id_genuine != id_copy);
}

/* ---- Python: one 1 MiB line table shared by thousands of code objects ---- */

#define PY_RSS_BOUND_KB (128 * 1024) /* the profiler's peak RSS */
#define PY_CHAINS	"30"	     /* the attacker's chains of distinct code objects ... */
#define PY_DEPTH	"200"	     /* ... each this deep: 6,000 code objects */

static const char py_flood_script[] =
    "# Many code objects, each at its own address, all sharing one 1 MiB line\n"
    "# table and one 100,000-character name; chains of them called in turn.\n"
    "import os, sys, time, types\n"
    "seconds, chains, depth = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])\n"
    "big = bytes(1 << 20)\n"
    "name = 'n' * 100000\n"
    "def leaf(i, deadline):\n"
    "    x = 0\n"
    "    while time.time() < deadline:\n"
    "        for j in range(300):\n"
    "            x = (x * 31 + j) % 1000003\n"
    "    return x\n"
    "def make_chain():\n"
    "    ns = {}\n"
    "    exec('def f(i, deadline):\\n    return funcs[i + 1](i + 1, deadline)\\n', ns)\n"
    "    funcs = []\n"
    "    for i in range(depth):\n"
    "        code = ns['f'].__code__.replace(co_linetable=big, co_name=name, co_qualname=name)\n"
    "        funcs.append(types.FunctionType(code, ns))\n"
    "    funcs.append(leaf)\n"
    "    ns['funcs'] = funcs\n"
    "    return funcs\n"
    "all_chains = [make_chain() for _ in range(chains)]\n"
    "sys.setrecursionlimit(10000)\n"
    "os.write(1, b'ready\\n')\n"
    "end = time.time() + seconds\n"
    "while time.time() < end:\n"
    "    for funcs in all_chains:\n"
    "        funcs[0](0, time.time() + 0.02)\n";

static void expect_py_chain(struct chain_spec *cs)
{
	assert_int_equal(chain_spec__add(cs, "<module>"), 0);
	assert_int_equal(chain_spec__add(cs, "main"), 0);
	assert_int_equal(chain_spec__add(cs, "run"), 0);
	for (int i = 1; i <= 10; i++)
		assert_int_equal(chain_spec__add(cs, "link_%02d", i), 0);
	assert_int_equal(chain_spec__add(cs, "rec"), 0); /* depth 0: one level */
	assert_int_equal(chain_spec__add(cs, "py_leaf"), 0);
}

/*
 * record's output in logpath once it exited with status (caller frees),
 * printed when record failed; the test fails unless it exited 0.
 */
static char *record_log_after_exit(const char *logpath, int status)
{
	char *log = tu_read_file(logpath, NULL);

	assert_non_null(log);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		print_message("record failed:\n%s\n", log);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return log;
}

/*
 * Runs `omniprof record` itself (fork, exec, wait4) so its own peak RSS is
 * known: ru_maxrss of that child. Output in dir/record.log (caller frees *log).
 */
static long record_rss_kb(const char *pids, const char *dir, char **log)
{
	char out[600], logpath[600], secs[16];
	struct rusage ru;
	int status;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(logpath, sizeof(logpath), "%s/record.log", dir);
	snprintf(secs, sizeof(secs), "%d", 2 * RECORD_SECONDS);
	{
		char *argv[] = {tu_omniprof_path(),
				"record",
				"-v",
				"-p",
				(char *)pids,
				"-d",
				secs,
				"-F",
				"199",
				"-o",
				out,
				NULL};

		pid = tu_spawn_logged(argv, logpath, 0644, false);
	}
	assert_true(pid >= 0);
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	*log = record_log_after_exit(logpath, status);
	return ru.ru_maxrss;
}

static void test_python_line_table_flood(void **state)
{
	char *top, *atk = attacker_dir(&top), script[600], pyexe[600], victim_script[4200];
	char cwd[4096], pids[64], folded[700], *log = NULL, *text, *dir, python[1024], comm[16];
	struct chain_spec *cs = chain_spec__new();
	unsigned int minor;
	struct chain_count c;
	pid_t attacker, victim;
	long rss_kb;
	FILE *f;

	(void)state;
	assert_non_null(cs);
	expect_py_chain(cs);
	if (tu_distro_python(python, sizeof(python), &minor))
		fail_msg("no python3 of Debian's python3-minimal package");
	snprintf(comm, sizeof(comm), "%.15s", strrchr(python, '/') + 1);
	snprintf(script, sizeof(script), "%s/flood.py", top);
	f = fopen(script, "w");
	assert_non_null(f);
	fputs(py_flood_script, f);
	fclose(f);
	chmod(script, 0644);
	/* The attacker's interpreter under its own name (comm), copied by it. */
	snprintf(pyexe, sizeof(pyexe), "%s/atkpy", atk);
	{
		char cmd[1700];

		snprintf(cmd, sizeof(cmd), "cp %s %s", python, pyexe);
		assert_int_equal(attacker__system(cmd), 0);
	}
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(victim_script, sizeof(victim_script), "%s/tests/workloads/python/py_chain.py",
		 cwd);
	{
		char *aargv[] = {pyexe, script, "60", PY_CHAINS, PY_DEPTH, NULL};
		char *vargv[] = {python, victim_script, "60", NULL};

		attacker = attacker__spawn_ready(aargv, atk);
		assert_true(attacker > 0);
		victim = tu_spawn_ready(vargv);
		assert_true(victim > 0);
	}
	dir = tu_mkdtemp();
	assert_non_null(dir);
	snprintf(pids, sizeof(pids), "%d,%d", (int)attacker, (int)victim);
	rss_kb = record_rss_kb(pids, dir, &log);
	tu_reap(victim);
	tu_reap(attacker);
	snprintf(folded, sizeof(folded), "%s/out/stacks.folded", dir);
	text = tu_read_file(folded, NULL);
	assert_non_null(text);
	c = chain_spec__count_folded(cs, text, comm);
	report("normal Python process beside the attacker", c);
	c.worst = NULL;
	print_message("profiler peak RSS %ld KiB (bound %d KiB); line tables cut %lld, names cut "
		      "%lld, frames not named (byte budget) %lld, bytes peak %lld\n",
		      rss_kb, PY_RSS_BOUND_KB,
		      tu_counter_after(log, "python: line tables cut (64 KiB)"),
		      tu_counter_after(log, "python: names cut (PYTHON_STR_MAX_CHARS)"),
		      tu_counter_after(log, "python: frames not named (byte budget)"),
		      tu_counter_after(log, "python: code object bytes peak"));
	/* The attack reached the agent: its code objects were read and cut. */
	assert_true(tu_counter_after(log, "python: line tables cut (64 KiB)") > 0);
	assert_true(tu_counter_after(log, "python: names cut (PYTHON_STR_MAX_CHARS)") > 0);
	assert_true(rss_kb < PY_RSS_BOUND_KB);
	assert_true(c.leaf >= MIN_LEAF);
	assert_true(c.complete >= MIN_SHARE * c.leaf);
	free(text);
	free(log);
	chain_spec__free(cs);
	tu_rmtree(dir);
	free(dir);
	tu_rmtree(top);
	free(top);
}

/* ---- LPM exhaustion: attackers fill their budgets, a later victim is whole ---- */

#define LPM_TRIE_ENTRIES "65536" /* --lpm-entries: budget 2048 per process, high water 57344 */
#define LPM_ATTACKERS	 40	 /* x 2048 entries: past the high-water mark */
#define LPM_FILES	 "100"	 /* files each attacker maps ... */
#define LPM_RANGES	 "100"	 /* ... in this many ranges of 46 entries each */
#define LPM_RECORD_S	 12

static void expect_nofp(struct chain_spec *cs)
{
	assert_int_equal(chain_spec__add(cs, "main"), 0);
	for (int i = 1; i <= 20; i++)
		assert_int_equal(chain_spec__add(cs, "a_%02d", i), 0);
	assert_int_equal(chain_spec__add(cs, "leaf"), 0);
}

static void test_lpm_exhaustion(void **state)
{
	char *top, *atk = attacker_dir(&top), flood[600], victim_exe[600], cmd[1400], secs[16];
	char *dir = tu_mkdtemp(), out[600], logpath[600], folded[700], *log, *text;
	struct chain_spec *cs = chain_spec__new();
	pid_t attackers[LPM_ATTACKERS], victim, rec;
	long long refused, evicted;
	struct chain_count c;
	int status;

	(void)state;
	assert_non_null(cs);
	assert_non_null(dir);
	expect_nofp(cs);
	build_path(flood, sizeof(flood), "workloads/lpm_flood");
	/* The victim under a name of its own: the whole system is recorded, and other
	 * tests may run nofp_gcc meanwhile. */
	build_path(victim_exe, sizeof(victim_exe), "workloads/nofp_gcc");
	assert_int_equal(tu_run(NULL, "cp %s %s/lpm_victim", victim_exe, dir), 0);
	snprintf(victim_exe, sizeof(victim_exe), "%s/lpm_victim", dir);
	/* The attacker's small files, made by it. */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && for i in $(seq 0 %d); do printf 'x' > f$i || exit 1; done", atk,
		 atoi(LPM_FILES) - 1);
	assert_int_equal(attacker__system(cmd), 0);
	for (int i = 0; i < LPM_ATTACKERS; i++) {
		char *argv[] = {flood, "120", atk, LPM_FILES, LPM_RANGES, NULL};

		attackers[i] = attacker__spawn_ready(argv, atk);
		assert_true(attackers[i] > 0);
	}
	/* The whole system, with a small trie (test hook) so the attack is quick. */
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(logpath, sizeof(logpath), "%s/record.log", dir);
	snprintf(secs, sizeof(secs), "%d", LPM_RECORD_S);
	{
		char *argv[] = {tu_omniprof_path(), "record",	      "-v", "-d", secs, "-F", "99",
				"--lpm-entries",    LPM_TRIE_ENTRIES, "-o", out,  NULL};

		rec = tu_spawn_logged(argv, logpath, 0644, false);
	}
	assert_true(rec >= 0);
	assert_true(tu_wait_log(logpath, "sampling the whole system", 60000)); /* 60 s */
	/* The victim starts after the attackers' maps were read (the start-up scan). */
	{
		char *argv[] = {victim_exe, "60", NULL};

		victim = tu_spawn_ready(argv);
		assert_true(victim > 0);
	}
	assert_int_equal(waitpid(rec, &status, 0), rec);
	tu_reap(victim);
	for (int i = 0; i < LPM_ATTACKERS; i++)
		tu_reap(attackers[i]);
	log = record_log_after_exit(logpath, status);
	snprintf(folded, sizeof(folded), "%s/stacks.folded", out);
	text = tu_read_file(folded, NULL);
	assert_non_null(text);
	c = chain_spec__count_folded(cs, text, "lpm_victim");
	report("victim started after the attackers", c);
	c.worst = NULL;
	refused = tu_counter_after(log, "tables: ranges refused (pid budget)");
	evicted = tu_counter_after(log, "tables: processes evicted (greediest)");
	print_message("ranges refused (pid budget) %lld, processes evicted %lld, refused (trie "
		      "full) %lld, entries now %lld\n",
		      refused, evicted, tu_counter_after(log, "tables: ranges refused (trie full)"),
		      tu_counter_after(log, "tables: mapping entries (LPM)"));
	/* Every attacker hit its budget; together they passed the high-water mark. */
	assert_true(refused >= LPM_ATTACKERS);
	assert_true(evicted >= 1);
	assert_true(c.leaf >= MIN_LEAF);
	assert_true(c.complete >= MIN_SHARE * c.leaf);
	free(text);
	free(log);
	chain_spec__free(cs);
	tu_rmtree(dir);
	free(dir);
	tu_rmtree(top);
	free(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table_poisoning),
	    cmocka_unit_test(test_python_line_table_flood),
	    cmocka_unit_test(test_lpm_exhaustion),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
