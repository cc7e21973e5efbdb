// SPDX-License-Identifier: Apache-2.0
#include "cli/options.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"
#include "symbol/demangle.h"
#include "symbol/symbol_cache.h"
#include "util/log.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

/* Options one command may take (its own and the shared ones). */
#define CLI_MAX_OPTIONS 64
/* Where an option's help starts in the usage. */
#define HELP_COLUMN 28

/* The shared options: their one name, argument and wording. */
static const struct cli_option shared[] = {
    {.key = CLI_KEY_FREQUENCY,
     .name = "frequency",
     .arg = "HZ",
     .help = "samples per second per CPU (default %s, at most\n" STR(
	 CLI_MAX_FREQUENCY_HZ) " and kernel.perf_event_max_sample_rate)"},
    {.key = CLI_KEY_PID,
     .name = "pid",
     .arg = "PID",
     .help = "profile only this process and its threads\n"
	     "(repeatable, or comma-separated); default: the\n"
	     "whole system"},
    {.key = CLI_KEY_NO_KERNEL,
     .name = "no-kernel",
     .arg = NULL,
     .help = "do not record kernel frames"},
    {.key = CLI_KEY_DEMANGLE,
     .name = "demangle",
     .arg = "MODE",
     .help = "C++/Rust names: none, simplified, templates or full\n(default %s)"},
    {.key = CLI_KEY_DEBUG_DIR,
     .name = "debug-dir",
     .arg = "DIR",
     .help = "also look for separate debug files under DIR\n(repeatable; searched before "
	     "/usr/lib/debug)"},
    {.key = CLI_KEY_NO_DEBUGINFOD,
     .name = "no-debuginfod",
     .arg = NULL,
     .help = "do not ask debuginfod servers even if\nDEBUGINFOD_URLS is set"},
    {.key = CLI_KEY_SYMBOL_CACHE_MB,
     .name = "symbol-cache-mb",
     .arg = "MB",
     .help = "memory bound of the symbol cache (default %s)"},
    {.key = CLI_KEY_VERBOSE,
     .name = "verbose",
     .arg = NULL,
     .help = "more output (-vv: debug output)"},
};

static const struct cli_option *shared_option(int key)
{
	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
		if (shared[i].key == key)
			return &shared[i];
	return NULL;
}

/* The text "%s" stands for in a shared option's help. */
static const char *shared_default(int key)
{
	switch (key) {
	case CLI_KEY_FREQUENCY:
		return STR(CLI_DEFAULT_FREQUENCY_HZ);
	case CLI_KEY_DEMANGLE:
		return demangle__mode_name(DEMANGLE_DEFAULT);
	case CLI_KEY_SYMBOL_CACHE_MB:
		return STR(SYMBOL_CACHE_DEFAULT_MB);
	default:
		return "";
	}
}

void cli_common__init(struct cli_common *c, bool debuginfod)
{
	c->frequency_hz = CLI_DEFAULT_FREQUENCY_HZ;
	c->n_pids = 0;
	c->kernel_stacks = true;
	memset(&c->sym, 0, sizeof(c->sym));
	c->sym.demangle = DEMANGLE_DEFAULT;
	c->sym.debuginfod = debuginfod;
	c->sym.debug_dirs = c->debug_dirs;
}

static int parse_shared(struct cli_common *c, int key, const char *arg)
{
	switch (key) {
	case CLI_KEY_FREQUENCY:
		return cli__parse_frequency(arg, &c->frequency_hz) ? -EINVAL : 0;
	case CLI_KEY_PID:
		return cli__add_pids(c->pids, &c->n_pids, CLI_MAX_PIDS, arg) ? -EINVAL : 0;
	case CLI_KEY_NO_KERNEL:
		c->kernel_stacks = false;
		return 0;
	case CLI_KEY_SYMBOL_CACHE_MB:
		return cli__parse_symbol_cache_mb(arg, &c->sym.cache_bytes) ? -EINVAL : 0;
	case CLI_KEY_DEMANGLE:
		if (demangle__parse_mode(arg, &c->sym.demangle)) {
			pr_err("--demangle: '%s' is not none, simplified, templates or full", arg);
			return -EINVAL;
		}
		return 0;
	case CLI_KEY_DEBUG_DIR:
		if (c->sym.n_debug_dirs == CLI_MAX_DEBUG_DIRS) {
			pr_err("--debug-dir: at most %d folders", CLI_MAX_DEBUG_DIRS);
			return -EINVAL;
		}
		c->debug_dirs[c->sym.n_debug_dirs++] = arg;
		return 0;
	case CLI_KEY_NO_DEBUGINFOD:
		c->sym.debuginfod = false;
		return 0;
	case CLI_KEY_VERBOSE:
		log_verbosity++;
		return 0;
	}
	return -EINVAL;
}

/* A command's row as used: a shared key's name and argument from the table, its help
 * from the table unless the command words it itself. */
static struct cli_option resolve(const struct cli_option *o)
{
	const struct cli_option *s = shared_option(o->key);
	struct cli_option r = *o;

	if (s) {
		r.name = s->name;
		r.arg = s->arg;
		if (!r.help)
			r.help = s->help;
	}
	return r;
}

int cli__parse(const struct cli_command *cmd, int argc, char **argv, struct cli_common *c,
	       void *ctx, int *first_arg)
{
	struct option longopts[CLI_MAX_OPTIONS + 2];
	char shortopts[2 * CLI_MAX_OPTIONS + 2];
	size_t n = 0, ns = 0;
	int key, err;

	if (cmd->n_options > CLI_MAX_OPTIONS)
		return -E2BIG;
	for (size_t i = 0; i < cmd->n_options; i++) {
		struct cli_option o = resolve(&cmd->options[i]);

		longopts[n++] = (struct option){o.name,
						!o.arg	     ? no_argument
						: o.optional ? optional_argument
							     : required_argument,
						NULL, o.key};
		if (o.key < 256) {
			shortopts[ns++] = (char)o.key;
			if (o.arg)
				shortopts[ns++] = ':';
		}
	}
	longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
	longopts[n] = (struct option){NULL, 0, NULL, 0};
	shortopts[ns++] = 'h';
	shortopts[ns] = '\0';

	optind = 1;
	while ((key = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (key == 'h') {
			cli__usage(cmd, stdout);
			return 1;
		}
		if (key == '?' || key == ':') {
			cli__usage(cmd, stderr);
			return -EINVAL;
		}
		err =
		    shared_option(key) ? parse_shared(c, key, optarg) : cmd->own(ctx, key, optarg);
		if (err)
			return err < 0 ? err : -EINVAL;
	}
	*first_arg = optind;
	return 0;
}

/* Prints text's lines, the first where the cursor is, the others indented by indent;
 * "%s" (shared options only) replaced by deflt. */
static void print_lines(FILE *f, const char *text, const char *deflt, int indent)
{
	for (const char *p = text; *p; p++) {
		if (deflt && p[0] == '%' && p[1] == 's') {
			fputs(deflt, f);
			p++;
		} else if (*p == '\n') {
			fprintf(f, "\n%*s", indent, "");
		} else {
			fputc(*p, f);
		}
	}
	fputc('\n', f);
}

void cli__usage(const struct cli_command *cmd, FILE *f)
{
	int indent = fprintf(f, "usage: omniprof %s ", cmd->name);

	print_lines(f, cmd->synopsis, NULL, indent);
	if (cmd->intro) {
		fputc('\n', f);
		print_lines(f, cmd->intro, NULL, 0);
	}
	fputc('\n', f);
	for (size_t i = 0; i < cmd->n_options; i++) {
		struct cli_option o = resolve(&cmd->options[i]);
		int len;

		if (o.hidden)
			continue;
		if (o.key < 256)
			len = fprintf(f, "  -%c, --%s%s%s", o.key, o.name, o.arg ? " " : "",
				      o.arg ? o.arg : "");
		else if (o.optional)
			len = fprintf(f, "      --%s[=%s]", o.name, o.arg);
		else
			len = fprintf(f, "      --%s%s%s", o.name, o.arg ? " " : "",
				      o.arg ? o.arg : "");
		if (len > HELP_COLUMN - 2)
			fprintf(f, "\n%*s", HELP_COLUMN, "");
		else
			fprintf(f, "%*s", HELP_COLUMN - len, "");
		print_lines(f, o.help, shared_option(o.key) ? shared_default(o.key) : NULL,
			    HELP_COLUMN);
	}
	if (cmd->footer) {
		fputc('\n', f);
		print_lines(f, cmd->footer, NULL, 0);
	}
}
