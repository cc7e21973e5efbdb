// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * Code with no file behind it, as a JIT compiler makes: two tiny functions
 * written into anonymous executable memory, each calling back into C.
 *   jit_framed    push rbp; mov rbp, rsp; call CALLBACK; pop rbp; ret
 *                 a proper frame: unwinders get through it with frame pointers
 *   jit_frameless push rbp; mov ebp, 0x1234; call CALLBACK; pop rbp; ret
 *                 rbp used as a scratch register: no frame to follow, the
 *                 unwinder must stop and say why
 * main -> jit_outer -> jit_framed -> cb_framed -> leaf_framed, and
 * main -> jit_outer_nf -> jit_frameless -> cb_frameless -> leaf_frameless,
 * alternating, each leaf spinning about a millisecond per call. The C code
 * is built without frame pointers (it unwinds with .eh_frame).
 * Usage: jit_code SECONDS
 */
#include <string.h>
#include <sys/mman.h>

#include "workload.h"

typedef unsigned long (*jit_fn)(unsigned long x);

WL_NOINLINE unsigned long leaf_framed(unsigned long x)
{
	return wl_spin_n(x, 1000000);
}

WL_NOINLINE unsigned long leaf_frameless(unsigned long x)
{
	return wl_spin_n(x, 1000000);
}

WL_NOINLINE unsigned long cb_framed(unsigned long x)
{
	unsigned long r = leaf_framed(x + 1);

	WL_OPAQUE(r);
	return r ^ 1;
}

WL_NOINLINE unsigned long cb_frameless(unsigned long x)
{
	unsigned long r = leaf_frameless(x + 2);

	WL_OPAQUE(r);
	return r ^ 2;
}

/* Writes a function calling target at code; with_frame picks the prologue. Returns its end. */
static unsigned char *emit(unsigned char *code, jit_fn target, int with_frame)
{
	static const unsigned char framed[] = {0x55, 0x48, 0x89, 0xe5};		 /* push rbp; mov rbp,rsp */
	static const unsigned char frameless[] = {0x55, 0xbd, 0x34, 0x12, 0x00, 0x00}; /* push rbp; mov ebp,0x1234 */
	static const unsigned char call_tail[] = {0xff, 0xd0, 0x5d, 0xc3}; /* call rax; pop rbp; ret */
	unsigned long addr = (unsigned long)target;

	if (with_frame) {
		memcpy(code, framed, sizeof(framed));
		code += sizeof(framed);
	} else {
		memcpy(code, frameless, sizeof(frameless));
		code += sizeof(frameless);
	}
	*code++ = 0x48; /* mov rax, imm64 */
	*code++ = 0xb8;
	memcpy(code, &addr, sizeof(addr));
	code += sizeof(addr);
	memcpy(code, call_tail, sizeof(call_tail));
	return code + sizeof(call_tail);
}

static jit_fn jit_framed, jit_frameless;

WL_NOINLINE unsigned long jit_outer(unsigned long x)
{
	unsigned long r = jit_framed(x + 3);

	WL_OPAQUE(r);
	return r ^ 3;
}

WL_NOINLINE unsigned long jit_outer_nf(unsigned long x)
{
	unsigned long r = jit_frameless(x + 4);

	WL_OPAQUE(r);
	return r ^ 4;
}

int main(int argc, char **argv)
{
	time_t deadline = wl_deadline(argc, argv);
	unsigned char *code;
	unsigned long r = (unsigned long)argc;

	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	jit_framed = (jit_fn)(void *)code;
	jit_frameless = (jit_fn)(void *)(code + 64);
	emit(code, cb_framed, 1);
	emit(code + 64, cb_frameless, 0);
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 1;
	wl_ready();
	while (time(NULL) < deadline) {
		r = jit_outer(r);
		r = jit_outer_nf(r);
	}
	printf("%lu\n", r & 1);
	return 0;
}
