/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One-line diagnostics on stderr, rate limited per message format (each call
 * site's format string): a hostile host can make the same line come back
 * thousands of times (a process mapping 20,000 unreadable files). The first
 * LOG_BURST lines of a format in each LOG_WINDOW_NS window are printed; the
 * rest are counted, and the next line of that format after the window (or
 * log__flush_suppressed()) prints "(N more like this suppressed: FORMAT)"
 * once. Debug lines (-vv) are not limited: asking for them is asking for
 * every one. Thread safe.
 */
#ifndef OMNIPROF_UTIL_LOG_H
#define OMNIPROF_UTIL_LOG_H

#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

extern int log_verbosity; /* 0 = warnings and errors, 1 = -v, 2 = -vv */

/*
 * How lines look. PLAIN (record, symbolize: a person at a terminal):
 * "omniprof: warning: TEXT". TEXT (the agent's default: a journal or a log
 * collector reads it): "2026-11-27T16:07:13.123Z warn TEXT", UTC with
 * milliseconds, the level always named. JSON (--log-format json): one object
 * per line, {"time":"2026-11-27T16:07:13.123Z","level":"warn","msg":"TEXT"}.
 */
enum log_format {
	LOG_FORMAT_PLAIN,
	LOG_FORMAT_TEXT,
	LOG_FORMAT_JSON,
};

#define LOG_BURST     5			      /* lines of one format per window */
#define LOG_WINDOW_NS (10ull * 1000000000ull) /* 10 s */

void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with a va_list (libbpf's lines); a trailing newline in the text is dropped. */
void log_vmsg(int level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/*
 * Until cleared (NULL), error lines start with context, e.g. "agent.conf:3: "
 * or "OTEL_EXPORTER_OTLP_PROTOCOL: ": where the value being parsed came from,
 * so an option's own message still is one line. The caller keeps it alive.
 */
void log__set_context(const char *context);

/* Before any thread logs. */
void log__set_format(enum log_format format);
/* "text" or "json" (the agent's --log-format): 0, or -EINVAL. */
int log__parse_format(const char *name, enum log_format *out);

/* Prints the summary of every format with suppressed lines (at exit, interval ends). */
void log__flush_suppressed(void);
/* Lines suppressed so far, over all formats (for -v counters and tests). */
uint64_t log__suppressed_total(void);
/* Tests: write to stream (NULL: stderr) and take the time from clock (NULL: monotonic);
 * forgets every format's state. */
void log__set_output(FILE *stream, uint64_t (*clock)(void));

#define LOG_ERROR  0
#define LOG_WARN   1
#define LOG_INFO   2
#define LOG_DEBUG  3
#define LOG_NOTICE 4 /* always shown, not rate limited, level "info": start and exit lines */

#define pr_err(...)    log_msg(LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)   log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...)   log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...)  log_msg(LOG_DEBUG, __VA_ARGS__)
#define pr_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)

#endif
