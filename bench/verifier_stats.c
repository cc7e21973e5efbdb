// SPDX-License-Identifier: Apache-2.0
/*
 * Loads the sampler's BPF programs as the agent does (kernel stacks on, the
 * same map sizes that matter for the verifier) and prints, per program, the
 * instructions the verifier processed (the kernel's verified_insns, the
 * figure the 1M-instruction limit applies to) and its log's per-function
 * lines: each global function (a runtime's step, the rule lookup) is
 * verified once, on its own. bench/run.py puts the figures in
 * bench/RESULTS.md.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "util/kernel_btf.h"
#include "sampler.skel.h"

#define LOG_SIZE (16u << 20)

static int quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	(void)fmt;
	(void)args;
	return 0;
}

/*
 * The verifier checks the main program, then each global function on its own
 * ("Validating <name>() func#N..."); at log level 2 it prints every
 * instruction it processes ("<insn>: (<op>) ..."), so counting those lines
 * between the markers splits the total per function.
 */
static void print_functions(const char *log)
{
	char name[128] = "(main program)";
	unsigned long count = 0;
	const char *line = log;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		char next[128], op[8];
		unsigned insn;

		if (sscanf(line, "Validating %127[^(]() func#", next) == 1) {
			printf("  %s: %lu\n", name, count);
			snprintf(name, sizeof(name), "%s", next);
			count = 0;
		} else if (sscanf(line, "%u: (%7[0-9a-f])", &insn, op) == 2) {
			count++;
		} else if (!strncmp(line, "processed ", 10)) {
			printf("  %s: %lu\n  %.*s\n", name, count,
			       (int)(end ? (size_t)(end - line) : strlen(line)), line);
		}
		line = end ? end + 1 : NULL;
	}
}

/*
 * Opens and loads the programs with the verifier's log at level (2 | 4: per
 * function and totals; 4: totals only) into logs[] (LOG_SIZE each, the
 * caller's). The skeleton is the caller's to destroy, NULL on failure.
 */
static struct sampler_bpf *load(unsigned level, char **logs)
{
	struct sampler_bpf *skel;
	struct bpf_program *prog;
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	int n = 0;

	skel = sampler_bpf__open();
	if (!skel) {
		fprintf(stderr, "verifier_stats: cannot open the BPF object: %s\n",
			strerror(errno));
		return NULL;
	}
	/* The kernel's field offsets, as the sampler sets them (bpf/kernel_read.h). */
	if (kernel_offsets__get(&skel->rodata->kernel_offsets)) {
		sampler_bpf__destroy(skel);
		return NULL;
	}
	skel->rodata->kernel_stacks = true;
	bpf_map__set_max_entries(skel->maps.stack_copy_scratch, cpus > 0 ? (uint32_t)cpus : 1);
	bpf_object__for_each_program(prog, skel->obj)
	{
		if (n == 8)
			break;
		memset(logs[n], 0, LOG_SIZE);
		bpf_program__set_log_level(prog, level);
		bpf_program__set_log_buf(prog, logs[n], LOG_SIZE);
		n++;
	}
	if (sampler_bpf__load(skel)) {
		fprintf(stderr, "verifier_stats: load at log level %u failed: %s\n", level,
			strerror(errno));
		sampler_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* Level 4: the verifier's totals ("processed N insns ...", "verification time N usec"). */
static void print_totals(const char *log)
{
	const char *line = log;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		int len = (int)(end ? (size_t)(end - line) : strlen(line));

		if (!strncmp(line, "processed ", 10) || !strncmp(line, "verification time ", 18))
			printf("  %.*s\n", len, line);
		line = end ? end + 1 : NULL;
	}
}

int main(void)
{
	struct sampler_bpf *skel = NULL;
	struct bpf_program *prog;
	char *logs[8] = {0};
	int n = 0, err = 1;
	bool split = true;

	libbpf_set_print(quiet);
	for (int i = 0; i < 8; i++) {
		logs[i] = malloc(LOG_SIZE);
		if (!logs[i])
			goto cleanup;
	}
	/* Level 2 names each function as it is verified; 4 adds the totals. A
	 * program whose level-2 log outgrows LOG_SIZE (ENOSPC) gets its totals
	 * only: a larger log takes the verifier many minutes on a loaded host. */
	skel = load(2 | 4, logs);
	if (!skel) {
		split = false;
		skel = load(4, logs);
		if (!skel)
			goto cleanup;
	}
	n = 0;
	bpf_object__for_each_program(prog, skel->obj)
	{
		struct bpf_prog_info info = {0};
		uint32_t len = sizeof(info);

		if (n == 8)
			break;
		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			goto cleanup;
		printf("program %s: %u instructions, %u verified\n", bpf_program__name(prog),
		       (unsigned)bpf_program__insn_cnt(prog), info.verified_insns);
		if (split)
			print_functions(logs[n]);
		else
			print_totals(logs[n]);
		n++;
	}
	err = 0;
cleanup:
	for (int i = 0; i < 8; i++)
		free(logs[i]);
	sampler_bpf__destroy(skel);
	return err;
}
