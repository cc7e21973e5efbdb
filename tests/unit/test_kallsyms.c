// SPDX-License-Identifier: Apache-2.0
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/kallsyms.h"
#include "util/memory.h"

/*
 * Parses exactly len bytes copied into a buffer of that size, so any read
 * past the end or reliance on a terminating NUL shows up under ASan.
 */
static struct kallsyms *parse_exact(const char *text, size_t len)
{
	struct kallsyms *ks = NULL;
	char *copy = malloc(len ? len : 1);

	assert_non_null(copy);
	memcpy(copy, text, len);
	assert_int_equal(kallsyms__parse(copy, len, &ks), 0);
	assert_non_null(ks);
	free(copy);
	return ks;
}

static struct kallsyms *parse_str(const char *text)
{
	return parse_exact(text, strlen(text));
}

static void assert_sym(const struct kallsyms *ks, uint64_t addr, uint64_t want_addr,
		       const char *want_name, const char *want_module)
{
	struct ksym s_v, *s = kallsyms__find(ks, addr, &s_v) ? &s_v : NULL;

	assert_non_null(s);
	assert_true(s->addr == want_addr);
	assert_string_equal(s->name, want_name);
	if (want_module)
		assert_string_equal(s->module, want_module);
	else
		assert_null(s->module);
}

static void test_basic_with_modules(void **state)
{
	(void)state;
	/* Deliberately out of order: modules are listed after the core image. */
	struct kallsyms *ks = parse_str("ffffffff81000000 T _stext\n"
					"ffffffff81000100 t do_one_thing\n"
					"ffffffffc0300000 t ext4_helper\t[ext4]\n"
					"ffffffffc0300080 T ext4_main\t[ext4]\n"
					"ffffffffc0100000 t vfat_fill\t[vfat]\n"
					"ffffffffc0300100 W ext4_weak\t[ext4]\n"
					"ffffffff81000200 w weak_core\n");

	assert_int_equal(kallsyms__count(ks), 7);
	assert_int_equal(kallsyms__skipped_lines(ks), 0);
	assert_false(kallsyms__restricted(ks));

	assert_false(kallsyms__find(ks, 0, &(struct ksym){0}));
	assert_false(kallsyms__find(ks, 0xffffffff80ffffffull, &(struct ksym){0}));
	assert_sym(ks, 0xffffffff81000000ull, 0xffffffff81000000ull, "_stext", NULL);
	assert_sym(ks, 0xffffffff810000ffull, 0xffffffff81000000ull, "_stext", NULL);
	assert_sym(ks, 0xffffffff81000100ull, 0xffffffff81000100ull, "do_one_thing", NULL);
	assert_sym(ks, 0xffffffff81000250ull, 0xffffffff81000200ull, "weak_core", NULL);
	assert_sym(ks, 0xffffffffc0100010ull, 0xffffffffc0100000ull, "vfat_fill", "vfat");
	assert_sym(ks, 0xffffffffc030007full, 0xffffffffc0300000ull, "ext4_helper", "ext4");
	assert_sym(ks, 0xffffffffc0300080ull, 0xffffffffc0300080ull, "ext4_main", "ext4");
	/* The last symbol has no known end: it covers everything above it. */
	assert_sym(ks, UINT64_MAX, 0xffffffffc0300100ull, "ext4_weak", "ext4");

	/* One module string is shared by all of that module's symbols. */
	struct ksym a_v, *a = kallsyms__find(ks, 0xffffffffc0300000ull, &a_v) ? &a_v : NULL;
	struct ksym b_v, *b = kallsyms__find(ks, 0xffffffffc0300080ull, &b_v) ? &b_v : NULL;
	struct ksym c_v, *c = kallsyms__find(ks, 0xffffffffc0300100ull, &c_v) ? &c_v : NULL;
	assert_ptr_equal(a->module, b->module);
	assert_ptr_equal(a->module, c->module);
	kallsyms__free(ks);
}

/* Function padding: "__pfx_NAME" before each NAME. Both are found as listed; NAME
 * keeps no copy of its name (it is the tail of the __pfx_ one). Look-alikes are
 * not shared: another module, a longer name, a name not right after. */
static void test_pfx_names_shared(void **state)
{
	(void)state;
	struct kallsyms *ks = parse_str("ffffffff81000000 t __pfx_do_read\n"
					"ffffffff81000010 T do_read\n"
					"ffffffff81000100 t __pfx_do_write\n"
					"ffffffff81000110 t do_writev\n"
					"ffffffffc0300000 t __pfx_mod_fn\t[ext4]\n"
					"ffffffffc0300010 t mod_fn\t[vfat]\n"
					"ffffffffc0400000 t __pfx_same\t[xfs]\n"
					"ffffffffc0400010 t same\t[xfs]\n");
	struct ksym pfx_v, *pfx = kallsyms__find(ks, 0xffffffff81000008ull, &pfx_v) ? &pfx_v : NULL;
	struct ksym fn_v, *fn = kallsyms__find(ks, 0xffffffff81000010ull, &fn_v) ? &fn_v : NULL;

	assert_int_equal(kallsyms__count(ks), 8);
	assert_sym(ks, 0xffffffff81000008ull, 0xffffffff81000000ull, "__pfx_do_read", NULL);
	assert_sym(ks, 0xffffffff81000050ull, 0xffffffff81000010ull, "do_read", NULL);
	assert_ptr_equal(fn->name, pfx->name + strlen("__pfx_"));
	assert_sym(ks, 0xffffffff81000105ull, 0xffffffff81000100ull, "__pfx_do_write", NULL);
	assert_sym(ks, 0xffffffff81000111ull, 0xffffffff81000110ull, "do_writev", NULL);
	assert_sym(ks, 0xffffffffc0300001ull, 0xffffffffc0300000ull, "__pfx_mod_fn", "ext4");
	assert_sym(ks, 0xffffffffc0300011ull, 0xffffffffc0300010ull, "mod_fn", "vfat");
	assert_sym(ks, 0xffffffffc0400001ull, 0xffffffffc0400000ull, "__pfx_same", "xfs");
	assert_sym(ks, 0xffffffffc0400011ull, 0xffffffffc0400010ull, "same", "xfs");
	pfx = kallsyms__find(ks, 0xffffffffc0400000ull, &pfx_v) ? &pfx_v : NULL;
	fn = kallsyms__find(ks, 0xffffffffc0400010ull, &fn_v) ? &fn_v : NULL;
	assert_ptr_equal(fn->name, pfx->name + strlen("__pfx_"));
	kallsyms__free(ks);
}

static void test_only_text_symbols_kept(void **state)
{
	(void)state;
	struct kallsyms *ks = parse_str("0000000000001000 T text_a\n"
					"0000000000002000 D data_b\n"
					"0000000000003000 r rodata_c\n"
					"0000000000004000 B bss_d\n"
					"0000000000005000 A abs_e\n"
					"0000000000006000 t text_f\n");

	assert_int_equal(kallsyms__count(ks), 2);
	/* Valid lines of other types are not malformed. */
	assert_int_equal(kallsyms__skipped_lines(ks), 0);
	/* Data symbols do not end text_a: it extends to the next text symbol. */
	assert_sym(ks, 0x2000, 0x1000, "text_a", NULL);
	assert_sym(ks, 0x5fff, 0x1000, "text_a", NULL);
	assert_sym(ks, 0x6000, 0x6000, "text_f", NULL);
	kallsyms__free(ks);
}

static void test_malformed_lines_skipped(void **state)
{
	(void)state;
	static const char text[] = "0000000000001000 T good_one\n"
				   "zzzz T bad_hex\n"
				   "00000000000010000 T seventeen_digits\n"
				   "0000000000002000 T\n"
				   "0000000000002000\n"
				   "0000000000002000 TT two_letter_type\n"
				   "0000000000002000 T name\text4]\n"
				   "0000000000002000 T name\t[ext4\n"
				   "0000000000002000 T name\t[]\n"
				   "0000000000002000 T name [m] extra\n"
				   "0000000000002000 T ctl\x01name\n"
				   "0000000000002000 T nul\0name\n"
				   "0000000000002000 T high\xc3\xa9name\n"
				   "0x2000 T prefixed\n"
				   "\n"
				   "   \t  \n"
				   "0000000000003000 t good_two\t[mod]\n";
	struct kallsyms *ks = parse_exact(text, sizeof(text) - 1);

	assert_int_equal(kallsyms__count(ks), 2);
	/* Blank lines are not counted; the thirteen broken ones are. */
	assert_int_equal(kallsyms__skipped_lines(ks), 13);
	assert_sym(ks, 0x2000, 0x1000, "good_one", NULL);
	assert_sym(ks, 0x3000, 0x3000, "good_two", "mod");
	kallsyms__free(ks);
}

/*
 * Fields are scanned eight bytes at a time: a byte that is not printable
 * ASCII ends a field wherever it sits in its word, and every printable one
 * is kept. Each name here is 1-24 bytes of '!' to '~' (all 94 used across
 * them), and each bad byte (control, DEL, 8-bit, NUL) is tried at every
 * position of a 19-byte name.
 */
static void test_field_bytes_at_every_position(void **state)
{
	static const unsigned char bad[] = {0x00, 0x01, 0x1f, 0x7f, 0x80, 0xa0, 0xfe, 0xff};
	char line[128], name[32];
	struct kallsyms *ks;
	struct ksym s;

	(void)state;
	for (int len = 1; len <= 24; len++) {
		for (int i = 0; i < len; i++)
			name[i] = (char)('!' + (len * 7 + i) % ('~' - '!' + 1));
		name[len] = '\0';
		snprintf(line, sizeof(line), "0000000000001000 T %s\n", name);
		ks = parse_str(line);
		assert_int_equal(kallsyms__skipped_lines(ks), 0);
		assert_true(kallsyms__find(ks, 0x1000, &s));
		assert_string_equal(s.name, name);
		kallsyms__free(ks);
	}
	for (size_t b = 0; b < sizeof(bad); b++) {
		for (int at = 0; at < 19; at++) {
			int n;

			memcpy(name, "abcdefghijklmnopqrs", 19);
			name[at] = (char)bad[b];
			n = snprintf(line, sizeof(line), "0000000000001000 T ");
			memcpy(line + n, name, 19);
			memcpy(line + n + 19, "\n0000000000002000 T ok\n", 23);
			ks = parse_exact(line, (size_t)n + 19 + 23);
			assert_int_equal(kallsyms__skipped_lines(ks), 1);
			assert_int_equal(kallsyms__count(ks), 1);
			assert_sym(ks, 0x2000, 0x2000, "ok", NULL);
			kallsyms__free(ks);
		}
	}
}

static void test_no_trailing_newline(void **state)
{
	(void)state;
	struct kallsyms *ks = parse_str("0000000000001000 T first\n"
					"0000000000002000 t last_without_newline\t[m1]");

	assert_int_equal(kallsyms__count(ks), 2);
	assert_sym(ks, 0x2001, 0x2000, "last_without_newline", "m1");
	kallsyms__free(ks);

	/* A line cut inside the address is just a malformed line. */
	ks = parse_str("0000000000001000 T first\n00000000");
	assert_int_equal(kallsyms__count(ks), 1);
	assert_int_equal(kallsyms__skipped_lines(ks), 1);
	kallsyms__free(ks);
}

static void test_restricted(void **state)
{
	(void)state;
	struct kallsyms *ks = parse_str("0000000000000000 T _stext\n"
					"0000000000000000 t helper\n"
					"0000000000000000 D data\n"
					"0000000000000000 t modfn\t[ext4]\n");

	assert_true(kallsyms__restricted(ks));
	assert_false(kallsyms__find(ks, 0, &(struct ksym){0}));
	assert_false(kallsyms__find(ks, 0xffffffff81000000ull, &(struct ksym){0}));
	kallsyms__free(ks);

	/* One real address means the addresses are not hidden. */
	ks = parse_str("0000000000000000 D fixed_percpu_data\n"
		       "ffffffff81000000 T _stext\n");
	assert_false(kallsyms__restricted(ks));
	assert_int_equal(kallsyms__count(ks), 1);
	kallsyms__free(ks);

	/* Nothing parsed is not evidence of restriction. */
	ks = parse_str("");
	assert_false(kallsyms__restricted(ks));
	assert_int_equal(kallsyms__count(ks), 0);
	assert_false(kallsyms__find(ks, 1234, &(struct ksym){0}));
	kallsyms__free(ks);

	ks = NULL;
	assert_int_equal(kallsyms__parse(NULL, 0, &ks), 0);
	assert_int_equal(kallsyms__count(ks), 0);
	kallsyms__free(ks);
	assert_int_equal(kallsyms__parse(NULL, 5, &ks), -EINVAL);
	kallsyms__free(NULL);
}

static void test_aliases_give_first_listed(void **state)
{
	(void)state;
	struct kallsyms *ks = parse_str("ffffffff81000000 T _text\n"
					"ffffffff81000000 T _stext\n"
					"ffffffff81000000 t alias_three\n"
					"ffffffff81000040 T next_fn\n");

	assert_int_equal(kallsyms__count(ks), 4);
	assert_sym(ks, 0xffffffff81000000ull, 0xffffffff81000000ull, "_text", NULL);
	assert_sym(ks, 0xffffffff8100003full, 0xffffffff81000000ull, "_text", NULL);
	assert_sym(ks, 0xffffffff81000040ull, 0xffffffff81000040ull, "next_fn", NULL);
	kallsyms__free(ks);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Every kept symbol must be findable at its own address, and the table sorted. */
static void check_consistent(const struct kallsyms *ks)
{
	struct ksym prev = {0};
	bool have_prev = false;

	for (uint64_t probe = 0; probe < 64; probe++) {
		struct ksym s_v, *s = kallsyms__find(ks, rng(), &s_v) ? &s_v : NULL;

		if (!s)
			continue;
		assert_non_null(s->name);
		assert_true(strlen(s->name) > 0);
		if (s->module)
			assert_true(strlen(s->module) > 0);
		/* One address, one symbol: the same name (the very same bytes) every time. */
		if (have_prev && prev.addr == s->addr) {
			assert_ptr_equal(prev.name, s->name);
			assert_ptr_equal(prev.module, s->module);
		}
		prev = *s;
		have_prev = true;
	}
}

static void test_fuzz_mutations(void **state)
{
	(void)state;
	static const char seed[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81000100 t do_one_thing\n"
				   "ffffffff81000200 D some_data\n"
				   "ffffffffc0300000 t ext4_helper\t[ext4]\n"
				   "ffffffffc0300080 T ext4_main\t[ext4]\n"
				   "ffffffffc0100000 t vfat_fill\t[vfat]\n";
	static const char alphabet[] = "0123456789abcdefTtWwD[] \t\n\0x\xff";
	size_t len = sizeof(seed) - 1;

	for (int iter = 0; iter < 20000; iter++) {
		size_t n = len + rng() % 16;
		char *buf = malloc(n);
		struct kallsyms *ks = NULL;

		assert_non_null(buf);
		for (size_t i = 0; i < n; i++)
			buf[i] = i < len ? seed[i] : alphabet[rng() % (sizeof(alphabet) - 1)];
		for (int k = (int)(rng() % 8); k >= 0; k--)
			buf[rng() % n] = alphabet[rng() % (sizeof(alphabet) - 1)];
		if (iter % 4 == 0)
			n = rng() % (n + 1); /* truncated anywhere */
		size_t lines = 1;
		for (size_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
		assert_int_equal(kallsyms__parse(buf, n, &ks), 0);
		check_consistent(ks);
		assert_true(kallsyms__count(ks) + kallsyms__skipped_lines(ks) <= lines);
		kallsyms__free(ks);
		free(buf);
	}

	/* Pure noise. */
	for (int iter = 0; iter < 2000; iter++) {
		size_t n = rng() % 512;
		char *buf = malloc(n ? n : 1);
		struct kallsyms *ks = NULL;

		assert_non_null(buf);
		for (size_t i = 0; i < n; i++)
			buf[i] = (char)rng();
		assert_int_equal(kallsyms__parse(buf, n, &ks), 0);
		check_consistent(ks);
		kallsyms__free(ks);
		free(buf);
	}
}

/* The test's own reading of /proc/kallsyms, to compare the parser against. */
struct real_sym {
	uint64_t addr;
	char type;
	char name[128];
	char module[64];
};

static struct real_sym *read_real(size_t *n_out)
{
	size_t n = 0, cap = 4096;
	struct real_sym *syms = malloc(cap * sizeof(*syms));
	char line[512];
	FILE *f = fopen("/proc/kallsyms", "r");

	assert_non_null(syms);
	if (!f) {
		free(syms);
		*n_out = 0;
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		struct real_sym s = {0};
		unsigned long long addr;
		int fields =
		    sscanf(line, "%llx %c %127s [%63[^]]]", &addr, &s.type, s.name, s.module);

		if (fields < 3)
			continue;
		s.addr = addr;
		if (n == cap) {
			cap *= 2;
			syms = realloc(syms, cap * sizeof(*syms));
			assert_non_null(syms);
		}
		syms[n++] = s;
	}
	fclose(f);
	*n_out = n;
	return syms;
}

static bool is_text(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* True when no other text symbol of the file shares s's address. */
static bool unique_text_addr(const struct real_sym *syms, size_t n, const struct real_sym *s)
{
	for (size_t i = 0; i < n; i++)
		if (&syms[i] != s && is_text(syms[i].type) && syms[i].addr == s->addr)
			return false;
	return true;
}

/* JIT-compiled BPF programs are listed as bpf_prog_<tag>_<name> in the [bpf] module. */
static void test_bpf_programs(void **state)
{
	static const char text[] =
	    "ffffffff81000000 T _text\n"
	    "ffffffffc0201000 t bpf_prog_6deef7357e7b4530_on_sample\t[bpf]\n"
	    "ffffffffc0203000 t bpf_prog_3a1c0bd4c1d21b35_handle_exec\t[bpf]\n";
	struct ksym k_v, *k;
	struct kallsyms *ks;

	(void)state;
	assert_int_equal(kallsyms__parse(text, sizeof(text) - 1, &ks), 0);
	k = kallsyms__find(ks, 0xffffffffc0201040ull, &k_v) ? &k_v : NULL;
	assert_non_null(k);
	assert_string_equal(k->name, "bpf_prog_6deef7357e7b4530_on_sample");
	assert_non_null(k->module);
	assert_string_equal(k->module, "bpf");
	k = kallsyms__find(ks, 0xffffffffc0203001ull, &k_v) ? &k_v : NULL;
	assert_non_null(k);
	assert_string_equal(k->name, "bpf_prog_3a1c0bd4c1d21b35_handle_exec");
	kallsyms__free(ks);
}

static void test_real_proc_kallsyms(void **state)
{
	(void)state;
	struct kallsyms *ks = NULL;
	struct real_sym *syms;
	size_t n;

	syms = read_real(&n);
	if (!syms || n == 0) {
		free(syms);
		skip();
	}
	assert_int_equal(kallsyms__load(NULL, &ks), 0);
	if (kallsyms__restricted(ks)) {
		/* kptr_restrict hides addresses even from us: nothing more to check. */
		assert_int_equal(kallsyms__count(ks), 0);
		kallsyms__free(ks);
		free(syms);
		skip();
	}
	assert_true(kallsyms__count(ks) > 1000);
	assert_int_equal(kallsyms__skipped_lines(ks), 0);

	const struct real_sym *sched = NULL, *modsym = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!sched && strcmp(syms[i].name, "schedule") == 0 && is_text(syms[i].type))
			sched = &syms[i];
		/* A module symbol with a unique address, to check its name and module. */
		if (!modsym && syms[i].module[0] && is_text(syms[i].type) &&
		    unique_text_addr(syms, n, &syms[i]))
			modsym = &syms[i];
	}
	assert_non_null(sched);
	struct ksym s_v, *s = kallsyms__find(ks, sched->addr, &s_v) ? &s_v : NULL;
	assert_non_null(s);
	assert_true(s->addr == sched->addr);
	if (unique_text_addr(syms, n, sched))
		assert_string_equal(s->name, "schedule");
	assert_null(s->module);
	/* An address inside schedule() still resolves to it. */
	s = kallsyms__find(ks, sched->addr + 1, &s_v) ? &s_v : NULL;
	assert_true(s->addr == sched->addr);

	if (modsym) {
		s = kallsyms__find(ks, modsym->addr, &s_v) ? &s_v : NULL;
		assert_non_null(s);
		assert_string_equal(s->name, modsym->name);
		assert_non_null(s->module);
		assert_string_equal(s->module, modsym->module);
	}
	kallsyms__free(ks);
	free(syms);

	assert_int_equal(kallsyms__load("/nonexistent/kallsyms", &ks), -ENOENT);
	assert_null(ks);
}

/*
 * The table is sorted by merging the in-order prefix with the sorted rest
 * (the modules, listed after the kernel): every address must give what a
 * full sort gives, the first listed symbol at the greatest address at or
 * below it, whether the rest interleaves with the prefix, repeats its
 * addresses or is most of the file.
 */
static void check_sorted_like_full_sort(size_t n, size_t n_tail, uint64_t seed)
{
	uint64_t *addrs = calloc(n, sizeof(*addrs));
	size_t cap = n * 64, len = 0;
	char *text = malloc(cap);
	struct kallsyms *ks;

	assert_non_null(addrs);
	assert_non_null(text);
	rng_state = seed;
	for (size_t i = 0; i < n; i++) {
		/* The prefix in order (ties included), the tail anywhere, ties again. */
		if (i < n - n_tail)
			addrs[i] = 0xffffffff81000000ull + (i / 2) * 32;
		else
			addrs[i] = 0xffffffff81000000ull + (rng() % (n / 2 + 8)) * 32;
		len += (size_t)snprintf(text + len, cap - len, "%llx T sym_%zu%s\n",
					(unsigned long long)addrs[i], i,
					i < n - n_tail ? "" : "\t[mod]");
	}
	ks = parse_exact(text, len);
	assert_int_equal(kallsyms__count(ks), n);
	for (size_t i = 0; i < n; i++) {
		for (uint64_t d = 0; d < 2; d++) {
			uint64_t probe = addrs[i] + d * 31, best = 0;
			size_t first = n;
			char want[32];
			struct ksym got_v, *got = kallsyms__find(ks, probe, &got_v) ? &got_v : NULL;

			for (size_t j = 0; j < n; j++)
				if (addrs[j] <= probe && (first == n || addrs[j] > best)) {
					best = addrs[j];
					first = j;
				}
			assert_true(first < n);
			snprintf(want, sizeof(want), "sym_%zu", first);
			assert_non_null(got);
			assert_true(got->addr == best);
			assert_string_equal(got->name, want);
		}
	}
	kallsyms__free(ks);
	free(text);
	free(addrs);
}

static void test_unsorted_tail_merged(void **state)
{
	(void)state;
	check_sorted_like_full_sort(400, 0, 1);	  /* already sorted */
	check_sorted_like_full_sort(400, 1, 2);	  /* one module symbol */
	check_sorted_like_full_sort(400, 40, 3);  /* a short tail: merged */
	check_sorted_like_full_sort(400, 300, 4); /* mostly out of order: sorted whole */
	check_sorted_like_full_sort(400, 400, 5);
}

/*
 * The packed table: addresses more than 4 GiB apart (a new run), an alias of
 * another module at the same address (the first listed wins across runs), the
 * top of the address space; and what the table holds once loaded, at most 8
 * bytes a symbol beside the names (24 with the pointers it had).
 */
static void test_packed_runs(void **state)
{
	(void)state;
	struct kallsyms *ks = parse_str("0000000000001000 T low\n"
					"0000000200000000 T high\n"
					"0000000200000010 T a\t[m1]\n"
					"0000000200000010 T b\t[m2]\n"
					"0000000200000020 T c\t[m2]\n"
					"ffffffffffff0000 T top\n");
	size_t n = 100000, cap = n * 48, len = 0, before, after;
	char *text = malloc(cap);

	assert_int_equal(kallsyms__count(ks), 6);
	assert_false(kallsyms__find(ks, 0xfff, &(struct ksym){0}));
	assert_sym(ks, 0x1fff, 0x1000, "low", NULL);
	assert_sym(ks, 0x1ffffffffull, 0x1000, "low", NULL);
	assert_sym(ks, 0x200000000ull, 0x200000000ull, "high", NULL);
	assert_sym(ks, 0x200000011ull, 0x200000010ull, "a", "m1");
	assert_sym(ks, 0x200000020ull, 0x200000020ull, "c", "m2");
	assert_sym(ks, 0xfffffffffffeffffull, 0x200000020ull, "c", "m2");
	assert_sym(ks, UINT64_MAX, 0xffffffffffff0000ull, "top", NULL);
	kallsyms__free(ks);

	assert_non_null(text);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "%llx T f%06zu\n",
					0xffffffff81000000ull + i * 16, i);
	before = memory__heap_in_use();
	ks = parse_exact(text, len);
	after = memory__heap_in_use();
	assert_int_equal(kallsyms__count(ks), n);
	/* Names: 8 bytes each with their NUL; the rest must be the 8-byte entries. */
	assert_true(after - before <= n * 8 + n * 8 + 64 * 1024);
	assert_sym(ks, 0xffffffff81000000ull + 777 * 16 + 5, 0xffffffff81000000ull + 777 * 16,
		   "f000777", NULL);
	kallsyms__free(ks);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basic_with_modules),
	    cmocka_unit_test(test_pfx_names_shared),
	    cmocka_unit_test(test_only_text_symbols_kept),
	    cmocka_unit_test(test_malformed_lines_skipped),
	    cmocka_unit_test(test_field_bytes_at_every_position),
	    cmocka_unit_test(test_no_trailing_newline),
	    cmocka_unit_test(test_restricted),
	    cmocka_unit_test(test_aliases_give_first_listed),
	    cmocka_unit_test(test_fuzz_mutations),
	    cmocka_unit_test(test_bpf_programs),
	    cmocka_unit_test(test_real_proc_kallsyms),
	    cmocka_unit_test(test_unsorted_tail_merged),
	    cmocka_unit_test(test_packed_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
