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

struct cli_command {
	const char *name;     /* "record" */
	const char *synopsis; /* after "usage: omniprof NAME ", lines separated by '\n' */
	const char *intro;    /* a paragraph between the synopsis and the options, or NULL */
	const struct cli_option *options; /* in the usage's order */
	size_t n_options;
	const char *footer; /* a paragraph after the options, or NULL */
	/* A command's own option: 0, or -errno after one clear line. */
	int (*own)(void *ctx, int key, const char *arg);
};

/* Defaults of the shared options (debuginfod: whether servers are asked unless told not to). */
void cli_common__init(struct cli_common *c, bool debuginfod);

/*
 * Parses argv (argv[0] is the command's name) into c and, through cmd->own,
 * ctx. 0 and *first_arg (the index of the first operand), 1 when --help
 * printed the usage, or -errno after one clear line (the usage follows on
 * stderr for an unknown option).
 */
int cli__parse(const struct cli_command *cmd, int argc, char **argv, struct cli_common *c,
	       void *ctx, int *first_arg);

/* Prints cmd's usage. */
void cli__usage(const struct cli_command *cmd, FILE *f);

#endif
