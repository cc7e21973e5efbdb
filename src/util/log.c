// SPDX-License-Identifier: Apache-2.0
#include "util/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"

int log_verbosity;

/*
 * Formats are string literals: their address names the call site. A fixed
 * table (open addressing, never freed: call sites are finite); formats past
 * it share one overflow slot, so the limit still holds.
 */
#define LOG_SLOTS 512

struct log_slot {
	const char *fmt; /* NULL: free */
	uint64_t window_start;
	uint32_t printed;    /* in the current window */
	uint64_t suppressed; /* since the last summary */
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct log_slot slots[LOG_SLOTS + 1]; /* [LOG_SLOTS]: the overflow slot */
static FILE *log_stream;
static uint64_t (*log_clock)(void);
static uint64_t suppressed_total;
static enum log_format log_format = LOG_FORMAT_PLAIN;
static const char *log_context;

void log__set_context(const char *context)
{
	log_context = context;
}

/* By level (LOG_ERROR... LOG_NOTICE): the plain format's prefix, the others' level name. */
static const char *const plain_prefix[] = {"error: ", "warning: ", "", "debug: ", ""};
static const char *const level_name[] = {"error", "warn", "info", "debug", "info"};

void log__set_format(enum log_format format)
{
	log_format = format;
}

int log__parse_format(const char *name, enum log_format *out)
{
	if (!strcmp(name, "text"))
		*out = LOG_FORMAT_TEXT;
	else if (!strcmp(name, "json"))
		*out = LOG_FORMAT_JSON;
	else
		return -EINVAL;
	return 0;
}

/* "2026-11-27T16:07:13.123Z": now in UTC, milliseconds. */
static void timestamp(char buf[64])
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

/* Length of the valid UTF-8 sequence at p (n bytes left), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0; /* overlong */
	else if (p[0] == 0xed)
		hi = 0x9f; /* surrogates */
	else if (p[0] == 0xf0)
		lo = 0x90; /* overlong */
	else if (p[0] == 0xf4)
		hi = 0x8f; /* beyond U+10FFFF */
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* text as a JSON string's contents: messages carry names taken from other processes
 * (file names, comm), so any byte may come; bytes that are not UTF-8 become U+FFFD. */
static void put_json_string(FILE *out, const char *text)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t n = strlen(text);

	while (n) {
		size_t len = utf8_len(p, n);

		if (!len) {
			fputs("\\ufffd", out);
			len = 1;
		} else if (*p == '"' || *p == '\\') {
			fputc('\\', out);
			fputc(*p, out);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(out, "\\u%04x", *p);
		} else {
			fwrite(p, 1, len, out);
		}
		p += len;
		n -= len;
	}
}

/* One line in the chosen format. Called with log_lock held. */
static void emit(FILE *out, int level, const char *text)
{
	char ts[64];

	if (log_format == LOG_FORMAT_PLAIN) {
		fprintf(out, "omniprof: %s%s\n", plain_prefix[level], text);
		return;
	}
	timestamp(ts);
	if (log_format == LOG_FORMAT_TEXT) {
		fprintf(out, "%s %s %s\n", ts, level_name[level], text);
		return;
	}
	fprintf(out, "{\"time\":\"%s\",\"level\":\"%s\",\"msg\":\"", ts, level_name[level]);
	put_json_string(out, text);
	fputs("\"}\n", out);
}

static struct log_slot *slot_of(const char *fmt)
{
	size_t i = ((uintptr_t)fmt >> 3) * 0x9e3779b97f4a7c15ull >> 55; /* 9 bits */

	for (size_t n = 0; n < LOG_SLOTS; n++, i = (i + 1) % LOG_SLOTS) {
		if (slots[i].fmt == fmt)
			return &slots[i];
		if (!slots[i].fmt) {
			slots[i].fmt = fmt;
			return &slots[i];
		}
	}
	slots[LOG_SLOTS].fmt = "(various)";
	return &slots[LOG_SLOTS];
}

/* Called with log_lock held. */
static void print_summary(FILE *out, struct log_slot *s)
{
	char line[128];

	if (!s->suppressed)
		return;
	snprintf(line, sizeof(line), "(%llu more like this suppressed: \"%.60s\")",
		 (unsigned long long)s->suppressed, s->fmt);
	emit(out, LOG_NOTICE, line);
	s->suppressed = 0;
}

void log_vmsg(int level, const char *fmt, va_list ap)
{
	FILE *out;
	struct log_slot *s;
	uint64_t now;
	char *text;
	size_t len;

	/* Errors, warnings and notices always show; info needs -v, debug -vv. */
	if ((level == LOG_INFO || level == LOG_DEBUG) && level - LOG_INFO >= log_verbosity)
		return;
	pthread_mutex_lock(&log_lock);
	out = log_stream ? log_stream : stderr;
	if (level == LOG_DEBUG || level == LOG_NOTICE)
		goto print; /* -vv asks for every line; notices are few */
	now = log_clock ? log_clock() : clock__now_ns();
	s = slot_of(fmt);
	if (!s->window_start || now - s->window_start >= LOG_WINDOW_NS) {
		print_summary(out, s);
		s->window_start = now ? now : 1;
		s->printed = 0;
	}
	if (s->printed >= LOG_BURST) {
		s->suppressed++;
		suppressed_total++;
		pthread_mutex_unlock(&log_lock);
		return;
	}
	s->printed++;
print:
	if (vasprintf(&text, fmt, ap) < 0) {
		text = NULL;
	} else if (level == LOG_ERROR && log_context) {
		char *with;

		if (asprintf(&with, "%s%s", log_context, text) < 0)
			with = NULL;
		free(text);
		text = with;
	}
	if (!text) {
		emit(out, level, fmt); /* out of memory: the format still says what happened */
	} else {
		len = strlen(text);
		if (len && text[len - 1] == '\n')
			text[len - 1] = '\0';
		emit(out, level, text);
		free(text);
	}
	pthread_mutex_unlock(&log_lock);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

void log__flush_suppressed(void)
{
	pthread_mutex_lock(&log_lock);
	for (size_t i = 0; i <= LOG_SLOTS; i++)
		if (slots[i].fmt)
			print_summary(log_stream ? log_stream : stderr, &slots[i]);
	pthread_mutex_unlock(&log_lock);
}

uint64_t log__suppressed_total(void)
{
	uint64_t n;

	pthread_mutex_lock(&log_lock);
	n = suppressed_total;
	pthread_mutex_unlock(&log_lock);
	return n;
}

void log__set_output(FILE *stream, uint64_t (*clock)(void))
{
	pthread_mutex_lock(&log_lock);
	log_stream = stream;
	log_clock = clock;
	memset(slots, 0, sizeof(slots));
	suppressed_total = 0;
	pthread_mutex_unlock(&log_lock);
}
