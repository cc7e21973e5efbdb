// SPDX-License-Identifier: Apache-2.0
#include "interp/perl/perl_sub.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/perl/perl_layout.h"
#include "omniprof/interp/perl_abi.h"
#include "proc/remote_memory.h"

static int read_u64(const struct remote_memory *m, uint64_t addr, uint64_t *v)
{
	*v = 0;
	return addr ? remote_memory__read(m, addr, v, sizeof(*v)) : -EFAULT;
}

static int read_u32(const struct remote_memory *m, uint64_t addr, uint32_t *v)
{
	*v = 0;
	return addr ? remote_memory__read(m, addr, v, sizeof(*v)) : -EFAULT;
}

/*
 * A NUL-terminated string at addr, at most max - 1 bytes, into buf (max
 * bytes). Read in small pieces: a string near the end of a mapping is read
 * as far as it goes. 0 or -EFAULT.
 */
static int read_cstr(const struct remote_memory *m, uint64_t addr, char *buf, size_t max)
{
	size_t have = 0;

	buf[0] = 0;
	if (!addr)
		return -EFAULT;
	while (have + 1 < max) {
		size_t want = max - 1 - have < 32 ? max - 1 - have : 32;

		if (remote_memory__read(m, addr + have, buf + have, want)) {
			/* Byte by byte up to the fault. */
			while (want-- && !remote_memory__read(m, addr + have, buf + have, 1)) {
				if (!buf[have])
					return 0;
				have++;
			}
			buf[have] = 0;
			return have ? 0 : -EFAULT;
		}
		for (size_t i = 0; i < want; i++)
			if (!buf[have + i])
				return 0;
		have += want;
	}
	buf[have] = 0;
	return 0;
}

/* A HEK's key (hek_len bytes, bounded) into buf. 0 or -errno. */
static int read_hek(const struct remote_memory *m, const struct perl_layout *l, uint64_t hek,
		    char *buf, size_t max)
{
	uint32_t len;

	buf[0] = 0;
	if (read_u32(m, hek + l->hek_len, &len))
		return -EFAULT;
	if ((int32_t)len < 0)
		return -EINVAL;
	if (len > max - 1)
		len = (uint32_t)(max - 1);
	if (len && remote_memory__read(m, hek + l->hek_key, buf, len))
		return -EFAULT;
	buf[len] = 0;
	/* Names with a NUL inside stop there: they are for people to read. */
	return 0;
}

/*
 * HvAUX(hv) of a hash whose body is at body: 5.36+ keep it in the body;
 * older perls after the bucket array (HvARRAY + HvMAX + 1 pointers).
 */
static int read_hv_aux(const struct remote_memory *m, const struct perl_layout *l, uint64_t hv,
		       uint64_t body, uint64_t *aux)
{
	uint64_t array, max;

	*aux = 0;
	if (!l->hv_aux_after_array) {
		*aux = body + l->hv_aux;
		return 0;
	}
	if (read_u64(m, hv + l->sv_u, &array) || !array || read_u64(m, body + l->hv_max, &max))
		return -EFAULT;
	/* A stash has a few thousand buckets at most: a huge xhv_max is not a hash. */
	if (max >= (1u << 28))
		return -EINVAL;
	*aux = array + (max + 1) * 8;
	return 0;
}

/* HvNAME(stash) into buf ("" when the stash has no name). */
static void read_stash_name(const struct remote_memory *m, const struct perl_layout *l,
			    uint64_t stash, char *buf, size_t max)
{
	uint64_t body, name, aux;
	uint32_t flags, count;

	buf[0] = 0;
	if (!stash || read_u64(m, stash + l->sv_any, &body) || !body ||
	    read_u32(m, stash + l->sv_flags, &flags) || !(flags & l->svf_ook))
		return;
	if (read_hv_aux(m, l, stash, body, &aux) || read_u64(m, aux + l->hv_aux_name, &name) ||
	    !name || read_u32(m, aux + l->hv_aux_count, &count))
		return;
	/* With several names (xhv_name_count != 0) the field points at the list. */
	if (count && read_u64(m, name, &name))
		return;
	if (name)
		read_hek(m, l, name, buf, max);
}

/*
 * CopFILE() of an unthreaded perl: the COP holds a GV whose name is "_<"
 * and the file's name.
 */
static void read_filegv(const struct remote_memory *m, const struct perl_layout *l, uint64_t gv,
			char *buf, size_t max)
{
	char name[PERL_FILE_MAX + 2];
	const char *src;
	uint64_t body, hek;
	size_t len;

	buf[0] = 0;
	if (!gv || read_u64(m, gv + l->sv_any, &body) || !body ||
	    read_u64(m, body + l->gv_name, &hek) || !hek || read_hek(m, l, hek, name, sizeof(name)))
		return;
	src = strncmp(name, "_<", 2) ? name : name + 2;
	len = strlen(src);
	if (len > max - 1)
		len = max - 1;
	memcpy(buf, src, len);
	buf[len] = 0;
}

static int new_sub(const char *name, const char *file, struct perl_sub **out)
{
	struct perl_sub *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->name = strdup(name);
	s->file = strdup(file);
	if (!s->name || !s->file) {
		perl_sub__free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

int perl_sub__read(const struct remote_memory *mem, const struct perl_layout *l, uint64_t addr,
		   uint64_t data, struct perl_sub **out)
{
	char pkg[PERL_NAME_MAX], name[PERL_NAME_MAX], file[PERL_FILE_MAX];
	char full[2 * PERL_NAME_MAX + 2];
	uint64_t body, gv_or_hek, file_ptr, stash = 0, gv_body;
	uint32_t cv_flags;

	*out = NULL;
	file[0] = 0;
	if (data == OP_PERL_DATA_EVAL || data == OP_PERL_DATA_MAIN) {
		uint64_t fp;

		/* addr is a COP: its file names the eval ("(eval 12)") or the script. */
		if (!read_u64(mem, addr + l->cop_file, &fp)) {
			if (l->cop_file_gv)
				read_filegv(mem, l, fp, file, sizeof(file));
			else
				read_cstr(mem, fp, file, sizeof(file));
		}
		return new_sub(data == OP_PERL_DATA_EVAL ? "(eval)" : "(main)", file, out);
	}
	if (read_u64(mem, addr + l->sv_any, &body) || !body)
		return -EFAULT;
	if (data && body != data)
		return -EINVAL; /* the CV at addr is not the one sampled any more */
	if (read_u64(mem, body + l->cv_gv, &gv_or_hek) ||
	    read_u64(mem, body + l->cv_file, &file_ptr) ||
	    read_u32(mem, body + l->cv_flags, &cv_flags))
		return -EFAULT;
	if (file_ptr)
		read_cstr(mem, file_ptr, file, sizeof(file));
	name[0] = 0;
	if (cv_flags & l->cvf_named) {
		/* A lexical ("my") sub: its own name, its package from xcv_stash. */
		read_hek(mem, l, gv_or_hek, name, sizeof(name));
		read_u64(mem, body + l->cv_stash, &stash);
	} else if (gv_or_hek && !read_u64(mem, gv_or_hek + l->sv_any, &gv_body) && gv_body) {
		uint64_t hek;

		if (!read_u64(mem, gv_body + l->gv_name, &hek) && hek)
			read_hek(mem, l, hek, name, sizeof(name));
		read_u64(mem, gv_body + l->gv_stash, &stash);
	}
	read_stash_name(mem, l, stash, pkg, sizeof(pkg));
	if (!name[0])
		snprintf(name, sizeof(name), "__ANON__");
	if (pkg[0])
		snprintf(full, sizeof(full), "%s::%s", pkg, name);
	else
		snprintf(full, sizeof(full), "%s", name);
	return new_sub(full, file, out);
}

void perl_sub__free(struct perl_sub *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->file);
	free(s);
}

size_t perl_sub__bytes(const struct perl_sub *s)
{
	return sizeof(*s) + strlen(s->name) + strlen(s->file) + 2;
}
