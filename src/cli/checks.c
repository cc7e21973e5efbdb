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

#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif

static bool has_cap(const struct __user_cap_data_struct data[2], int cap)
{
	return data[cap / 32].effective & (1u << (cap % 32));
}

/* An integer sysctl under /proc/sys, or -1 when unreadable. */
static int sysctl_int(const char *path)
{
	char *text = NULL;
	size_t len;
	int v = -1;

	if (!read_file(path, &text, &len)) {
		v = atoi(text);
		free(text);
	}
	return v;
}

bool cli__kernel_symbols_hidden(bool has_syslog, int kptr_restrict, int perf_paranoid)
{
	/* The kernel's kallsyms_show_value(): 0 shows them to perf users (paranoid <= 1)
	 * and to CAP_SYSLOG, 1 to CAP_SYSLOG only, 2 to nobody. */
	if (kptr_restrict >= 2)
		return true;
	if (kptr_restrict == 0 && perf_paranoid >= 0 && perf_paranoid <= 1)
		return false;
	return !has_syslog;
}

/*
 * Loading and sampling need CAP_BPF + CAP_PERFMON only, but complete stacks
 * and names need to read other processes: say, once, what is missing and
 * what it costs, rather than a profile cut short without a word.
 */
static void explain_missing(const struct __user_cap_data_struct data[2])
{
	int kptr = sysctl_int("/proc/sys/kernel/kptr_restrict");
	int paranoid = sysctl_int("/proc/sys/kernel/perf_event_paranoid");
	bool any = false;

	if (!has_cap(data, CAP_SYS_PTRACE)) {
		pr_warn("without CAP_SYS_PTRACE other processes' maps, files and memory "
			"(/proc/PID/maps, /proc/PID/root, process_vm_readv) cannot be read: "
			"their user stacks end after a few frame-pointer steps (marked "
			"truncated) and their frames stay unnamed");
		any = true;
	}
	if (!has_cap(data, CAP_DAC_READ_SEARCH) && !has_cap(data, CAP_DAC_OVERRIDE)) {
		pr_warn("without CAP_DAC_READ_SEARCH executables and libraries this user "
			"may not read give no unwind tables nor symbols");
		any = true;
	}
	if (!has_cap(data, CAP_SYS_ADMIN) && !has_cap(data, CAP_CHECKPOINT_RESTORE)) {
		pr_warn("without CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE) deleted and memfd "
			"executables (/proc/PID/map_files) cannot be opened");
		any = true;
	}
	if (cli__kernel_symbols_hidden(has_cap(data, CAP_SYSLOG), kptr, paranoid)) {
		if (kptr >= 2)
			pr_warn("kernel.kptr_restrict=2 hides kernel symbols from everyone: "
				"set it to 1 (with CAP_SYSLOG) or 0 to name kernel frames");
		else
			pr_warn("without CAP_SYSLOG kernel frames stay unnamed "
				"(kernel.kptr_restrict=%d, kernel.perf_event_paranoid=%d)%s",
				kptr, paranoid,
				kptr == 0 ? "; or set kernel.perf_event_paranoid to 1 or less"
					  : "");
		any = true;
	}
	if (any)
		pr_warn("for complete stacks and names run omniprof as root with every "
			"capability (sudo), or grant the ones above");
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
	if (has_cap(data, CAP_SYS_ADMIN) ||
	    (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON))) {
		explain_missing(data);
		return 0;
	}
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
