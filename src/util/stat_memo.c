// SPDX-License-Identifier: Apache-2.0
#include "util/stat_memo.h"

#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "util/hashmap.h"

struct slot {
	struct stat_memo_key key;
	uint8_t value[STAT_MEMO_VALUE_MAX];
	size_t len; /* 0: empty */
};

/* 1024 slots of 104 bytes: 104 KiB of BSS, touched only as files are seen. */
static struct slot slots[STAT_MEMO_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct stat_memo_stats stats; /* under lock */

static int64_t ts_ns(int64_t sec, int64_t nsec)
{
	return sec * 1000000000 + nsec;
}

bool stat_memo__key(int fd, enum stat_memo_kind kind, struct stat_memo_key *k)
{
	struct timespec now;
	struct stat st;
	int64_t changed;

	memset(k, 0, sizeof(*k)); /* no padding left undefined: keys are compared whole */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || clock_gettime(CLOCK_REALTIME, &now))
		return false;
	changed = ts_ns(st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	if (ts_ns(st.st_mtim.tv_sec, st.st_mtim.tv_nsec) > changed)
		changed = ts_ns(st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	if (ts_ns(now.tv_sec, now.tv_nsec) - changed < (int64_t)STAT_MEMO_RACY_NS)
		return false;
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	k->size = (uint64_t)st.st_size;
	k->mtime_sec = st.st_mtim.tv_sec;
	k->mtime_nsec = st.st_mtim.tv_nsec;
	k->ctime_sec = st.st_ctim.tv_sec;
	k->ctime_nsec = st.st_ctim.tv_nsec;
	k->kind = kind;
	return true;
}

static struct slot *slot_of(const struct stat_memo_key *k)
{
	uint64_t h = hash_u64(k->ino ^ (k->dev << 32 | k->dev >> 32));

	h = hash_u64(h ^ k->size ^ (uint64_t)k->ctime_nsec ^ (k->kind << 56));
	return &slots[h % STAT_MEMO_SLOTS];
}

bool stat_memo__find(const struct stat_memo_key *k, void *out, size_t len)
{
	struct slot *s = slot_of(k);
	bool found;

	pthread_mutex_lock(&lock);
	found = s->len == len && !memcmp(&s->key, k, sizeof(*k));
	if (found) {
		memcpy(out, s->value, len);
		stats.hits++;
	}
	pthread_mutex_unlock(&lock);
	return found;
}

void stat_memo__add(const struct stat_memo_key *k, const void *value, size_t len)
{
	struct slot *s = slot_of(k);

	if (!len || len > STAT_MEMO_VALUE_MAX)
		return;
	pthread_mutex_lock(&lock);
	s->key = *k;
	memcpy(s->value, value, len);
	s->len = len;
	stats.adds++;
	pthread_mutex_unlock(&lock);
}

void stat_memo__reset(void)
{
	pthread_mutex_lock(&lock);
	memset(slots, 0, sizeof(slots));
	memset(&stats, 0, sizeof(stats));
	pthread_mutex_unlock(&lock);
}

void stat_memo__stats(struct stat_memo_stats *out)
{
	pthread_mutex_lock(&lock);
	*out = stats;
	pthread_mutex_unlock(&lock);
}
