// SPDX-License-Identifier: Apache-2.0
#include "symbol/symbolizer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "elf/file_cache.h"
#include "symbol/kallsyms.h"
#include "types.h"
#include "util/log.h"

void symbolizer__init(struct symbolizer *s, struct file_cache *files)
{
	memset(s, 0, sizeof(*s));
	s->files = files;
}

void symbolizer__clear(struct symbolizer *s)
{
	if (!s)
		return;
	kallsyms__free(s->ksyms);
	s->ksyms = NULL;
}

static struct kallsyms *kernel_symbols(struct symbolizer *s)
{
	int err;

	if (s->ksyms_tried)
		return s->ksyms;
	s->ksyms_tried = true;
	err = kallsyms__load(NULL, &s->ksyms);
	if (err) {
		pr_warn("cannot read /proc/kallsyms (%s): kernel frames show as addresses",
			strerror(-err));
		return NULL;
	}
	if (kallsyms__restricted(s->ksyms)) {
		pr_warn("/proc/kallsyms hides addresses (kernel.kptr_restrict): run as root or "
			"set sysctl kernel.kptr_restrict=0 to name kernel frames");
		kallsyms__free(s->ksyms);
		s->ksyms = NULL;
	}
	return s->ksyms;
}

const char *symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool is_return,
			       const char **module, char *buf, size_t len)
{
	struct kallsyms *ks = kernel_symbols(s);
	const struct ksym *sym = ks ? kallsyms__find(ks, is_return ? addr - 1 : addr) : NULL;

	*module = NULL;
	if (!sym) {
		s->stats.kernel_unnamed++;
		snprintf(buf, len, "[kernel]+0x%llx", (unsigned long long)addr);
		return buf;
	}
	*module = sym->module;
	snprintf(buf, len, "%s", sym->name);
	return buf;
}

const char *symbolizer__native(struct symbolizer *s, uint32_t file_id, uint64_t addr,
			       bool is_return, char *buf, size_t len)
{
	const struct cached_file *f = file_cache__at(s->files, file_id);
	const char *name;

	if (!f) {
		s->stats.native_unnamed++;
		snprintf(buf, len, "[unknown]+0x%llx", (unsigned long long)addr);
		return buf;
	}
	name = file_cache__symbolize(s->files, file_id, is_return && addr ? addr - 1 : addr);
	if (!name) {
		s->stats.native_unnamed++;
		snprintf(buf, len, "%s+0x%llx", f->basename, (unsigned long long)addr);
		return buf;
	}
	/* Drop the ELF symbol version (memcpy@@GLIBC_2.14): it names the same function. */
	snprintf(buf, len, "%.*s", (int)strcspn(name, "@"), name);
	return buf;
}

const char *symbolizer__error(uint64_t reason)
{
	switch (reason) {
	case OP_UNWIND_ERR_READ:
		return "[unwind stopped: unreadable stack]";
	case OP_UNWIND_ERR_MAX_DEPTH:
		return "[unwind stopped: too many frames]";
	case OP_UNWIND_ERR_BAD_FP:
		return "[unwind stopped: bad frame pointer]";
	case OP_UNWIND_ERR_NO_RULE:
		return "[unwind stopped: no unwind rule]";
	case OP_UNWIND_ERR_ANON_CODE:
		return "[unwind stopped: JIT/anonymous code without frame pointer]";
	case OP_UNWIND_ERR_NO_MAPS:
		return "[unwind stopped: process exited before its maps were read]";
	default:
		return "[unwind stopped]";
	}
}
