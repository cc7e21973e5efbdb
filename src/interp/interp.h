/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The seam between the profiler and the language runtimes it walks
 * (one today; HotSpot, V8, Ruby, Perl, PHP next). Nothing above
 * src/interp/ names a runtime: the engine, the profile builder, the
 * symbolizer and the exporters talk to struct interp, and each runtime is
 * one struct interp_ops listed in src/interp/registry.c.
 *
 * A runtime's ops follow the life of what it learns:
 *   - per file (once per file slot, cached here): is this file the runtime's,
 *     and what is needed to find it in a process (symbols, offsets);
 *   - per process (interp.c is the process table's one listener for
 *     runtimes): attach on every maps read that finds one of its files
 *     mapped (publish its per-pid BPF state; return its code ranges, JIT
 *     code caches included: a pc in an anonymous mapping the tables do not
 *     know makes the collector re-read the maps, so code that appears later
 *     is found), sync mappings, detach when the process exits, exec'd into
 *     something else or unmapped it;
 *   - per frame: resolve while the process lives (read what names the frame
 *     into the runtime's frame store, return an id), describe when the
 *     profile is built (name, file, line of that id);
 *   - per interval: forget what only exited processes needed;
 *   - counters: one list of {name, value}, printed by `record -v`.
 *
 * A runtime's frames have their own kind in omniprof/frame_kinds.h; the BPF
 * walker emits them as struct op_frame {addr, data, aux}, whose meaning
 * the runtime's ABI header documents; user space keeps (id, aux): the id the
 * runtime's resolve returned and aux, its offset in the function.
 */
#ifndef OMNIPROF_INTERP_H
#define OMNIPROF_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "omniprof/abi.h"
#include "proc/remote_memory.h"
#include "unwind/user_unwind.h"

struct cached_file;
struct file_cache;
struct process;
struct process_mapping;
struct process_table;

/* What a runtime may use of the loaded BPF object. */
struct interp_env {
	struct file_cache *files;
	/* The fd of the BPF map called name, or -1 (no BPF object: tests, replay). */
	int (*map_fd)(void *ctx, const char *name);
	void *ctx;
	/*
	 * Reads of a pid's memory (attach, resolve): NULL for the live process;
	 * the replay suite reads a snapshot of a process that is gone.
	 */
	struct remote_memory (*memory)(void *memory_ctx, uint32_t pid);
	void *memory_ctx;
};

/* pid's memory as env says to read it (see interp_env.memory). */
static inline struct remote_memory interp_env__memory(const struct interp_env *env, uint32_t pid)
{
	return env && env->memory ? env->memory(env->memory_ctx, pid) : remote_memory__live(pid);
}

/* Reads n per-CPU u64 counters of the BPF map called name, summed, into out. 0 or -errno. */
typedef int (*interp_read_percpu_fn)(void *ctx, const char *name, uint64_t *out, uint32_t n);

struct interp_counter {
	const char *name; /* as `record -v` prints it, "<runtime>: what" */
	uint64_t value;
};

/* Code ranges a process's runtime owns, for the walk's dispatch (see interp.c). */
#define INTERP_MAX_RANGES OP_INTERP_MAX_RANGES
struct interp_range {
	uint64_t start; /* absolute, [start, end) */
	uint64_t end;
	/*
	 * OP_INTERP_RANGE_F_UNWINDS: JIT code the runtime unwinds itself (its
	 * step gets the frame before the native rules do; see
	 * omniprof/unwind/walk.h). 0: interpreter code the native rules unwind.
	 */
	uint32_t flags;
};

/*
 * One user-space walk of a stack copy (src/engine/stack_copy.c) handing a
 * runtime's code to the runtime: what its walk_begin gets.
 */
struct interp_walk_env {
	const void *state;   /* walk_state() of the walked pid */
	uint64_t thread_ptr; /* the walked thread's thread pointer (fs base) */
	/* Reads of the runtime's memory, as user_unwind_ops.read. */
	int (*read)(void *ctx, void *dst, size_t size, uint64_t addr);
	void *read_ctx;
	/* The runtime's memory outside the copy is read now, not at the sample
	 * (a stack copy of a live process; the replay suite's snapshots are of
	 * the sample's moment): what it finds there may be of a later moment. */
	bool late;
};

/* What a runtime's walks of stack copies found (struct stack_copy_stats). */
struct interp_walk_stats {
	uint64_t walks;	   /* copies walked with the runtime's step */
	uint64_t frames;   /* the runtime's frames they gave */
	uint64_t no_state; /* the runtime's per-thread state (or frame) not found */
	uint64_t errors;   /* walks ended by an unreadable runtime frame */
};

/* Bytes a runtime's walk of one stack copy may keep (interp_ops.walk_size;
 * HotSpot's walk remembers the code blobs and scopes it has read). */
#define INTERP_WALK_MAX_SIZE 2184

struct interp_ops {
	const char *name;	 /* for logs: its folder's name */
	enum op_frame_kind kind; /* the kind of its frames */
	enum op_interp interp;	 /* its id in the walk's dispatch (interp_procs ranges) */
	/* The enum op_unwind_error its walker ends a stack with (0: none), and its text. */
	uint64_t unwind_error;
	const char *unwind_error_text;
	/* Most counters counters() reports. */
	size_t max_counters;

	/* The runtime's state, *rt, freed by free_rt (which accepts NULL). 0 or -errno. */
	int (*new_rt)(const struct interp_env *env, void **rt);
	void (*free_rt)(void *rt);
	/* The BPF object is about to close: write none of its maps from now on. */
	void (*unload)(void *rt);

	/*
	 * Symbol names, NULL-terminated ("name*": any name starting with
	 * "name"), of which every file of the runtime defines at least one in
	 * .dynsym or .symtab: a file none of whose defined symbols is named so is
	 * not inspected (interp.c reads each file's symbols once for all
	 * runtimes). NULL: every file is inspected (inspect_file filters itself).
	 */
	const char *const *file_markers;

	/*
	 * Per file, once per file slot: 0 and *data when f is the runtime's,
	 * -ENOENT when it is not, another -errno when it is but cannot be used
	 * (logged and counted by the runtime). data is freed by free_file.
	 */
	int (*inspect_file)(void *rt, const struct cached_file *f, void **data);
	void (*free_file)(void *rt, void *data);

	/*
	 * Per process, on every read of p's maps while mapping m holds file data
	 * (so called again for a process already attached). Publish p's BPF
	 * state, and put the absolute code ranges whose frames the walk hands
	 * to this runtime into ranges (at most INTERP_MAX_RANGES; *n_ranges says
	 * how many; they replace the previous call's). 0 or -errno (p is then
	 * treated as not running it).
	 */
	int (*attach)(void *rt, const struct process *p, const struct process_mapping *m,
		      const void *data, struct interp_range *ranges, size_t *n_ranges);
	/* p does not run the runtime (any more): exited, exec'd, or no file of it mapped. */
	void (*detach)(void *rt, const struct process *p);
	/* p's maps were read while attached: tag its JIT/anonymous code ranges. NULL: none. */
	void (*sync_mappings)(void *rt, const struct process *p);
	/* The per-pid state the walk reads (for stack copies unwound in user space), or NULL. */
	const void *(*walk_state)(const void *rt, uint32_t pid);
	/*
	 * A stack copy's walk (src/engine/stack_copy.c): walk (walk_size bytes,
	 * at most INTERP_WALK_MAX_SIZE, zeroed) holds the runtime's state for
	 * one walk; walk_begin returns its user-space step (OP_INTERP_STEP of
	 * omniprof/unwind/walk.h), walk_end adds what the walk found to stats.
	 * walk_begin NULL: the runtime's code stays native in copies.
	 */
	size_t walk_size;
	struct user_unwind_runtime (*walk_begin)(void *walk, const struct interp_walk_env *env);
	void (*walk_end)(const void *walk, struct interp_walk_stats *stats);

	/* Per frame: the frame store id of f (0: cannot be named), while pid lives. */
	uint32_t (*resolve)(void *rt, uint32_t pid, const struct op_frame *f);
	/*
	 * Name, file name and line of frame id at offset. Strings belong to rt.
	 * rt may be NULL and id 0: *name is then the runtime's placeholder.
	 */
	void (*describe)(const void *rt, uint32_t id, uint64_t offset, const char **name,
			 const char **filename, int64_t *line);
	/*
	 * A frame that ran several functions (inlined by a JIT): function index
	 * of frame id at offset, innermost (0) first, as describe does; false
	 * past the last. A location of several lines, as a native frame with
	 * inlined calls. NULL, or false at index 0: describe's one function.
	 */
	bool (*describe_inline)(const void *rt, uint32_t id, uint64_t offset, uint32_t index,
				const char **name, const char **filename, int64_t *line);
	/*
	 * The line describe's function starts at in its file (pprof's and
	 * OTLP's start_line, e.g. Python's co_firstlineno), 0 when unknown.
	 * NULL: the runtime does not know it.
	 */
	int64_t (*start_line)(const void *rt, uint32_t id);

	/*
	 * The suffix the folded output adds to a frame's name at offset (the
	 * flame-graph tools' palettes, e.g. Java's "_[j]"), "" for none. NULL: none.
	 */
	const char *(*folded_suffix)(uint64_t offset);

	/* After a profile was built: forget what exited processes needed. Returns objects held. */
	size_t (*end_interval)(void *rt, const struct process_table *pt);
	/* Frame-store objects held for pid (tests, reports). */
	size_t (*held)(const void *rt, uint32_t pid);
	/*
	 * The longest the session may now wait before it reads records, in ms
	 * (0: no limit; the session's own is a second when idle): its frames
	 * must be named soon after they were sampled (HotSpot trusts a name only
	 * within the collection epoch of its sample). NULL: no limit.
	 */
	uint32_t (*poll_ms)(const void *rt);

	/* Reads the runtime's BPF counters (kept until the next read). NULL: none. */
	void (*read_bpf_counters)(void *rt, interp_read_percpu_fn read, void *ctx);
	/* Fills out (at most max_counters) with the runtime's counters; returns how many. */
	size_t (*counters)(const void *rt, struct interp_counter *out);
};

/* The runtimes, in the order they are tried on a process (src/interp/registry.c). */
extern const struct interp_ops *const interp_registry[];
extern const size_t interp_registry_len;

struct interp; /* every runtime's state, per file and per process knowledge */

/*
 * Starts every runtime and listens to pt (maps read, exit, forget). Free
 * with interp__free(), which stops listening. 0 or -errno.
 */
int interp__new(const struct interp_env *env, struct process_table *pt, struct interp **out);
void interp__free(struct interp *in); /* accepts NULL */
/* The BPF object is about to close: no runtime writes its maps from now on. */
void interp__unload(struct interp *in);

/* The text of a runtime's unwind error reason (an OP_FRAME_ERROR frame), or NULL. */
const char *interp__unwind_error(uint64_t reason);

/* The runtime of frame kind `kind`, or NULL (native, kernel, error or unknown kinds). */
const struct interp_ops *interp__of_kind(unsigned int kind);
/* The runtime of walk id `interp` (enum op_interp), or NULL. */
const struct interp_ops *interp__of_id(unsigned int interp);

/*
 * A runtime's frame, while pid lives: *id (frame-store id, 0: unnamed) and
 * *offset to keep in the trace. in may be NULL (frames then stay unnamed).
 * False when f is no runtime's frame (nothing written).
 */
bool interp__resolve(struct interp *in, uint32_t pid, const struct op_frame *f, uint32_t *id,
		     uint64_t *offset);
/*
 * Name, file and line of a runtime's frame (kind, id, offset) as kept by
 * interp__resolve(). in may be NULL. False when kind is no runtime's.
 */
bool interp__describe(const struct interp *in, unsigned int kind, uint32_t id, uint64_t offset,
		      const char **name, const char **filename, int64_t *line);

/* One function of a runtime's frame (interp__describe_lines()). */
struct interp_line {
	const char *name;
	const char *filename;
	int64_t line;
	int64_t start_line; /* the function's first line, 0 when unknown */
};

/* Most functions one runtime frame is described as (the rest are dropped). */
#define INTERP_MAX_LINES 16

/*
 * The functions of runtime frame id at offset, innermost first, into out
 * (at most max, >= 1) with ops's describe_inline, else its describe: how
 * many (>= 1). rt may be NULL.
 */
size_t interp__describe_ops(const struct interp_ops *ops, const void *rt, uint32_t id,
			    uint64_t offset, struct interp_line *out, size_t max);
/* As interp__describe_ops() for a frame of kind; 0 when kind is no runtime's. in may be NULL. */
size_t interp__describe_lines(const struct interp *in, unsigned int kind, uint32_t id,
			      uint64_t offset, struct interp_line *out, size_t max);

/* The folded-output suffix of a frame of kind `kind` at offset: "" for none (any kind). */
const char *interp__folded_suffix(unsigned int kind, uint64_t offset);

/* The per-pid state runtime `interp` (enum op_interp) walks pid with; NULL: it does not run it. */
const void *interp__walk_state(const struct interp *in, uint32_t pid, unsigned int interp);
/* pid's `interp_procs` value (where the walk hands frames to a runtime), or NULL: none. */
const struct op_interp_proc *interp__ranges(const struct interp *in, uint32_t pid);

/*
 * What a read of p's maps does (attach, ranges, detach), for callers without
 * a process table: the replay suite, which has its maps from a snapshot.
 */
void interp__sync_process(struct interp *in, const struct process *p);

/* The file cache closed file_slot: what was learnt of the file goes. */
void interp__forget_file(struct interp *in, uint32_t file_slot);
/* After a profile was built (see interp_ops.end_interval). Returns objects held in all. */
size_t interp__end_interval(struct interp *in, const struct process_table *pt);
/* Frame-store objects held for pid by every runtime. */
size_t interp__held(const struct interp *in, uint32_t pid);
/* The shortest wait for records some runtime asks for (interp_ops.poll_ms), 0: none. */
uint32_t interp__poll_ms(const struct interp *in);

/* Reads every runtime's BPF counters now. */
void interp__read_bpf_counters(struct interp *in, interp_read_percpu_fn read, void *ctx);
/* Prints every runtime's counters, one "  %-40s %llu" line each. */
void interp__print_counters(const struct interp *in, FILE *f);

#endif
