// SPDX-License-Identifier: Apache-2.0
/* The option table record, agent and symbolize share (src/cli/options.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/options.h"
#include "symbol/demangle.h"
#include "symbol/symbol_cache.h"
#include "util/log.h"

enum { OPT_OWN_FLAG = CLI_KEY_OWN, OPT_TEST_HOOK };

struct own_seen {
	int x_calls;
	const char *x_arg;
	bool flag;
	bool hook;
	int g;
};

/* The same options, but "cmd ARGS...": the first operand ends them. */
static const struct cli_command ordered_command;

static int own_option(void *ctx, int key, const char *arg)
{
	struct own_seen *s = ctx;

	switch (key) {
	case 'x':
		if (!strcmp(arg, "bad"))
			return -EINVAL;
		s->x_calls++;
		s->x_arg = arg;
		return 0;
	case OPT_OWN_FLAG:
		s->flag = cli__flag_on(arg);
		return 0;
	case OPT_TEST_HOOK:
		s->hook = true;
		return 0;
	case 'g':
		s->g++;
		return 0;
	}
	return -EINVAL;
}

static const struct cli_option every_option[] = {
    {.key = 'x', .name = "ex", .arg = "ARG", .help = "an option of the command's own"},
    {.key = CLI_KEY_FREQUENCY},
    {.key = CLI_KEY_PID, .help = "the command's own wording of -p"},
    {.key = CLI_KEY_NO_KERNEL},
    {.key = CLI_KEY_DEMANGLE},
    {.key = CLI_KEY_DEBUG_DIR},
    {.key = CLI_KEY_NO_DEBUGINFOD},
    {.key = CLI_KEY_SYMBOL_CACHE_MB},
    {.key = CLI_KEY_VERBOSE},
    {.key = OPT_OWN_FLAG, .name = "own-flag", .help = "a long-only flag"},
    {.key = OPT_TEST_HOOK, .name = "test-hook", .hidden = true},
    CLI_TARGET_OPTIONS,
    {.key = 'g', .help = "a short-only flag"},
};

static const struct cli_command every_command = {
    .name = "every",
    .synopsis = "[options] OPERAND",
    .options = every_option,
    .n_options = sizeof(every_option) / sizeof(every_option[0]),
    .footer = "the footer",
    .own = own_option,
};

static const struct cli_command ordered_command = {
    .name = "ordered",
    .synopsis = "[options] [COMMAND [ARG]...]",
    .options = every_option,
    .n_options = sizeof(every_option) / sizeof(every_option[0]),
    .own = own_option,
    .operands_end_options = true,
};

/* Only -v of the shared ones: the others must be refused. */
static const struct cli_option few_option[] = {
    {.key = CLI_KEY_VERBOSE},
};

static const struct cli_command few_command = {
    .name = "few",
    .synopsis = "[-v]",
    .options = few_option,
    .n_options = 1,
    .own = own_option,
};

static const struct cli_option config_option[] = {
    {.key = 'x', .name = "ex", .arg = "ARG", .help = "own"},
    {.key = CLI_KEY_FREQUENCY},
    {.key = CLI_KEY_PID},
    {.key = CLI_KEY_NO_KERNEL},
    {.key = CLI_KEY_DEBUG_DIR},
    {.key = CLI_KEY_VERBOSE},
    {.key = OPT_OWN_FLAG, .name = "own-flag", .help = "a long-only flag"},
    {.key = CLI_KEY_CONFIG},
};

static const char *env_debug_dir; /* what the environment hook sets, or NULL */

static int config_env(const struct cli_command *cmd, struct cli_common *c, void *ctx)
{
	if (!env_debug_dir)
		return 0;
	return cli__set(cmd, c, ctx, CLI_KEY_DEBUG_DIR, env_debug_dir, "TEST_ENV");
}

static const struct cli_command config_command = {
    .name = "conf",
    .synopsis = "[options]",
    .options = config_option,
    .n_options = sizeof(config_option) / sizeof(config_option[0]),
    .own = own_option,
    .env = config_env,
};

static int parse(const struct cli_command *cmd, struct cli_common *c, struct own_seen *seen,
		 int *first, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return cli__parse(cmd, argc, argv, c, seen, first);
}

static void test_every_shared_option(void **state)
{
	struct cli_common *c = calloc(1, sizeof(*c));
	struct own_seen seen = {0};
	char pid[32];
	int first = -1, verbosity = log_verbosity;

	(void)state;
	assert_non_null(c);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	char *argv[] = {"every",
			"-F",
			"50",
			"-p",
			pid,
			"--no-kernel",
			"--demangle",
			"none",
			"--debug-dir",
			"/a",
			"--debug-dir",
			"/b",
			"--no-debuginfod",
			"--symbol-cache-mb",
			"7",
			"-v",
			"-x",
			"val",
			"--own-flag",
			"--test-hook",
			"operand",
			NULL};

	cli_common__init(c, true);
	assert_int_equal(parse(&every_command, c, &seen, &first, argv), 0);
	assert_int_equal(c->frequency_hz, 50);
	assert_int_equal(c->n_pids, 1);
	assert_int_equal(c->pids[0], (uint32_t)getpid());
	assert_false(c->kernel_stacks);
	assert_int_equal(c->sym.demangle, DEMANGLE_NONE);
	assert_int_equal(c->sym.n_debug_dirs, 2);
	assert_ptr_equal(c->sym.debug_dirs, c->debug_dirs);
	assert_string_equal(c->sym.debug_dirs[0], "/a");
	assert_string_equal(c->sym.debug_dirs[1], "/b");
	assert_false(c->sym.debuginfod);
	assert_int_equal(c->sym.cache_bytes, (size_t)7 << 20);
	assert_int_equal(log_verbosity, verbosity + 1);
	assert_int_equal(seen.x_calls, 1);
	assert_string_equal(seen.x_arg, "val");
	assert_true(seen.flag);
	assert_true(seen.hook);
	assert_string_equal(argv[first], "operand");
	log_verbosity = verbosity;
	free(c);
}

static void test_defaults(void **state)
{
	struct cli_common *c = calloc(1, sizeof(*c));
	struct own_seen seen = {0};
	char *argv[] = {"every", NULL};
	int first = -1;

	(void)state;
	assert_non_null(c);
	cli_common__init(c, true);
	assert_int_equal(parse(&every_command, c, &seen, &first, argv), 0);
	assert_int_equal(first, 1);
	assert_int_equal(c->frequency_hz, CLI_DEFAULT_FREQUENCY_HZ);
	assert_int_equal(c->n_pids, 0);
	assert_true(c->kernel_stacks);
	assert_int_equal(c->sym.demangle, DEMANGLE_DEFAULT);
	assert_true(c->sym.debuginfod);
	assert_int_equal(c->sym.n_debug_dirs, 0);
	assert_int_equal(c->sym.cache_bytes, 0); /* the symbol cache's own default */
	/* The agent asks no debuginfod server. */
	cli_common__init(c, false);
	assert_false(c->sym.debuginfod);
	free(c);
}

static void test_refused(void **state)
{
	struct cli_common *c = calloc(1, sizeof(*c));
	struct own_seen seen = {0};
	int first;

	(void)state;
	assert_non_null(c);
	{
		/* A shared option the command does not take. */
		char *argv[] = {"few", "--debug-dir", "/a", NULL};

		cli_common__init(c, true);
		assert_int_equal(parse(&few_command, c, &seen, &first, argv), -EINVAL);
		assert_int_equal(c->sym.n_debug_dirs, 0);
	}
	{
		char *argv[] = {"every", "-F", "0", NULL};

		cli_common__init(c, true);
		assert_int_equal(parse(&every_command, c, &seen, &first, argv), -EINVAL);
		assert_int_equal(c->frequency_hz, CLI_DEFAULT_FREQUENCY_HZ);
	}
	{
		char *argv[] = {"every", "--demangle", "sometimes", NULL};

		assert_int_equal(parse(&every_command, c, &seen, &first, argv), -EINVAL);
	}
	{
		char *argv[] = {"every", "--symbol-cache-mb", "0", NULL};

		assert_int_equal(parse(&every_command, c, &seen, &first, argv), -EINVAL);
	}
	{
		/* The command's own callback says no. */
		char *argv[] = {"every", "-x", "bad", NULL};

		assert_int_equal(parse(&every_command, c, &seen, &first, argv), -EINVAL);
		assert_int_equal(seen.x_calls, 0);
	}
	{
		char *argv[] = {"every", "--help", NULL};

		assert_int_equal(parse(&every_command, c, &seen, &first, argv), 1);
	}
	free(c);
}

/* What chooses the targets, parsed: and what is refused. */
static void test_target_options(void **state)
{
	struct cli_common *c = calloc(1, sizeof(*c));
	struct own_seen seen = {0};
	int first = -1;

	(void)state;
	assert_non_null(c);
	cli_common__init(c, true);
	assert_int_equal(c->max_frames, CLI_DEFAULT_MAX_FRAMES);
	assert_int_equal(c->prob_threshold, 100);
	assert_int_equal(c->prob_interval_ms, 60000);
	assert_null(c->comm);
	assert_int_equal(c->n_cpus, 0);
	{
		char *argv[] = {"every",
				"--comm",
				"^(nginx|php-fpm)$",
				"--cgroup",
				"/system.slice",
				"--container",
				"0123abc",
				"--cpu",
				"5,0-2,2",
				"--max-frames",
				"1024",
				"--probabilistic-threshold",
				"1",
				"--probabilistic-interval",
				"2m",
				"-g",
				"-g",
				NULL};

		assert_int_equal(parse(&every_command, c, &seen, &first, argv), 0);
		assert_string_equal(c->comm, "^(nginx|php-fpm)$");
		assert_string_equal(c->cgroup, "/system.slice");
		assert_string_equal(c->container, "0123abc");
		assert_int_equal(c->n_cpus, 4); /* sorted, once each */
		assert_int_equal(c->cpus[0], 0);
		assert_int_equal(c->cpus[1], 1);
		assert_int_equal(c->cpus[2], 2);
		assert_int_equal(c->cpus[3], 5);
		assert_int_equal(c->max_frames, 1024);
		assert_int_equal(c->prob_threshold, 1);
		assert_int_equal(c->prob_interval_ms, 120000);
		assert_int_equal(seen.g, 2);
	}
	{
		uint32_t ms = 0;

		assert_int_equal(cli__parse_duration_ms("-x", "500ms", &ms), 0);
		assert_int_equal(ms, 500);
		assert_int_equal(cli__parse_duration_ms("-x", "1.5s", &ms), 0);
		assert_int_equal(ms, 1500);
		assert_int_equal(cli__parse_duration_ms("-x", "30", &ms), 0);
		assert_int_equal(ms, 30000);
		assert_int_equal(cli__parse_duration_ms("-x", "1h", &ms), 0);
		assert_int_equal(ms, 3600000);
		assert_int_equal(cli__parse_duration_ms("-x", "99ms", &ms), -EINVAL);
		assert_int_equal(cli__parse_duration_ms("-x", "2h", &ms), -EINVAL);
		assert_int_equal(cli__parse_duration_ms("-x", "5 min", &ms), -EINVAL);
		assert_int_equal(cli__parse_duration_ms("-x", "m", &ms), -EINVAL);
	}
	{
		static const char *const bad[][2] = {
		    {"--comm", "(unclosed"},
		    {"--cgroup", ""},
		    {"--container", "XYZ"},
		    {"--container",
		     "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0"},
		    {"--cpu", ""},
		    {"--cpu", "3-1"},
		    {"--cpu", "1,,2"},
		    {"--cpu", "1,"},
		    {"--cpu", "a"},
		    {"--cpu", "4096"},
		    {"--max-frames", "0"},
		    {"--max-frames", "1025"},
		    {"--max-frames", "12x"},
		    {"--probabilistic-threshold", "0"},
		    {"--probabilistic-threshold", "101"},
		    {"--probabilistic-interval", "0"},
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char *argv[] = {"every", (char *)bad[i][0], (char *)bad[i][1], NULL};

			cli_common__init(c, true);
			assert_int_equal(parse(&every_command, c, &seen, &first, argv), -EINVAL);
		}
	}
	{
		/* "cmd ARGS...": the command's options stay its own, with or without "--". */
		char *argv[] = {"ordered", "-F", "50", "ls", "-l", "-F", NULL};
		char *argv2[] = {"ordered", "--", "ls", "-g", NULL};

		cli_common__init(c, true);
		seen.g = 0;
		assert_int_equal(parse(&ordered_command, c, &seen, &first, argv), 0);
		assert_int_equal(c->frequency_hz, 50);
		assert_string_equal(argv[first], "ls");
		assert_string_equal(argv[first + 1], "-l");
		assert_int_equal(parse(&ordered_command, c, &seen, &first, argv2), 0);
		assert_string_equal(argv2[first], "ls");
		assert_int_equal(seen.g, 0);
	}
	free(c);
}

static void test_usage(void **state)
{
	char *text = NULL, def[64];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	cli__usage(&every_command, f);
	fclose(f);
	assert_non_null(strstr(text, "usage: omniprof every [options] OPERAND\n"));
	/* The shared table's names and wording, with the defaults filled in. */
	assert_non_null(strstr(text, "  -F, --frequency HZ "));
	snprintf(def, sizeof(def), "(default %d,", CLI_DEFAULT_FREQUENCY_HZ);
	assert_non_null(strstr(text, def));
	assert_non_null(strstr(text, "      --demangle MODE "));
	snprintf(def, sizeof(def), "(default %s)", demangle__mode_name(DEMANGLE_DEFAULT));
	assert_non_null(strstr(text, def));
	snprintf(def, sizeof(def), "(default %d)", SYMBOL_CACHE_DEFAULT_MB);
	assert_non_null(strstr(text, def));
	assert_non_null(strstr(text, "      --debug-dir DIR "));
	assert_non_null(strstr(text, "      --no-debuginfod "));
	assert_non_null(strstr(text, "      --no-kernel "));
	assert_non_null(strstr(text, "  -v, --verbose "));
	/* A command's own wording replaces the table's. */
	assert_non_null(strstr(text, "  -p, --pid PID "));
	assert_non_null(strstr(text, "the command's own wording of -p"));
	assert_null(strstr(text, "profile only this process"));
	assert_non_null(strstr(text, "  -x, --ex ARG "));
	assert_non_null(strstr(text, "      --own-flag "));
	assert_non_null(strstr(text, "      --comm REGEX "));
	assert_non_null(strstr(text, "      --probabilistic-threshold N\n"));
	snprintf(def, sizeof(def), "(default %d, at most", CLI_DEFAULT_MAX_FRAMES);
	assert_non_null(strstr(text, def));
	assert_non_null(strstr(text, "  -g    ")); /* short only */
	/* Test hooks are not shown; no placeholder is left. */
	assert_null(strstr(text, "test-hook"));
	assert_null(strstr(text, "%s"));
	assert_non_null(strstr(text, "\nthe footer\n"));
	free(text);
}

/* Writes text to a new temporary file; returns its path (static buffer). */
static const char *config_file(const char *text)
{
	static char path[] = "/tmp/omniprof-conf-XXXXXX";
	int fd;

	strcpy(path, "/tmp/omniprof-conf-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* --config FILE: every long option by name; the environment beats the file and the
 * command line beats both; a repeatable option's list comes whole from one source. */
static void test_config_file_precedence(void **state)
{
	struct cli_common *c = calloc(1, sizeof(*c));
	struct own_seen seen = {0};
	int first, verbosity = log_verbosity;
	const char *path = config_file("# omniprof agent settings\n"
				       "\n"
				       "  frequency = 30   \n"
				       "pid = 1,2\n"
				       "debug-dir = /file/a\n"
				       "debug-dir = \"/file/with space\"\n"
				       "no-kernel = true\n"
				       "own-flag = false\n"
				       "ex = a#b = c\n"
				       "verbose = 2\n");
	char *argv[] = {"conf", "--config", (char *)path, "-p", "3", NULL};

	(void)state;
	assert_non_null(c);
	cli_common__init(c, true);
	assert_int_equal(parse(&config_command, c, &seen, &first, argv), 0);
	assert_int_equal(c->frequency_hz, 30);
	assert_int_equal(c->n_pids, 1); /* the command line's list replaced the file's */
	assert_int_equal(c->pids[0], 3);
	assert_int_equal(c->sym.n_debug_dirs, 2);
	assert_string_equal(c->debug_dirs[1], "/file/with space");
	assert_false(c->kernel_stacks);
	assert_false(seen.flag);
	assert_string_equal(seen.x_arg, "a#b = c");
	assert_int_equal(log_verbosity, 2);
	log_verbosity = verbosity;
	cli_common__clear(c);

	/* The environment's list replaces the file's; the command line replaces both. */
	env_debug_dir = "/env";
	memset(&seen, 0, sizeof(seen));
	{
		char *argv2[] = {"conf", "--config", (char *)path, "-F", "40", NULL};

		cli_common__init(c, true);
		assert_int_equal(parse(&config_command, c, &seen, &first, argv2), 0);
		assert_int_equal(c->frequency_hz, 40);
		assert_int_equal(c->n_pids, 2);
		assert_int_equal(c->sym.n_debug_dirs, 1);
		assert_string_equal(c->debug_dirs[0], "/env");
		cli_common__clear(c);
	}
	{
		char *argv3[] = {"conf", "--debug-dir", "/cmd", "--config", (char *)path, NULL};

		cli_common__init(c, true);
		assert_int_equal(parse(&config_command, c, &seen, &first, argv3), 0);
		assert_int_equal(c->sym.n_debug_dirs, 1);
		assert_string_equal(c->debug_dirs[0], "/cmd");
		cli_common__clear(c);
	}
	env_debug_dir = NULL;
	log_verbosity = verbosity;
	unlink(path);
	free(c);
}

/* A file that is not NAME = VALUE lines of this command's options stops the start. */
static void test_config_file_refused(void **state)
{
	static const char *const bad[] = {
	    "frequency 30\n",	   /* no '=' */
	    "unknown = 1\n",	   /* not an option */
	    "config = /etc/x\n",   /* no nesting */
	    "no-kernel = maybe\n", /* a flag takes true or false */
	    "frequency = 0\n",	   /* the option's own check */
	    "verbose = 9\n",
	};
	struct cli_common *c = calloc(1, sizeof(*c));
	struct own_seen seen = {0};
	int first;

	(void)state;
	assert_non_null(c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *path = config_file(bad[i]);
		char *argv[] = {"conf", "--config", (char *)path, NULL};

		cli_common__init(c, true);
		assert_int_equal(parse(&config_command, c, &seen, &first, argv), -EINVAL);
		cli_common__clear(c);
		unlink(path);
	}
	{
		char *argv[] = {"conf", "--config", "/nonexistent/omniprof.conf", NULL};

		cli_common__init(c, true);
		assert_int_equal(parse(&config_command, c, &seen, &first, argv), -ENOENT);
	}
	{
		char *argv[] = {"conf", "--config", "/tmp", NULL};

		cli_common__init(c, true);
		assert_int_equal(parse(&config_command, c, &seen, &first, argv), -EINVAL);
	}
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_shared_option),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_target_options),
	    cmocka_unit_test(test_usage),
	    cmocka_unit_test(test_config_file_precedence),
	    cmocka_unit_test(test_config_file_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
