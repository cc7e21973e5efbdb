// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli/cli.h"
#include "export/output_set.h"
#include "profile/offcpu.h"
#include "util/log.h"
#include "util/read_file.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct data[2], int cap)
{
	return data[cap / 32].effective & (1u << (cap % 32));
}

int cli__check_privileges(void)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2] = {{0}};

	if (syscall(SYS_capget, &hdr, data)) {
		pr_err("cannot read this process's capabilities: %s", strerror(errno));
		return -errno;
	}
	/* Loading the sampler needs BPF; opening cpu-clock events on every CPU needs perfmon
	 * (CAP_SYS_ADMIN covers both); reading other processes' maps needs root-like access. */
	if (has_cap(data, CAP_SYS_ADMIN) || (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON)))
		return 0;
	pr_err("omniprof needs root (or CAP_BPF and CAP_PERFMON): run it with sudo");
	return -EPERM;
}

int cli__prepare_output_dir(const char *dir, struct output_dir *out)
{
	/* Find out now, not after a long recording, that the files cannot be written. */
	int err = output_dir__open(out, dir, OUTPUT_DIR_CREATE);

	if (!err)
		err = output_dir__probe(out);
	if (err)
		output_dir__close(out);
	return err;
}

/* Resolves a pid or thread id to its process id; -ESRCH when there is none. */
static int process_of(long id, uint32_t *pid)
{
	char path[64], line[256];
	FILE *f;
	int err = -ESRCH;

	snprintf(path, sizeof(path), "/proc/%ld/status", id);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Tgid:", 5)) {
			*pid = (uint32_t)strtoul(line + 5, NULL, 10);
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

int cli__add_pids(uint32_t *pids, size_t *n_pids, size_t max, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long id = strtol(tok, &end, 10);
		uint32_t pid;

		if (*end || id <= 0 || id > INT_MAX) {
			pr_err("-p: '%s' is not a process id", tok);
			err = -EINVAL;
			break;
		}
		if (process_of(id, &pid)) {
			pr_err("-p %ld: no such process", id);
			err = -ESRCH;
			break;
		}
		if (*n_pids == max) {
			pr_err("-p: at most %zu processes", max);
			err = -E2BIG;
			break;
		}
		pids[(*n_pids)++] = pid;
	}
	free(copy);
	return err;
}

int cli__parse_symbol_cache_mb(const char *arg, size_t *bytes)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (end == arg || *end || v < 1 || v > 1024 * 1024) {
		pr_err("--symbol-cache-mb: '%s' is not a size between 1 and 1048576", arg);
		return -EINVAL;
	}
	*bytes = (size_t)v << 20;
	return 0;
}

int cli__parse_frequency_max(const char *arg, uint32_t max_hz, const char *max_why, uint32_t *hz)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (end == arg || *end || errno || v < 1) {
		pr_err("-F: '%s' is not a frequency (a whole number of Hz, at least 1)", arg);
		return -EINVAL;
	}
	if ((unsigned long)v > max_hz) {
		pr_err("-F: %ld Hz is above the maximum of %u Hz (%s)", v, max_hz, max_why);
		return -ERANGE;
	}
	*hz = (uint32_t)v;
	return 0;
}

int cli__parse_frequency(const char *arg, uint32_t *hz)
{
	char *text = NULL, *end, why[160];
	uint32_t max = CLI_MAX_FREQUENCY_HZ;
	size_t len;
	long kmax;

	snprintf(why, sizeof(why), "omniprof's own limit");
	/* The kernel lowers this when sampling interrupts take too long: respect it. */
	if (!read_file("/proc/sys/kernel/perf_event_max_sample_rate", &text, &len)) {
		kmax = strtol(text, &end, 10);
		if (end != text && kmax >= 1 && kmax < (long)max) {
			max = (uint32_t)kmax;
			snprintf(why, sizeof(why), "kernel.perf_event_max_sample_rate");
		}
		free(text);
	}
	return cli__parse_frequency_max(arg, max, why, hz);
}

int cli__parse_offcpu(const char *arg, double deflt, uint64_t *threshold)
{
	double p = deflt;
	char *end;

	if (arg) {
		errno = 0;
		p = strtod(arg, &end);
		/* Below 1e-6 a wait would be counted a million times over: too coarse to mean much.
		 */
		if (end == arg || *end || errno || !(p >= 1e-6 && p <= 1)) {
			pr_err("--off-cpu: '%s' is not a fraction between 0.000001 and 1", arg);
			return -EINVAL;
		}
	}
	*threshold = offcpu__threshold(p);
	return 0;
}
