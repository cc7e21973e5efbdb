// SPDX-License-Identifier: Apache-2.0
#include "sampler/sampler.h"

#include <endian.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sampler/mmap_events.h"
#include "util/bpf_ring.h"
#include "util/kernel_btf.h"
#include "util/read_file.h"
#include "sampler.skel.h"
#include "util/clock.h"
#include "util/log.h"

/* How often the poll loop looks for CPUs that went offline or came online. */
#define HOTPLUG_CHECK_NS 1000000000ull
/* The first-sample events are closed at the first poll this long after they start. */
#define FIRST_SAMPLE_KEEP_NS 100000000ull
/*
 * The drainer looks at the ring at least this often (samples do not wake it;
 * events do, a stack copy when nothing else waits in the ring, and the ring
 * at a quarter full): every DRAIN_POLL_MS while records come in bulk (at
 * least DRAIN_BUSY_BYTES were waiting at its last look: copies); every
 * DRAIN_IDLE_MS for DRAIN_URGENT_KEEP_NS after a record that wakes the main
 * thread (an exec, an unknown address: the main thread's own wait shortens as
 * it handles them, and the drainer, asleep by then, would not see it); else
 * at the main thread's own wait (sampler__set_idle_wait_ms: the records it
 * could take no sooner), DRAIN_IDLE_MS unless set, DRAIN_MAX_IDLE_MS at
 * most. A wake-up costs about 100 us of CPU on this VM: the drainer's 10 a
 * second were a quarter of `agent -p`'s steady state (issue 22).
 */
#define DRAIN_POLL_MS	     10
#define DRAIN_IDLE_MS	     100
#define DRAIN_MAX_IDLE_MS    1000
#define DRAIN_URGENT_KEEP_NS 2000000000ull
#define DRAIN_BUSY_BYTES     (64u << 10)
/*
 * A mapping's record (mmap_events.h) wakes the drainer at most this often: a
 * host starting processes maps code thousands of times a second, and what a
 * wake-up finds is read at once all the same. It bounds how long a library
 * mapped over a known range is walked with the old file's table.
 */
#define DRAIN_MMAP_GAP_NS (20ull * 1000 * 1000)
/* Mapping records over a known range waiting to be queued among the ring's by time. */
#define MMAP_PENDING_MAX 32
/* The queue's bound (bytes of records), unless twice the ring is more. */
#define QUEUE_MIN_BYTES (32u << 20)

/* A record taken out of the ring, waiting in the queue for the main thread. */
struct queued_record {
	struct queued_record *next;
	size_t size;
	uint64_t data[]; /* the record, 8-aligned as in the ring */
};

struct sampler {
	struct sampler_bpf *skel;
	struct bpf_ring *rb; /* one mapping of the data (util/bpf_ring.h) */
	/* Indexed by CPU number, max_cpus (possible CPUs) long; -1: not sampled. link_fds[cpu]
	 * is -1 too when the kernel has no perf links and the program sits on the event. */
	int *link_fds;
	int *perf_fds;
	/* The first-sample events (open_first_sample), indexed like perf_fds, and
	 * their links; -1: none (the CPU samples at its first tick instead). */
	int *first_fds, *first_link_fds;
	uint64_t *enabled_ns; /* the event's time enabled at the last check */
	int max_cpus;
	int n_cpus; /* events open now */
	uint32_t frequency_hz;
	uint64_t next_check_ns;
	bool *wanted;		 /* max_cpus long: CPUs to sample (--cpu), NULL: all */
	bool enabled;		 /* events counting (sampler__set_enabled) */
	uint64_t first_armed_ns; /* when the first-sample events were set going; 0: not */
	struct sampler_hotplug_stats hotplug;
	/* The ring's consumer and producer positions, mapped read-only apart from
	 * libbpf's mapping (which does not say them in libbpf 1.1), to measure
	 * its fill at each poll: NULL when not mapped. */
	const volatile unsigned long *ring_cons, *ring_prod;
	sampler_event_fn fn;
	void *ctx;
	/*
	 * The drainer (issue 17): a thread that only moves records from the ring
	 * into the queue, so that the ring empties on time while the main thread
	 * loads tables, reads maps or unwinds held copies; a ring left half full
	 * refuses stack copies. The callback (fn) runs on the main thread only,
	 * at sampler__poll()/sampler__drain(), in the ring's order.
	 * rb_lock: one consumer of the ring at a time (libbpf's is not
	 * thread-safe), held only while consuming. q_lock: the queue and its
	 * counters. wake_fd: an eventfd the drainer writes when the main thread
	 * should come now (a process or unknown-address event, or a queue past a
	 * quarter of the ring), as those records woke the reader before.
	 */
	pthread_t drainer;
	bool drainer_running;
	bool locks_ready;
	pthread_mutex_t rb_lock, q_lock;
	pthread_cond_t q_taken; /* signalled when the main thread empties the queue */
	bool stopping;		/* under q_lock */
	int wake_fd;
	bool wake_sent; /* under q_lock: wake_fd written, not read yet */
	/* The drainer's wait while records trickle (sampler__set_idle_wait_ms), and
	 * when it last queued a record that wakes the main thread (CLOCK_MONOTONIC
	 * ns, 0: never): both atomic, read by the drainer between its waits. */
	int idle_wait_ms;
	uint64_t last_urgent_ns;
	/* The drainer waits on drain_epfd: the ring's epoll fd and stop_fd, an eventfd
	 * sampler__free() writes so that a long wait ends at once. */
	int drain_epfd, stop_fd;
	struct queued_record *q_first, *q_last;
	uint64_t q_bytes, q_max_bytes;
	/* The drainer reads the ring while q_bytes and the ring's fill are below this. */
	uint64_t q_room;
	uint64_t ring_size; /* the ring's bytes */
	/* The main thread's: records taken from the queue, not handed over yet
	 * (a hand-over cut at its budget), in order. */
	struct queued_record *taken;
	/*
	 * Executable file mappings (mmap_events.h), NULL when they cannot be
	 * followed. Read under rb_lock with the ring: those over a range the
	 * trie holds for the process wait in mm_pending (oldest first) and go
	 * into the queue before the first ring record of their time or later,
	 * so the main thread handles the samples taken before a library was
	 * mapped over another's range with the old maps, and those after with
	 * the new. mm_read_ns: when the rings were last read (a ring record
	 * written after it has them read again first).
	 */
	struct mmap_events *mm;
	struct op_mmap_event mm_pending[MMAP_PENDING_MAX];
	size_t mm_n;
	uint64_t mm_read_ns;
	uint64_t mm_last_wake_ns; /* the drainer's: its last wake-up by a mapping's record */
	bool mm_warned;
	/* Copied into hotplug (under q_lock) after each read: mm_queued is
	 * written under rb_lock, mm_throttled by the drainer (atomic). */
	uint64_t mm_queued, mm_throttled, mm_wakeups;
};

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's warnings are noise unless -v; its debug output (verifier) needs -vv. */
	log_vmsg(level == LIBBPF_DEBUG ? LOG_DEBUG : LOG_INFO, fmt, ap);
	return 0;
}

int sampler__parse_cpu_list(const char *text, int *cpus, int max)
{
	const char *p = text;
	int n = 0;

	while (*p && *p != '\n') {
		char *end;
		long lo = strtol(p, &end, 10), hi;

		if (end == p || lo < 0)
			return -EINVAL;
		hi = lo;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo)
				return -EINVAL;
			p = end;
		}
		for (long c = lo; c <= hi && n < max; c++)
			cpus[n++] = (int)c;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return n;
}

static int online_cpus(int **out)
{
	int max = libbpf_num_possible_cpus(), n, err;
	char *text;
	size_t len;
	int *cpus;

	if (max <= 0)
		return max ? max : -ENODEV;
	err = read_file("/sys/devices/system/cpu/online", &text, &len);
	if (err)
		return err;
	cpus = calloc((size_t)max, sizeof(*cpus));
	if (!cpus) {
		free(text);
		return -ENOMEM;
	}
	n = sampler__parse_cpu_list(text, cpus, max);
	free(text);
	if (n <= 0) {
		free(cpus);
		return n ? n : -ENODEV;
	}
	*out = cpus;
	return n;
}

static int open_cpu_clock(int cpu, uint32_t hz)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .size = sizeof(attr),
	    .freq = 1,
	    .sample_freq = hz,
	    /* read() gives the time enabled: it stops growing when the CPU went away. */
	    .read_format = PERF_FORMAT_TOTAL_TIME_ENABLED,
	    /* Started by sampler__set_enabled once the session is ready. */
	    .disabled = 1,
	};
	int fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * cpu's first-sample event: a clock with a 10 us period, opened stopped, set
 * going for one overflow (PERF_EVENT_IOC_REFRESH) when sampling starts, so
 * the first sample comes at once rather than a whole period later (50 ms at
 * 20 Hz: a sixth of start-up on an idle host, issue 22). Its period tells it
 * apart in on_sample, which returns 1 for it: from Linux 6.10 the kernel
 * counts an overflow against the refresh only when the program returns
 * nonzero. fd or -errno.
 */
static int open_first_sample(int cpu)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .size = sizeof(attr),
	    .sample_period = OP_FIRST_SAMPLE_PERIOD_NS,
	    .disabled = 1,
	};
	int fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* The bytes written in the ring and not read yet (0 when its positions are not mapped). */
static uint64_t ring_pending(const struct sampler *s)
{
	unsigned long cons, prod;

	if (!s->ring_cons)
		return 0;
	cons = __atomic_load_n(s->ring_cons, __ATOMIC_ACQUIRE);
	prod = __atomic_load_n(s->ring_prod, __ATOMIC_ACQUIRE);
	return prod - cons <= s->ring_size ? prod - cons : 0;
}

/* Whether a record woke the reader before the drainer (FORCE_WAKEUP in sampler.bpf.c). */
static bool record_is_urgent(const void *data, size_t size)
{
	const struct op_event_header *h = data;

	if (size < sizeof(*h))
		return false;
	return h->type != OP_EVENT_TRACE && h->type != OP_EVENT_STACK_COPY &&
	       h->type != OP_EVENT_OFFCPU_END;
}

/*
 * The ring's callback (under rb_lock, on either thread): queues a copy of the
 * record. Past the queue's room it still queues it but ends the read
 * (-ENOSPC: the reader moves the consumer past this record and stops), so that
 * the rest stays in the ring; a record is lost only past the hard bound or
 * out of memory (counted).
 */
static int queue_record(struct sampler *s, const void *data, size_t size)
{
	struct queued_record *r = malloc(sizeof(*r) + size);
	uint64_t fill = ring_pending(s);
	bool wake, full, urgent;

	if (r) {
		r->next = NULL;
		r->size = size;
		memcpy(r->data, data, size);
	}
	pthread_mutex_lock(&s->q_lock);
	/* The fill behind the reader, also in the middle of a long read (the reader
	 * moves the consumer position record by record). */
	if (fill > s->hotplug.ring_high_water)
		s->hotplug.ring_high_water = fill;
	if (!r || s->q_bytes + size > s->q_max_bytes) {
		s->hotplug.queue_dropped++;
		pthread_mutex_unlock(&s->q_lock);
		free(r);
		return -ENOSPC;
	}
	if (s->q_last)
		s->q_last->next = r;
	else
		s->q_first = r;
	s->q_last = r;
	s->q_bytes += size;
	if (s->q_bytes > s->hotplug.queue_high_water)
		s->hotplug.queue_high_water = s->q_bytes;
	full = s->q_bytes > s->q_room;
	urgent = record_is_urgent(data, size);
	if (urgent)
		__atomic_store_n(&s->last_urgent_ns, clock__now_ns(), __ATOMIC_RELAXED);
	wake = !s->wake_sent && (urgent || s->q_bytes >= s->ring_size / 4);
	if (wake)
		s->wake_sent = true;
	pthread_mutex_unlock(&s->q_lock);
	if (wake) {
		uint64_t one = 1;

		if (write(s->wake_fd, &one, sizeof(one)) < 0) {
			/* Full counter (cannot be at 1 per wake): the main thread comes at its
			 * timeout. */
		}
	}
	return full ? -ENOSPC : 0;
}

/* A ring record's time (CLOCK_MONOTONIC), 0 for those without one. */
static uint64_t record_time(const void *data, size_t size)
{
	const struct op_event_header *h = data;
	uint64_t t;

	if (size < 32)
		return 0;
	switch (h->type) {
	case OP_EVENT_TRACE:
	case OP_EVENT_STACK_COPY:
	case OP_EVENT_EXEC:
	case OP_EVENT_EXIT:
		memcpy(&t, (const uint8_t *)data + offsetof(struct op_trace, ktime_ns), sizeof(t));
		return t;
	case OP_EVENT_OFFCPU_END:
		memcpy(&t, (const uint8_t *)data + offsetof(struct op_offcpu_end, end_ns),
		       sizeof(t));
		return t;
	default:
		return 0;
	}
}

/* Queues the pending mapping records of time up to t (all with UINT64_MAX). */
static void flush_mmaps(struct sampler *s, uint64_t t)
{
	size_t i = 0;

	while (i < s->mm_n && s->mm_pending[i].ktime_ns <= t)
		queue_record(s, &s->mm_pending[i++], sizeof(s->mm_pending[0]));
	memmove(s->mm_pending, s->mm_pending + i, (s->mm_n - i) * sizeof(s->mm_pending[0]));
	s->mm_n -= i;
}

/* What the trie holds for addr of pid: 1 a range, 0 only pid's marker, -1 nothing
 * (a process not published). */
static int range_at(const struct sampler *s, uint32_t pid, uint64_t addr)
{
	struct op_mapping_key key = {.prefixlen = 32 + 64, .pid = pid, .addr_be = htobe64(addr)};
	struct op_mapping_value v;

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.exe_mappings), &key, &v))
		return -1;
	return v.table_id ? 1 : 0;
}

/*
 * mmap_events__read's callback (under rb_lock): a mapping of file code at an
 * address the trie holds a range for (its first or last byte) is kept to be
 * queued by time; the others are not the main thread's business (a new
 * range is found by the samples: OP_EVENT_UNKNOWN), which keeps it and the
 * queue out of a host's start-up.
 */
static void on_mmap(void *ctx, const struct op_mmap_event *e)
{
	struct sampler *s = ctx;
	int first;
	size_t i;

	if (!e->len)
		return;
	/* (A process the trie knows nothing of costs one lookup.) */
	first = range_at(s, e->hdr.pid, e->addr);
	if (first < 0 || (!first && range_at(s, e->hdr.pid, e->addr + e->len - 1) <= 0))
		return;
	s->mm_queued++;
	if (s->mm_n == MMAP_PENDING_MAX)
		flush_mmaps(s, s->mm_pending[0].ktime_ns); /* the oldest goes now: bounded */
	/* Each CPU's records come in order, not the CPUs': kept sorted by time. */
	for (i = s->mm_n; i > 0 && s->mm_pending[i - 1].ktime_ns > e->ktime_ns; i--)
		s->mm_pending[i] = s->mm_pending[i - 1];
	s->mm_pending[i] = *e;
	s->mm_n++;
}

/* Reads the mapping records (under rb_lock). */
static void read_mmaps(struct sampler *s)
{
	if (!s->mm)
		return;
	s->mm_read_ns = clock__now_ns();
	mmap_events__read(s->mm, on_mmap, s);
}

/*
 * The ring's callback (under rb_lock): queues the record, after the mapping
 * records older than it. A record written after the mapping rings were read
 * has them read again first: a mapping made between the two would else be
 * queued after samples taken later than it.
 */
static int on_record(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;
	uint64_t t = s->mm ? record_time(data, size) : 0;

	if (t) {
		if (t > s->mm_read_ns)
			read_mmaps(s);
		if (s->mm_n)
			flush_mmaps(s, t);
	}
	return queue_record(s, data, size);
}

/*
 * Attaches the program to the event without starting it: 0 or -errno. libbpf's
 * bpf_program__attach_perf_event (1.1, Debian 12) enables the event after attaching,
 * and samples of that moment would come before the session has its clock offset.
 * *link_fd: the perf link (kernels from 5.15), or -1 when the program was set on the
 * event itself (older kernels; it goes when the event is closed).
 */
static int attach_stopped(int prog_fd, int perf_fd, int *link_fd)
{
	int fd = bpf_link_create(prog_fd, perf_fd, BPF_PERF_EVENT, NULL);

	*link_fd = -1;
	if (fd >= 0) {
		*link_fd = fd;
		return 0;
	}
	if (ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0)
		return -errno;
	return 0;
}

/*
 * cpu's mapping records (mmap_events.h), read by the drainer. Without them a
 * library mapped over another's range keeps the old one's table and names:
 * said once, not fatal.
 */
static void open_mmap_events(struct sampler *s, int cpu)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int fd;

	if (!s->mm)
		return;
	if (s->locks_ready)
		pthread_mutex_lock(&s->rb_lock);
	fd = mmap_events__open_cpu(s->mm, cpu);
	if (s->locks_ready)
		pthread_mutex_unlock(&s->rb_lock);
	if (fd < 0) {
		if (!s->mm_warned)
			pr_warn("cpu %d: cannot follow code mappings (%s): a library mapped over "
				"another's range keeps its names until its maps are read again",
				cpu, strerror(-fd));
		s->mm_warned = true;
		return;
	}
	ev.data.fd = fd;
	if (s->drain_epfd >= 0 && epoll_ctl(s->drain_epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		/* Read at the drainer's own pace then. */
	}
}

/* Opens cpu's event and attaches the program: 0, or -errno (nothing left open). */
static int open_cpu(struct sampler *s, int cpu)
{
	int fd = open_cpu_clock(cpu, s->frequency_hz), err;

	if (fd < 0)
		return fd;
	err = attach_stopped(bpf_program__fd(s->skel->progs.on_sample), fd, &s->link_fds[cpu]);
	if (err) {
		close(fd);
		return err;
	}
	s->perf_fds[cpu] = fd;
	s->enabled_ns[cpu] = 0;
	s->n_cpus++;
	open_mmap_events(s, cpu);
	/* A CPU that comes back while sampling runs starts counting at once. */
	if (s->enabled) {
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		return 0;
	}
	/* Only before the first start (a CPU back later waits for its first tick).
	 * Without it the CPU only starts later: an error is no reason to stop. */
	if (s->first_armed_ns)
		return 0;
	fd = open_first_sample(cpu);
	if (fd < 0)
		return 0;
	if (attach_stopped(bpf_program__fd(s->skel->progs.on_sample), fd,
			   &s->first_link_fds[cpu])) {
		close(fd);
		return 0;
	}
	s->first_fds[cpu] = fd;
	return 0;
}

/* The first-sample events go once they have served (or the CPU does): every
 * CPU's, or only_cpu's (>= 0). */
static void close_first_samples(struct sampler *s, int only_cpu)
{
	for (int cpu = 0; cpu < s->max_cpus; cpu++) {
		if ((only_cpu >= 0 && cpu != only_cpu) || s->first_fds[cpu] < 0)
			continue;
		if (s->first_link_fds[cpu] >= 0)
			close(s->first_link_fds[cpu]);
		close(s->first_fds[cpu]);
		s->first_fds[cpu] = s->first_link_fds[cpu] = -1;
	}
}

void sampler__set_enabled(struct sampler *s, bool on)
{
	/* The first start only (they are closed after it): one sample at once, then the ticks. */
	bool first = on && !s->first_armed_ns;

	s->enabled = on;
	if (first)
		s->first_armed_ns = clock__now_ns();
	for (int cpu = 0; cpu < s->max_cpus; cpu++) {
		if (s->perf_fds[cpu] < 0)
			continue;
		if (first && s->first_fds[cpu] >= 0)
			ioctl(s->first_fds[cpu], PERF_EVENT_IOC_REFRESH, 1);
		ioctl(s->perf_fds[cpu], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
	}
}

void sampler__stop_at(struct sampler *s, uint64_t deadline_ns)
{
	s->skel->data->stop_after_ns = deadline_ns;
}

int sampler__pid_filter_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.pid_filter);
}

static void close_cpu(struct sampler *s, int cpu)
{
	close_first_samples(s, cpu);
	if (s->mm) {
		/* (Closing the fd also takes it out of the drainer's epoll set.) */
		if (s->locks_ready)
			pthread_mutex_lock(&s->rb_lock);
		mmap_events__close_cpu(s->mm, cpu);
		if (s->locks_ready)
			pthread_mutex_unlock(&s->rb_lock);
	}
	if (s->perf_fds[cpu] < 0)
		return;
	if (s->link_fds[cpu] >= 0)
		close(s->link_fds[cpu]);
	s->link_fds[cpu] = -1;
	close(s->perf_fds[cpu]);
	s->perf_fds[cpu] = -1;
	s->n_cpus--;
}

/* The event's time enabled, or 0 when it cannot be read. */
static uint64_t time_enabled(int fd)
{
	uint64_t v[2] = {0, 0};

	return read(fd, v, sizeof(v)) == (ssize_t)sizeof(v) ? v[1] : 0;
}

uint64_t sampler__time_enabled_ns(const struct sampler *s)
{
	uint64_t sum = 0;

	for (int cpu = 0; cpu < s->max_cpus; cpu++)
		if (s->perf_fds[cpu] >= 0)
			sum += time_enabled(s->perf_fds[cpu]);
	return sum;
}

void sampler__check_cpus(struct sampler *s)
{
	bool *online = calloc((size_t)s->max_cpus, sizeof(*online));
	int *cpus = calloc((size_t)s->max_cpus, sizeof(*cpus)), n = -ENOMEM;
	char *text = NULL;
	size_t len;

	if (!online || !cpus)
		goto cleanup;
	n = read_file("/sys/devices/system/cpu/online", &text, &len);
	if (!n)
		n = sampler__parse_cpu_list(text, cpus, s->max_cpus);
	if (n <= 0)
		goto cleanup; /* keep what runs; look again next time */
	for (int i = 0; i < n; i++)
		if (cpus[i] >= 0 && cpus[i] < s->max_cpus && (!s->wanted || s->wanted[cpus[i]]))
			online[cpus[i]] = true;
	for (int cpu = 0; cpu < s->max_cpus; cpu++) {
		if (s->perf_fds[cpu] >= 0) {
			/* A CPU offline now, or one that went and came back since the last
			 * look (its event stopped: the time enabled no longer grows). */
			uint64_t enabled = time_enabled(s->perf_fds[cpu]);
			/* A stopped event's time does not grow either (probabilistic
			 * profiling, before the start): then only the online list says. */
			bool stopped = s->enabled && enabled && enabled == s->enabled_ns[cpu];

			s->enabled_ns[cpu] = enabled;
			if (online[cpu] && !stopped)
				continue;
			pr_info("cpu %d %s: its sampling event is closed", cpu,
				online[cpu] ? "was offline meanwhile" : "went offline");
			close_cpu(s, cpu);
			s->hotplug.closed++;
		}
		if (!online[cpu])
			continue;
		n = open_cpu(s, cpu);
		if (n) {
			/* Said the first time only (every time with -v): a CPU coming up
			 * may refuse a while, and it is retried every second. */
			if (!s->hotplug.open_errors++ || log_verbosity > 0)
				pr_warn("cpu %d is online but cannot be sampled: %s (retried)", cpu,
					strerror(-n));
			continue;
		}
		s->hotplug.reopened++;
		pr_info("cpu %d is online: sampled again", cpu);
	}
cleanup:
	free(text);
	free(cpus);
	free(online);
}

void sampler__hotplug_stats(struct sampler *s, struct sampler_hotplug_stats *out)
{
	pthread_mutex_lock(&s->q_lock);
	*out = s->hotplug;
	pthread_mutex_unlock(&s->q_lock);
}

/* The ring at low frequencies: one second of the copies' at most, in the half they may use. */
#define RING_MIN_BYTES (2u << 20)

static size_t ring_size(int n_cpus, const struct sampler_opts *opts, uint32_t copies_per_cpu)
{
	/* ~256 KiB per CPU, a power of two as the map requires; at least 8 MiB, so
	 * that the stack copies of processes not ready yet (up to 129 KiB each
	 * but the deep ones, up to 513 KiB, and only while the ring is under half
	 * full) do not run short
	 * while the reader is slow (a loaded machine, a long maps read): a
	 * compiler loop starts a process every second or so. */
	size_t want = (size_t)n_cpus * 256 * 1024, size = 8 << 20, low = RING_MIN_BYTES;
	uint64_t copies;

	while (size < want && size < (1u << 30))
		size <<= 1;
	/*
	 * Its pages are all resident, twice mapped (issue 22: 16 MiB of a 32 MiB
	 * target). A sample becomes a copy at most once, so below the copies'
	 * budget the copies come at -F a second per CPU: a ring whose half holds
	 * a second of the largest copies carries what 8 MiB did (with 128 KiB
	 * copies that is 8 MiB again at 20 Hz on 2 CPUs; smaller below).
	 * Switch-outs (--off-cpu) and the all-copies test hook come faster.
	 */
	if (opts->offcpu_threshold || opts->copy_all_stacks || !opts->frequency_hz)
		return size;
	copies =
	    (uint64_t)(opts->frequency_hz < copies_per_cpu ? opts->frequency_hz : copies_per_cpu) *
	    (uint64_t)n_cpus;
	while (low < size &&
	       (low < want || low / 2 < copies * OP_STACK_COPY_SIZE(OP_MAX_KERNEL_FRAMES + 1,
								    OP_STACK_COPY_COMMON)))
		low <<= 1;
	return low < size ? low : size;
}

/* Maps the ring's two position pages read-only (for its fill; none if that fails). */
static void map_ring_positions(struct sampler *s)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = bpf_map__fd(s->skel->maps.events);
	void *cons = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0), *prod;

	if (cons == MAP_FAILED)
		return;
	prod = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, page);
	if (prod == MAP_FAILED) {
		munmap(cons, (size_t)page);
		return;
	}
	s->ring_cons = cons;
	s->ring_prod = prod;
	s->hotplug.ring_bytes = bpf_map__max_entries(s->skel->maps.events);
}

/* The bytes in the ring now (written, not yet read), kept as the high-water. */
static void note_ring_fill(struct sampler *s)
{
	uint64_t fill = ring_pending(s);

	/* Under rb_lock; read by sampler__hotplug_stats() under q_lock. */
	pthread_mutex_lock(&s->q_lock);
	if (fill > s->hotplug.ring_high_water)
		s->hotplug.ring_high_water = fill;
	pthread_mutex_unlock(&s->q_lock);
}

static void explain_load_error(int err)
{
	if (err == -EPERM)
		pr_err("not allowed to load BPF programs (%s): run as root, or with CAP_BPF, "
		       "CAP_PERFMON and CAP_SYS_RESOURCE",
		       strerror(-err));
	else if (err == -EACCES)
		pr_err("the kernel's verifier rejected the BPF sampler (run with -vv for its log)");
	else
		pr_err("cannot load the BPF sampler: %s (run with -vv for the verifier log)",
		       strerror(-err));
}

/*
 * Whether a perf_event program may use a hash map that is not preallocated
 * (Linux 6.1 on: elements come from the BPF memory allocator, safe in NMI
 * context; before, the verifier refuses it). A trivial program that looks up
 * such a map is loaded to find out: a few hundred microseconds.
 */
static bool probe_no_prealloc(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts, .map_flags = BPF_F_NO_PREALLOC);
	int map_fd, prog_fd;

	map_fd =
	    bpf_map_create(BPF_MAP_TYPE_HASH, NULL, sizeof(uint32_t), sizeof(uint32_t), 1, &mopts);
	if (map_fd < 0)
		return false;
	{
		/* key = 0 on the stack; bpf_map_lookup_elem(map, &key); return 0 */
		struct bpf_insn insns[] = {
		    {.code = BPF_LD | BPF_DW | BPF_IMM,
		     .dst_reg = BPF_REG_1,
		     .src_reg = BPF_PSEUDO_MAP_FD,
		     .imm = map_fd},
		    {0},
		    {.code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = -8},
		    {.code = BPF_ALU64 | BPF_MOV | BPF_X,
		     .dst_reg = BPF_REG_2,
		     .src_reg = BPF_REG_10},
		    {.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -8},
		    {.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem},
		    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
		    {.code = BPF_JMP | BPF_EXIT},
		};

		prog_fd = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, NULL, "GPL", insns,
					sizeof(insns) / sizeof(insns[0]), NULL);
	}
	close(map_fd);
	if (prog_fd < 0)
		return false;
	close(prog_fd);
	return true;
}

/*
 * Map sizes and flags that depend on the command. A preallocated hash map
 * fills its free list at creation (most of the maps' share of start-up): the
 * maps the programs only read (user space writes them) are allocated as
 * entries come, where the kernel allows it; the off-CPU map is one entry
 * unless --off-cpu (its program is not loaded then).
 */
static void size_maps(struct sampler_bpf *skel, bool offcpu)
{
	struct bpf_map *read_only[] = {
	    skel->maps.table_info, skel->maps.interp_procs, skel->maps.py_procs,
	    skel->maps.rb_procs,   skel->maps.php_procs,    skel->maps.perl_procs,
	    skel->maps.v8_procs,   skel->maps.jvm_procs,
	};

	if (!offcpu)
		bpf_map__set_max_entries(skel->maps.offcpu_pending, 1);
	if (!probe_no_prealloc())
		return;
	for (size_t i = 0; i < sizeof(read_only) / sizeof(read_only[0]); i++)
		bpf_map__set_map_flags(read_only[i],
				       bpf_map__map_flags(read_only[i]) | BPF_F_NO_PREALLOC);
}

static void *drainer_main(void *arg);
static int start_drainer(struct sampler *s);

int sampler__open(const struct sampler_opts *opts, sampler_event_fn fn, void *ctx,
		  struct sampler **out)
{
	struct sampler *s;
	int *cpus = NULL, n_cpus, err;
	uint8_t one = 1;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err("this kernel has no BTF (/sys/kernel/btf/vmlinux): omniprof needs a kernel "
		       "built with CONFIG_DEBUG_INFO_BTF=y");
		return -EOPNOTSUPP;
	}
	libbpf_set_print(libbpf_log);
	n_cpus = online_cpus(&cpus);
	if (n_cpus < 0) {
		pr_err("cannot list online CPUs: %s", strerror(-n_cpus));
		return n_cpus;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		free(cpus);
		return -ENOMEM;
	}
	s->fn = fn;
	s->ctx = ctx;
	s->wake_fd = -1;
	s->drain_epfd = s->stop_fd = -1;
	s->idle_wait_ms = DRAIN_IDLE_MS;
	s->frequency_hz = opts->frequency_hz;
	s->max_cpus = libbpf_num_possible_cpus();
	s->link_fds = malloc((size_t)s->max_cpus * sizeof(*s->link_fds));
	s->perf_fds = malloc((size_t)s->max_cpus * sizeof(*s->perf_fds));
	s->enabled_ns = calloc((size_t)s->max_cpus, sizeof(*s->enabled_ns));
	s->first_fds = malloc((size_t)s->max_cpus * sizeof(*s->first_fds));
	s->first_link_fds = malloc((size_t)s->max_cpus * sizeof(*s->first_link_fds));
	if (!s->link_fds || !s->perf_fds || !s->enabled_ns || !s->first_fds || !s->first_link_fds) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (int i = 0; i < s->max_cpus; i++)
		s->perf_fds[i] = s->link_fds[i] = s->first_fds[i] = s->first_link_fds[i] = -1;
	/* NULL (out of memory): mappings are not followed, as where the kernel refuses. */
	s->mm = mmap_events__new(s->max_cpus);
	if (opts->n_cpus) {
		bool any = false;

		s->wanted = calloc((size_t)s->max_cpus, sizeof(*s->wanted));
		if (!s->wanted) {
			err = -ENOMEM;
			goto cleanup;
		}
		for (size_t i = 0; i < opts->n_cpus; i++) {
			if (opts->cpus[i] < 0 || opts->cpus[i] >= s->max_cpus) {
				pr_err("--cpu: cpu %d does not exist (this machine has %d)",
				       opts->cpus[i], s->max_cpus);
				err = -EINVAL;
				goto cleanup;
			}
			s->wanted[opts->cpus[i]] = true;
		}
		for (int i = 0; i < n_cpus; i++)
			any |= cpus[i] < s->max_cpus && s->wanted[cpus[i]];
		if (!any) {
			pr_err("--cpu: none of the CPUs given is online");
			err = -ENODEV;
			goto cleanup;
		}
	}

	s->skel = sampler_bpf__open();
	if (!s->skel) {
		err = -errno;
		explain_load_error(err);
		goto cleanup;
	}
	/* The kernel's field offsets, from its BTF by our own reader: the object has no
	 * CO-RE relocation, so libbpf does not load vmlinux BTF (bpf/kernel_read.h). */
	err = kernel_offsets__get(&s->skel->rodata->kernel_offsets);
	if (err)
		goto cleanup;
	s->skel->rodata->filter_pids = opts->n_pids > 0 || opts->filter_pids;
	s->skel->rodata->report_all_execs = opts->report_all_execs;
	s->skel->rodata->follow_children = opts->follow_children;
	s->skel->rodata->filter_cgroup = opts->filter_cgroup;
	if (opts->max_frames)
		s->skel->rodata->max_user_frames = opts->max_frames;
	s->skel->rodata->kernel_stacks = opts->kernel_stacks;
	s->skel->rodata->copy_all_stacks = opts->copy_all_stacks;
	if (opts->copy_budget_count)
		s->skel->rodata->copy_budget_count = opts->copy_budget_count;
	if (opts->copy_budget_bytes)
		s->skel->rodata->copy_budget_bytes =
		    opts->copy_budget_bytes < (1ull << 32) ? opts->copy_budget_bytes : (1ull << 32);
	s->skel->rodata->offcpu_threshold = opts->offcpu_threshold;
	/* The context-switch program costs every switch: loaded only when asked for. */
	bpf_program__set_autoload(s->skel->progs.on_switch, opts->offcpu_threshold != 0);
	/* Attached by sampler__attach_offcpu(), when the session is ready for it. */
	bpf_program__set_autoattach(s->skel->progs.on_switch, false);
	bpf_map__set_max_entries(
	    s->skel->maps.events,
	    (uint32_t)ring_size(n_cpus, opts, s->skel->rodata->copy_budget_count));
	/* The samples' wakeup test: the ring's size known to the program (a query fewer). */
	s->skel->rodata->ring_quarter = bpf_map__max_entries(s->skel->maps.events) / 4;
	/* A CPU looks at the ring's fill once per this many bytes of its records, so
	 * that all of them together write at most half a quarter unseen (the bounds:
	 * trace_wakeup in sampler.bpf.c). */
	s->skel->rodata->ring_check_bytes =
	    s->skel->rodata->ring_quarter / (2 * (uint64_t)(n_cpus > 0 ? n_cpus : 1));
	size_maps(s->skel, opts->offcpu_threshold != 0);
	/* One stack-copy buffer per possible CPU (bpf/stack_copy.h). */
	bpf_map__set_max_entries(s->skel->maps.stack_copy_scratch,
				 (uint32_t)libbpf_num_possible_cpus());
	if (opts->max_mappings)
		bpf_map__set_max_entries(s->skel->maps.exe_mappings, opts->max_mappings);
	if (opts->n_pids > 4096 || opts->pid_filter_size > 4096)
		bpf_map__set_max_entries(s->skel->maps.pid_filter,
					 opts->n_pids > opts->pid_filter_size
					     ? (uint32_t)opts->n_pids
					     : opts->pid_filter_size);
	else if (!s->skel->rodata->filter_pids && !opts->follow_children)
		/* Not read nor written without a per-process filter: one entry (a
		 * preallocated hash map fills its free list at creation). */
		bpf_map__set_max_entries(s->skel->maps.pid_filter, 1);
	err = sampler_bpf__load(s->skel);
	if (err) {
		explain_load_error(err);
		goto cleanup;
	}
	for (size_t i = 0; i < opts->n_pids; i++) {
		err = bpf_map_update_elem(bpf_map__fd(s->skel->maps.pid_filter), &opts->pids[i],
					  &one, BPF_ANY);
		if (err) {
			err = -errno;
			pr_err("cannot add pid %u to the filter: %s", opts->pids[i],
			       strerror(-err));
			goto cleanup;
		}
	}
	if (opts->filter_cgroup) {
		uint32_t zero = 0, fd = (uint32_t)opts->cgroup_fd;

		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.cgroup_filter), &zero, &fd,
					BPF_ANY)) {
			err = -errno;
			pr_err("--cgroup: the kernel refused the folder: %s", strerror(-err));
			goto cleanup;
		}
	}
	/* Before the first sample: a process not ready is never walked by frame
	 * pointers because of when it was sampled (the session reads the ring from
	 * its start-up on; the copies' budget bounds what waits meanwhile). */
	s->skel->bss->stack_copy_enabled = true;
	err = sampler_bpf__attach(s->skel); /* the exec/exit tracepoints */
	if (err) {
		pr_err("cannot attach the process tracepoints: %s", strerror(-err));
		goto cleanup;
	}

	for (int i = 0; i < n_cpus; i++) {
		if (cpus[i] >= s->max_cpus || (s->wanted && !s->wanted[cpus[i]]))
			continue;
		err = open_cpu(s, cpus[i]);
		if (err == -ENODEV || err == -ENOENT) {
			/* The CPU went offline since we listed it: sample the others (and
			 * this one when it is back). */
			pr_info("cpu %d is offline, not sampled", cpus[i]);
			continue;
		}
		if (err) {
			if (err == -EACCES || err == -EPERM)
				pr_err("perf_event_open refused (%s): run as root or grant "
				       "CAP_PERFMON "
				       "(kernel.perf_event_paranoid limits unprivileged users)",
				       strerror(-err));
			else if (err == -EINVAL)
				pr_err(
				    "perf_event_open rejected %u Hz on cpu %d: lower -F or raise "
				    "kernel.perf_event_max_sample_rate",
				    opts->frequency_hz, cpus[i]);
			else
				pr_err("cannot sample cpu %d: %s", cpus[i], strerror(-err));
			goto cleanup;
		}
	}
	if (!s->n_cpus) {
		pr_err("no CPU could be sampled");
		err = -ENODEV;
		goto cleanup;
	}
	s->next_check_ns = clock__now_ns() + HOTPLUG_CHECK_NS;

	s->rb = bpf_ring__new(bpf_map__fd(s->skel->maps.events), on_record, s);
	if (!s->rb) {
		err = -errno;
		pr_err("cannot map the ring buffer: %s", strerror(-err));
		goto cleanup;
	}
	map_ring_positions(s);
	err = start_drainer(s);
	if (err)
		goto cleanup;
	free(cpus);
	*out = s;
	return 0;

cleanup:
	free(cpus);
	sampler__free(s);
	return err;
}

/* The drainer's wait set: the ring's epoll fd (nested) and stop_fd. 0 or -errno after one line. */
static int drain_wait_init(struct sampler *s)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int ring_epfd = bpf_ring__epoll_fd(s->rb), err;

	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->drain_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->stop_fd < 0 || s->drain_epfd < 0)
		goto fail;
	ev.data.fd = s->stop_fd;
	if (epoll_ctl(s->drain_epfd, EPOLL_CTL_ADD, s->stop_fd, &ev) < 0)
		goto fail;
	ev.data.fd = ring_epfd;
	if (ring_epfd >= 0 && epoll_ctl(s->drain_epfd, EPOLL_CTL_ADD, ring_epfd, &ev) < 0)
		goto fail;
	/* The mapping records of the CPUs opened so far (later ones: open_mmap_events). */
	for (int cpu = 0; cpu < s->max_cpus; cpu++) {
		ev.data.fd = mmap_events__fd(s->mm, cpu);
		if (ev.data.fd >= 0 && epoll_ctl(s->drain_epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
			goto fail;
	}
	return 0;
fail:
	err = -errno;
	pr_err("cannot set up the ring reader's wait: %s", strerror(-err));
	return err;
}

/*
 * Starts the drainer (after the ring is mapped): 0 or -errno after one line.
 * It takes no signal, so that SIGINT and the like still end the main thread's
 * poll at once.
 */
static int start_drainer(struct sampler *s)
{
	sigset_t all, old;
	int err;

	s->ring_size = bpf_map__max_entries(s->skel->maps.events);
	/* Twice the ring at least: the drainer's room (bound less half a ring) holds a full ring.
	 */
	s->q_max_bytes = 2 * s->ring_size > QUEUE_MIN_BYTES ? 2 * s->ring_size : QUEUE_MIN_BYTES;
	/* Half a ring under the bound: the largest record (a copy, 513 KiB) past the room still
	 * fits. */
	s->q_room = s->q_max_bytes - s->ring_size / 2;
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0) {
		err = -errno;
		pr_err("cannot create an eventfd for the ring's reader: %s", strerror(-err));
		return err;
	}
	err = drain_wait_init(s);
	if (err)
		return err;
	pthread_mutex_init(&s->rb_lock, NULL);
	pthread_mutex_init(&s->q_lock, NULL);
	pthread_cond_init(&s->q_taken, NULL);
	s->locks_ready = true;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&s->drainer, NULL, drainer_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_err("cannot start the ring's reader thread: %s", strerror(-err));
		return err;
	}
	s->drainer_running = true;
	return 0;
}

int sampler__attach_offcpu(struct sampler *s)
{
	int err;

	if (!bpf_program__autoload(s->skel->progs.on_switch) || s->skel->links.on_switch)
		return 0;
	s->skel->links.on_switch = bpf_program__attach(s->skel->progs.on_switch);
	if (!s->skel->links.on_switch) {
		err = -errno;
		pr_err("cannot attach the context-switch tracepoint (off-CPU): %s", strerror(-err));
		return err;
	}
	return 0;
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	if (s->drainer_running) {
		pthread_mutex_lock(&s->q_lock);
		s->stopping = true;
		pthread_cond_signal(&s->q_taken);
		pthread_mutex_unlock(&s->q_lock);
		if (write(s->stop_fd, &(uint64_t){1}, sizeof(uint64_t)) < 0) {
			/* Cannot fail once created (a counter far from full): the drainer
			 * would stop at the end of its wait anyway. */
		}
		pthread_join(s->drainer, NULL);
	}
	if (s->locks_ready) {
		/* Records never handed over go unread, as those left in the ring. */
		for (struct queued_record *r = s->q_first, *next; r; r = next) {
			next = r->next;
			free(r);
		}
		for (struct queued_record *r = s->taken, *next; r; r = next) {
			next = r->next;
			free(r);
		}
		pthread_mutex_destroy(&s->rb_lock);
		pthread_mutex_destroy(&s->q_lock);
		pthread_cond_destroy(&s->q_taken);
	}
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->drain_epfd >= 0)
		close(s->drain_epfd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	bpf_ring__free(s->rb);
	if (s->ring_cons) {
		munmap((void *)s->ring_cons, (size_t)sysconf(_SC_PAGESIZE));
		munmap((void *)s->ring_prod, (size_t)sysconf(_SC_PAGESIZE));
	}
	for (int i = 0; s->perf_fds && s->first_fds && i < s->max_cpus; i++)
		close_cpu(s, i);
	mmap_events__free(s->mm);
	sampler_bpf__destroy(s->skel);
	free(s->link_fds);
	free(s->perf_fds);
	free(s->enabled_ns);
	free(s->first_fds);
	free(s->first_link_fds);
	free(s->wanted);
	free(s);
}

/* Moves what the ring holds into the queue (either thread). Returns the count or -errno. */
static int consume_ring(struct sampler *s)
{
	int n;

	pthread_mutex_lock(&s->rb_lock);
	/* Before the reads: the fill the reader finds when it comes is the ring's need. */
	note_ring_fill(s);
	read_mmaps(s);
	n = bpf_ring__consume(s->rb);
	/* What is left is older than anything the ring holds next (its records came
	 * after the read, or were read again at a later record). A read the queue's
	 * room cut short leaves records in the ring: they wait for its next read. */
	if (n != -ENOSPC)
		flush_mmaps(s, UINT64_MAX);
	pthread_mutex_lock(&s->q_lock);
	s->hotplug.ring_window_moves = bpf_ring__window_moves(s->rb);
	if (s->mm) {
		struct mmap_events_stats ms;

		mmap_events__stats(s->mm, &ms);
		s->hotplug.mmap_records = ms.records;
		s->hotplug.mmap_lost = ms.lost;
		s->hotplug.mmap_queued = s->mm_queued;
		s->hotplug.mmap_throttled = __atomic_load_n(&s->mm_throttled, __ATOMIC_RELAXED);
		s->hotplug.mmap_wakeups = __atomic_load_n(&s->mm_wakeups, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&s->q_lock);
	pthread_mutex_unlock(&s->rb_lock);
	return n;
}

void sampler__set_idle_wait_ms(struct sampler *s, int ms)
{
	if (!s)
		return;
	ms = ms < DRAIN_POLL_MS ? DRAIN_POLL_MS : ms > DRAIN_MAX_IDLE_MS ? DRAIN_MAX_IDLE_MS : ms;
	__atomic_store_n(&s->idle_wait_ms, ms, __ATOMIC_RELAXED);
}

/* The drainer's next wait: see DRAIN_POLL_MS. */
static int drain_wait_ms(struct sampler *s)
{
	uint64_t urgent = __atomic_load_n(&s->last_urgent_ns, __ATOMIC_RELAXED);
	int idle = __atomic_load_n(&s->idle_wait_ms, __ATOMIC_RELAXED);

	if (ring_pending(s) >= DRAIN_BUSY_BYTES)
		return DRAIN_POLL_MS;
	if (urgent && clock__now_ns() - urgent < DRAIN_URGENT_KEEP_NS && idle > DRAIN_IDLE_MS)
		return DRAIN_IDLE_MS;
	return idle;
}

/*
 * The drainer: waits for the ring's wakeups or drain_wait_ms(), then empties
 * it into the queue. While the queue could not take the whole ring (and what
 * comes during the read: half a ring more), it leaves the ring alone
 * (counted): the BPF side then refuses copies (counted there) and keeps the
 * frame-pointer samples, instead of records lost here.
 */
static void *drainer_main(void *arg)
{
	struct sampler *s = arg;
	struct epoll_event ev[4];
	int wait_ms = DRAIN_POLL_MS, n;

	for (;;) {
		bool waited = false, by_mmap = false;

		/* The ring's wakeup, the stop or the timeout, then the records. */
		n = epoll_wait(s->drain_epfd, ev, 4, wait_ms);
		if (n < 0 && errno != EINTR)
			usleep((useconds_t)(wait_ms < DRAIN_IDLE_MS ? wait_ms : DRAIN_IDLE_MS) *
			       1000);
		for (int i = 0; i < n; i++)
			by_mmap |= ev[i].data.fd != s->stop_fd &&
				   ev[i].data.fd != bpf_ring__epoll_fd(s->rb);
		if (by_mmap) {
			/* Woken by a mapping's record: at most once per DRAIN_MMAP_GAP_NS. */
			uint64_t now = clock__now_ns(), since = now - s->mm_last_wake_ns;

			__atomic_fetch_add(&s->mm_wakeups, 1, __ATOMIC_RELAXED);
			if (since < DRAIN_MMAP_GAP_NS) {
				__atomic_fetch_add(&s->mm_throttled, 1, __ATOMIC_RELAXED);
				usleep((useconds_t)((DRAIN_MMAP_GAP_NS - since) / 1000));
				now = clock__now_ns();
			}
			s->mm_last_wake_ns = now;
		}
		pthread_mutex_lock(&s->q_lock);
		while (!s->stopping && s->q_bytes + ring_pending(s) > s->q_room) {
			struct timespec until;

			if (!waited)
				s->hotplug.queue_full_waits++;
			waited = true;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += DRAIN_POLL_MS * 1000000l;
			if (until.tv_nsec >= 1000000000l) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000l;
			}
			pthread_cond_timedwait(&s->q_taken, &s->q_lock, &until);
		}
		if (s->stopping) {
			pthread_mutex_unlock(&s->q_lock);
			break;
		}
		pthread_mutex_unlock(&s->q_lock);
		wait_ms = drain_wait_ms(s);
		consume_ring(s);
	}
	return NULL;
}

/* Takes what the drainer queued into the main thread's list (s->taken). */
static void take_queue(struct sampler *s)
{
	uint64_t drained;

	pthread_mutex_lock(&s->q_lock);
	s->taken = s->q_first;
	s->q_first = s->q_last = NULL;
	s->q_bytes = 0;
	if (s->wake_sent) {
		if (read(s->wake_fd, &drained, sizeof(drained)) < 0) {
			/* Nothing to read: the wake was already taken. */
		}
		s->wake_sent = false;
	}
	pthread_cond_signal(&s->q_taken);
	pthread_mutex_unlock(&s->q_lock);
}

/*
 * Hands the queued records to the callback, in order, on the calling (main)
 * thread, for up to budget_ns (0: all of them). The queue is taken whole, as
 * before (the drainer fills it again meanwhile, up to its room); what is
 * left of it past the budget is handed over first at the next call, so that
 * the caller's other work between two calls (collecting the file worker's
 * tables, releasing held copies) waits no longer than the budget. Under load
 * the main thread gets a small share of a CPU, and one hand-over of
 * everything queued took 5-18 s of wall time (issue 17): the file worker's
 * finished jobs were not collected meanwhile, so its threads stopped at their
 * done-list bound and libLLVM's build started 11 s late.
 */
static int deliver_queue(struct sampler *s, uint64_t budget_ns)
{
	uint64_t start = budget_ns ? clock__now_ns() : 0;
	struct queued_record *r;
	int n = 0;

	for (;;) {
		if (!s->taken)
			take_queue(s);
		if (!s->taken)
			break;
		while ((r = s->taken)) {
			if (budget_ns && n && clock__now_ns() - start >= budget_ns) {
				s->hotplug.queue_handovers_cut++;
				return n;
			}
			s->taken = r->next;
			s->fn(s->ctx, r->data, r->size);
			free(r);
			n++;
		}
		if (budget_ns)
			break; /* the next queue at the next call: poll() first */
	}
	return n;
}

int sampler__poll(struct sampler *s, int timeout_ms)
{
	struct pollfd pfd = {.fd = s->wake_fd, .events = POLLIN};
	int n;

	/* Samples do not wake the reader (see trace_wakeup in sampler.bpf.c): a
	 * timeout is the usual way here, and what the drainer queued meanwhile
	 * is handed over now. The ring itself is left to the drainer: a main
	 * thread short of CPU would hold it (rb_lock) while preempted. Records
	 * left from the last hand-over go on at once. */
	if (poll(&pfd, 1, s->taken ? 0 : timeout_ms) < 0)
		return -errno;
	n = deliver_queue(s, SAMPLER_HANDOVER_BUDGET_MS * 1000000ull);
	/* Their one sample (10 us after the start) is long done: the events go. */
	if (s->first_armed_ns && s->first_fds &&
	    clock__now_ns() - s->first_armed_ns >= FIRST_SAMPLE_KEEP_NS)
		close_first_samples(s, -1);
	if (clock__now_ns() >= s->next_check_ns) {
		sampler__check_cpus(s);
		s->next_check_ns = clock__now_ns() + HOTPLUG_CHECK_NS;
	}
	return n;
}

bool sampler__backlog(const struct sampler *s)
{
	return s && s->taken;
}

int sampler__drain(struct sampler *s)
{
	int n = deliver_queue(s, 0), err;

	/* What the drainer queued first goes first; then the ring, through the
	 * queue (a read the queue's room ended goes on once it is handed over:
	 * each round takes a record at least, and the rounds are bounded). */
	for (int round = 0; round < 64; round++) {
		err = consume_ring(s);
		n += deliver_queue(s, 0);
		if (err != -ENOSPC)
			return err < 0 ? err : n;
	}
	return n;
}

int sampler__read_stats(struct sampler *s, uint64_t out[OP_STAT__COUNT])
{
	int n = libbpf_num_possible_cpus(), fd = bpf_map__fd(s->skel->maps.stats);
	uint64_t *values;

	if (n <= 0)
		return -ENODEV;
	values = calloc((size_t)n, sizeof(*values));
	if (!values)
		return -ENOMEM;
	for (uint32_t k = 0; k < OP_STAT__COUNT; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, values))
			continue;
		for (int c = 0; c < n; c++)
			out[k] += values[c];
	}
	free(values);
	return 0;
}

void sampler__unwind_fds(const struct sampler *s, struct sampler_unwind_fds *out)
{
	out->mappings = bpf_map__fd(s->skel->maps.exe_mappings);
	out->tables = bpf_map__fd(s->skel->maps.unwind_tables);
	out->info = bpf_map__fd(s->skel->maps.table_info);
	out->rules = bpf_map__fd(s->skel->maps.unwind_rules);
	out->max_rules = bpf_map__max_entries(s->skel->maps.unwind_rules);
	out->max_mappings = bpf_map__max_entries(s->skel->maps.exe_mappings);
	out->gen = (uint64_t *)&s->skel->bss->maps_gen;
}

void sampler__enable_stack_copies(struct sampler *s)
{
	s->skel->bss->stack_copy_enabled = true;
}

bool sampler__copies_keep_up(const struct sampler *s)
{
	/* The budget is a token bucket per CPU refilled at these rates, and a copy
	 * needs room for the common size (a deeper one is cut at the bytes left):
	 * one CPU's samples per second must fit. */
	uint64_t count = s->skel->rodata->copy_budget_count;
	uint64_t by_bytes = s->skel->rodata->copy_budget_bytes /
			    OP_STACK_COPY_SIZE(OP_MAX_KERNEL_FRAMES + 1, OP_STACK_COPY_COMMON);

	return s->frequency_hz <= (count < by_bytes ? count : by_bytes);
}

int sampler__n_cpus(const struct sampler *s)
{
	return s->n_cpus;
}

int sampler__map_fd(const struct sampler *s, const char *name)
{
	int fd = bpf_object__find_map_fd_by_name(s->skel->obj, name);

	return fd < 0 ? -ENOENT : fd;
}

int sampler__read_percpu(const struct sampler *s, const char *name, uint64_t *out, uint32_t n)
{
	int cpus = libbpf_num_possible_cpus(), fd = sampler__map_fd(s, name);
	uint64_t *values;

	if (fd < 0)
		return fd;
	if (cpus <= 0)
		return -ENODEV;
	values = calloc((size_t)cpus, sizeof(*values));
	if (!values)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, values))
			continue;
		for (int c = 0; c < cpus; c++)
			out[k] += values[c];
	}
	free(values);
	return 0;
}
