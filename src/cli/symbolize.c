// SPDX-License-Identifier: Apache-2.0
/*
 * `omniprof symbolize IN.pb.gz --debug-dir DIR... -o OUT.pb.gz`: names the
 * frames of a pprof profile afterwards, from binaries or debug files
 * gathered elsewhere. The options, the messages and the exit code; the work
 * is export/pprof_symbolize.c's, the message editing export/pprof_edit.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "export/pprof_edit.h"
#include "export/pprof_symbolize.h"
#include "symbol/file_index.h"
#include "symbol/symbolizer.h"
#include "util/log.h"

struct symbolize_opts {
	struct cli_common common; /* symbols, -v */
	const char *input;
	const char *output;
};

static const struct cli_option symbolize_options[] = {
    {.key = CLI_KEY_DEBUG_DIR, .help = "folder with binaries / debug files (repeatable)"},
    {.key = 'o',
     .name = "output",
     .arg = "FILE",
     .help = "where to write (default: IN with .symbolized.pb.gz)"},
    {.key = CLI_KEY_DEMANGLE, .help = "none, simplified, templates or full\n(default %s)"},
    {.key = CLI_KEY_NO_DEBUGINFOD, .help = "do not ask debuginfod servers (DEBUGINFOD_URLS)"},
    {.key = CLI_KEY_SYMBOL_CACHE_MB},
    {.key = CLI_KEY_VERBOSE, .help = "say which file names each mapping"},
};

static int symbolize_option(void *ctx, int key, const char *arg)
{
	struct symbolize_opts *o = ctx;

	if (key != 'o')
		return -EINVAL;
	o->output = arg;
	return 0;
}

static const struct cli_command symbolize_command = {
    .name = "symbolize",
    .synopsis = "IN.pb.gz --debug-dir DIR... [-o OUT.pb.gz]\n"
		"[--demangle MODE] [--no-debuginfod]\n"
		"[--symbol-cache-mb MB] [-v]",
    .intro = "Names the frames of a pprof profile from binaries or debug files found under\n"
	     "the --debug-dir folders (matched by GNU build id, Go build id or file hash).",
    .options = symbolize_options,
    .n_options = sizeof(symbolize_options) / sizeof(symbolize_options[0]),
    .own = symbolize_option,
};

static int parse_args(int argc, char **argv, struct symbolize_opts *o)
{
	int first_arg, err;

	cli_common__init(&o->common, true);
	err = cli__parse(&symbolize_command, argc, argv, &o->common, o, &first_arg);
	if (err)
		return err;
	if (first_arg != argc - 1) {
		pr_err(first_arg < argc ? "one input profile, please" : "no input profile given");
		cli__usage(&symbolize_command, stderr);
		return -EINVAL;
	}
	o->input = argv[first_arg];
	return 0;
}

int cmd_symbolize(int argc, char **argv)
{
	struct symbolize_opts o = {0};
	struct pprof_symbolize_stats st;
	struct file_index fi = {0};
	struct symbolizer s = {0};
	pb_profile *p = NULL;
	char *out_path = NULL;
	int ret = 1, err;

	err = parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? 0 : 2;
	if (!o.common.sym.n_debug_dirs)
		pr_warn("no --debug-dir given: only /usr/lib/debug and debuginfod are searched, "
			"and only for files named by build id");
	err = pprof__read_file(o.input, &p);
	if (err == -EBADMSG) {
		pr_err("%s: not a pprof profile", o.input);
		goto cleanup;
	}
	if (err) {
		pr_err("cannot read %s: %s", o.input, strerror(-err));
		goto cleanup;
	}
	if (symbolizer__init(&s, NULL, &o.common.sym) ||
	    file_index__build(&fi, o.common.debug_dirs, o.common.sym.n_debug_dirs)) {
		pr_err("out of memory");
		goto cleanup;
	}
	err = pprof__symbolize(p, &s, &fi, &st);
	if (err) {
		pr_err("symbolizing %s failed: %s", o.input, strerror(-err));
		goto cleanup;
	}
	fprintf(stderr,
		"omniprof symbolize: %zu of %zu mappings matched a file, %zu locations named, "
		"%zu left as they were\n",
		st.matched, st.mappings, st.named, st.unnamed);
	if (o.output) {
		out_path = strdup(o.output);
	} else {
		size_t n = strlen(o.input);

		if (n > 6 && !strcmp(o.input + n - 6, ".pb.gz"))
			n -= 6;
		if (asprintf(&out_path, "%.*s.symbolized.pb.gz", (int)n, o.input) < 0)
			out_path = NULL;
	}
	if (!out_path) {
		pr_err("out of memory");
		goto cleanup;
	}
	if (pprof__write_file(out_path, p))
		goto cleanup; /* it said why */
	printf("wrote %s\n", out_path);
	ret = 0;
cleanup:
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	free(out_path);
	file_index__clear(&fi);
	symbolizer__clear(&s);
	return ret;
}
