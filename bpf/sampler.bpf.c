// SPDX-License-Identifier: GPL-2.0 OR Apache-2.0
/*
 * The sampler: a perf_event (cpu-clock) program that runs on every CPU at the
 * sampling frequency, records the interrupted thread's kernel stack and walks
 * its user stack with our own unwinder, and sends one record per sample to
 * user space through a ring buffer. Two tracepoints report exec and exit so
 * user space reads a process's mappings while it still lives.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "omniprof/abi.h"
#include "kernel_read.h"
#include "omniprof/frame_pack.h"

/*
 * The rule lookup and the stack reads are global functions: the verifier
 * checks each once, on its own, instead of once per path through the
 * unwinder (their branches multiplied would exceed its budget).
 */
__noinline int lookup_rule(__u32 pid, __u64 pc, struct op_unwind_rule *rule);
__noinline int read_user_u64(__u64 *dst, __u64 addr);
/* bpf/stack_copy.h: whether the copies' budget allows one now (1) or not (0). */
__noinline int copy_budget_ok(void);

/*
 * What most frames need answered without a call: a stack read the window
 * holds, and the rule of the pc the previous frame looked up (a recursion).
 * A call's return costs more than the rest of a frame on CPUs whose returns
 * are mitigated (AMD's SRSO "Safe RET": a mispredicted return each time), so
 * the calls are left for the misses. Defined with the walk's scratch below.
 */
struct op_unwinder;
static __always_inline int stack_read_u64(struct op_unwinder *u, __u64 *dst, __u64 addr);
static __always_inline int stack_read_hit(struct op_unwinder *u, __u64 *dst, __u64 addr);
static __always_inline int find_rule(struct op_unwinder *u, __u64 pc, struct op_unwind_rule *rule);

#define OP_READ_USER(u, dst, size, addr)                                                           \
	((size) == 8 ? read_user_u64((__u64 *)(dst), (addr))                                       \
		     : bpf_probe_read_user((dst), (size), (const void *)(addr)))
#define OP_READ_STACK_U64(u, dst, addr)	     stack_read_u64((u), (dst), (addr))
#define OP_READ_STACK_U64_FAST(u, dst, addr) stack_read_hit((u), (dst), (addr))
#define OP_FIND_RULE(u, pc, rule)	     find_rule((u), (pc), (rule))
/* The walk is of the current task (the sampled one, or the one switching out). */
#define OP_READ_FSBASE(u) OP_CURRENT_FSBASE()
#include "omniprof/unwind/native.h"

/* The walk (omniprof/unwind/walk.h) and the runtimes' steps it dispatches to. */
#include "interp_steps.h"

#define OP_DELTA_PAGE(chunk, index)                                                                \
	((const struct op_delta_page *)bpf_map_lookup_elem((chunk), &(__u32){(index)}))
#include "omniprof/unwind/delta_search.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by user space before load. */
const volatile bool filter_pids = false; /* only pids in pid_filter */
const volatile bool kernel_stacks = true;
/* Targeting (src/engine/targets.c). report_all_execs: every exec reaches user space,
 * which decides from its name or container whether the process joins pid_filter;
 * follow_children: a new process whose parent is in pid_filter joins it (record --
 * COMMAND, --comm, --container); filter_cgroup: only tasks under cgroup_filter[0]. */
const volatile bool report_all_execs = false;
const volatile bool follow_children = false;
const volatile bool filter_cgroup = false;
/* --max-frames: user frames walked per sample, at most OP_MAX_USER_FRAMES. */
const volatile __u32 max_user_frames = OP_MAX_USER_FRAMES;
/* Copy stacks of processes not ready (bpf/stack_copy.h; off only until user
 * space can read them); copy_all_stacks (a test hook) treats every process
 * as unknown. */
bool stack_copy_enabled = false;
/* A recording's end (bpf_ktime_get_ns, CLOCK_MONOTONIC): no sample is taken from then
 * on, however late user space is to stop the events (record -d). */
__u64 stop_after_ns = ~0ull;
const volatile bool copy_all_stacks = false;
/*
 * The unwind maps' generation: user space adds 1 after every change it makes to
 * exe_mappings or table_info (src/unwind/unwind_maps.c, maps_changed), on_exec
 * after it removes a pid's marker. The mappings a CPU's walks met stay in its
 * scratch from one sample to the next only while this generation is the one
 * they were looked up under (walk_scratch__reset).
 */
__u64 maps_gen = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 21); /* resized by user space from the CPU count */
} events SEC(".maps");
/* A quarter of events' size, set by user space with it (0: asked of the ring). */
const volatile __u64 ring_quarter = 0;
/*
 * The bytes of records a CPU writes between two looks at the ring's fill
 * (trace_wakeup): set by user space to ring_quarter / (2 * the CPUs sampled);
 * 0: a look at every record.
 */
const volatile __u64 ring_check_bytes = 0;
/* The ring's consumer position at the last wake-up a record asked for (trace_wakeup). */
__u64 ring_woken_cons = ~0ull;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} pid_filter SEC(".maps");

/*
 * How many times user space took a pid out of pid_filter (bumped after each
 * delete, src/engine/targets.c): a tgid found in it at generation g is still
 * in it while the generation is g, so a CPU remembers its last such tgid and
 * skips the hash lookup for most samples (bpf/sampler.bpf.c pid_wanted).
 * Additions (user space's, a fork's) need no bump: only found tgids are kept.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pid_filter_gen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

/* (pid, address) -> (table id, bias); see struct op_mapping_key. Sized by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 20);
	__type(key, struct op_mapping_key);
	__type(value, struct op_mapping_value);
} exe_mappings SEC(".maps");

/* pid -> its interpreter ranges: where the walk hands frames to a runtime's
 * step (omniprof/unwind/walk.h). Written by user space (src/unwind/interp_ranges.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct op_interp_proc);
} interp_procs SEC(".maps");

/*
 * How many times user space added to interp_procs (bumped after each update,
 * src/unwind/interp_ranges.c): a pid found absent at generation g is still
 * absent while the generation is g, so a CPU remembers its last such pid and
 * skips the hash lookup (a call and its return, about 100 ns on this
 * SRSO Safe-RET host) for most samples of processes without runtimes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} interp_gen SEC(".maps");

/*
 * Stack deltas live in large "chunk" arrays of pages, each holding the tables
 * of many files at offsets user space allocates. Changing a map-in-map costs
 * an RCU grace period, so chunks are added rarely (when the others are full)
 * and loading a file's table is plain array writes: no fixed ceiling, no
 * stall. A page per lookup (not a delta) keeps helper calls per frame at one
 * per tree level.
 */
struct delta_array {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct op_delta_page));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, OP_MAX_DELTA_CHUNKS);
	__type(key, __u32); /* chunk index */
	__array(values, struct delta_array);
} unwind_tables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64); /* table id */
	__type(value, struct op_table_info);
} table_info SEC(".maps");

/* Rules shared by every table (few distinct ones exist). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, OP_MAX_RULES);
	__type(key, __u32);
	__type(value, struct op_unwind_rule);
} unwind_rules SEC(".maps");

/*
 * Rules found, across samples: (table id, ELF address) -> rule, direct-mapped
 * per CPU. A table id names a table's content, so the rule for an address of it
 * never changes and nothing here can go stale; hot code returns to the same
 * addresses sample after sample, and a hit saves the page-tree search (a map
 * lookup per level, pages that have left the cache since the last sample).
 */
#define RULE_CACHE_SIZE 1024 /* a power of two */

struct rule_cache_entry {
	__u64 table_id; /* 0: empty (table ids are never 0) */
	__u64 vaddr;
	struct op_unwind_rule rule;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RULE_CACHE_SIZE);
	__type(key, __u32);
	__type(value, struct rule_cache_entry);
} rule_cache SEC(".maps");

static __always_inline const struct op_mapping_value *lpm_lookup(__u32 pid, __u64 pc)
{
	struct op_mapping_key key = {
	    .prefixlen = 32 + 64,
	    .pid = pid,
	    .addr_be = __builtin_bswap64(pc),
	};

	return bpf_map_lookup_elem(&exe_mappings, &key);
}

static __always_inline struct rule_cache_entry *rule_cache_slot(__u64 table_id, __u64 vaddr)
{
	__u32 slot =
	    (__u32)(((table_id ^ vaddr) * 0x9e3779b97f4a7c15ull) >> 54) & (RULE_CACHE_SIZE - 1);

	return bpf_map_lookup_elem(&rule_cache, &slot);
}

static __always_inline int rule_cache_get(__u64 table_id, __u64 vaddr, struct op_unwind_rule *rule)
{
	struct rule_cache_entry *rc = rule_cache_slot(table_id, vaddr);

	if (!rc || rc->table_id != table_id || rc->vaddr != vaddr)
		return 0;
	*rule = rc->rule;
	return 1;
}

static __always_inline void rule_cache_put(__u64 table_id, __u64 vaddr,
					   const struct op_unwind_rule *rule)
{
	struct rule_cache_entry *rc = rule_cache_slot(table_id, vaddr);

	if (!rc)
		return;
	rc->table_id = table_id;
	rc->vaddr = vaddr;
	rc->rule = *rule;
}

/* The lookup's storage: the BPF maps user space fills (src/unwind/unwind_maps.c). */
#define OP_LOOKUP_MAPPING(ctx, pid, pc) lpm_lookup((pid), (pc))
#define OP_LOOKUP_TABLE(ctx, id)                                                                   \
	((const struct op_table_info *)bpf_map_lookup_elem(&table_info, &(__u64){(id)}))
#define OP_LOOKUP_CHUNK(ctx, chunk) bpf_map_lookup_elem(&unwind_tables, &(__u32){(chunk)})
#define OP_LOOKUP_RULE(ctx, index)                                                                 \
	((const struct op_unwind_rule *)bpf_map_lookup_elem(&unwind_rules, &(__u32){(index)}))
#define OP_LOOKUP_CACHED(ctx, id, vaddr, rule)	 rule_cache_get((id), (vaddr), (rule))
#define OP_LOOKUP_REMEMBER(ctx, id, vaddr, rule) rule_cache_put((id), (vaddr), (rule))
#include "omniprof/unwind/lookup.h"

/*
 * Memory of the walk, so each frame costs a few loads instead of helper calls:
 * the mappings (with their tables) already met, and a window of user stack
 * copied with one read, from which the unwinder's 8-byte reads are served.
 * Everything but the mappings is reset at the start of every sample; the
 * mappings (each with its pid) are kept for the next samples while the unwind
 * maps have not changed since they were looked up (walk_scratch__reset).
 */
#define STACK_WINDOW 8192	/* a power of two: at most two pages, or one (see read_user_u64) */
#define STACK_SPAN   (8u << 20) /* reads this far above sp are stack reads */

#define PID_SLOTS 8 /* a power of two */

struct walk_scratch {
	struct op_walk walk; /* the user-stack walk (too big for the BPF stack) */
	/* The mappings the walks met (omniprof/unwind/lookup.h), while maps_gen is
	 * lookup_gen: see walk_scratch__reset. */
	struct op_lookup_cache lookup;
	__u64 lookup_gen;
	__u32 window_len;   /* bytes valid in window */
	__u64 window_start; /* user address of window[0] */
	__u64 stack_lo;	    /* the sample's sp: the window serves [stack_lo, + STACK_SPAN) */
	__u64 stack_hi;	    /* the main thread's stack is mapped up to here (0: not sp's) */
	__u8 window[STACK_WINDOW + 16];
	__u32 frames_cfi; /* counters, added to stats once per sample */
	__u32 frames_fp;
	__u32 fallbacks[3]; /* frame-pointer fallbacks: unknown pid, no mapping, no table */
	/* Stack copies (bpf/stack_copy.h): copy_ok, the budget allows one (2: not
	 * asked yet, asked when a copy is wanted); want_copy,
	 * the walk met a frame of a process or mapping not ready and stopped for a
	 * copy; over_budget, it would have, but the budget did not allow it. */
	__u8 copy_ok;
	__u8 want_copy;
	__u8 over_budget;
	/* The last rule looked up was a guess (frame pointers, no table): the
	 * next pc may be garbage, so an address in no mapping there is no sign
	 * that a mapping is not ready. */
	__u8 prev_guess;
	/* The last table rule found in this sample (memo_ok): a recursion's frames
	 * return to one address, looked up once. */
	__u8 memo_ok;
	__u64 memo_pc;
	struct op_unwind_rule memo_rule;
	/* The packed form every frame written so far fits (PACK_*, 0: none):
	 * the frames also go into packed, and the record is sent in it
	 * (OP_TRACE_F_PACKED, OP_TRACE_F_PACKED_WIDE). One form a walk: the
	 * narrow one without runtimes, the wide one with (a JVM's). */
	__u8 pack;
	/* A record of packed frames without kernel frames (a sample taken in user
	 * mode, most of them) is sent from here: its header copied into rec_head,
	 * right before the packed frames (trace_size), instead of the frames
	 * copied after the header in the trace_buf. */
	__u64 rec_head[sizeof(struct op_trace) / 8];
	__u64 packed[2 * OP_MAX_USER_FRAMES];
	/* Kept across samples: the bytes of records this CPU wrote since it last
	 * looked at the ring's fill (trace_wakeup). */
	__u64 ring_bytes;
	/* Kept across samples (not reset), slot pid % PID_SLOTS: generation << 32 |
	 * pid of the last such pid this CPU found without an interp_procs entry
	 * (interp_procs_of), and in pid_filter (pid_wanted_cached). */
	__u64 no_interp[PID_SLOTS];
	__u64 pid_in_filter[PID_SLOTS];
};

_Static_assert(__builtin_offsetof(struct walk_scratch, packed) ==
		   __builtin_offsetof(struct walk_scratch, rec_head) + sizeof(struct op_trace),
	       "a record's header right before its packed frames");

/* The walk's unwinder is where stack_read_u64() and find_rule() find their scratch. */
_Static_assert(__builtin_offsetof(struct walk_scratch, walk) == 0 &&
		   __builtin_offsetof(struct op_walk, u) == 0,
	       "the unwinder opens the walk's scratch");

#define PACK_NARROW 1 /* OP_PACKED_FRAME, one word a frame: native and error frames */
#define PACK_WIDE   2 /* op_frame__pack_wide, two: ... and HotSpot frames */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk_scratch);
} walk_scratch SEC(".maps");

/* Last time each pid was reported unknown: one report per pid per interval. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} unknown_reported SEC(".maps");

#define UNKNOWN_REPORT_INTERVAL_NS (200ull * 1000 * 1000)

/*
 * The record is built here (too big for the BPF stack) in its final layout:
 * header, kernel frames, then the user frames right after them; then its
 * exact size is copied out with one bpf_ringbuf_output (a reservation needs a
 * size known when the program is loaded).
 */
struct trace_buf {
	struct op_trace t;
	/* Room for 256 kernel slots (bpf_get_stack fills at most 128), so that
	 * masked offsets stay inside whatever the order the compiler picks. */
	__u64 body[(8 * 256 + sizeof(struct op_frame) * OP_MAX_USER_FRAMES) / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_buf);
} scratch SEC(".maps");

/* User frame i (< OP_MAX_USER_FRAMES) of the sample, after its n_kernel kernel frames. */
static __always_inline struct op_frame *trace_user_frame(struct trace_buf *b, __u32 i)
{
	__u64 nk = b->t.n_kernel, slot = i;

	/* Masks the verifier can follow, on opaque copies so the compiler keeps them. */
	__asm__ volatile("" : "+r"(nk));
	__asm__ volatile("" : "+r"(slot));
	nk &= 255;
	slot &= OP_MAX_USER_FRAMES - 1;
	return (struct op_frame *)((__u8 *)b->body + nk * 8 + slot * sizeof(struct op_frame));
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OP_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_add(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		*v += n;
}

static __always_inline void stat_inc(__u32 which)
{
	stat_add(which, 1);
}

/*
 * The names of the sampled thread and of its process: 16 bytes each, read
 * with plain loads through the task's BTF pointer. The helpers (a string copy
 * of the thread's name, probe reads of the leader and its name) cost about
 * 300 ns per sample, a sixth of a short walk. The kernel keeps the last byte
 * of comm NUL, so a read racing a rename is still a terminated string.
 */
static __always_inline void task_comms(struct task_struct *task, char *comm, char *pcomm)
{
	struct task_struct *leader = OP_KFIELD(task, task_group_leader, struct task_struct *);
	const __u64 *c = &OP_KFIELD(task, task_comm, __u64),
		    *p = &OP_KFIELD(leader, task_comm, __u64);

	__builtin_memcpy(comm, c, 8);
	__builtin_memcpy(comm + 8, c + 1, 8);
	__builtin_memcpy(pcomm, p, 8);
	__builtin_memcpy(pcomm + 8, p + 1, 8);
}

static __always_inline struct walk_scratch *walk_scratch__get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&walk_scratch, &zero);
}

/*
 * OP_READ_USER for the unwinder's 8-byte reads: from the stack window when it
 * holds [addr, addr + 8), else one read of user stack into it, from the start
 * of addr's page (or from sp, when sp is in that page): the page's part below
 * addr holds what a frame reads after its first read (its return address):
 * its saved registers. The read ends at the page's end, which may be the last
 * of the stack, unless the stack is the main thread's, one mapping from sp
 * to mm->start_stack (stack_hi, walk_scratch__reset): then it goes on, up to
 * STACK_WINDOW bytes, and where that fails (a page not present) the rest of
 * the sample reads page by page. A read costs ~110-300 ns here however small, against ~55 ns a KiB
 * copied, so the fewer the better (bench/RESULTS.md, issue 22, session 24).
 * 0 or -1.
 */
__noinline int read_user_u64(__u64 *dst, __u64 addr)
{
	struct walk_scratch *ws = walk_scratch__get();
	__u64 off, start;
	__u32 len;

	if (!dst)
		return -1;
	/* Other reads (runtimes' heap objects, signal frames) go straight to memory,
	 * so they do not evict the stack from the window. */
	if (!ws || addr - ws->stack_lo >= STACK_SPAN)
		return bpf_probe_read_user(dst, 8, (const void *)addr) ? -1 : 0;
	off = addr - ws->window_start;
	if (off >= ws->window_len || ws->window_len - off < 8) {
		start = addr & ~4095ull;
		if (start < ws->stack_lo)
			start = ws->stack_lo;
		off = addr - start;
		ws->window_len = 0;
		/* stack_hi > sp: [sp, stack_hi) is one mapping. */
		if (ws->stack_hi >= addr + 8) {
			len = ws->stack_hi - start > STACK_WINDOW ? STACK_WINDOW
								  : ws->stack_hi - start;
			if (!bpf_probe_read_user(ws->window, len & (2 * STACK_WINDOW - 1),
						 (const void *)start))
				goto read;
			ws->stack_hi = 0;
		}
		len = 4096 - (start & 4095);
		/* [addr, addr + 8) crosses the page's end. */
		if (len < off + 8)
			return bpf_probe_read_user(dst, 8, (const void *)addr) ? -1 : 0;
		if (bpf_probe_read_user(ws->window, len & (2 * STACK_WINDOW - 1),
					(const void *)start))
			return -1;
	read:
		ws->window_start = start;
		ws->window_len = len;
	}
	/* off + 8 <= window_len <= STACK_WINDOW; the mask restates it for the verifier. */
	__builtin_memcpy(dst, &ws->window[off & (STACK_WINDOW - 1)], 8);
	return 0;
}

/*
 * OP_READ_STACK_U64_FAST: the window's hit, -1 for a miss (which would cost a
 * call). u is the walk's unwinder, so its scratch is the one the walk reset.
 */
static __always_inline int stack_read_hit(struct op_unwinder *u, __u64 *dst, __u64 addr)
{
	struct walk_scratch *ws = (struct walk_scratch *)u;
	__u64 off = addr - ws->window_start;

	/* The window lies inside the stack span (read_user_u64 reads it only there). */
	if (off < ws->window_len && ws->window_len - off >= 8) {
		__builtin_memcpy(dst, &ws->window[off & (STACK_WINDOW - 1)], 8);
		return 0;
	}
	return -1;
}

/* OP_READ_STACK_U64: the window's hit inline, read_user_u64() for the rest. */
static __always_inline int stack_read_u64(struct op_unwinder *u, __u64 *dst, __u64 addr)
{
	return stack_read_hit(u, dst, addr) ? read_user_u64(dst, addr) : 0;
}

/*
 * Waking the reader is an interrupt (an IPI to this CPU): several microseconds,
 * more than the whole unwind, and a reader wakeup per sample. So samples do
 * not wake it, except when the ring is found a quarter full (the reader
 * polls with a timeout anyway: every 10 ms while busy, at most every second
 * idle, src/sampler/sampler.c drain_wait_ms); the rare process and
 * unknown-address events wake it at once, since the tables they lead to
 * decide how the next samples unwind.
 *
 * Looking at the fill is a helper call (~80 ns here, most of it the miss on
 * the positions other CPUs write), so a CPU looks only once it has written
 * ring_check_bytes (T) since its last look: T = Q / (2 n) for a quarter Q and
 * n CPUs sampled, at least 32 KiB (the ring has 256 KiB a CPU), a look every
 * ~80 40-frame samples or more. Bounds:
 * - The fill: each CPU wrote less than T since its last look, so less than
 *   n T = Q / 2 went in since the latest look of any CPU, which found the
 *   ring under Q or woke the reader (or one had, at the same consumer
 *   position): the reader is woken before the ring holds 1.5 Q (3/8 of it)
 *   of samples, as before at Q. Stack copies (bpf/stack_copy.h) stop at half
 *   by their own test. A CPU brought online after the load adds T more.
 * - The wake-ups: at most one per consumer position (ring_woken_cons), and
 *   the position moves only when the reader takes records, all that are
 *   there: one wake-up per quarter ring of records the reader did not take
 *   first at its timed polls, whatever n is, as with the crossing test it
 *   replaces. Two CPUs that look within the same few ns may both wake it
 *   (a plain store, no atomics on older kernels): one wake-up more, rarely.
 *   At 20 Hz on a 64-CPU host (~540 KB/s of 420-byte samples, Q 4 MiB)
 *   the ring never gets to Q between the drainer's polls: no wake-ups.
 */
static __always_inline __u64 trace_wakeup(struct walk_scratch *ws, long size)
{
	__u64 avail, cons, quarter;

	if (ws) {
		if (ws->ring_bytes + size < ring_check_bytes) {
			ws->ring_bytes += size;
			return BPF_RB_NO_WAKEUP;
		}
		ws->ring_bytes = 0;
	}
	/* The ring's size is set before the load (a helper call fewer). */
	quarter = ring_quarter ? ring_quarter : bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4;
	cons = bpf_ringbuf_query(&events, BPF_RB_CONS_POS);
	avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	if (avail + size < quarter || cons == *(volatile __u64 *)&ring_woken_cons)
		return BPF_RB_NO_WAKEUP;
	*(volatile __u64 *)&ring_woken_cons = cons;
	return BPF_RB_FORCE_WAKEUP;
}

static __always_inline bool pid_wanted(__u32 tgid)
{
	return !filter_pids || bpf_map_lookup_elem(&pid_filter, &tgid);
}

/*
 * pid_wanted() for the CPU samples: the lookup skipped when this CPU found tgid
 * in pid_filter at the current generation (read before the lookup, so a
 * delete after it is seen at the next sample).
 */
static __always_inline bool pid_wanted_cached(struct walk_scratch *ws, __u32 tgid)
{
	const __u64 *genp;
	__u64 key;

	if (!filter_pids)
		return true;
	genp = bpf_map_lookup_elem(&pid_filter_gen, &(__u32){0});
	if (!genp)
		return bpf_map_lookup_elem(&pid_filter, &tgid);
	key = *genp << 32 | tgid;
	if (tgid && ws->pid_in_filter[tgid & (PID_SLOTS - 1)] == key)
		return true;
	if (!bpf_map_lookup_elem(&pid_filter, &tgid))
		return false;
	ws->pid_in_filter[tgid & (PID_SLOTS - 1)] = key;
	return true;
}

/* Whether the current task is under the --cgroup folder (descendants included). */
static __always_inline bool cgroup_wanted(void)
{
	return !filter_cgroup || bpf_current_task_under_cgroup(&cgroup_filter, 0) == 1;
}

/* The walk's depth bound, restated in range for the verifier. */
static __always_inline __u32 walk_max_frames(void)
{
	__u32 max = max_user_frames;

	return max >= 1 && max <= OP_MAX_USER_FRAMES ? max : OP_MAX_USER_FRAMES;
}

/* Tells user space to read pid's maps: at most once per pid per interval. */
static __always_inline void report_unknown(__u32 pid, __u64 addr)
{
	__u64 now = bpf_ktime_get_ns(), *last = bpf_map_lookup_elem(&unknown_reported, &pid);
	struct op_unknown_event *e;

	if (last && now - *last < UNKNOWN_REPORT_INTERVAL_NS)
		return;
	bpf_map_update_elem(&unknown_reported, &pid, &now, BPF_ANY);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(OP_STAT_UNKNOWN_LOST);
		return;
	}
	e->hdr.type = OP_EVENT_UNKNOWN;
	e->hdr.pid = pid;
	e->addr = addr;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/*
 * Whether pid's maps were read (its ranges, or its marker, are in the trie;
 * the marker goes in last but a walk with part of the ranges is no worse
 * than one after a dlopen): one lookup of the sample's pc answers it and
 * finds the first frame's mapping, put into the sample's cache for the walk.
 */
static __always_inline bool process_known(struct walk_scratch *ws, __u32 pid, __u64 pc)
{
	const struct op_mapping_value *m;
	const struct op_table_info *info;

	/* A mapping of pid kept from an earlier sample is in the trie now (see
	 * walk_scratch__reset): the process is known. */
	if (op_lookup_cache__find(&ws->lookup, pid, pc))
		return true;
	m = lpm_lookup(pid, pc);
	if (!m)
		return false;
	if (m->table_id && m->table_id != OP_TABLE_ID_ANON) {
		info = OP_LOOKUP_TABLE(NULL, m->table_id);
		if (info)
			op_lookup_cache__add(&ws->lookup, pid, m, pc, info);
	}
	return true;
}

/*
 * OP_FIND_RULE: the shared lookup (omniprof/unwind/lookup.h), counted. Returns
 * 0. A frame of a process not ready (no pid marker: its maps not read, or
 * its files still being opened and their tables built) or at a trusted
 * address in no mapping (one mapped since the maps were read) asks for a
 * stack copy (want_copy, when the budget allows: the walk stops there)
 * rather than a frame-pointer guess.
 */
__noinline int lookup_rule(__u32 pid, __u64 pc, struct op_unwind_rule *rule)
{
	struct walk_scratch *ws = walk_scratch__get();
	const struct op_mapping_value *m = NULL;
	__u32 how, guess;

	if (!rule)
		return 0;
	if (!ws) {
		op_rule__set_invalid(rule);
		return 0;
	}
	how = op_lookup__rule(NULL, &ws->lookup, pid, pc, rule, &m);
	guess = ws->prev_guess;
	ws->prev_guess = how != OP_LOOKUP_CFI && how != OP_LOOKUP_INVALID;
	switch (how) {
	case OP_LOOKUP_CFI:
		ws->frames_cfi++;
		ws->memo_ok = 1;
		ws->memo_pc = pc;
		ws->memo_rule = *rule;
		return 0;
	case OP_LOOKUP_INVALID:
		return 0;
	case OP_LOOKUP_ANON:
		stat_inc(OP_STAT_FRAMES_ANON);
		return 0;
	case OP_LOOKUP_FP_UNKNOWN_PID:
	case OP_LOOKUP_FP_NO_MAPPING:
		report_unknown(pid, m ? pc : 0);
		/* A marker saying its ranges are partial: nothing new to wait for. */
		if (how == OP_LOOKUP_FP_UNKNOWN_PID ||
		    (!guess && m && !(m->bias & OP_MARKER_F_PARTIAL))) {
			if (ws->copy_ok == 2)
				ws->copy_ok = copy_budget_ok();
			if (ws->copy_ok)
				ws->want_copy = 1;
			else if (stack_copy_enabled)
				ws->over_budget = 1;
		}
		break;
	}
	if (how == OP_LOOKUP_FP_UNKNOWN_PID)
		ws->fallbacks[0]++;
	else if (how == OP_LOOKUP_FP_NO_MAPPING)
		ws->fallbacks[1]++;
	else
		ws->fallbacks[2]++;
	ws->frames_fp++;
	return 0;
}

/*
 * pc's table rule when it is known without a call: the pc the previous frame
 * looked up (in the same sample: the same mapping, so the same rule), or a
 * mapping met before whose rule for pc is in the rule cache: what
 * lookup_rule() would answer first (omniprof/unwind/lookup.h), without the
 * call (a per-CPU array's lookup is inlined: no helper call either). 1 and
 * *rule (then the memo holds pc), or 0. The frame is counted by the caller.
 */
static __always_inline int find_rule_inline(struct walk_scratch *ws, __u32 pid, __u64 pc,
					    struct op_unwind_rule *rule)
{
	struct op_mapping_cache_entry *e;

	if (ws->memo_ok && ws->memo_pc == pc) {
		*rule = ws->memo_rule;
		return 1;
	}
	e = op_lookup_cache__find(&ws->lookup, pid, pc);
	if (!e || !rule_cache_get(e->table_id, pc - e->bias, rule))
		return 0;
	ws->memo_ok = 1;
	ws->memo_pc = pc;
	ws->memo_rule = *rule;
	return 1;
}

/* OP_FIND_RULE: find_rule_inline(), counted, lookup_rule() for the rest. */
static __always_inline int find_rule(struct op_unwinder *u, __u64 pc, struct op_unwind_rule *rule)
{
	struct walk_scratch *ws = (struct walk_scratch *)u;

	if (find_rule_inline(ws, u->pid, pc, rule)) {
		ws->prev_guess = 0;
		ws->frames_cfi++;
		return 0;
	}
	return lookup_rule(u->pid, pc, rule);
}

/* What every round of the walk uses, found once per sample: the callback
 * reads the pointers back from the caller's stack instead of two map
 * lookups per frame. */
struct walk_loop {
	struct walk_scratch *ws;
	struct trace_buf *b;
};

/* Adds frame slot index (just written) to the packed frames, or ends packing
 * when it does not fit the walk's form. */
static __always_inline void pack_frame(struct walk_scratch *ws, __u32 index,
				       const struct op_frame *f)
{
	__u32 i = index & (OP_MAX_USER_FRAMES - 1);

	if (ws->pack == PACK_WIDE) {
		if (op_frame__pack_wide(f, &ws->packed[2 * i]))
			ws->pack = 0;
		return;
	}
	if ((f->addr & ~OP_PACKED_ADDR_MASK) || f->data || f->aux || f->kind > 15 ||
	    f->flags > 15) {
		ws->pack = 0;
		return;
	}
	ws->packed[i] = OP_PACKED_FRAME(f->addr, f->kind, f->flags);
}

/*
 * Frames a bpf_loop callback takes the cheap way (walk_fast_frame) before it
 * returns (each callback's call and return cost ~7 ns here, a third of a
 * recursion's frame): a native walk, the rule known without a call, the
 * reads in the window, the frame packed. The first frame that is not goes
 * through the full round (op_walk__round), which ends the callback: the full
 * round's code is checked by the verifier once per callback, the cheap one
 * once per frame it may take (~2k instructions each).
 */
#define WALK_FAST_FRAMES 8

/*
 * One more frame of a native walk the cheap way (op_unwind_step_fast): 1, it
 * was written and the walk goes on; 2, it was written and was the last; 0,
 * declined, the walk unchanged (the next round's full step takes the frame;
 * the memo may hold the frame's rule now, which that step then finds).
 */
static __always_inline int walk_fast_frame(struct walk_scratch *ws, struct trace_buf *b, __u32 max)
{
	struct op_walk *w = &ws->walk;
	struct op_unwind_rule rule;
	struct op_frame *f;
	__u32 n = w->n;
	int res;

	if (n >= max || w->has_interp || ws->pack != PACK_NARROW ||
	    !find_rule_inline(ws, w->u.pid, op_unwinder__lookup_pc(&w->u), &rule))
		return 0;
	f = trace_user_frame(b, n);
	res = op_unwind_step_fast(&w->u, &rule, f);
	if (res == OP_STEP_DECLINED)
		return 0;
	ws->prev_guess = 0;
	ws->frames_cfi++;
	/* pack_frame() of a native frame in the narrow form, written out: the
	 * verifier would otherwise walk the wide form's branch too, every frame. */
	if (f->addr & ~OP_PACKED_ADDR_MASK)
		ws->pack = 0;
	else
		ws->packed[n & (OP_MAX_USER_FRAMES - 1)] =
		    OP_PACKED_FRAME(f->addr, f->kind, f->flags);
	w->result = res;
	w->n = n + 1;
	return res == OP_STEP_CONTINUE ? 1 : 2;
}

static long walk_one_frame(__u32 index, void *data)
{
	struct walk_loop *l = data;
	struct walk_scratch *ws = l->ws;
	struct trace_buf *b = l->b;
	struct op_frame *f;
	__u32 max = walk_max_frames(), n;
	long ret;
	int more = 1;

	(void)index;
	if (!b || !ws || ws->want_copy)
		return 1;
#pragma clang loop unroll(disable)
	for (int i = 0; i < WALK_FAST_FRAMES && more == 1; i++)
		more = walk_fast_frame(ws, b, max);
	if (more)
		return more == 2;
	/* Declined: the full round takes the frame. The frame slot is the count
	 * of frames written: read from the map value, an unknown scalar to the
	 * verifier, which then checks the callback once instead of once per
	 * possible count. */
	n = ws->walk.n;
	f = trace_user_frame(b, n);
	ret = op_walk__round(&ws->walk, n, max, f);
	/* A round under the bound wrote its frame, and only it: a runtime's
	 * step writes the slot it is given (omniprof/unwind/walk.h). */
	if (ws->pack && n < max)
		pack_frame(ws, n, f);
	return ret;
}

/* Whether the sample interrupted user code (then there is no kernel stack). */
static __always_inline bool in_user_mode(struct bpf_perf_event_data *ctx)
{
	/* The context allows only 8-byte loads of the x86-64 pt_regs (a fixed ABI layout). */
	return (OP_CTX_REGS(ctx)->cs & 3) == 3;
}

/* User registers at the sample: from the context when the CPU was in user
 * mode, else the ones task (current, bpf_get_current_task_btf(): the caller
 * has it, a helper call fewer) saved on kernel entry. */
static __always_inline int user_regs(struct bpf_perf_event_data *ctx, struct task_struct *task,
				     struct op_regs *r)
{
	const struct op_pt_regs *regs;

	/* The context allows only 8-byte loads of the x86-64 pt_regs (a fixed ABI layout). */
	if (in_user_mode(ctx)) {
		regs = OP_CTX_REGS(ctx);
		r->pc = regs->ip;
		r->sp = regs->sp;
		r->fp = regs->bp;
		r->bx = regs->bx;
		return 0;
	}
	if (!task || !OP_KFIELD(task, task_mm, void *) ||
	    (OP_KFIELD(task, task_flags, __u32) & 0x00200000 /* PF_KTHREAD */))
		return -1;
	/* The kernel's pt_regs, the same fixed layout (checked by user space). */
	regs = (const struct op_pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return -1;
	r->pc = OP_TASK_REG(regs, ip);
	r->sp = OP_TASK_REG(regs, sp);
	r->fp = OP_TASK_REG(regs, bp);
	r->bx = OP_TASK_REG(regs, bx);
	return 0;
}

/* The sampled thread's r14 and r15, as user_regs() finds its registers (op_walk's leaf_r14).
 * ctx NULL (off-CPU: the thread is in the kernel): the task's saved registers. */
static __always_inline void user_pinned_regs(struct bpf_perf_event_data *ctx, struct op_walk *w)
{
	struct task_struct *task;
	const struct op_pt_regs *regs;

	if (ctx && in_user_mode(ctx)) {
		regs = OP_CTX_REGS(ctx);
		w->leaf_r14 = regs->r14;
		w->leaf_r15 = regs->r15;
		return;
	}
	task = bpf_get_current_task_btf();
	regs = task ? (const struct op_pt_regs *)bpf_task_pt_regs(task) : NULL;
	if (!regs)
		return;
	w->leaf_r14 = OP_TASK_REG(regs, r14);
	w->leaf_r15 = OP_TASK_REG(regs, r15);
}

static __always_inline __u32 err_stat(__u32 err)
{
	switch (err) {
	case OP_UNWIND_ERR_MAX_DEPTH:
		return OP_STAT_USER_MAX_DEPTH;
	case OP_UNWIND_ERR_BAD_FP:
		return OP_STAT_USER_BAD_FP;
	case OP_UNWIND_ERR_NO_RULE:
	case OP_UNWIND_ERR_RBX_CFA:
		return OP_STAT_USER_NO_RULE;
	case OP_UNWIND_ERR_BAD_CFA:
		return OP_STAT_USER_BAD_CFA;
	case OP_UNWIND_ERR_ANON_CODE:
		return OP_STAT_USER_ANON_STOP;
	default:
		return OP_STAT_USER_READ_ERR;
	}
}

/*
 * Forgets the previous sample, but for the mappings the walks met (each with
 * its pid) while the unwind maps have not changed since: a kept mapping is
 * one the trie held under the generation read here, and any change since (a
 * range written or removed at exec, exit or a re-read of the maps, a table
 * unloaded, the marker removed at exec) has bumped maps_gen, so the next
 * sample looks it up again. User space bumps after its change reaches the
 * trie, so a sample that still reads the old generation overlaps the change,
 * as a sample whose own lookup came just before it does. The generation is
 * read before any lookup of this sample: what the walk adds is at least as
 * new as the generation it is kept under. A new process with a reused pid is
 * an exec (bumped) or a fork of one whose entries the trie still holds until
 * user space handles the exit (and bumps): what the trie would answer.
 *
 * task: the one walked, current. The main thread's stack (sp below
 * mm->start_stack and within STACK_SPAN of it; the kernel puts other mappings
 * at least the stack's rlimit, 128 MiB at the least, below it, unless asked
 * for an address there: then a window read only fails, and the sample goes
 * on page by page, or reads the same bytes) is one mapping from sp up to
 * argc's word at start_stack (above it, argv and the environment; below, _start's
 * frame): the window's reads may cross its pages.
 *
 * One scratch a CPU, shared by on_sample and on_switch: neither runs inside the
 * other today (cpu-clock samples fire from a hard-IRQ timer, sched_switch is
 * traced with IRQs off). An NMI-driven event would break that, and with it the
 * kept mappings' generation (a nested reset relabels the outer walk's entries).
 */
static __always_inline void walk_scratch__reset(struct walk_scratch *ws, struct task_struct *task,
						__u64 sp)
{
	struct mm_struct *mm = OP_KFIELD(task, task_mm, struct mm_struct *);
	__u64 top = mm ? OP_KFIELD(mm, mm_start_stack, __u64) : 0;
	__u64 gen = *(volatile __u64 *)&maps_gen;

	if (ws->lookup_gen != gen) {
		op_lookup_cache__reset(&ws->lookup);
		ws->lookup_gen = gen;
	}
	ws->window_len = 0;
	ws->stack_lo = sp;
	ws->stack_hi = top > sp && top - sp < STACK_SPAN ? top + 8 : 0;
	ws->frames_cfi = ws->frames_fp = 0;
	ws->fallbacks[0] = ws->fallbacks[1] = ws->fallbacks[2] = 0;
	ws->copy_ok = ws->want_copy = ws->over_budget = ws->prev_guess = 0;
	ws->pack = 0;
	ws->memo_ok = 0;
}

/*
 * pid's interp_procs value, NULL when it has none: the lookup skipped when this
 * CPU found pid without one at the current generation. The generation is read
 * before the lookup, so an entry added after it is found at the next one.
 */
static __always_inline const struct op_interp_proc *interp_procs_of(struct walk_scratch *ws,
								    __u32 pid)
{
	const __u64 *genp = bpf_map_lookup_elem(&interp_gen, &(__u32){0});
	const struct op_interp_proc *ip;
	__u64 key;

	if (!genp)
		return bpf_map_lookup_elem(&interp_procs, &pid);
	key = *genp << 32 | pid;
	if (pid && ws->no_interp[pid & (PID_SLOTS - 1)] == key)
		return NULL;
	ip = bpf_map_lookup_elem(&interp_procs, &pid);
	if (!ip)
		ws->no_interp[pid & (PID_SLOTS - 1)] = key;
	return ip;
}

/* regs_err: 0, -1 no user context (kernel thread), -2 a user pc of 0. ws was reset. */
static __always_inline void walk_user_stack(struct bpf_perf_event_data *ctx, struct trace_buf *b,
					    struct walk_scratch *ws, const struct op_regs *r,
					    int regs_err)
{
	struct op_trace *t = &b->t;
	struct op_walk *w = &ws->walk;
	__u32 pid = t->hdr.pid, err, slot;
	int at;

	if (regs_err) {
		if (regs_err == -2 && ctx)
			stat_inc(OP_STAT_USER_REGS_ERR);
		t->flags |= OP_TRACE_F_NO_USER;
		return;
	}
	/* Does the process run a runtime at all? At most one lookup per sample. */
	op_walk__init(w, pid, r->pc, r->sp, r->fp, interp_procs_of(ws, pid));
	op_unwinder__set_bx(&w->u, r->bx);
	if (w->has_interp)
		user_pinned_regs(ctx, w);
	/* A process with runtimes: the wide form, which HotSpot frames fit (the
	 * other runtimes' fit neither). */
	ws->pack = w->has_interp ? PACK_WIDE : PACK_NARROW;
	/* The stack window read now, where the first frame's read would fill it,
	 * so that frame too can go the cheap way. */
	if (!w->has_interp) {
		__u64 top;

		read_user_u64(&top, r->sp);
	}
	{
		struct walk_loop l = {.ws = ws, .b = b};

		bpf_loop(walk_max_frames() + 1, walk_one_frame, &l, 0);
	}
	/* Stopped for a stack copy: what it walked is not sent, nor counted. */
	if (ws->want_copy)
		return;
	/* Off-CPU walks (ctx NULL) leave the CPU samples' counters alone; the caller
	 * counts their truncation. */
	if (!ctx)
		goto counted;
	stat_add(OP_STAT_FRAMES_CFI, ws->frames_cfi);
	stat_add(OP_STAT_FRAMES_FP, ws->frames_fp);
	if (ws->fallbacks[0])
		stat_add(OP_STAT_FP_UNKNOWN_PID, ws->fallbacks[0]);
	if (ws->fallbacks[1])
		stat_add(OP_STAT_FP_NO_MAPPING, ws->fallbacks[1]);
	if (ws->fallbacks[2])
		stat_add(OP_STAT_FP_NO_TABLE, ws->fallbacks[2]);
counted:
	err = op_walk__error(w);
	if (err) {
		if (ctx)
			stat_inc(err_stat(err));
		t->flags |= OP_TRACE_F_USER_TRUNCATED;
		at = op_walk__error_at(w, walk_max_frames(),
				       w->n ? trace_user_frame(b, w->n - 1) : NULL);
		if (at >= 0) {
			op_frame__set_error(trace_user_frame(b, at), err);
			slot = (__u32)at & (OP_MAX_USER_FRAMES - 1);
			if (ws->pack == PACK_WIDE) {
				ws->packed[2 * slot] =
				    (__u64)OP_FRAME_ERROR << OP_WIDE_KIND_SHIFT | err;
				ws->packed[2 * slot + 1] = 0;
			} else {
				ws->packed[slot] = OP_PACKED_FRAME(err, OP_FRAME_ERROR, 0);
			}
			w->n = at + 1;
		}
	}
	t->n_user = w->n;
}

/*
 * walk_user_stack() for a CPU sample: a global function, so the verifier
 * checks the walk (its bpf_loop and the round it runs: the native step, the
 * runtimes' dispatch) once, on its own, rather than at each of sample()'s
 * two walks and in every state sample() arrives there with. One call per
 * walk, not per frame (a call and its return cost the most on CPUs whose
 * returns are mitigated).
 */
__noinline int walk_user_stack_cpu(struct bpf_perf_event_data *ctx, struct trace_buf *b,
				   struct walk_scratch *ws, const struct op_regs *r, int regs_err)
{
	if (!b || !ws || !r)
		return -1;
	walk_user_stack(ctx, b, ws, r, regs_err);
	return 0;
}

/*
 * The packed frames (words of them, at most 2 * OP_MAX_USER_FRAMES) over the
 * record's op_frame slots, after its nk kernel frames: plain loads and stores
 * of 64 bytes a round instead of bpf_probe_read_kernel (whose checks and
 * nested calls cost more than the copy on CPUs whose returns are mitigated).
 * A global function: the verifier checks its loop once, not at each of
 * trace_size()'s callers with each count of rounds. The last round may copy up
 * to 7 words past the frames: inside the buffer, past the record's size, never
 * sent. The op_frame slots are not read again. 0, -1: b or ws NULL.
 */
__noinline int packed_copy(struct trace_buf *b, struct walk_scratch *ws, __u64 nk, __u64 words)
{
	__u64 base = nk;

	if (!b || !ws)
		return -1;
	/* A mask the verifier can follow, on an opaque copy so the compiler keeps it. */
	__asm__ volatile("" : "+r"(base));
	base &= 255;
	for (__u32 c = 0; c < 2 * OP_MAX_USER_FRAMES / 8; c++) {
		__u64 *d = (__u64 *)((__u8 *)b->body + base * 8 + c * 64);
		const __u64 *src = &ws->packed[c * 8];

		if (c * 8 >= words)
			break;
		d[0] = src[0];
		d[1] = src[1];
		d[2] = src[2];
		d[3] = src[3];
		d[4] = src[4];
		d[5] = src[5];
		d[6] = src[6];
		d[7] = src[7];
	}
	return 0;
}

/*
 * The record's size and where it is (*rec): its user frames packed when they
 * all pack (OP_TRACE_F_PACKED: a third of the bytes into the ring buffer;
 * OP_TRACE_F_PACKED_WIDE: two thirds). Without kernel frames, the header goes
 * right before the packed frames the walk kept (8 words copied, not the
 * frames); with them, the packed frames go over the struct op_frame ones
 * after the kernel frames. Else the trace_buf as built.
 */
static __always_inline long trace_size(struct trace_buf *b, struct walk_scratch *ws,
				       const void **rec)
{
	struct op_trace *t = &b->t;
	__u64 nk = t->n_kernel & 255, nu = t->n_user & (OP_MAX_USER_FRAMES * 2 - 1), words = 0;
	long size;

	*rec = b;
	if (ws->pack == PACK_NARROW && nu && nu <= OP_MAX_USER_FRAMES) {
		words = nu;
		t->flags |= OP_TRACE_F_PACKED;
	} else if (ws->pack == PACK_WIDE && nu && nu <= OP_MAX_USER_FRAMES) {
		words = 2 * nu;
		t->flags |= OP_TRACE_F_PACKED_WIDE;
	} else {
		size = OP_TRACE_SIZE(nk, nu);
		return size > (long)sizeof(*b) ? (long)sizeof(*b) : size;
	}
	if (!nk) {
		__builtin_memcpy(ws->rec_head, t, sizeof(*t));
		*rec = ws->rec_head;
		/* words <= 2 * OP_MAX_USER_FRAMES: inside rec_head and packed. */
		return sizeof(*t) + 8 * words;
	}
	/* b and ws are not NULL: it copies. */
	packed_copy(b, ws, nk, words);
	return sizeof(*t) + 8 * nk + 8 * words;
}

#include "stack_copy.h"

#ifdef OP_BPF_PHASES
/*
 * Bench only (bench/run.py bpf-cost, with a build made with CLANG="clang -DOP_BPF_PHASES"):
 * where a walked sample's time goes, in ns summed per CPU, by the part of
 * sample() it is spent in. The default build has none of it.
 */
enum sample_phase {
	PHASE_SETUP,  /* filters, scratch, registers */
	PHASE_KNOWN,  /* stack_copy_wanted: the first pc's mapping (LPM trie, table info) */
	PHASE_HEADER, /* the record's header, names, the kernel stack */
	PHASE_WALK,   /* the user walk */
	PHASE_SIZE,   /* trace_size: the packed frames into the record */
	PHASE_WAKEUP, /* trace_wakeup */
	PHASE_RING,   /* bpf_ringbuf_output */
	PHASE__COUNT,
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PHASE__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} phase_ns SEC(".maps");

/* Adds the time since *since to phase which and starts the next phase now. */
static __always_inline void phase_end(__u32 which, __u64 *since)
{
	__u64 now = bpf_ktime_get_ns(), *v = bpf_map_lookup_elem(&phase_ns, &which);

	if (v)
		*v += now - *since;
	*since = bpf_ktime_get_ns();
}
#define PHASE_START(t)	    __u64 t = bpf_ktime_get_ns()
#define PHASE_END(which, t) phase_end((which), &(t))
#else
#define PHASE_START(t)
#define PHASE_END(which, t)
#endif

static __always_inline void sample(struct bpf_perf_event_data *ctx)
{
	PHASE_START(phase_t);
	/* The ids from the task (bpf_get_current_pid_tgid's fields): a helper call fewer. */
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = OP_KFIELD(task, task_tgid, __u32), tid = OP_KFIELD(task, task_pid, __u32),
	      zero = 0;
	struct walk_scratch *ws;
	struct trace_buf *b;
	struct op_trace *t;
	struct op_regs r = {};
	const void *rec;
	long n, size;
	int regs_err;
	__u64 now = 0, wakeup, stop = *(volatile __u64 *)&stop_after_ns;

	/* The time before the counters only when a recording has an end (record -d):
	 * else the idle and filtered samples go without the call, and the others
	 * take it after the filters. */
	if (stop != ~0ull) {
		now = bpf_ktime_get_ns();
		if (now >= stop)
			return;
	}
	stat_inc(OP_STAT_SAMPLES);
	if (tgid == 0) {
		stat_inc(OP_STAT_IDLE);
		return;
	}
	ws = walk_scratch__get();
	if (!ws)
		return;
	if (!pid_wanted_cached(ws, tgid) || !cgroup_wanted()) {
		stat_inc(OP_STAT_FILTERED);
		return;
	}
	if (!now)
		now = bpf_ktime_get_ns();
	b = bpf_map_lookup_elem(&scratch, &zero);
	if (!b)
		return;
	regs_err = user_regs(ctx, task, &r) ? -1 : !r.pc ? -2 : 0;
	walk_scratch__reset(ws, task, r.sp);
	PHASE_END(PHASE_SETUP, phase_t);
	if (stack_copy_wanted(ws, tgid, !regs_err, r.pc)) {
		if (!send_stack_copy(ctx, tgid, tid))
			return;
		/* Could not go: walked, without stopping for another try. */
		ws->copy_ok = 0;
		ws->over_budget = 1;
	}
	t = &b->t;
	PHASE_END(PHASE_KNOWN, phase_t);

	t->hdr.type = OP_EVENT_TRACE;
	t->hdr.pid = tgid;
	t->tid = tid;
	t->cpu = bpf_get_smp_processor_id();
	t->ktime_ns = now;
	t->flags = 0;
	t->n_kernel = 0;
	t->n_user = 0;
	task_comms(task, t->comm, t->pcomm);

	if (kernel_stacks && !in_user_mode(ctx)) {
		n = bpf_get_stack(ctx, b->body, 8 * (OP_MAX_KERNEL_FRAMES + 1), 0);
		if (n < 0) {
			stat_inc(OP_STAT_KERNEL_STACK_ERR);
			t->flags |= OP_TRACE_F_KERNEL_ERROR;
		} else {
			t->n_kernel = n / sizeof(__u64);
		}
	}
	PHASE_END(PHASE_HEADER, phase_t);
	walk_user_stack_cpu(ctx, b, ws, &r, regs_err);
	PHASE_END(PHASE_WALK, phase_t);
	/*
	 * The walk met a frame of a process or mapping not ready (a pc in no
	 * mapping read so far: libraries the dynamic loader mapped after the
	 * exec was handled, a dlopen; or no pid marker: files still being
	 * opened) and stopped: user space reads the maps again when the report
	 * sent with it arrives, before the records after it, so a stack copy of
	 * this sample is unwound completely once the tables are in rather than
	 * guessed with frame pointers. The copies' budget bounds how many: past
	 * it (or if the copy cannot go) the sample is walked again without
	 * stopping, with frame pointers where no table is.
	 */
	if (ws->want_copy) {
		if (!send_stack_copy(ctx, tgid, tid))
			return;
		walk_scratch__reset(ws, task, r.sp);
		walk_user_stack_cpu(ctx, b, ws, &r, regs_err);
		ws->over_budget = 1;
	}
	if (ws->over_budget)
		stat_inc(OP_STAT_STACK_COPY_SKIPPED);

	size = trace_size(b, ws, &rec);
	PHASE_END(PHASE_SIZE, phase_t);
	wakeup = trace_wakeup(ws, size);
	PHASE_END(PHASE_WAKEUP, phase_t);
	if (bpf_ringbuf_output(&events, (void *)rec, size, wakeup))
		stat_inc(OP_STAT_RINGBUF_FULL);
	PHASE_END(PHASE_RING, phase_t);
	return;
}

/*
 * The first-sample events (OP_FIRST_SAMPLE_PERIOD_NS) are set going for one
 * overflow; from Linux 6.10 the kernel counts an overflow against that limit
 * only when the program returns nonzero (and then also writes the perf
 * record, to no buffer). The sampling events return 0: nothing more is done.
 */
SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	sample(ctx);
	return ((const struct op_perf_ctx *)ctx)->sample_period == OP_FIRST_SAMPLE_PERIOD_NS;
}

/*
 * Off-CPU (--off-cpu[=P]): where threads wait. On each switch-out of a user
 * thread, with probability P, its stacks are taken (the same kernel stack and
 * user walk as a sample: prev is current at this tracepoint, its user
 * registers are the ones saved on kernel entry) and sent at once as an
 * op_trace flagged OP_TRACE_F_OFF_CPU; only (tid -> switch-out time) stays
 * here, in offcpu_pending. When the thread is switched in, a 32-byte
 * op_offcpu_end gives user space the end of the wait, and it gives the
 * trace that time (scaled by 1/P). Keeping the unwound stack here until the
 * switch-in instead would cost up to 25 KiB of map memory per waiting thread
 * (thousands wait on any host) and a second copy of it; this way the map
 * holds 16 bytes per waiting thread and the ring buffer carries each stack
 * once, when it is taken.
 */
const volatile __u64 offcpu_threshold = 0; /* P * 2^32; 0: off; 2^32: every switch */

/* The threads whose switch-out was recorded and which have not run since:
 * 65536 entries (about 4 MiB preallocated); a switch-out past it is not
 * recorded (OP_STAT_OFFCPU_PENDING_FULL). */
#define OFFCPU_PENDING_MAX 65536

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_PENDING_MAX);
	__type(key, __u32);   /* tid */
	__type(value, __u64); /* switch-out time, CLOCK_MONOTONIC */
} offcpu_pending SEC(".maps");

#define OFFCPU_SKIP_FRAMES 2
#define OP_TASK_DEAD	   0x80	      /* __state of a task switching out for the last time */
#define OP_PF_KTHREAD	   0x00200000 /* task->flags of a kernel thread */

/* next: a raw tracepoint's argument (a number to the verifier), read with probe reads. */
static __always_inline void offcpu_switch_in(struct task_struct *next)
{
	__u32 tid = OP_KREAD(next, task_pid, __u32);
	__u64 *start = bpf_map_lookup_elem(&offcpu_pending, &tid), start_ns;
	struct op_offcpu_end *e;

	if (!start)
		return;
	start_ns = *start;
	bpf_map_delete_elem(&offcpu_pending, &tid);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(OP_STAT_OFFCPU_LOST);
		return;
	}
	e->hdr.type = OP_EVENT_OFFCPU_END;
	e->hdr.pid = OP_KREAD(next, task_tgid, __u32);
	e->tid = tid;
	e->reserved = 0;
	e->start_ns = start_ns;
	e->end_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(e, trace_wakeup(walk_scratch__get(), sizeof(*e)));
}

/* prev: the current task, through its BTF pointer (plain loads, bpf_task_pt_regs). */
static __always_inline void offcpu_switch_out(void *ctx, struct task_struct *prev,
					      unsigned int prev_state)
{
	__u32 tgid = OP_KFIELD(prev, task_tgid, __u32), tid = OP_KFIELD(prev, task_pid, __u32);
	__u32 zero = 0;
	struct walk_scratch *ws;
	struct trace_buf *b;
	struct op_trace *t;
	const struct op_pt_regs *regs;
	struct op_regs r = {};
	const void *rec;
	long n, size;
	__u64 now;
	int regs_err;

	/* Idle, kernel threads, and a thread leaving for good (it never runs again). */
	if (!tgid || (OP_KFIELD(prev, task_flags, __u32) & OP_PF_KTHREAD) ||
	    !OP_KFIELD(prev, task_mm, void *) || (prev_state & OP_TASK_DEAD))
		return;
	/* The same targets as the CPU samples (prev is current: the cgroup test holds). */
	if (!pid_wanted(tgid) || !cgroup_wanted())
		return;
	stat_inc(OP_STAT_OFFCPU_SWITCHES);
	if (offcpu_threshold < (1ull << 32) && bpf_get_prandom_u32() >= offcpu_threshold)
		return;
	ws = walk_scratch__get();
	b = bpf_map_lookup_elem(&scratch, &zero);
	if (!ws || !b)
		return;
	now = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&offcpu_pending, &tid, &now, BPF_ANY)) {
		stat_inc(OP_STAT_OFFCPU_PENDING_FULL);
		return;
	}
	regs = (const struct op_pt_regs *)bpf_task_pt_regs(prev);
	if (regs) {
		r.pc = OP_TASK_REG(regs, ip);
		r.sp = OP_TASK_REG(regs, sp);
		r.fp = OP_TASK_REG(regs, bp);
	}
	regs_err = !regs ? -1 : !r.pc ? -2 : 0;
	walk_scratch__reset(ws, prev, r.sp);
	/* No stack copies here (copy_ok stays 0): a thread of a process not ready is
	 * walked with what is known, and counted. */
	if (!regs_err && !process_known(ws, tgid, r.pc))
		stat_inc(OP_STAT_OFFCPU_NOT_READY);

	t = &b->t;
	t->hdr.type = OP_EVENT_TRACE;
	t->hdr.pid = tgid;
	t->tid = tid;
	t->cpu = bpf_get_smp_processor_id();
	t->ktime_ns = now;
	t->flags = OP_TRACE_F_OFF_CPU;
	t->n_kernel = 0;
	t->n_user = 0;
	task_comms(prev, t->comm, t->pcomm);
	if (kernel_stacks) {
		/* Skipped: this program and the tracepoint's caller (bpf_trace_run4), so
		 * the stack starts in __schedule. */
		n = bpf_get_stack(ctx, b->body, 8 * (OP_MAX_KERNEL_FRAMES + 1),
				  OFFCPU_SKIP_FRAMES & BPF_F_SKIP_FIELD_MASK);
		if (n < 0)
			t->flags |= OP_TRACE_F_KERNEL_ERROR;
		else
			t->n_kernel = n / sizeof(__u64);
	}
	walk_user_stack(NULL, b, ws, &r, regs_err);
	if (t->flags & OP_TRACE_F_USER_TRUNCATED)
		stat_inc(OP_STAT_OFFCPU_TRUNCATED);

	size = trace_size(b, ws, &rec);
	if (bpf_ringbuf_output(&events, (void *)rec, size, trace_wakeup(ws, size))) {
		bpf_map_delete_elem(&offcpu_pending, &tid);
		stat_inc(OP_STAT_OFFCPU_LOST);
		return;
	}
	stat_inc(OP_STAT_OFFCPU_SAMPLED);
}

/*
 * Loaded only with --off-cpu (sampler.c). A raw tracepoint, not tp_btf (which
 * makes libbpf load vmlinux BTF to find it): its arguments are numbers to the
 * verifier. prev is current here (__schedule traces the switch before it
 * switches), so it is read through bpf_get_current_task_btf(), the pointer
 * bpf_task_pt_regs needs. (Not compared with prev: clang then reads through
 * prev, equal, which the verifier sees as a number.)
 */
SEC("raw_tp/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct task_struct *cur = bpf_get_current_task_btf();

	offcpu_switch_in(next);
	offcpu_switch_out(ctx, cur, prev_state);
	return 0;
}

/* bprm: an exec's, whose path is sent with the event; NULL for an exit. task and
 * bprm: raw tracepoint arguments, read with probe reads. */
static __always_inline void proc_event(struct task_struct *task, __u32 type,
				       struct linux_binprm *bprm)
{
	struct op_proc_event *e;
	struct op_exec_event *x = NULL;
	__u32 tgid = OP_KREAD(task, task_tgid, __u32);

	/* Both tracepoints run in the task's own context: the cgroup test applies. */
	if (!(type == OP_EVENT_EXEC && report_all_execs) && !pid_wanted(tgid))
		return;
	if (!cgroup_wanted())
		return;
	if (bprm) {
		x = bpf_ringbuf_reserve(&events, sizeof(*x), 0);
		e = x ? &x->proc : NULL;
	} else {
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	}
	if (!e) {
		stat_inc(OP_STAT_PROC_EVENT_LOST);
		return;
	}
	if (x && bpf_probe_read_kernel_str(x->path, sizeof(x->path),
					   OP_KREAD(bprm, bprm_interp, const char *)) < 0)
		x->path[0] = '\0';
	e->hdr.type = type;
	e->hdr.pid = tgid;
	e->tid = OP_KREAD(task, task_pid, __u32);
	e->reserved = 0;
	e->ktime_ns = bpf_ktime_get_ns();
	OP_KREAD_STR(e->comm, task, task_comm);
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* The process tracepoints are raw tracepoints too (see on_switch). */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = OP_KREAD(p, task_tgid, __u32);
	struct op_mapping_key marker = {.prefixlen = 32, .pid = tgid};

	/* A new image: its first unknown address is reported at once, whatever
	 * the process reported before the exec (fork children usually do). */
	bpf_map_delete_elem(&unknown_reported, &tgid);
	/* And it is not known until user space has read its maps: without the
	 * marker its samples come as stack copies, not walks over the old image's
	 * mappings (user space removes the old ranges when it handles the exec). */
	bpf_map_delete_elem(&exe_mappings, &marker);
	/* The walks' kept mappings of this pid (the old image's) are not used again. */
	__sync_fetch_and_add(&maps_gen, 1);
	proc_event(p, OP_EVENT_EXEC, bprm);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tid = OP_KREAD(p, task_pid, __u32);

	/* A thread runs to exit, so its switch-in has ended any wait: a pending
	 * entry left here is a safety net's catch (counted), not a leak. */
	if (offcpu_threshold && !bpf_map_delete_elem(&offcpu_pending, &tid))
		stat_inc(OP_STAT_OFFCPU_EXITED);
	/* Only the whole process leaving matters: skip threads other than the leader. */
	if (tid != OP_KREAD(p, task_tgid, __u32))
		return 0;
	proc_event(p, OP_EVENT_EXIT, NULL);
	return 0;
}

/* A new process whose parent is profiled is profiled too (follow_children). */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid, ctgid;
	__u8 one = 1;
	long err;

	if (!follow_children)
		return 0;
	ctgid = OP_KREAD(child, task_tgid, __u32);
	/* A new thread of a process is that process already. */
	if (OP_KREAD(child, task_pid, __u32) != ctgid)
		return 0;
	ptgid = OP_KREAD(parent, task_tgid, __u32);
	if (!bpf_map_lookup_elem(&pid_filter, &ptgid))
		return 0;
	err = bpf_map_update_elem(&pid_filter, &ctgid, &one, BPF_ANY);
	if (err)
		stat_inc(OP_STAT_PID_FILTER_FULL); /* the map is full: the child is not profiled */
	return 0;
}
