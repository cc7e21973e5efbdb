// SPDX-License-Identifier: Apache-2.0
#include "proc/file_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "elf/file_id.h"
#include "unwind/stack_deltas.h"
#include "unwind/unwind_maps.h"
#include "proc/vdso_image.h"
#include "proc/proc_maps.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/safe_open.h"

struct file_key {
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	const char *path;    /* only compared for pseudo files (inode 0) */
	uint64_t content_id; /* pseudo files with an image ([vdso]): its table id; else 0 */
};

static bool file_equal(const void *entry, const void *key, void *ctx)
{
	const struct cached_file *f = entry;
	const struct file_key *k = key;

	(void)ctx;
	if (f->dev_major != k->dev_major || f->dev_minor != k->dev_minor || f->inode != k->inode)
		return false;
	return k->inode || (!strcmp(f->path, k->path) && f->content_id == k->content_id);
}

static uint64_t file_hash(const struct file_key *k)
{
	uint64_t h = hash_u64(k->inode ^ ((uint64_t)k->dev_major << 32 | k->dev_minor));

	return k->inode ? h : hash_str(k->path, h ^ k->content_id);
}

static void fd_unlink(struct file_cache *fc, struct cached_file *f)
{
	if (!list__linked(&f->fd_node))
		return;
	list__del(&f->fd_node);
	fc->n_fds--;
}

/* f's descriptor was just used (or opened): last to be closed. */
static void fd_touch(struct file_cache *fc, struct cached_file *f)
{
	size_t max = fc->max_fds ? fc->max_fds : FILE_CACHE_MAX_FDS;

	/* Only files that can be reopened (not the vDSO's memfd). */
	if (!f->elf || f->elf->fd < 0 || !f->inode)
		return;
	fd_unlink(fc, f);
	list__add_tail(&fc->fds, &f->fd_node);
	fc->n_fds++;
	while (fc->n_fds > max && list__first(&fc->fds) != &f->fd_node) {
		struct cached_file *old =
		    list_entry(list__first(&fc->fds), struct cached_file, fd_node);

		/* What was read from it (segments, ids, table) stays. */
		fd_unlink(fc, old);
		close(old->elf->fd);
		old->elf->fd = -1;
		fc->stats.fds_closed++;
	}
}

void file_cache__init(struct file_cache *fc)
{
	memset(fc, 0, sizeof(*fc));
	hashmap__init(&fc->by_key, file_equal, NULL);
	list__init(&fc->fds);
	list__init(&fc->unused);
}

/*
 * The content id of an image already seen with exactly these bytes, or 0.
 * Compared byte for byte, never by size or build id alone: a process can
 * rewrite its own vDSO (ptrace, /proc/PID/mem) and its image must not name
 * another process's frames, nor another's its own.
 */
static uint64_t vdso_seen__find(const struct file_cache *fc, const uint8_t *bytes, size_t len)
{
	for (unsigned int i = 0; i < FILE_CACHE_VDSO_IMAGES; i++) {
		const struct vdso_seen *v = &fc->vdso_seen[i];

		if (v->bytes && v->len == len && !memcmp(v->bytes, bytes, len))
			return v->content_id;
	}
	return 0;
}

/* Remembers an image just hashed; takes ownership of bytes. */
static void vdso_seen__add(struct file_cache *fc, uint8_t *bytes, size_t len, uint64_t content_id)
{
	struct vdso_seen *v = &fc->vdso_seen[fc->vdso_next++ % FILE_CACHE_VDSO_IMAGES];

	free(v->bytes);
	*v = (struct vdso_seen){.bytes = bytes, .len = len, .content_id = content_id};
}

static void vdso_seen__clear(struct file_cache *fc)
{
	for (unsigned int i = 0; i < FILE_CACHE_VDSO_IMAGES; i++)
		free(fc->vdso_seen[i].bytes);
	memset(fc->vdso_seen, 0, sizeof(fc->vdso_seen));
	fc->vdso_next = 0;
}

static void cached_file__free(struct cached_file *f)
{
	if (!f)
		return;
	elf_file__close(f->elf);
	free(f->path);
	free(f);
}

void file_cache__clear(struct file_cache *fc)
{
	if (!fc)
		return;
	for (size_t i = 0; i < fc->n_files; i++)
		cached_file__free(fc->files[i]);
	free(fc->files);
	free(fc->free_slots);
	hashmap__clear(&fc->by_key);
	vdso_seen__clear(fc);
	list__init(&fc->fds);
	fc->n_fds = 0;
	fc->files = NULL;
	fc->free_slots = NULL;
	fc->n_files = fc->cap_files = fc->n_free_slots = fc->cap_free_slots = 0;
	fc->n_open = fc->n_unused = 0;
	list__init(&fc->unused);
}

static void unused_push(struct file_cache *fc, struct cached_file *f)
{
	list__add_tail(&fc->unused, &f->unused_node);
	fc->n_unused++;
}

static void unused_unlink(struct file_cache *fc, struct cached_file *f)
{
	list__del(&f->unused_node);
	fc->n_unused--;
}

void file_cache__ref(struct file_cache *fc, uint32_t slot)
{
	struct cached_file *f = file_cache__at(fc, slot);

	if (f && !f->users++)
		unused_unlink(fc, f);
}

void file_cache__unref(struct file_cache *fc, uint32_t slot)
{
	struct cached_file *f = file_cache__at(fc, slot);

	/* The most recently released goes last: the oldest are closed first. */
	if (f && f->users && !--f->users)
		unused_push(fc, f);
}

size_t file_cache__evict_unused(struct file_cache *fc, size_t keep, file_evict_fn fn, void *ctx)
{
	size_t n = 0;

	struct list_node *next = list__first(&fc->unused);

	while (fc->n_unused > keep && next) {
		struct cached_file *f = list_entry(next, struct cached_file, unused_node);
		uint32_t slot = f->slot;

		next = list__next(&fc->unused, next);
		if (f->pending)
			continue; /* its job comes back with this slot */

		/* The slot is free from here on: reserve room in free_slots first (no failure
		 * after). */
		if (array__grow(fc->free_slots, fc->cap_free_slots, fc->n_free_slots))
			break; /* kept open: tried again next time */
		if (fn)
			fn(ctx, slot);
		unused_unlink(fc, f);
		fd_unlink(fc, f);
		hashmap__remove_entry(&fc->by_key, f->key_hash, f);
		fc->files[slot - 1] = NULL;
		fc->free_slots[fc->n_free_slots++] = slot;
		fc->n_open--;
		cached_file__free(f);
		fc->stats.evicted++;
		n++;
	}
	return n;
}

/*
 * The table id is a hash of what the table is built from, not the htlhash:
 * a file made to share a library's htlhash (first and last 4 KiB and length)
 * with other CFI in the middle would otherwise have its table serve every
 * process that maps the real library. Identical CFI still shares one table
 * (copies in containers, the same library under two paths). Without an id
 * (I/O error) the file gets no table and no LPM entries: frame pointers.
 */
static bool table_id_of(const struct elf_file *ef, uint64_t *id, uint64_t *ns)
{
	uint8_t hash[STACK_DELTAS_ID_LEN];
	uint64_t start = clock__now_ns();
	bool ok = !stack_deltas__table_id(ef, hash);

	if (ok)
		*id = file_id__from_htlhash(hash);
	*ns = clock__now_ns() - start;
	return ok;
}

/* For images opened here (the vDSO); mapped files get theirs on the worker. */
static void set_table_id(struct file_cache *fc, struct cached_file *f)
{
	uint64_t ns;

	if (!table_id_of(f->elf, &f->table_id, &ns))
		fc->stats.table_id_errors++;
	fc->stats.table_id_ns += ns;
}

int file_cache__open_mapped(pid_t pid, const struct proc_map *m)
{
	struct safe_open_id want = {m->dev_major, m->dev_minor, m->inode};
	char path[64];
	int fd;

	/*
	 * map_files is the inode really mapped at that range, whatever its path
	 * says now (containers, deleted or replaced files): its magic link is
	 * followed on purpose, the file it leads to is checked like any other
	 * (a mapping of a device or of a pseudo file is refused).
	 */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = safe_open(path, 0, SAFE_OPEN_MAX_ELF);
	if (fd >= 0 || (fd != -ENOENT && fd != -EACCES && fd != -EPERM))
		return fd;
	if (m->path[0] != '/')
		return fd;
	/*
	 * The mapping is gone (or map_files is not readable): its path, inside
	 * the process's root and never out of it. The process may have put
	 * anything there since, so only the inode /proc/PID/maps named counts.
	 */
	return safe_open_in_pid_root(pid, m->path, 0, SAFE_OPEN_MAX_ELF, &want);
}

/*
 * Everything that touches the file itself: the open, the ELF headers and the
 * htlhash. Runs on the file worker (or inline without one), so it may block.
 */
static void load_file(struct file_open_job *j)
{
	int fd = file_cache__open_mapped(j->pid, &j->map);

	if (fd < 0) {
		j->job.err = fd;
		return;
	}
	j->opened = true;
	j->job.err = elf_file__open(j->map.path, fd, &j->elf);
	if (j->job.err)
		return;
	j->has_htlhash = !file_id__htlhash(j->elf->fd, j->elf->size, j->htlhash);
	/* It reads the CFI sections: with the open, off the sampling thread. */
	j->has_table_id = table_id_of(j->elf, &j->table_id, &j->table_id_ns);
}

static void open_job_run(struct file_job *job)
{
	load_file((struct file_open_job *)job);
}

static void open_job_free(struct file_job *job)
{
	struct file_open_job *j = (struct file_open_job *)job;

	if (!j)
		return;
	elf_file__close(j->elf);
	free(j->map.path);
	free(j);
}

/* The job for mapping m of pid (file f). NULL on ENOMEM. */
static struct file_open_job *open_job_new(const struct cached_file *f, pid_t pid,
					  const struct proc_map *m)
{
	struct file_open_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->job.kind = FILE_JOB_OPEN;
	j->job.run = open_job_run;
	j->job.free = open_job_free;
	j->file_slot = f->slot;
	j->dev_major = f->dev_major;
	j->dev_minor = f->dev_minor;
	j->inode = f->inode;
	j->pid = pid;
	j->map = *m;
	j->map.path = strdup(m->path);
	if (!j->map.path) {
		free(j);
		return NULL;
	}
	return j;
}

/* Puts j's results into f and counts them. Takes j->elf. */
static void apply_open(struct file_cache *fc, struct cached_file *f, struct file_open_job *j)
{
	int err = j->job.err;

	f->pending = false;
	f->open_job = NULL;
	if (err == -ETIMEDOUT || err == -EBUSY) {
		f->open_error = -ETIMEDOUT;
		fc->stats.timed_out++;
		/* One line per file, for the first few: a flood helps no one. */
		if (fc->stats.timed_out > FILE_WORKER_MAX_ABANDONED) {
			if (fc->stats.timed_out == FILE_WORKER_MAX_ABANDONED + 1)
				pr_warn("more files timed out: counted, no longer logged");
			return;
		}
		pr_warn(
		    "%s of pid %d: %s, abandoned (frames show as offsets)", f->path, (int)j->pid,
		    err == -EBUSY ? "every file worker is stuck" : "open took over the timeout");
		return;
	}
	if (err && !j->opened) {
		f->open_error = err;
		fc->stats.open_errors++;
		/* Refusals were logged once per kind by safe_open: one line per file is too many.
		 */
		if (safe_open__is_refusal(err))
			pr_debug("refused %s of pid %d: %s", f->path, (int)j->pid, strerror(-err));
		else
			pr_info("cannot open %s of pid %d: %s (frames show as offsets)", f->path,
				(int)j->pid, strerror(-err));
		return;
	}
	if (!err && !j->elf)
		err = -EIO; /* never trusted to have set both */
	if (err) {
		f->open_error = err;
		fc->stats.not_elf++;
		pr_info("%s: not a readable ELF file: %s", f->path, strerror(-err));
		return;
	}
	f->elf = j->elf;
	j->elf = NULL;
	/* Its debug files next to it are looked for in the same root. */
	f->elf->root_pid = j->pid;
	fc->stats.opened++;
	fd_touch(fc, f);
	/* The htlhash stays the file's identifier for backends, not a trust key. */
	if (j->has_htlhash)
		memcpy(f->htlhash, j->htlhash, sizeof(f->htlhash));
	fc->stats.table_id_ns += j->table_id_ns;
	if (j->has_table_id)
		f->table_id = j->table_id;
	else
		fc->stats.table_id_errors++;
}

static void open_elf(struct file_cache *fc, struct cached_file *f, pid_t pid,
		     const struct proc_map *m)
{
	struct file_open_job *j = open_job_new(f, pid, m);

	if (!j) {
		f->open_error = -ENOMEM;
		fc->stats.open_errors++;
		return;
	}
	f->open_pid = pid;
	f->opens++;
	if (fc->worker) {
		f->pending = true;
		f->open_job = &j->job;
		fc->stats.jobs++;
		file_worker__post(fc->worker, &j->job);
		return;
	}
	load_file(j);
	apply_open(fc, f, j);
	open_job_free(&j->job);
}

uint32_t file_cache__install(struct file_cache *fc, struct file_open_job *j, bool abandoned)
{
	struct cached_file *f = file_cache__at(fc, j->file_slot);

	/* The slot may have been given to another file since (it never is while pending). */
	if (!f || !f->pending || f->inode != j->inode || f->dev_major != j->dev_major ||
	    f->dev_minor != j->dev_minor)
		return 0;
	if (abandoned) {
		/*
		 * The job is still its thread's, which may be writing its results
		 * (err, elf) right now: only what was set before it was posted is
		 * read, and the outcome is the timeout, whatever the thread says.
		 */
		struct file_open_job stub = {.job.err = -ETIMEDOUT, .pid = j->pid};

		apply_open(fc, f, &stub);
		return f->slot;
	}
	apply_open(fc, f, j);
	return f->slot;
}

/*
 * Identifies pid's vDSO by content: every process of one kernel (and ABI)
 * maps the same image, so it is opened, its table built and its symbols read
 * once. The bytes are read (one process_vm_readv) for every process, but
 * copied to a memfd and hashed only when no image seen before has the same
 * bytes. Returns the image's bytes (the caller frees them, *content_id set) or
 * NULL when they could not be read or hashed.
 */
static uint8_t *vdso_identify(struct file_cache *fc, pid_t pid, const struct proc_map *m,
			      uint64_t *content_id)
{
	struct remote_memory mem = remote_memory__live((uint32_t)pid);
	uint8_t hash[FILE_ID_HTLHASH_LEN], *bytes, *kept;
	size_t len = (size_t)(m->end - m->start);
	int fd, err = vdso_image__read(&mem, m->start, m->end, &bytes);

	if (err) {
		fc->stats.vdso_errors++;
		return NULL;
	}
	*content_id = vdso_seen__find(fc, bytes, len);
	if (*content_id)
		return bytes;
	/* Every byte: the id must differ whenever any byte does. */
	fd = vdso_image__memfd(bytes, len);
	err = fd < 0 ? fd : file_id__content_hash(fd, len, hash);
	if (fd >= 0)
		close(fd);
	kept = err ? NULL : malloc(len);
	if (err || !kept) {
		fc->stats.vdso_errors++;
		free(bytes);
		return NULL;
	}
	fc->stats.vdso_hashed++;
	*content_id = file_id__from_htlhash(hash);
	memcpy(kept, bytes, len);
	vdso_seen__add(fc, kept, len, *content_id);
	return bytes;
}

static void open_vdso(struct file_cache *fc, struct cached_file *f, int fd)
{
	int err = elf_file__open(f->path, fd, &f->elf);

	if (err) {
		f->open_error = err;
		fc->stats.not_elf++;
		pr_info("[vdso]: not a readable ELF image: %s", strerror(-err));
		return;
	}
	fc->stats.opened++;
	/* The htlhash stays the file's identifier for backends, not a trust key. */
	file_id__htlhash(f->elf->fd, f->elf->size, f->htlhash);
	set_table_id(fc, f);
}

static void set_origin(struct cached_file *f, pid_t pid, const struct proc_map *m)
{
	f->origin_pid = pid;
	f->origin_start = m->start;
	f->origin_end = m->end;
	f->origin_offset = m->offset;
}

int file_cache__origin(const struct file_cache *fc, uint32_t slot, struct file_origin *o)
{
	const struct cached_file *f = file_cache__at(fc, slot);

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!f || !f->elf)
		return -ENOENT;
	*o = (struct file_origin){.pid = f->origin_pid,
				  .start = f->origin_start,
				  .end = f->origin_end,
				  .offset = f->origin_offset,
				  .dev_major = f->dev_major,
				  .dev_minor = f->dev_minor,
				  .inode = f->inode,
				  .size = f->elf->size,
				  .path = strdup(f->path),
				  .fd = -1};
	if (!o->path)
		return -ENOMEM;
	/* The vDSO's image lives in a memfd of ours only. */
	if (!f->inode && (o->fd = fcntl(f->elf->fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		free(o->path);
		o->path = NULL;
		return -errno;
	}
	return 0;
}

int file_cache__open_origin(const struct file_origin *o)
{
	struct proc_map m = {.start = o->start,
			     .end = o->end,
			     .offset = o->offset,
			     .inode = o->inode,
			     .dev_major = o->dev_major,
			     .dev_minor = o->dev_minor,
			     .perms = PROC_MAP_R | PROC_MAP_X,
			     .path = o->path};
	struct stat st;
	int fd;

	if (o->fd >= 0) {
		fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 0);
		return fd >= 0 ? fd : -errno;
	}
	fd = file_cache__open_mapped(o->pid, &m);

	/* Only the very file: the mapping may hold another one by now. */
	if (fd >= 0 &&
	    (fstat(fd, &st) || st.st_ino != o->inode || major(st.st_dev) != o->dev_major ||
	     minor(st.st_dev) != o->dev_minor || (uint64_t)st.st_size != o->size)) {
		close(fd);
		fd = -ESTALE;
	}
	return fd;
}

static int origin_open(void *ctx)
{
	return file_cache__open_origin(ctx);
}

/* Descriptors build jobs hold (FILE_CACHE_SOURCE_FDS): taken on the sampling
 * thread, given back on a worker when its job is freed. */
static unsigned int source_fds_held;

static void origin_free(void *ctx)
{
	struct file_origin *o = ctx;

	if (!o)
		return;
	if (o->held)
		__atomic_fetch_sub(&source_fds_held, 1, __ATOMIC_RELAXED);
	free(o->path);
	if (o->fd >= 0)
		close(o->fd);
	free(o);
}

int file_cache__table_source(const struct file_cache *fc, uint32_t slot, struct table_source *src)
{
	struct file_origin *o = malloc(sizeof(*o));
	const struct cached_file *f;
	int err;

	memset(src, 0, sizeof(*src));
	if (!o)
		return -ENOMEM;
	err = file_cache__origin(fc, slot, o);
	if (!err && !(src->path = strdup(o->path)))
		err = -ENOMEM;
	/* The file as the cache opened it, while few jobs hold one: the job then
	 * builds even if every process mapping the file is gone by the time it runs. */
	f = file_cache__at(fc, slot);
	if (!err && o->fd < 0 && f && f->elf && f->elf->fd >= 0 &&
	    __atomic_add_fetch(&source_fds_held, 1, __ATOMIC_RELAXED) <= FILE_CACHE_SOURCE_FDS) {
		o->fd = fcntl(f->elf->fd, F_DUPFD_CLOEXEC, 0);
		o->held = o->fd >= 0;
	}
	if (!err && !o->held && o->fd < 0 && f && f->elf && f->elf->fd >= 0)
		__atomic_fetch_sub(&source_fds_held, 1, __ATOMIC_RELAXED);
	if (err) {
		origin_free(o);
		return err;
	}
	src->size = o->size;
	src->open = origin_open;
	src->free = origin_free;
	src->ctx = o;
	return 0;
}

int file_cache__ensure_fd(struct file_cache *fc, uint32_t slot)
{
	struct cached_file *f = file_cache__at(fc, slot);
	struct file_origin o;
	int fd;

	if (!f || !f->elf)
		return -ENOENT;
	if (f->elf->fd >= 0) {
		fd_touch(fc, f);
		return 0;
	}
	fd = file_cache__origin(fc, slot, &o);
	if (!fd)
		fd = file_cache__open_origin(&o);
	free(o.path);
	if (o.fd >= 0)
		close(o.fd);
	if (fd < 0) {
		fc->stats.reopen_failed++;
		return fd;
	}
	f->elf->fd = fd;
	fc->stats.fds_reopened++;
	fd_touch(fc, f);
	return 0;
}

/*
 * Whether f, known and not open, is opened again through pid: its last open
 * failed as an open through a process that is gone fails (see
 * FILE_CACHE_OPENS), and went through another process than pid.
 */
static bool open_again(const struct cached_file *f, pid_t pid, const struct proc_map *m)
{
	return m->inode && !f->elf && !f->pending && f->open_pid != pid &&
	       (f->open_error == -ENOENT || f->open_error == -ESRCH) && f->opens < FILE_CACHE_OPENS;
}

uint32_t file_cache__get(struct file_cache *fc, pid_t pid, const struct proc_map *m)
{
	/* Anonymous executable memory (JIT code) shares one pseudo file. */
	struct file_key key = {m->dev_major, m->dev_minor, m->inode,
			       m->path[0] ? m->path : "[anon]", 0};
	struct cached_file *f;
	const char *slash;
	uint8_t *vdso = NULL;
	uint64_t h;
	int fd;

	if (!m->inode && !strcmp(m->path, "[vdso]"))
		vdso = vdso_identify(fc, pid, m, &key.content_id);
	h = file_hash(&key);
	f = hashmap__find(&fc->by_key, h, &key);
	if (f) {
		free(vdso);
		set_origin(f, pid, m);
		if (open_again(f, pid, m)) {
			fc->stats.open_retries++;
			f->open_error = 0;
			open_elf(fc, f, pid, m);
		}
		return f->slot;
	}
	if (!fc->n_free_slots && array__grow(fc->files, fc->cap_files, fc->n_files))
		goto enomem;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto enomem;
	f->dev_major = key.dev_major;
	f->dev_minor = key.dev_minor;
	f->inode = key.inode;
	f->path = strdup(key.path);
	if (!f->path) {
		free(f);
		goto enomem;
	}
	slash = strrchr(f->path, '/');
	f->basename = slash ? slash + 1 : f->path;
	set_origin(f, pid, m);
	f->content_id = key.content_id;
	f->key_hash = h;
	if (hashmap__insert(&fc->by_key, h, f)) {
		cached_file__free(f);
		goto enomem;
	}
	if (fc->n_free_slots) {
		f->slot = fc->free_slots[--fc->n_free_slots];
	} else {
		fc->files[fc->n_files++] = f;
		f->slot = (uint32_t)fc->n_files;
	}
	fc->files[f->slot - 1] = f;
	fc->n_open++;
	/* Nothing uses it until the process table takes a reference. */
	unused_push(fc, f);
	if (m->inode)
		open_elf(fc, f, pid, m);
	else if (vdso) {
		/* A new entry only: its own memfd, which ELF reads and the table builder use. */
		fd = vdso_image__memfd(vdso, (size_t)(m->end - m->start));
		if (fd < 0)
			fc->stats.vdso_errors++;
		else
			open_vdso(fc, f, fd); /* owns the fd from here on */
	}
	free(vdso);
	return f->slot;
enomem:
	free(vdso);
	return 0;
}
