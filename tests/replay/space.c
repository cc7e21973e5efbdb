// SPDX-License-Identifier: Apache-2.0
#include "space.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "proc/proc_maps.h"
#include "symbol/native_symbols.h"
#include "unwind/user_unwind.h"

/* Records the .plt, .plt.got and .plt.sec ranges of f. */
static void find_plt(struct space_file *f)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	elf_version(EV_CURRENT);
	elf = elf_begin(f->ef->fd, ELF_C_READ, NULL);
	if (!elf)
		return;
	if (elf_getshdrstrndx(elf, &shstrndx) == 0)
		while ((scn = elf_nextscn(elf, scn)) && f->n_plt < SPACE_MAX_PLT) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && !strncmp(name, ".plt", 4)) {
				f->plt[f->n_plt][0] = sh.sh_addr;
				f->plt[f->n_plt][1] = sh.sh_addr + sh.sh_size;
				f->n_plt++;
			}
		}
	elf_end(elf);
}

/* The vDSO is no file: its bytes go into a memory file the ELF code opens. */
static int open_vdso(const struct proc_map *m, space_read_fn read, void *ctx, struct elf_file **out)
{
	uint64_t len = m->end - m->start;
	void *buf = malloc(len);
	int fd = -1, err;

	if (!buf)
		return -ENOMEM;
	if (read(ctx, buf, len, m->start)) {
		err = -EFAULT;
		goto cleanup;
	}
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len) {
		err = -errno;
		goto cleanup;
	}
	err = elf_file__open("[vdso]", fd, out);
	fd = -1; /* owned by elf_file__open from here, on error too */
cleanup:
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}

static struct space_file *file_get(struct space *sp, const struct proc_map *m, space_read_fn read,
				   void *ctx)
{
	struct space_file *f, **files;
	bool vdso = !strcmp(m->path, "[vdso]");

	for (size_t i = 0; i < sp->n_files; i++)
		if (!strcmp(sp->files[i]->path, m->path))
			return sp->files[i];
	files = realloc(sp->files, (sp->n_files + 1) * sizeof(*files));
	if (!files)
		return NULL;
	sp->files = files;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->path = strdup(m->path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	f->open_error =
	    vdso ? open_vdso(m, read, ctx, &f->ef) : elf_file__open(m->path, -1, &f->ef);
	if (f->ef)
		find_plt(f);
	sp->files[sp->n_files++] = f;
	return f;
}

int space__open(struct space *sp, const char *text, size_t len, space_read_fn read, void *ctx)
{
	struct proc_map *raw = NULL;
	size_t n_raw = 0;
	uint64_t vaddr;
	int err;

	memset(sp, 0, sizeof(*sp));
	err = proc_maps__parse(text, len, &raw, &n_raw, NULL);
	if (err)
		return err;
	sp->maps = calloc(n_raw ? n_raw : 1, sizeof(*sp->maps));
	if (!sp->maps) {
		err = -ENOMEM;
		goto cleanup;
	}
	sp->ro = calloc(n_raw ? n_raw : 1, sizeof(*sp->ro));
	if (!sp->ro) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* As process_table__refresh: executable mappings, bias from the code segment. */
	for (size_t i = 0; i < n_raw; i++) {
		struct space_map *m = &sp->maps[sp->n_maps];

		if (raw[i].path[0] == '/' && !(raw[i].perms & PROC_MAP_W)) {
			struct space_ro *ro = &sp->ro[sp->n_ro];

			ro->path = strdup(raw[i].path);
			if (!ro->path) {
				err = -ENOMEM;
				goto cleanup;
			}
			ro->start = raw[i].start;
			ro->end = raw[i].end;
			ro->offset = raw[i].offset;
			sp->n_ro++;
		}
		if (!(raw[i].perms & PROC_MAP_X))
			continue;
		m->start = raw[i].start;
		m->end = raw[i].end;
		m->offset = raw[i].offset;
		m->is_vdso = !strcmp(raw[i].path, "[vdso]");
		m->inode = raw[i].inode;
		if (raw[i].path[0] == '/' || m->is_vdso) {
			m->file = file_get(sp, &raw[i], read, ctx);
			if (!m->file) {
				err = -ENOMEM;
				goto cleanup;
			}
		}
		if (m->file && m->file->ef &&
		    elf_file__mapping_bias(m->file->ef, raw[i].offset, raw[i].end - raw[i].start,
					   PF_X, &vaddr)) {
			m->bias = raw[i].start - vaddr;
			m->has_bias = true;
		}
		sp->n_maps++;
	}
cleanup:
	proc_maps__free(raw, n_raw);
	if (err)
		space__close(sp);
	return err;
}

void space__close(struct space *sp)
{
	if (!sp)
		return;
	for (size_t i = 0; i < sp->n_files; i++) {
		native_symbols__free(sp->files[i]->syms);
		elf_file__close(sp->files[i]->ef);
		free(sp->files[i]->path);
		free(sp->files[i]);
	}
	free(sp->files);
	free(sp->maps);
	for (size_t i = 0; i < sp->n_ro; i++)
		free(sp->ro[i].path);
	free(sp->ro);
	memset(sp, 0, sizeof(*sp));
}

const struct space_map *space__find(const struct space *sp, uint64_t addr)
{
	for (size_t i = 0; i < sp->n_maps; i++)
		if (addr >= sp->maps[i].start && addr < sp->maps[i].end)
			return &sp->maps[i];
	return NULL;
}

const char *space__function(const struct space *sp, uint64_t addr, bool is_return, uint64_t *offset)
{
	const struct space_map *m = space__find(sp, addr - is_return);
	struct space_file *f = m ? m->file : NULL;
	uint64_t off;
	const char *name;

	if (!f || !f->ef || !m->has_bias)
		return NULL;
	if (!f->syms_tried) {
		f->syms_tried = true;
		native_symbols__open(f->ef, &f->syms);
	}
	if (!f->syms)
		return NULL;
	name = native_symbols__lookup(f->syms, addr - is_return - m->bias, &off);
	if (name && offset)
		*offset = off + is_return;
	return name;
}

const char *space__name(const struct space *sp, uint64_t addr, bool is_return, char *buf,
			size_t len)
{
	const struct space_map *m = space__find(sp, addr - is_return);
	const char *name = space__function(sp, addr, is_return, NULL);

	if (name)
		snprintf(buf, len, "%s", name);
	else if (m && m->file && m->has_bias)
		snprintf(buf, len, "%s+0x%llx", m->file->path,
			 (unsigned long long)(addr - is_return - m->bias));
	else if (m && !m->file)
		snprintf(buf, len, "[anon]+0x%llx", (unsigned long long)(addr - m->start));
	else
		snprintf(buf, len, "[unknown 0x%llx]", (unsigned long long)addr);
	return buf;
}

int space__read_file(const struct space *sp, void *dst, size_t len, uint64_t addr)
{
	for (size_t i = 0; i < sp->n_ro; i++) {
		const struct space_ro *ro = &sp->ro[i];
		ssize_t n;
		int fd;

		if (addr < ro->start || addr >= ro->end || len > ro->end - addr)
			continue;
		fd = open(ro->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -EFAULT;
		n = pread(fd, dst, len, (off_t)(ro->offset + (addr - ro->start)));
		close(fd);
		return n == (ssize_t)len ? 0 : -EFAULT;
	}
	return -EFAULT;
}

bool space__in_plt(const struct space *sp, uint64_t addr)
{
	const struct space_map *m = space__find(sp, addr);

	if (!m || !m->file || !m->has_bias)
		return false;
	for (int i = 0; i < m->file->n_plt; i++)
		if (addr - m->bias >= m->file->plt[i][0] && addr - m->bias < m->file->plt[i][1])
			return true;
	return false;
}

int space__add_tables(const struct space *sp, struct user_unwind_tables *t)
{
	int n = 0;

	for (size_t i = 0; i < sp->n_maps; i++) {
		const struct space_map *m = &sp->maps[i];
		const struct space_file *f = m->file;

		if (f && f->ef) {
			/* A file without a usable table falls back to frame pointers. */
			if (m->has_bias &&
			    !user_unwind_tables__add(t, m->start, m->end, m->bias, f->ef))
				n++;
		} else if ((m->inode == 0 && !m->is_vdso) || (f && f->open_error == -ENOEXEC)) {
			if (!user_unwind_tables__add_anon(t, m->start, m->end))
				n++;
		}
	}
	return n;
}
