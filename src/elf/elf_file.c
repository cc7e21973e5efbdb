// SPDX-License-Identifier: Apache-2.0
/*
 * The file is untrusted input (any process can map any bytes), so every
 * table libelf hands us is checked against the file size before use and
 * anything inconsistent is reported as -ENOEXEC rather than trusted.
 *
 * libelf reads with ELF_C_READ (pread on demand) rather than mmap: a file
 * truncated by its owner while we read it then gives a short read, which
 * libelf reports as an error, instead of SIGBUS in the profiler.
 */
#include "elf/elf_file.h"
#include "util/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Real build ids are 8 to 32 bytes; anything far larger is not one. */
#define BUILD_ID_MAX_BYTES 64

static pthread_once_t libelf_once = PTHREAD_ONCE_INIT;
static bool libelf_ok;

static void libelf_init(void)
{
	libelf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

/* True when [off, off + len) lies inside a file of size bytes, without overflow. */
static bool range_in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Returns a malloc'd lowercase hex string (caller frees), or NULL on ENOMEM. */
static char *hex_string(const unsigned char *bytes, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char *hex = malloc(len * 2 + 1);

	if (!hex)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		hex[2 * i] = digits[bytes[i] >> 4];
		hex[2 * i + 1] = digits[bytes[i] & 0xf];
	}
	hex[len * 2] = '\0';
	return hex;
}

/* Go's linker writes its build id as a note named "Go" of this type (.note.go.buildid). */
#define GO_NOTE_BUILD_ID 4
#define GO_BUILD_ID_MAX	 256

/* A copy of the Go build id of desc (len bytes), NULL unless printable ASCII. */
static char *go_build_id_string(const char *desc, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (desc[i] <= ' ' || desc[i] >= 0x7f)
			return NULL;
	return strndup(desc, len);
}

/*
 * Looks for NT_GNU_BUILD_ID and Go's build id note in one block of notes.
 * Sets ef->build_id / ef->go_build_id when found and not set yet. Returns
 * 0, or -ENOMEM.
 */
static int find_build_id_in_notes(struct elf_file *ef, Elf_Data *data)
{
	GElf_Nhdr nhdr;
	size_t off = 0, next, name_off, desc_off;

	/* gelf_getnote() checks each header, name and descriptor against d_size. */
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;
		const char *desc = (const char *)data->d_buf + desc_off;

		off = next;
		if (!ef->go_build_id && nhdr.n_type == GO_NOTE_BUILD_ID && nhdr.n_namesz == 4 &&
		    !memcmp(name, "Go\0\0", 4) && nhdr.n_descsz &&
		    nhdr.n_descsz <= GO_BUILD_ID_MAX) {
			/* A malformed id is ignored; only ENOMEM would leave it NULL otherwise. */
			ef->go_build_id = go_build_id_string(desc, nhdr.n_descsz);
			continue;
		}
		if (ef->build_id || nhdr.n_type != NT_GNU_BUILD_ID ||
		    nhdr.n_namesz != sizeof(ELF_NOTE_GNU) ||
		    memcmp(name, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) != 0)
			continue;
		if (nhdr.n_descsz == 0 || nhdr.n_descsz > BUILD_ID_MAX_BYTES)
			continue;
		ef->build_id = hex_string((const unsigned char *)desc, nhdr.n_descsz);
		if (!ef->build_id)
			return -ENOMEM;
	}
	return 0;
}

/* PT_NOTE segments are what survives strip, so they are tried first. */
static int find_build_id_in_segments(struct elf_file *ef, Elf *elf, size_t phnum)
{
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr phdr;
		Elf_Data *data;
		int err;

		if (!gelf_getphdr(elf, (int)i, &phdr))
			return -ENOEXEC;
		if (phdr.p_type != PT_NOTE || phdr.p_filesz == 0)
			continue;
		if (!range_in_file(phdr.p_offset, phdr.p_filesz, ef->size))
			return -ENOEXEC;
		/* Notes in an 8-aligned segment (GNU property notes) use 8-byte padding. */
		data = elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset, phdr.p_filesz,
					    phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (!data)
			continue; /* unaligned or unreadable: maybe a section has it */
		err = find_build_id_in_notes(ef, data);
		if (err)
			return err;
	}
	return 0;
}

static int find_build_id_in_sections(struct elf_file *ef, Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		Elf_Data *data;
		int err;

		if (!gelf_getshdr(scn, &shdr))
			return -ENOEXEC;
		if (shdr.sh_type != SHT_NOTE || shdr.sh_size == 0)
			continue;
		if (!range_in_file(shdr.sh_offset, shdr.sh_size, ef->size))
			return -ENOEXEC;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		err = find_build_id_in_notes(ef, data);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The program and section header tables the ELF header describes must lie
 * inside the file. This reads the counts from the header itself: libelf
 * quietly shrinks them to what fits in the file, which would let a truncated
 * file pass for a well-formed one. Returns the counts in *phnum, *shnum.
 */
static int check_header_tables(const struct elf_file *ef, Elf *elf, const GElf_Ehdr *ehdr,
			       size_t *phnum, size_t *shnum)
{
	size_t phent = gelf_fsize(elf, ELF_T_PHDR, 1, EV_CURRENT);
	size_t shent = gelf_fsize(elf, ELF_T_SHDR, 1, EV_CURRENT);
	size_t lib_phnum, lib_shnum;
	bool extended;

	if (!phent || !shent)
		return -ENOEXEC;
	/* Counts too large for the header live in section 0, which must then exist. */
	extended = ehdr->e_phnum == PN_XNUM || (ehdr->e_shnum == 0 && ehdr->e_shoff != 0);
	if (extended &&
	    (ehdr->e_shentsize != shent || !range_in_file(ehdr->e_shoff, shent, ef->size)))
		return -ENOEXEC;
	if (elf_getphdrnum(elf, &lib_phnum) != 0 || elf_getshdrnum(elf, &lib_shnum) != 0)
		return -ENOEXEC;
	*phnum = ehdr->e_phnum == PN_XNUM ? lib_phnum : ehdr->e_phnum;
	*shnum = ehdr->e_shnum == 0 && ehdr->e_shoff != 0 ? lib_shnum : ehdr->e_shnum;

	if (*phnum && (ehdr->e_phentsize != phent || *phnum > ef->size / phent ||
		       !range_in_file(ehdr->e_phoff, *phnum * phent, ef->size)))
		return -ENOEXEC;
	if (*shnum && (ehdr->e_shentsize != shent || *shnum > ef->size / shent ||
		       !range_in_file(ehdr->e_shoff, *shnum * shent, ef->size)))
		return -ENOEXEC;
	/* Both tables fit, so libelf must see them whole. */
	if (lib_phnum != *phnum || lib_shnum != *shnum)
		return -ENOEXEC;
	return 0;
}

static int collect_segments(struct elf_file *ef, Elf *elf, size_t phnum)
{
	size_t n = 0;

	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(elf, (int)i, &phdr))
			return -ENOEXEC;
		if (phdr.p_type == PT_LOAD)
			n++;
	}
	if (!n)
		return 0;
	ef->segments = calloc(n, sizeof(*ef->segments));
	if (!ef->segments)
		return -ENOMEM;

	for (size_t i = 0; i < phnum; i++) {
		struct elf_segment *seg;
		GElf_Phdr phdr;

		if (!gelf_getphdr(elf, (int)i, &phdr))
			return -ENOEXEC;
		if (phdr.p_type != PT_LOAD)
			continue;
		/*
		 * A loader could not map a segment whose bytes are not in the
		 * file, so such a file cannot be what a process is running.
		 */
		if (phdr.p_filesz > phdr.p_memsz ||
		    !range_in_file(phdr.p_offset, phdr.p_filesz, ef->size) ||
		    phdr.p_memsz > UINT64_MAX - phdr.p_vaddr)
			return -ENOEXEC;
		seg = &ef->segments[ef->n_segments++];
		seg->vaddr = phdr.p_vaddr;
		seg->memsz = phdr.p_memsz;
		seg->offset = phdr.p_offset;
		seg->filesz = phdr.p_filesz;
		seg->flags = phdr.p_flags & (PF_X | PF_W | PF_R);
	}
	return 0;
}

static int parse_elf(struct elf_file *ef)
{
	size_t phnum, shnum;
	GElf_Ehdr ehdr;
	Elf *elf;
	int err;

	elf = elf_begin(ef->fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;

	err = -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr))
		goto cleanup;
	if (ehdr.e_ident[EI_DATA] != ELFDATA2LSB && ehdr.e_ident[EI_DATA] != ELFDATA2MSB)
		goto cleanup;
	if (ehdr.e_version != EV_CURRENT)
		goto cleanup;
	err = check_header_tables(ef, elf, &ehdr, &phnum, &shnum);
	if (err)
		goto cleanup;
	ef->type = ehdr.e_type;

	err = collect_segments(ef, elf, phnum);
	if (err)
		goto cleanup;
	err = find_build_id_in_segments(ef, elf, phnum);
	if (err == 0 && shnum && (!ef->build_id || !ef->go_build_id))
		err = find_build_id_in_sections(ef, elf);
cleanup:
	elf_end(elf);
	return err;
}

int elf_file__open(const char *path, int fd, struct elf_file **out)
{
	struct elf_file *ef = NULL;
	struct stat st;
	int err;

	*out = NULL;
	pthread_once(&libelf_once, libelf_init);
	if (!libelf_ok) {
		err = -ENOSYS;
		goto cleanup;
	}
	if (!path) {
		err = -EINVAL;
		goto cleanup;
	}
	if (fd < 0) {
		/* Paths come from folders a user named (--debug-dir): still no FIFO or device. */
		fd = safe_open(path, 0, SAFE_OPEN_MAX_ELF);
		if (fd < 0) {
			/* Not a regular file of sane size: not an ELF file (the refusal is
			 * counted). */
			err = safe_open__is_refusal(fd) ? -ENOEXEC : fd;
			goto cleanup;
		}
	}

	ef = calloc(1, sizeof(*ef));
	if (!ef) {
		err = -ENOMEM;
		goto cleanup;
	}
	ef->fd = fd;
	fd = -1;
	ef->path = strdup(path);
	if (!ef->path) {
		err = -ENOMEM;
		goto cleanup;
	}

	if (fstat(ef->fd, &st) < 0) {
		err = -errno;
		goto cleanup;
	}
	/* Only a regular file has a size that bounds what we read. */
	if (!S_ISREG(st.st_mode) || st.st_size <= 0) {
		err = -ENOEXEC;
		goto cleanup;
	}
	ef->size = (uint64_t)st.st_size;

	err = parse_elf(ef);
	if (err)
		goto cleanup;
	*out = ef;
	return 0;

cleanup:
	if (fd >= 0)
		close(fd);
	elf_file__close(ef);
	return err;
}

void elf_file__close(struct elf_file *ef)
{
	if (!ef)
		return;
	if (ef->fd >= 0)
		close(ef->fd);
	free(ef->path);
	free(ef->segments);
	free(ef->build_id);
	free(ef->go_build_id);
	free(ef);
}

/*
 * Only bytes inside a segment's [offset, offset + filesz) map: that is where
 * every instruction lies. Two cases are deliberately not mapped:
 *  - the page-rounding slack a mapping has before p_offset (those file bytes
 *    belong to the neighbouring segment, or to none);
 *  - the memsz - filesz tail (.bss), which is anonymous memory with no file
 *    offset at all.
 * A caller with an address in a mapping computes the offset as
 * addr - map_start + map_pgoff.
 */
bool elf_file__offset_to_vaddr(const struct elf_file *ef, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < ef->n_segments; i++) {
		const struct elf_segment *seg = &ef->segments[i];

		if (offset >= seg->offset && offset - seg->offset < seg->filesz) {
			*vaddr = seg->vaddr + (offset - seg->offset);
			return true;
		}
	}
	return false;
}

bool elf_file__mapping_bias(const struct elf_file *ef, uint64_t map_offset, uint64_t map_size,
			    uint32_t flags, uint64_t *bias_vaddr)
{
	for (size_t i = 0; i < ef->n_segments; i++) {
		const struct elf_segment *seg = &ef->segments[i];
		/* The loader maps whole pages: the mapping starts at the segment's offset
		 * rounded down to a page, and may begin in bytes of the segment before. */
		uint64_t page_start = seg->offset & ~0xfffull;

		if ((seg->flags & flags) != flags || map_offset < page_start ||
		    map_offset >= seg->offset + seg->filesz || map_offset + map_size <= seg->offset)
			continue;
		*bias_vaddr = seg->vaddr - seg->offset + map_offset;
		return true;
	}
	return false;
}

int elf_file__read_vaddr(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < ef->n_segments; i++) {
		const struct elf_segment *s = &ef->segments[i];
		ssize_t n;

		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		if (len > s->filesz - (vaddr - s->vaddr))
			return -ERANGE;
		n = pread(ef->fd, buf, len, (off_t)(s->offset + (vaddr - s->vaddr)));
		if (n < 0)
			return -errno;
		return (size_t)n == len ? 0 : -EIO;
	}
	return -ERANGE;
}
