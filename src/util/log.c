// SPDX-License-Identifier: Apache-2.0
#include "util/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
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
	if (!s->suppressed)
		return;
	fprintf(out, "omniprof: (%llu more like this suppressed: \"%.60s\")\n",
		(unsigned long long)s->suppressed, s->fmt);
	s->suppressed = 0;
}

void log_msg(int level, const char *fmt, ...)
{
	static const char *const prefix[] = {"error: ", "warning: ", "", "debug: "};
	FILE *out;
	struct log_slot *s;
	uint64_t now;
	va_list ap;

	/* Errors and warnings always show; info needs -v, debug -vv. */
	if (level >= LOG_INFO && level - LOG_INFO >= log_verbosity)
		return;
	pthread_mutex_lock(&log_lock);
	out = log_stream ? log_stream : stderr;
	if (level == LOG_DEBUG)
		goto print; /* -vv asks for every line */
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
	fputs("omniprof: ", out);
	fputs(prefix[level], out);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
	pthread_mutex_unlock(&log_lock);
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
