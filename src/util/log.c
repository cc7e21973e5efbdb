// SPDX-License-Identifier: Apache-2.0
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

int log_verbosity;

void log_msg(int level, const char *fmt, ...)
{
	static const char *const prefix[] = {"error: ", "warning: ", "", "debug: "};
	va_list ap;

	/* Errors and warnings always show; info needs -v, debug -vv. */
	if (level >= LOG_INFO && level - LOG_INFO >= log_verbosity)
		return;
	fputs("omniprof: ", stderr);
	fputs(prefix[level], stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
