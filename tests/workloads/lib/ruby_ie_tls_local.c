// build: gcc -O2 -g -fPIC -shared -ftls-model=initial-exec
/*
 * A stand-in for a libruby whose ruby_current_ec is reached by the
 * initial-exec TLS model (a TPOFF64 relocation: the dynamic linker writes
 * the variable's distance from the thread pointer into a GOT slot at load
 * time), with the symbols that make a file CRuby to omniprof (rb_vm_exec,
 * ruby_version). tests/unit/test_ruby_binary.c loads it and checks that
 * the distance read from the GOT of the loaded copy finds the variable.
 * ruby_current_ec is a local symbol here (3.3's is), so its relocation
 * names no symbol: the variable's offset is its addend.
 */
#include <stddef.h>

static __thread void *ruby_current_ec; /* local: .symtab only, as 3.3 has it */
const char ruby_version[] = "3.1.7";

/* Not CRuby's loop: only a function of that name and some size. */
void *rb_vm_exec(void *ec)
{
	void *cur = ruby_current_ec;

	if (!cur)
		ruby_current_ec = ec;
	return cur ? cur : ec;
}

/* This thread's ruby_current_ec, as the library's own code reaches it. */
void **ruby_ie_tls_ec(void)
{
	return &ruby_current_ec;
}
