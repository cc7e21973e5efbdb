/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The command line of record, agent and symbolize: one table of the options
 * they share (-F, -p, --no-kernel, --symbol-cache-mb, --demangle,
 * --debug-dir, --no-debuginfod, -v), parsed and described in one place, and
 * each command's list of the options it takes (shared ones by key, its own
 * ones in full), from which both getopt's tables and the usage are made.
 */
#ifndef OMNIPROF_CLI_OPTIONS_H
#define OMNIPROF_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "symbol/symbolizer.h"

/* Why 20 Hz: it is what the reference agent of this field samples at, so profiles compare
 * one to one; at 20 samples per second per busy CPU a minute gives 1,200 samples, enough
 * to rank hot functions, while the kernel side costs well under 0.1% of a CPU. */
#define CLI_DEFAULT_FREQUENCY_HZ 20
#define CLI_MAX_PIDS		 4096
#define CLI_MAX_DEBUG_DIRS	 64
#define CLI_MAX_CPUS		 4096
/* --max-frames: user frames walked per sample by default; at most OP_MAX_USER_FRAMES. */
#define CLI_DEFAULT_MAX_FRAMES 256
/* Probabilistic profiling as the OpenTelemetry eBPF profiler defines it: every
 * interval a draw in [0, 100) below the threshold turns sampling on for that
 * interval, else off. 100 (the default) is always on; its default interval is 1 min. */
#define CLI_PROB_THRESHOLD_MAX	     100
#define CLI_DEFAULT_PROB_INTERVAL_MS 60000

/* Keys of the shared options: what getopt returns (a letter is also the short name). */
enum cli_key {
	CLI_KEY_FREQUENCY = 'F',
	CLI_KEY_PID = 'p',
	CLI_KEY_VERBOSE = 'v',
	CLI_KEY_NO_KERNEL = 1000,
	CLI_KEY_SYMBOL_CACHE_MB,
	CLI_KEY_DEMANGLE,
	CLI_KEY_DEBUG_DIR,
	CLI_KEY_NO_DEBUGINFOD,
	CLI_KEY_CONFIG,
	CLI_KEY_PROB_THRESHOLD,
	CLI_KEY_PROB_INTERVAL,
	CLI_KEY_COMM,
	CLI_KEY_CGROUP,
	CLI_KEY_CONTAINER,
	CLI_KEY_CPU,
	CLI_KEY_MAX_FRAMES,
	CLI_KEY_TABLE_CACHE,
	CLI_KEY_OWN = 2000, /* a command's own long-only options take keys from here */
};

/* What the shared options set. */
struct cli_common {
	uint32_t frequency_hz;
	uint32_t pids[CLI_MAX_PIDS];
	size_t n_pids; /* 0: the whole system */
	bool kernel_stacks;
	struct symbolizer_opts sym; /* sym.debug_dirs points at debug_dirs */
	const char *debug_dirs[CLI_MAX_DEBUG_DIRS];
	/* What is profiled (each NULL / 0 when not given; a sample passes every one given). */
	const char *comm;	 /* --comm: an extended regular expression on the process name */
	const char *cgroup;	 /* --cgroup: a cgroup v2 folder, its descendants included */
	const char *container;	 /* --container: a container id prefix (lowercase hex) */
	int cpus[CLI_MAX_CPUS];	 /* --cpu */
	size_t n_cpus;		 /* 0: every online CPU */
	uint32_t max_frames;	 /* --max-frames */
	const char *table_cache; /* --table-cache: a folder or "off"; NULL: the default */
	uint32_t prob_threshold; /* --probabilistic-threshold, 1..100 */
	uint32_t prob_interval_ms;
	/* The --config file's text: option values point into it. Owned (cli_common__clear). */
	char *config_text;
	/* Where the value being applied comes from (enum cli_source), and where the
	 * repeatable shared options' values came from: a higher source replaces them. */
	int source, pids_source, debug_dirs_source;
};

/*
 * Where a value comes from, lowest precedence first: the --config file, the
 * environment (the command's env hook), the command line. Each is applied in
 * that order, so a later one overrides a single-valued option; a repeatable
 * one (-p, --debug-dir) given by a higher source replaces the lower one's
 * list (a command's own repeatables say how they merge).
 */
enum cli_source {
	CLI_SOURCE_FILE,
	CLI_SOURCE_ENV,
	CLI_SOURCE_FLAG,
};

/*
 * One option of a command. A shared option is named by its key alone
 * ({.key = CLI_KEY_PID}); name, arg and help then come from the shared table,
 * help unless the command gives its own wording.
 */
struct cli_option {
	int key;	  /* a letter (its short name too), an enum cli_key, or >= CLI_KEY_OWN */
	const char *name; /* long name */
	const char *arg;  /* the argument's name in the usage; NULL: a flag */
	/* Lines separated by '\n'. For a shared option "%s" stands for its default. */
	const char *help;
	bool hidden;   /* test hooks: parsed, not in the usage */
	bool optional; /* the argument may be left out (--name or --name=ARG); own gets NULL */
};

/* The options that choose what is profiled and how much, in the usage's order, for a
 * command's table: CLI_TARGET_OPTIONS, ... */
#define CLI_TARGET_OPTIONS                                                                         \
	{.key = CLI_KEY_COMM}, {.key = CLI_KEY_CGROUP}, {.key = CLI_KEY_CONTAINER},                \
	    {.key = CLI_KEY_CPU}, {.key = CLI_KEY_MAX_FRAMES}, {.key = CLI_KEY_PROB_THRESHOLD},    \
	{                                                                                          \
		.key = CLI_KEY_PROB_INTERVAL                                                       \
	}

struct cli_command {
	const char *name;     /* "record" */
	const char *synopsis; /* after "usage: omniprof NAME ", lines separated by '\n' */
	const char *intro;    /* a paragraph between the synopsis and the options, or NULL */
	const struct cli_option *options; /* in the usage's order */
	size_t n_options;
	const char *footer;	   /* a paragraph after the options, or NULL */
	bool operands_end_options; /* "cmd ARGS...": options stop at the first operand */
	/*
	 * A command's own option: 0, or -errno after one clear line. A flag (no
	 * argument) gets arg NULL from the command line and "true" or "false" from
	 * the file or the environment: cli__flag_on(arg) says which.
	 */
	int (*own)(void *ctx, int key, const char *arg);
	/* Settings from the environment, or NULL: applied with cli__set() between
	 * the config file and the command line. 0, or -errno after one clear line. */
	int (*env)(const struct cli_command *cmd, struct cli_common *c, void *ctx);
};

/* Defaults of the shared options (debuginfod: whether servers are asked unless told not to). */
void cli_common__init(struct cli_common *c, bool debuginfod);
/* Frees what c owns (the config file's text: values taken from it die with it). */
void cli_common__clear(struct cli_common *c);

/*
 * While an option handler runs: where its value comes from, "FILE:LINE" or
 * the environment variable's name, or "" for the command line. A static
 * buffer: copy it to keep it.
 */
const char *cli__origin(void);

/* A flag's value: NULL (the command line) or a true word ("true", "yes", "on", "1"). */
bool cli__flag_on(const char *arg);

/*
 * Applies one option (key) with value from outside the command line (the
 * environment hook; origin names it in messages, e.g. "OTEL_SERVICE_NAME").
 * Keys the command does not list go to its own() as they are (settings that
 * only the environment gives). 0, or -errno after one clear line.
 */
int cli__set(const struct cli_command *cmd, struct cli_common *c, void *ctx, int key,
	     const char *value, const char *origin);

/*
 * Parses argv (argv[0] is the command's name) into c and, through cmd->own,
 * ctx: first the file of --config FILE when the command takes it (lines
 * "NAME = VALUE" named after the long options; '#' starts a comment; a flag
 * is "NAME = true" or "false"; -v is "verbose = N"; a repeatable option may
 * come on several lines), then cmd->env, then the command line. 0 and *first_arg (the index of the
 * first operand), 1 when --help printed the usage, or -errno after one clear line (the usage
 * follows on stderr for an unknown option).
 */
int cli__parse(const struct cli_command *cmd, int argc, char **argv, struct cli_common *c,
	       void *ctx, int *first_arg);

/* --probabilistic-interval: a duration such as "60", "1m", "30s" or "500ms" (100 ms to
 * 1 h). 0 and *ms, or -EINVAL after one clear line. */
int cli__parse_duration_ms(const char *opt, const char *arg, uint32_t *ms);
/* --cpu: "0-3,5" into cpus (sorted, distinct, each below CLI_MAX_CPUS). 0 and *n, or
 * -EINVAL after one clear line. */
int cli__parse_cpus(const char *arg, int *cpus, size_t *n);

struct session_opts;
/* Copies what the shared options set for sampling into s (-F, -p, --no-kernel, the
 * targeting, --max-frames, probabilistic profiling, symbols). */
void cli_common__to_session(const struct cli_common *c, struct session_opts *s);

/* Prints cmd's usage. */
void cli__usage(const struct cli_command *cmd, FILE *f);

#endif
