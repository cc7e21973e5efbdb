// SPDX-License-Identifier: Apache-2.0
#include "elf_symbols.h"

#include <stddef.h>

#include "elf/elf_pages.h"

bool elf_symbols__for_each(Elf *elf, unsigned int sh_type, elf_symbol_fn fn, void *ctx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != sh_type || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			const char *name;
			GElf_Sym sym;

			/* Large tables: the pages read so far given back (issue 22). */
			elf_pages__drop_symbols_every(elf, scn, i);
			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (name && fn(ctx, &sym, name))
				return true;
		}
	}
	return false;
}
