// SPDX-License-Identifier: Apache-2.0
#include "sampler/mmap_events.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The largest record read (MMAP2's fixed part, a path of PATH_MAX, the sample id). */
#define RECORD_MAX 8192

/* PERF_RECORD_MMAP2 without build id, as the kernel writes it (linux/perf_event.h). */
struct mmap2_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	/* char filename[] (NUL-padded to 8 bytes), then the sample id (tid, time) */
};

/* The sample id every record ends with (sample_id_all: PERF_SAMPLE_TID | TIME). */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

struct mmap_ring {
	int fd; /* -1: none */
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	size_t data_size; /* a power of two */
};

struct mmap_events {
	struct mmap_ring *rings; /* max_cpus long */
	int max_cpus;
	size_t page;
	struct mmap_events_stats stats;
	uint8_t scratch[RECORD_MAX]; /* a record that wraps, copied in one piece */
};

struct mmap_events *mmap_events__new(int max_cpus)
{
	struct mmap_events *me = calloc(1, sizeof(*me));

	if (!me)
		return NULL;
	me->rings = calloc((size_t)max_cpus, sizeof(*me->rings));
	if (!me->rings) {
		free(me);
		return NULL;
	}
	for (int i = 0; i < max_cpus; i++)
		me->rings[i].fd = -1;
	me->max_cpus = max_cpus;
	me->page = (size_t)sysconf(_SC_PAGESIZE);
	return me;
}

void mmap_events__close_cpu(struct mmap_events *me, int cpu)
{
	struct mmap_ring *r;

	if (!me || cpu < 0 || cpu >= me->max_cpus)
		return;
	r = &me->rings[cpu];
	if (r->meta)
		munmap(r->meta, me->page + r->data_size);
	if (r->fd >= 0)
		close(r->fd);
	*r = (struct mmap_ring){.fd = -1};
}

void mmap_events__free(struct mmap_events *me)
{
	if (!me)
		return;
	for (int i = 0; i < me->max_cpus; i++)
		mmap_events__close_cpu(me, i);
	free(me->rings);
	free(me);
}

int mmap_events__open_cpu(struct mmap_events *me, int cpu)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .config = PERF_COUNT_SW_DUMMY,
	    .size = sizeof(attr),
	    .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
	    /* Executable mappings only (no mmap_data), with device and inode. */
	    .mmap = 1,
	    .mmap2 = 1,
	    .sample_id_all = 1,
	    /* The samples' clock (bpf_ktime_get_ns), so both merge by time. */
	    .use_clockid = 1,
	    .clockid = CLOCK_MONOTONIC,
	    /* Readable at each record (wakeup_events counts samples only, not side-band
	     * records): the sampler's reader throttles its own wakeups. */
	    .watermark = 1,
	    .wakeup_watermark = 1,
	};
	struct mmap_ring *r;
	size_t data = MMAP_EVENTS_RING_PAGES * me->page;
	void *base;
	int fd, err;

	if (cpu < 0 || cpu >= me->max_cpus)
		return -EINVAL;
	mmap_events__close_cpu(me, cpu);
	fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		me->stats.open_errors++;
		return err;
	}
	base = mmap(NULL, me->page + data, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		err = -errno;
		close(fd);
		me->stats.open_errors++;
		return err;
	}
	r = &me->rings[cpu];
	r->fd = fd;
	r->meta = base;
	r->data = (uint8_t *)base + me->page;
	r->data_size = data;
	return fd;
}

int mmap_events__fd(const struct mmap_events *me, int cpu)
{
	return me && cpu >= 0 && cpu < me->max_cpus ? me->rings[cpu].fd : -1;
}

/* The record at offset off of r's data, in one piece (copied when it wraps); NULL when
 * it does not fit the scratch buffer. */
static const void *record_at(struct mmap_events *me, const struct mmap_ring *r, uint64_t off,
			     size_t size)
{
	size_t at = (size_t)(off & (r->data_size - 1)), first = r->data_size - at;

	if (size <= first)
		return r->data + at;
	if (size > sizeof(me->scratch))
		return NULL;
	memcpy(me->scratch, r->data + at, first);
	memcpy(me->scratch + first, r->data, size - first);
	return me->scratch;
}

/* One MMAP2 record of size bytes: fn is called for an executable file mapping. */
static bool handle_mmap2(struct mmap_events *me, const void *rec, size_t size, mmap_event_fn fn,
			 void *ctx)
{
	const struct mmap2_record *m = rec;
	struct sample_id id;
	struct op_mmap_event e;

	if (size < sizeof(*m) + sizeof(id) || (m->header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		me->stats.malformed++;
		return false;
	}
	me->stats.records++;
	/* No file (anonymous JIT code, [vdso]): the samples' own path handles it. */
	if (!m->ino && !m->maj && !m->min) {
		me->stats.anonymous++;
		return false;
	}
	memcpy(&id, (const uint8_t *)rec + size - sizeof(id), sizeof(id));
	e = (struct op_mmap_event){.hdr = {.type = OP_EVENT_MMAP, .pid = m->pid},
				   .tid = m->tid,
				   .prot = m->prot,
				   .ktime_ns = id.time,
				   .addr = m->addr,
				   .len = m->len,
				   .pgoff = m->pgoff,
				   .inode = m->ino,
				   .dev_major = m->maj,
				   .dev_minor = m->min};
	fn(ctx, &e);
	return true;
}

size_t mmap_events__read(struct mmap_events *me, mmap_event_fn fn, void *ctx)
{
	size_t n = 0;

	for (int cpu = 0; me && cpu < me->max_cpus; cpu++) {
		struct mmap_ring *r = &me->rings[cpu];
		uint64_t head, tail;

		if (!r->meta)
			continue;
		head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		tail = r->meta->data_tail;
		/* A head past a whole ring ahead cannot be (the kernel stops at the tail). */
		if (head - tail > r->data_size)
			tail = head;
		while (tail < head) {
			struct perf_event_header h;
			const void *rec;

			if (head - tail < sizeof(h))
				break;
			memcpy(&h, record_at(me, r, tail, sizeof(h)), sizeof(h));
			if (h.size < sizeof(h) || h.size > head - tail) {
				me->stats.malformed++;
				tail = head;
				break;
			}
			rec = record_at(me, r, tail, h.size);
			if (!rec)
				me->stats.malformed++;
			else if (h.type == PERF_RECORD_MMAP2)
				n += handle_mmap2(me, rec, h.size, fn, ctx);
			else if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
				uint64_t lost; /* after the header: id, then lost */

				memcpy(&lost, (const uint8_t *)rec + sizeof(h) + 8, sizeof(lost));
				me->stats.lost += lost;
			}
			tail += h.size;
		}
		__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	}
	return n;
}

void mmap_events__stats(const struct mmap_events *me, struct mmap_events_stats *out)
{
	*out = me ? me->stats : (struct mmap_events_stats){0};
}
