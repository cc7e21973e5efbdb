/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HotSpot (the OpenJDK JVM) on x86-64: what the BPF walker shares with user
 * space (src/interp/hotspot/). Fixed-width types only.
 *
 * The JVM's code cache (interpreter, stubs, compiled methods) is JIT code with
 * no unwind tables and, with default flags, no frame pointer in compiled
 * frames. User space hands it to the walk as one OP_INTERP_HOTSPOT range with
 * OP_INTERP_RANGE_F_UNWINDS, so hotspot_step() (omniprof/interp/hotspot_walk.h)
 * writes each frame in it and moves the unwinder to the caller:
 *   - the template interpreter (op_jvm_proc.interp_start/end) keeps rbp: the
 *     Method* and the bytecode pointer are at fixed slots below it;
 *   - a CodeBlob (found with its code heap's segment map) with a frame size
 *     (nmethods, runtime stubs): the return address is at
 *     sp + frame_size * 8 - 8, the caller's rbp just below it;
 *   - a blob without one (call stub, other stub routines): rbp-based.
 *
 * A HotSpot frame (OP_FRAME_HOTSPOT) is
 *   addr  Method* (OP_JVM_T_INTERPRETED, OP_JVM_T_COMPILED), or the blob's
 *         name pointer (OP_JVM_T_STUB: a C string in libjvm.so)
 *   data  low 56 bits: the fingerprint user space checks (the Method's
 *         ConstMethod*, or the blob's address); bits 56..63: enum op_jvm_type
 *   aux   bits 0..27: the bytecode index (OP_JVM_BCI_NONE: not known; a
 *         method's bytecodes are at most 64 KiB); bits 28..31: enum
 *         op_jvm_type again, so the frame's type stays in the profile's
 *         location (its address) and the folded output can show it
 *   reserved  the low 16 bits of the JVM's collection count when the walk
 *         began (op_jvm_proc.gc_count; 0 when not known), plus its safepoint
 *         count while it can redefine classes (op_jvm_proc.safepoint_count,
 *         the old Methods a redefinition frees are freed at a safepoint
 *         without a collection): the epoch whose
 *         memory the frame's Method* was read in. A class is unloaded, and
 *         its Method, ConstMethod and constant pool freed for the next
 *         class to take, only in a collection counted before it unloads
 *         (CollectedHeap::_total_collections, counted at the start of each
 *         Serial, Parallel and G1 collection and at ZGC's mark start), so
 *         user space trusts a name read in that same epoch and reads again
 *         otherwise (src/interp/hotspot/hotspot.c)
 */
#ifndef OMNIPROF_INTERP_HOTSPOT_ABI_H
#define OMNIPROF_INTERP_HOTSPOT_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum op_jvm_type {
	OP_JVM_T_INTERPRETED = 0,
	OP_JVM_T_COMPILED = 1, /* a C1/C2 nmethod (or a native method's wrapper) */
	OP_JVM_T_INLINED = 2,  /* a method a compiled one inlined */
	OP_JVM_T_STUB = 3,     /* any other code blob: named by the JVM's own name */
};

#define OP_JVM_TYPE_SHIFT     56
#define OP_JVM_FP_MASK	      ((1ull << OP_JVM_TYPE_SHIFT) - 1)
#define OP_JVM_BCI_NONE	      0x0fffffffu
#define OP_JVM_BCI_MASK	      0x0fffffffu
#define OP_JVM_AUX_TYPE_SHIFT 28

#define OP_JVM_MAX_HEAPS 4
/* Steps back through a segment map: each moves at most 254 segments (JDK 8's
 * linear map), JDK 9+ maps need a few. 64 covers a 1 MiB blob of 64-byte segments. */
#define OP_JVM_SEGMAP_STEPS 64
/* Segment map bytes read at once, ending at the pc's segment: a small blob's
 * start is among them, found without another read. */
#define OP_JVM_SEGMAP_WINDOW 16
/* Binary search steps through an nmethod's PcDescs (16 bytes each): 2^16 of them. */
#define OP_JVM_PCDESC_STEPS 16
#define OP_JVM_PCDESC_SIZE  16
/* Bytes of a blob read as one block, from its HeapBlock header (16 bytes;
 * JDK 17's nmethod fields end at 276 after it); also a PcDesc search's last
 * window (OP_JVM_PCDESC_WINDOW + 2 PcDescs). */
#define OP_JVM_BLOCK	   304
#define OP_JVM_BLOCK_SHORT 128 /* ... when the block runs past readable memory */
/*
 * The walker's scratch bytes (jw->block): the block, or a remembered
 * nmethod's check read (OP_JVM_PC_CACHE_GET: from its HeapBlock header to
 * its later field of compile id and Method*, 324 bytes in JDK 17).
 */
#define OP_JVM_SCRATCH 328
/* "nmethod" as a little-endian u64 with its NUL: the name every nmethod's CodeBlob has. */
#define OP_JVM_NMETHOD_NAME 0x646f6874656d6eull
/* "native nmethod" (a native method's wrapper): its first 8 bytes, then "method" with its NUL. */
#define OP_JVM_NATIVE_NAME  0x6e2065766974616eull
#define OP_JVM_NATIVE_NAME2 0x646f6874656dull
/* "vtable" / "itable" (the low 6 bytes of a name): frameless dispatch stubs. */
#define OP_JVM_VTABLE_NAME 0x656c62617476ull
#define OP_JVM_ITABLE_NAME 0x656c62617469ull

/*
 * op_jvm_proc.flags. JDK 8 describes where a blob's code is, and an
 * nmethod's scopes data and deopt handlers, as int offsets from the blob
 * (CodeBlob::_code_offset / _data_offset, nmethod::_scopes_data_offset,
 * _deoptimize_offset, _deoptimize_mh_offset); JDK 9+ as pointers.
 */
#define OP_JVM_F_OFFSETS 0x01
/*
 * JDK 23+: an nmethod's PcDescs and scopes data are in its immutable data
 * (a separate C-heap block at nmethod::_immutable_data): PcDescs
 * [imm + _scopes_pcs_offset, imm + _scopes_data_offset), scopes at
 * imm + _scopes_data_offset; nm_scopes_data, nm_pcs_offset and
 * nm_pcs_end_offset then name those two int fields of the nmethod and
 * nm_immutable_data the pointer.
 */
#define OP_JVM_F_IMMUTABLE 0x02
/*
 * Where the metadata (Method*) table is, with OP_JVM_F_IMMUTABLE: JDK 25
 * keeps it in the blob's mutable data (CodeBlob::_mutable_data +
 * CodeBlob::_relocation_size: nm_meta_base names the pointer,
 * nm_metadata_offset the int); JDK 23 and 24 in the blob's data section
 * (blob + CodeBlob::_data_offset + nmethod::_metadata_offset: nm_meta_base
 * names the int, nm_metadata_offset the u2) when this flag is clear.
 */
#define OP_JVM_F_META_MUTABLE 0x04
/*
 * The JVM writes its debug info (and line tables) as UNSIGNED5 with an
 * excess of 1, so that no byte is 0: each byte stands for its value + 1
 * (src/hotspot/share/utilities/unsigned5.hpp, X = 1, L = 191; JDK 20 on).
 * JDK 8 to 19 (compressedStream.cpp) write the value itself (L = 192). A
 * byte >= 192 goes on in both. Seen in the JDKs' own serviceability agents:
 * Temurin 25's sun.jvm.hotspot.utilities.Unsigned5 (X = 1, L = 191) and
 * Debian 17's sun.jvm.hotspot.code.CompressedStream (L = 192).
 */
#define OP_JVM_F_UNSIGNED5_X1 0x08
/*
 * HeapBlock::Header::_length is a uint32_t (JDK 25's vmStructs: _length at
 * 0, _used at 4), not a size_t (JDK 8 to 17: _used at 8): its low 4 bytes.
 */
#define OP_JVM_F_HB_LEN32 0x10

struct op_jvm_heap {
	__u64 low; /* the heap's committed code: [low, high) */
	__u64 high;
	__u64 segmap; /* its segment map: one byte per segment */
	__u32 log2_segment;
	__u32 reserved;
};

/* Per pid (the `jvm_procs` map): where the code is and the offsets to read it. */
struct op_jvm_proc {
	struct op_jvm_heap heaps[OP_JVM_MAX_HEAPS];
	__u64 interp_start; /* the template interpreter's code [start, end) */
	__u64 interp_end;
	/* CodeBlob fields (bytes from the blob) */
	__u16 blob_name;
	__u16 blob_frame_complete; /* int */
	__u16 blob_frame_size;	   /* int, in words */
	__u16 blob_code_begin;	   /* a pointer (OP_JVM_F_OFFSETS: an int offset from the blob) */
	__u16 blob_code_end;
	__u16 nmethod_method;	 /* CompiledMethod::_method */
	__u16 method_const;	 /* Method::_constMethod */
	__u16 const_method_size; /* sizeof(ConstMethod): the bytecodes follow it */
	__u16 heap_block_size;	 /* sizeof(HeapBlock): the blob follows it */
	/* Template interpreter frame slots, in words from rbp (frame_x86.hpp). */
	__s8 ifr_sender_sp;
	__s8 ifr_method;
	__s8 ifr_bcp;
	__u8 n_heaps;
	__u8 flags; /* OP_JVM_F_* */
	/*
	 * Where the CodeHeap's HeapBlock header (heap_block_size bytes, the
	 * blob after it) keeps its block's length in segments (a size_t, or a
	 * uint32_t with OP_JVM_F_HB_LEN32: bits 0..3, bytes from the HeapBlock)
	 * and whether it is used (a bool: bits 4..7). Known whenever nm_compile_id is: a remembered
	 * nmethod is taken only while its block is used and still covers the pc.
	 */
	__u8 hb_fields;
	/* nmethod debug info (bytes from the nmethod; 0: inlined frames not read) */
	__u16 nm_scopes_data;	 /* CompiledMethod::_scopes_data_begin (a pointer) */
	__u16 nm_pcs_offset;	 /* nmethod::_scopes_pcs_offset (an int offset) */
	__u16 nm_pcs_end_offset; /* nmethod::_dependencies_offset: where the PcDescs end */
	__u16 nm_metadata_offset;
	/*
	 * Deoptimisation (bytes from the nmethod; 0: not known): a compiled frame
	 * whose nmethod was invalidated while it waited for a callee returns to
	 * the nmethod's deopt handler, its original pc saved in the frame at
	 * unextended sp + _orig_pc_offset (HotSpot's frame::orig_pc_addr).
	 */
	__u16 nm_deopt_handler;	   /* CompiledMethod::_deopt_handler_begin (a pointer) */
	__u16 nm_deopt_mh_handler; /* CompiledMethod::_deopt_mh_handler_begin */
	__u16 nm_orig_pc_offset;   /* nmethod::_orig_pc_offset (an int) */
	__u16 nm_immutable_data;   /* nmethod::_immutable_data (OP_JVM_F_IMMUTABLE) */
	__u16 nm_meta_base;	   /* OP_JVM_F_IMMUTABLE: see OP_JVM_F_META_MUTABLE */
	/*
	 * nmethod::_compile_id (an int, unique per compilation in a JVM's life;
	 * 0: not known): what proves an nmethod remembered across samples is
	 * still the one at its address (OP_JVM_PC_CACHE_GET).
	 */
	__u16 nm_compile_id;
	/*
	 * Which image of the pid this is (user space numbers each JVM it reads
	 * anew: after an exec or a pid's reuse, another): an nmethod remembered
	 * under another is never taken.
	 */
	__u32 gen;
	/* &CollectedHeap::_total_collections (an unsigned int), 0: not known. */
	__u64 gc_count;
	/*
	 * The JVM's safepoint count (its perf counter sun.rt.safepoints, a jlong
	 * counted as each safepoint begins), added to the epoch; 0: not added.
	 * Set only while the JVM can redefine classes (a JVMTI agent holds
	 * can_redefine_classes or can_retransform_classes): a redefinition frees
	 * the old Methods without a collection, but only at a safepoint.
	 */
	__u64 safepoint_count;
	/*
	 * A JVM-wide count that moves between any nmethod's last activation and
	 * the freeing of its block (JDK 17: NMethodSweeper::_traversals, a long,
	 * its low 32 bits read; docs/architecture.md, HotSpot, "What frees an nmethod"), 0:
	 * not known. While it reads as it did when a remembered nmethod was last
	 * checked, that nmethod is still the one at its address, and the check
	 * read (its header and segment map byte) is not made again.
	 */
	__u64 code_count;
};

/* Code blobs, decoded scopes and Method -> ConstMethod pairs one walk
 * remembers: a stack repeats them (recursion, a framework's layers), and
 * each costs several reads of the JVM's memory the first time. */
#define OP_JVM_BLOBS   8
#define OP_JVM_SCOPES  16
#define OP_JVM_METHODS 8
/* PcDescs a search reads as one block once it has narrowed to this many. */
#define OP_JVM_PCDESC_WINDOW 16
_Static_assert(OP_JVM_BLOCK <= OP_JVM_SCRATCH, "the block fits the scratch bytes");
_Static_assert((OP_JVM_PCDESC_WINDOW + 2) * OP_JVM_PCDESC_SIZE <= OP_JVM_BLOCK,
	       "a PcDesc search's window fits the block");

enum op_jvm_blob_kind {
	OP_JVM_B_OTHER = 0,	/* a stub: named by its name */
	OP_JVM_B_NMETHOD = 1,	/* compiled code (or a native method's wrapper) */
	OP_JVM_B_FRAMELESS = 2, /* a vtable / itable stub */
};

/* A code blob as one step read it (what the step needs of its fields). */
struct op_jvm_blob {
	__u64 blob; /* the CodeBlob; 0: an empty slot */
	__u64 code_begin;
	__u64 code_end;
	__u64 name;   /* its name (a C string in libjvm) */
	__u64 method; /* nmethod: its Method* and the Method's ConstMethod* */
	__u64 cm;
	__u64 scopes;	/* nmethod: its scopes data (0: inlined frames not read) */
	__u64 metadata; /* nmethod: its metadata array (0: unreadable) */
	__s32 frame_size;
	__s32 complete;
	__u64
	    pcs_base; /* nmethod: what pcs_begin/end count from (the blob, or its immutable data) */
	__s32 pcs_begin; /* nmethod: its PcDescs [begin, end), from pcs_base */
	__s32 pcs_end;
	__s32 last_target;    /* the last PcDesc search: pc offset (-1: none) ... */
	__u32 last_scope;     /* ... and the scope it found */
	__u32 kind;	      /* enum op_jvm_blob_kind */
	__s32 orig_pc_offset; /* nmethod: where a deoptimised frame keeps its pc (0: unknown) */
	__u64 deopt_handler;  /* nmethod: its deopt handlers (0: unknown) */
	__u64 deopt_mh_handler;
	__s32 compile_id; /* nmethod: its nmethod::_compile_id (0: not read) */
	/*
	 * In the walker: 1 when taken from OP_JVM_PC_CACHE_GET (not stored
	 * again). In a cache entry: the walker's code_mark when the nmethod was
	 * last read or checked in the JVM's memory (0: none).
	 */
	__u32 remembered;
};

/* A decoded scope: the nmethod's scopes data + decode offset it was read at. */
struct op_jvm_scope {
	__u64 at; /* 0: an empty slot */
	__u64 method;
	__u64 cm;
	__u32 bci;
	__u32 sender;
};

/*
 * An nmethod as a walk read it for one return address, remembered across
 * samples (BPF: the per-CPU array `jvm_pc_cache`, 2-way sets of struct
 * op_jvm_pc_slot indexed by a hash of pid and pc): a stack's return
 * addresses repeat from sample to sample, and reading their blobs (segment
 * map, block, ConstMethod, PcDescs) is most of a compiled frame's cost.
 * Used only while nothing it holds can have changed: the same image of the
 * pid (gen and interp_start: not another JVM after an exec or a pid's
 * reuse), the same epoch (no collection, no redefinition since: its Method
 * and ConstMethod stand) and, read again at the blob's address (one read of
 * the span from its HeapBlock), the same nmethod::_compile_id and Method* (a
 * freed nmethod's memory taken by another compilation, the same method's
 * included, holds another compile id; taken by anything else, other bytes)
 * in a CodeHeap block still used and covering the pc (a freed nmethod keeps
 * its ids: a new blob carved from its block's tail does not). The last two
 * are not read again while the code count (op_jvm_proc.code_count) is as
 * when they were last read (blob.remembered).
 */
struct op_jvm_pc_key {
	__u32 pid;
	__u32 reserved;
	__u64 pc; /* 0: an empty slot; OP_JVM_PC_LEAF: the pid's last leaf nmethod */
};

/*
 * The key of a pid's last leaf nmethod: a leaf's pc is exact, never the
 * same twice in a hot loop, so it is not a key; its nmethod is kept under
 * this one (not a user address: never a return address) and taken, after
 * the same checks as a return address's, when the next leaf pc is in its
 * code.
 */
#define OP_JVM_PC_LEAF 0xffffffffffffffffull

struct op_jvm_pc_entry {
	struct op_jvm_blob blob;
	struct op_jvm_scope scope; /* its scope at blob.last_scope, decoded (at 0: none) */
	__u64 interp_start;
	__u32 epoch;
	__u32 gen; /* op_jvm_proc.gen */
};

/*
 * One slot of BPF's jvm_pc_cache: its key in the value (an array, not a
 * hash: the lookup is an index, no helper call, no hashing of the key in the
 * kernel, no LRU list; a hash lookup cost about as much as the rest of a
 * remembered frame). Per CPU: a CPU's entries are written only by its own
 * samples, which do not nest, so an entry is never read half written.
 */
#define OP_JVM_PC_CACHE_SLOTS 256 /* per CPU: 48 KiB */
#define OP_JVM_PC_CACHE_WAYS  2
struct op_jvm_pc_slot {
	struct op_jvm_pc_key key;
	struct op_jvm_pc_entry e;
};

struct op_jvm_method {
	__u64 method; /* 0: an empty slot */
	__u64 cm;
};

/*
 * A compiled frame's chain of scopes as a walk decoded it, remembered
 * across samples (BPF: the per-CPU array `jvm_chain_cache`, direct-mapped by
 * a hash of the key): the same pc comes back in every sample of a hot loop,
 * and decoding its inlined scopes (each a scope read, a metadata read and
 * often a ConstMethod read) is most of the cost of a stack of inlined
 * methods. The key names the nmethod by its compile id, not its address: a
 * compile id is the JVM's and never given twice, so an nmethod compiled
 * later at the same address (the old one freed, "What frees an nmethod")
 * has another one and never matches a chain of the old. The blob's compile
 * id comes from this walk's read of the nmethod or from a remembered one's
 * checks (op_jvm_blob_remembered). Epoch, gen and interp_start as in
 * op_jvm_pc_entry (its Methods and ConstMethods stand, the same JVM image).
 */
struct op_jvm_chain_key {
	__u64 at; /* the first scope: the nmethod's scopes data + decode offset (0: empty) */
	__u64 interp_start;
	__u32 pid;
	__u32 gen;
	__u32 epoch;
	__s32 compile_id;
};

/* One decoded scope of a chain; its decode offset is the previous one's sender. */
struct op_jvm_chain_scope {
	__u64 method;
	__u64 cm;
	__u32 bci;
	__u32 sender; /* 0: the root scope, the last of the chain */
};

/* Scopes one chain entry holds: JDK 17's MaxInlineLevel is 15 (16 with the root). */
#define OP_JVM_CHAIN	   16
#define OP_JVM_CHAIN_SLOTS 128 /* per CPU: 53 KiB */
struct op_jvm_chain {
	struct op_jvm_chain_key key;
	/*
	 * Scopes held: the first n of the chain (all of it when the last has
	 * sender 0; a walk that stopped while decoding it leaves a prefix).
	 */
	__u32 n;
	__u32 reserved;
	struct op_jvm_chain_scope s[OP_JVM_CHAIN];
};

/*
 * One walk's state, per CPU in BPF, on the stack in user space: a compiled
 * frame's pending inlined scopes (innermost first, written one per step; the
 * unwinder has already moved to the caller), and what the walk has read so
 * far (op_jvm_walker__begin() empties it at each sample: what BPF keeps
 * from one sample to the next is struct op_jvm_pc_entry, taken only after
 * its checks, so a freed and reused nmethod is never named from it).
 */
struct op_jvm_walker {
	__u64 scopes;	  /* the pending scopes' nmethod: its scopes data */
	__u64 metadata;	  /* its metadata array (a scope's method is index - 1 there) */
	__u32 next;	  /* the next scope's decode offset, 0: none pending */
	__s32 deferred;	  /* the step result to return after the last one */
	__u64 nm_name;	  /* a blob name pointer this walk read as "nmethod" (0: none) */
	__u8 blob_next;	  /* the blob slot to fill next */
	__u8 scope_next;  /* the scope slot to fill next */
	__u8 epoch_known; /* 1: epoch read for this walk (0 is a count too) */
	__u8 block_skip;  /* where the blob begins in block (its HeapBlock first) */
	/*
	 * The blob's first bytes, read as one block (block_len of them; 0: none):
	 * every CodeBlob and nmethod field the step needs, one read instead of
	 * ten. A field past block_len is read on its own. Then scratch for a
	 * PcDesc search's last window.
	 */
	__u32 block_len;
	__u32 epoch; /* the JVM's collection count when the walk began (epoch_known) */
	/* The pending scopes' blob slot + 1 (0: none): its Method is the root scope's. */
	__u32 nm_slot;
	/* op_jvm_proc.code_count's low 32 bits + 1 when the walk began (0: not read). */
	__u32 code_mark;
	/*
	 * BPF: the walked process's tgid (the current task's), the key of its
	 * jvm_pc_cache and jvm_chain_cache entries, set once a walk: not a
	 * helper call per frame. In user space the walk's pid.
	 */
	__u32 pid;
	/* The scope slot op_jvm_scope() looks at first (a chain's next, once copied in). */
	__u32 scope_hint;
	/* The chain cache slot + 1 the frame's scopes are appended to as decoded (0: none). */
	__u32 chain_slot;
	struct op_jvm_blob blobs[OP_JVM_BLOBS];
	struct op_jvm_scope scope_cache[OP_JVM_SCOPES];
	struct op_jvm_method methods[OP_JVM_METHODS];
	__u8 block[OP_JVM_SCRATCH];
};

/* BPF counters (per-CPU array `jvm_stats`). */
enum op_jvm_stat {
	OP_JVM_STAT_INTERPRETED = 0, /* interpreted frames written */
	OP_JVM_STAT_COMPILED,	     /* compiled frames written */
	OP_JVM_STAT_STUB,	     /* stub frames written */
	OP_JVM_STAT_NO_BLOB,	     /* a pc in the code cache in no blob */
	OP_JVM_STAT_READ_ERR,	     /* a frame or blob that could not be read */
	OP_JVM_STAT_NO_PROC,	     /* code cache range without its jvm_procs entry */
	OP_JVM_STAT_INLINED,	     /* inlined frames written */
	OP_JVM_STAT_NO_PCDESC,	     /* compiled frames without debug info at their pc */
	OP_JVM_STAT_DEOPT,	     /* deoptimised compiled frames, named from their original pc */
	OP_JVM_STAT_REMEMBERED,	     /* nmethods taken from the cross-sample cache */
	OP_JVM_STAT_FREED,	     /* ... refused: the same ids, its HeapBlock freed or shrunk */
	OP_JVM_STAT_FREE_BLOCK,	     /* a pc in a freed CodeHeap block (its HeapBlock not used) */
	OP_JVM_STAT_LEAF,	     /* leaf nmethods taken from the cache (OP_JVM_PC_LEAF) */
	OP_JVM_STAT_UNCHANGED,	     /* ... taken without the check read: code count unchanged */
	OP_JVM_STAT_RECOMPILED,	     /* remembered refused: a new nmethod of its method there */
	OP_JVM_STAT_REPLACED,	     /* remembered refused: another method's nmethod there */
	OP_JVM_STAT_CHAIN,	     /* compiled frames' scope chains taken from the chain cache */
	OP_JVM_STAT__COUNT,
};

_Static_assert(sizeof(struct op_jvm_heap) == 32, "op_jvm_heap layout");
_Static_assert(sizeof(struct op_jvm_proc) == 32 * OP_JVM_MAX_HEAPS + 88, "op_jvm_proc layout");
_Static_assert(sizeof(struct op_jvm_blob) == 128, "op_jvm_blob layout");
_Static_assert(sizeof(struct op_jvm_pc_entry) == 176, "op_jvm_pc_entry layout");
_Static_assert(sizeof(struct op_jvm_pc_slot) == 192, "op_jvm_pc_slot layout");
_Static_assert((OP_JVM_PC_CACHE_SLOTS & (OP_JVM_PC_CACHE_SLOTS - 1)) == 0 &&
		   OP_JVM_PC_CACHE_WAYS == 2,
	       "jvm_pc_cache: 2-way sets, a power of two of slots");
_Static_assert(sizeof(struct op_jvm_scope) == 32, "op_jvm_scope layout");
_Static_assert(sizeof(struct op_jvm_chain) == 40 + 24 * OP_JVM_CHAIN, "op_jvm_chain layout");
_Static_assert((OP_JVM_CHAIN_SLOTS & (OP_JVM_CHAIN_SLOTS - 1)) == 0 &&
		   OP_JVM_CHAIN <= OP_JVM_SCOPES,
	       "jvm_chain_cache: a power of two of slots, a chain fits the walk's scopes");
_Static_assert(sizeof(struct op_jvm_walker) == 64 + 128 * OP_JVM_BLOBS + 32 * OP_JVM_SCOPES +
						   16 * OP_JVM_METHODS + OP_JVM_SCRATCH,
	       "op_jvm_walker layout");

#endif
