// SPDX-License-Identifier: Apache-2.0
#include "cli/options.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/session.h"
#include "symbol/demangle.h"
#include "omniprof/abi.h"
#include "symbol/symbol_cache.h"
#include "unwind/table_cache.h"
#include "util/log.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

/* Options one command may take (its own and the shared ones). */
#define CLI_MAX_OPTIONS 64
/* Where an option's help starts in the usage. */
#define HELP_COLUMN 28
/* A config file is a few lines; more is a mistake (the wrong file). */
#define CONFIG_MAX_BYTES (1u << 20)

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
    {.key = CLI_KEY_TABLE_CACHE,
     .name = "table-cache",
     .arg = "DIR|off",
     .help = "keep built unwind tables in DIR across runs\n"
	     "(default %s; created 0700; off: none)"},
    {.key = CLI_KEY_COMM,
     .name = "comm",
     .arg = "REGEX",
     .help = "only processes whose name (comm, 15 characters)\n"
	     "matches this extended regular expression"},
    {.key = CLI_KEY_CGROUP,
     .name = "cgroup",
     .arg = "PATH",
     .help = "only tasks in this cgroup v2 folder or below it\n"
	     "(absolute, or relative to the cgroup2 mount)"},
    {.key = CLI_KEY_CONTAINER,
     .name = "container",
     .arg = "ID",
     .help = "only processes of the container whose id starts\nwith ID"},
    {.key = CLI_KEY_CPU,
     .name = "cpu",
     .arg = "LIST",
     .help = "only sample these CPUs (e.g. 0-3,6)"},
    {.key = CLI_KEY_MAX_FRAMES,
     .name = "max-frames",
     .arg = "N",
     .help = "user frames walked per stack (default %s, at most\n" STR(
	 OP_MAX_USER_FRAMES) "); deeper stacks are marked truncated"},
    {.key = CLI_KEY_PROB_THRESHOLD,
     .name = "probabilistic-threshold",
     .arg = "N",
     .help = "each interval, sample with probability N% (1-100,\ndefault %s: always)"},
    {.key = CLI_KEY_PROB_INTERVAL,
     .name = "probabilistic-interval",
     .arg = "D",
     .help = "how often that draw is made (e.g. 1m, 30s, 500ms;\ndefault %s)"},
    {.key = CLI_KEY_VERBOSE,
     .name = "verbose",
     .arg = NULL,
     .help = "more output (-vv: debug output)"},
    {.key = CLI_KEY_CONFIG,
     .name = "config",
     .arg = "FILE",
     .help = "read options from FILE: NAME = VALUE lines named\n"
	     "after the long options; the command line and the\n"
	     "environment override it"},
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
	case CLI_KEY_MAX_FRAMES:
		return STR(CLI_DEFAULT_MAX_FRAMES);
	case CLI_KEY_TABLE_CACHE:
		return TABLE_CACHE_DEFAULT_DIR;
	case CLI_KEY_PROB_THRESHOLD:
		return STR(CLI_PROB_THRESHOLD_MAX);
	case CLI_KEY_PROB_INTERVAL:
		return "1m";
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
	c->comm = c->cgroup = c->container = NULL;
	c->n_cpus = 0;
	c->max_frames = CLI_DEFAULT_MAX_FRAMES;
	c->table_cache = NULL;
	/* Debug files' inflated copies live beside the tables (--table-cache off: none). */
	c->sym.inflate_dir = TABLE_CACHE_DEFAULT_DIR;
	c->prob_threshold = CLI_PROB_THRESHOLD_MAX;
	c->prob_interval_ms = CLI_DEFAULT_PROB_INTERVAL_MS;
	c->config_text = NULL;
	c->source = c->pids_source = c->debug_dirs_source = CLI_SOURCE_FLAG;
}

void cli_common__to_session(const struct cli_common *c, struct session_opts *s)
{
	s->frequency_hz = c->frequency_hz;
	s->kernel_stacks = c->kernel_stacks;
	s->pids = c->pids;
	s->n_pids = c->n_pids;
	s->comm = c->comm;
	s->cgroup = c->cgroup;
	s->container = c->container;
	s->cpus = c->cpus;
	s->n_cpus = c->n_cpus;
	s->max_frames = c->max_frames;
	s->table_cache = c->table_cache;
	s->prob_threshold = c->prob_threshold;
	s->prob_interval_ns = (uint64_t)c->prob_interval_ms * 1000000ull;
	s->sym = &c->sym;
}

int cli__parse_duration_ms(const char *opt, const char *arg, uint32_t *ms)
{
	char *end;
	double v, scale = 1000;

	errno = 0;
	v = strtod(arg, &end);
	if (end != arg && !errno) {
		if (!strcmp(end, "ms"))
			scale = 1;
		else if (!strcmp(end, "s") || !*end)
			scale = 1000;
		else if (!strcmp(end, "m"))
			scale = 60000;
		else if (!strcmp(end, "h"))
			scale = 3600000;
		else
			end = NULL;
		if (end && v * scale >= 100 && v * scale <= 3600000) {
			*ms = (uint32_t)(v * scale + 0.5);
			return 0;
		}
	}
	pr_err("%s: '%s' is not a duration between 100ms and 1h (e.g. 1m, 30s, 500ms)", opt, arg);
	return -EINVAL;
}

int cli__parse_cpus(const char *arg, int *cpus, size_t *n)
{
	bool seen[CLI_MAX_CPUS] = {false};
	const char *p = arg;
	size_t k = 0;

	/* "A", "A-B", comma-separated: each part checked, so "1,,2" or "3-1" is refused. */
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi;

		if (end == p || lo < 0 || lo >= CLI_MAX_CPUS)
			goto bad;
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p || hi < lo || hi >= CLI_MAX_CPUS)
				goto bad;
		}
		for (long c = lo; c <= hi; c++)
			seen[c] = true;
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	for (int c = 0; c < CLI_MAX_CPUS; c++)
		if (seen[c])
			cpus[k++] = c;
	if (!k)
		goto bad;
	*n = k;
	return 0;
bad:
	pr_err("--cpu: '%s' is not a CPU list such as 0-3,6 (CPUs below %d)", arg, CLI_MAX_CPUS);
	return -EINVAL;
}

/* Whether id is a container id prefix: 1 to 64 lowercase hex digits. */
static bool container_prefix_ok(const char *id)
{
	size_t n = strspn(id, "0123456789abcdef");

	return n && n <= 64 && !id[n];
}

void cli_common__clear(struct cli_common *c)
{
	if (!c)
		return;
	free(c->config_text);
	c->config_text = NULL;
}

bool cli__flag_on(const char *arg)
{
	return !arg || !strcasecmp(arg, "true") || !strcasecmp(arg, "yes") ||
	       !strcasecmp(arg, "on") || !strcmp(arg, "1");
}

static bool flag_word(const char *arg)
{
	return cli__flag_on(arg) || !strcasecmp(arg, "false") || !strcasecmp(arg, "no") ||
	       !strcasecmp(arg, "off") || !strcmp(arg, "0");
}

static int parse_shared(struct cli_common *c, int key, const char *arg)
{
	switch (key) {
	case CLI_KEY_FREQUENCY:
		return cli__parse_frequency(arg, &c->frequency_hz) ? -EINVAL : 0;
	case CLI_KEY_PID:
		if (c->pids_source < c->source)
			c->n_pids = 0; /* a higher source's list replaces a lower one's */
		c->pids_source = c->source;
		return cli__add_pids(c->pids, &c->n_pids, CLI_MAX_PIDS, arg) ? -EINVAL : 0;
	case CLI_KEY_NO_KERNEL:
		c->kernel_stacks = !cli__flag_on(arg);
		return 0;
	case CLI_KEY_SYMBOL_CACHE_MB:
		return cli__parse_symbol_cache_mb(arg, &c->sym.cache_bytes) ? -EINVAL : 0;
	case CLI_KEY_TABLE_CACHE:
		/* A relative folder would depend on where the agent happens to start. */
		if (strcmp(arg, "off") && arg[0] != '/') {
			pr_err("--table-cache: '%s' is neither an absolute folder nor off", arg);
			return -EINVAL;
		}
		c->table_cache = arg;
		c->sym.inflate_dir = strcmp(arg, "off") ? arg : NULL;
		return 0;
	case CLI_KEY_DEMANGLE:
		if (demangle__parse_mode(arg, &c->sym.demangle)) {
			pr_err("--demangle: '%s' is not none, simplified, templates or full", arg);
			return -EINVAL;
		}
		return 0;
	case CLI_KEY_DEBUG_DIR:
		if (c->debug_dirs_source < c->source)
			c->sym.n_debug_dirs = 0;
		c->debug_dirs_source = c->source;
		if (c->sym.n_debug_dirs == CLI_MAX_DEBUG_DIRS) {
			pr_err("--debug-dir: at most %d folders", CLI_MAX_DEBUG_DIRS);
			return -EINVAL;
		}
		c->debug_dirs[c->sym.n_debug_dirs++] = arg;
		return 0;
	case CLI_KEY_NO_DEBUGINFOD:
		if (cli__flag_on(arg))
			c->sym.debuginfod = false;
		return 0;
	case CLI_KEY_VERBOSE:
		log_verbosity++;
		return 0;
	case CLI_KEY_CONFIG:
		return 0; /* read before everything else */
	case CLI_KEY_COMM: {
		regex_t re;
		int rc = regcomp(&re, arg, REG_EXTENDED | REG_NOSUB);

		if (rc) {
			char why[128];

			regerror(rc, &re, why, sizeof(why));
			pr_err("--comm: '%s' is not an extended regular expression: %s", arg, why);
			return -EINVAL;
		}
		regfree(&re);
		c->comm = arg;
		return 0;
	}
	case CLI_KEY_CGROUP:
		if (!*arg) {
			pr_err("--cgroup: an empty path");
			return -EINVAL;
		}
		c->cgroup = arg;
		return 0;
	case CLI_KEY_CONTAINER:
		if (!container_prefix_ok(arg)) {
			pr_err("--container: '%s' is not a container id (1 to 64 lowercase hex "
			       "digits)",
			       arg);
			return -EINVAL;
		}
		c->container = arg;
		return 0;
	case CLI_KEY_CPU:
		return cli__parse_cpus(arg, c->cpus, &c->n_cpus);
	case CLI_KEY_MAX_FRAMES: {
		char *end;
		long v;

		errno = 0;
		v = strtol(arg, &end, 10);
		if (end == arg || *end || errno || v < 1 || v > OP_MAX_USER_FRAMES) {
			pr_err("--max-frames: '%s' is not between 1 and %d", arg,
			       OP_MAX_USER_FRAMES);
			return -EINVAL;
		}
		c->max_frames = (uint32_t)v;
		return 0;
	}
	case CLI_KEY_PROB_THRESHOLD: {
		char *end;
		long v;

		errno = 0;
		v = strtol(arg, &end, 10);
		if (end == arg || *end || errno || v < 1 || v > CLI_PROB_THRESHOLD_MAX) {
			pr_err("--probabilistic-threshold: '%s' is not between 1 and %d", arg,
			       CLI_PROB_THRESHOLD_MAX);
			return -EINVAL;
		}
		c->prob_threshold = (uint32_t)v;
		return 0;
	}
	case CLI_KEY_PROB_INTERVAL:
		return cli__parse_duration_ms("--probabilistic-interval", arg,
					      &c->prob_interval_ms);
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

/* Where the value being applied comes from ("" on the command line), and the same
 * with ": " for error lines. Parsing happens on one thread, before any other starts. */
static char origin_text[256], origin_context[260];

static void set_origin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void set_origin(const char *fmt, ...)
{
	va_list ap;

	if (!fmt) {
		origin_text[0] = '\0';
		log__set_context(NULL);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(origin_text, sizeof(origin_text), fmt, ap);
	va_end(ap);
	snprintf(origin_context, sizeof(origin_context), "%s: ", origin_text);
	log__set_context(origin_context);
}

const char *cli__origin(void)
{
	return origin_text;
}

/* The command's row named name (a long option), resolved; NULL when it has none. */
static bool find_by_name(const struct cli_command *cmd, const char *name, struct cli_option *out)
{
	for (size_t i = 0; i < cmd->n_options; i++) {
		struct cli_option o = resolve(&cmd->options[i]);

		if (!o.hidden && o.name && !strcmp(o.name, name)) {
			*out = o;
			return true;
		}
	}
	return false;
}

static bool takes(const struct cli_command *cmd, int key)
{
	for (size_t i = 0; i < cmd->n_options; i++)
		if (cmd->options[i].key == key)
			return true;
	return false;
}

static int apply(const struct cli_command *cmd, struct cli_common *c, void *ctx, int key,
		 const char *arg)
{
	return shared_option(key) ? parse_shared(c, key, arg) : cmd->own(ctx, key, arg);
}

int cli__set(const struct cli_command *cmd, struct cli_common *c, void *ctx, int key,
	     const char *value, const char *origin)
{
	int saved = c->source, err;

	set_origin("%s", origin);
	c->source = CLI_SOURCE_ENV;
	err = apply(cmd, c, ctx, key, value);
	set_origin(NULL);
	c->source = saved;
	return err < 0 ? err : err ? -EINVAL : 0;
}

/* Whitespace on both ends of [*p, *end) trimmed. */
static void trim(char **p, char **end)
{
	while (*p < *end && isspace((unsigned char)**p))
		(*p)++;
	while (*end > *p && isspace((unsigned char)(*end)[-1]))
		(*end)--;
}

/*
 * Reads the config file at path into c->config_text and applies its lines.
 * The file is the administrator's own (a Kubernetes ConfigMap is mounted
 * through symbolic links, so they are followed); it must be a regular file
 * of at most CONFIG_MAX_BYTES. 0, or -errno after one clear line.
 */
static int load_config(const struct cli_command *cmd, struct cli_common *c, void *ctx,
		       const char *path)
{
	struct stat st;
	char *text = NULL, *line, *next;
	ssize_t got;
	size_t len = 0;
	int fd, err = 0, lineno = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX_BYTES) {
		err = fd < 0 ? -errno : -EINVAL;
		pr_err("--config: cannot read %s: %s", path,
		       fd < 0 ? strerror(errno)
			      : (S_ISREG(st.st_mode) ? "larger than 1 MiB" : "not a regular file"));
		goto cleanup;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		err = -ENOMEM;
		pr_err("out of memory");
		goto cleanup;
	}
	while (len < (size_t)st.st_size &&
	       (got = read(fd, text + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)got;
	text[len] = '\0';
	if (strlen(text) != len) {
		err = -EINVAL;
		pr_err("--config: %s holds a NUL byte: not a config file", path);
		goto cleanup;
	}
	free(c->config_text);
	c->config_text = text;
	c->source = CLI_SOURCE_FILE;
	for (line = text; line && !err; line = next) {
		char *end, *eq, *name, *name_end, *value, *value_end;
		struct cli_option o;

		lineno++;
		next = strchr(line, '\n');
		end = next ? next : line + strlen(line);
		if (next)
			*next++ = '\0';
		if ((eq = strchr(line, '#')) && (!strchr(line, '=') || eq < strchr(line, '=')))
			end = eq; /* a comment line (a '#' after '=' belongs to the value) */
		trim(&line, &end);
		if (line == end)
			continue;
		*end = '\0';
		eq = strchr(line, '=');
		if (!eq) {
			err = -EINVAL;
			pr_err("%s:%d: not NAME = VALUE", path, lineno);
			break;
		}
		name = line;
		name_end = eq;
		value = eq + 1;
		value_end = end;
		trim(&name, &name_end);
		trim(&value, &value_end);
		*name_end = '\0';
		*value_end = '\0';
		/* "VALUE" keeps its spaces; no escapes. */
		if (value_end - value >= 2 && value[0] == '"' && value_end[-1] == '"') {
			value++;
			*--value_end = '\0';
		}
		if (!find_by_name(cmd, name, &o) || o.key == CLI_KEY_CONFIG) {
			err = -EINVAL;
			pr_err("%s:%d: '%s' is not an option of %s", path, lineno, name, cmd->name);
			break;
		}
		if (o.key == CLI_KEY_VERBOSE) {
			char *e;
			long n = strtol(value, &e, 10);

			if (*e || n < 0 || n > 3) {
				err = -EINVAL;
				pr_err("%s:%d: verbose = 0 to 3", path, lineno);
				break;
			}
			log_verbosity = (int)n;
			continue;
		}
		if (!o.arg && !flag_word(value)) {
			err = -EINVAL;
			pr_err("%s:%d: %s is a flag: true or false", path, lineno, name);
			break;
		}
		set_origin("%.200s:%d", path, lineno);
		err = apply(cmd, c, ctx, o.key, value);
		set_origin(NULL);
		if (err > 0)
			err = -EINVAL;
	}
	c->source = CLI_SOURCE_FLAG;
	text = NULL; /* c owns it */
cleanup:
	if (fd >= 0)
		close(fd);
	free(text);
	return err;
}

int cli__parse(const struct cli_command *cmd, int argc, char **argv, struct cli_common *c,
	       void *ctx, int *first_arg)
{
	struct option longopts[CLI_MAX_OPTIONS + 2];
	char shortopts[2 * CLI_MAX_OPTIONS + 3];
	const char *config = NULL;
	size_t n = 0, ns = 0;
	int key, err;

	/* "+": stop at the first operand, so the options of a command to run stay its own. */
	if (cmd->operands_end_options)
		shortopts[ns++] = '+';
	if (cmd->n_options > CLI_MAX_OPTIONS)
		return -E2BIG;
	for (size_t i = 0; i < cmd->n_options; i++) {
		struct cli_option o = resolve(&cmd->options[i]);

		/* A short-only option (perf's -g) has no long name. */
		if (o.name)
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

	/* First pass, silent: only --config (its file comes first, under everything). */
	if (takes(cmd, CLI_KEY_CONFIG)) {
		opterr = 0;
		optind = 0; /* 0, not 1: glibc then reads the ordering ("+") of this table again */
		while ((key = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1)
			if (key == CLI_KEY_CONFIG)
				config = optarg;
		opterr = 1;
		if (config) {
			err = load_config(cmd, c, ctx, config);
			if (err)
				return err;
		}
	}
	if (cmd->env) {
		err = cmd->env(cmd, c, ctx);
		if (err)
			return err;
	}

	c->source = CLI_SOURCE_FLAG;
	optind = 0;
	while ((key = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (key == 'h') {
			cli__usage(cmd, stdout);
			return 1;
		}
		if (key == '?' || key == ':') {
			cli__usage(cmd, stderr);
			return -EINVAL;
		}
		err = apply(cmd, c, ctx, key, optarg);
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
		if (o.key < 256 && !o.name)
			len = fprintf(f, "  -%c%s%s", o.key, o.arg ? " " : "", o.arg ? o.arg : "");
		else if (o.key < 256)
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
