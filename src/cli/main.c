// SPDX-License-Identifier: Apache-2.0
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: omniprof <command> [options]\n"
		   "\n"
		   "commands:\n"
		   "  record    profile the whole system (or -p PIDs) and write pprof, folded\n"
		   "            stacks and a flame graph; `omniprof record --help` for options\n"
		   "  agent     profile continuously and report every few seconds over OTLP\n"
		   "            (gRPC or HTTP) and/or to Pyroscope; `omniprof agent --help`\n"
		   "  symbolize name the frames of a recorded profile afterwards from binaries\n"
		   "            or debug files; `omniprof symbolize --help` for options\n"
		   "  serve     store the agents' OTLP profiles and show them in a browser\n"
		   "            (flame graph, top, timeline, diff); `omniprof serve --help`\n"
		   "  version   print the version\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "agent"))
		return cmd_agent(argc - 1, argv + 1);
	if (!strcmp(argv[1], "symbolize"))
		return cmd_symbolize(argc - 1, argv + 1);
	if (!strcmp(argv[1], "serve"))
		return cmd_serve(argc - 1, argv + 1);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("omniprof %s\n", OMNIPROF_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "omniprof: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
