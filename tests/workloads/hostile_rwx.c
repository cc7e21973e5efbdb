// build: gcc -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls
/*
 * Self-modifying code in one read-write-execute anonymous page: before each
 * call the program writes a new copy of the function at another place in
 * the page, alternating a variant with a frame pointer and one that puts
 * garbage in rbp, and the code rewrites an instruction of its own every time
 * it runs (it bumps the immediate of a later `mov`). So the bytes a profiler
 * may find at a sampled address keep changing under it.
 *   main -> rwx_run -> [the page] -> rwx_cb -> rwx_leaf (about a millisecond,
 *   then 3 ms of sleep)
 * Usage: hostile_rwx SECONDS
 */
#include <string.h>
#include <sys/mman.h>

#include "workload.h"

typedef unsigned long (*cb_fn)(unsigned long);
typedef unsigned long (*code_fn)(cb_fn, unsigned long);

WL_NOINLINE unsigned long rwx_leaf(unsigned long x)
{
	return wl_spin_n(x, 300000);
}

WL_NOINLINE unsigned long rwx_cb(unsigned long x)
{
	unsigned long r = rwx_leaf(x + 1);

	WL_OPAQUE(r);
	return r ^ 3;
}

/*
 *   push rbp
 *   mov rbp, rsp             (framed)   | mov ebp, 0x1234 (garbage)
 *   add dword [rip+8], 1     bumps the immediate of the mov below
 *   mov rax, rdi
 *   mov rdi, rsi
 *   mov r8d, IMM32           the instruction the line above rewrites
 *   call rax
 *   pop rbp
 *   ret
 */
static const unsigned char framed[] = {
    0x55,			     /* push rbp */
    0x48, 0x89, 0xe5,		     /* mov rbp, rsp */
    0x83, 0x05, 0x08, 0, 0, 0, 0x01, /* add dword [rip+8], 1 */
    0x48, 0x89, 0xf8,		     /* mov rax, rdi */
    0x48, 0x89, 0xf7,		     /* mov rdi, rsi */
    0x41, 0xb8, 0,    0, 0, 0,	     /* mov r8d, imm32 (rewritten) */
    0xff, 0xd0,			     /* call rax */
    0x5d,			     /* pop rbp */
    0xc3,			     /* ret */
};
static const unsigned char garbage[] = {
    0x55,			     /* push rbp */
    0xbd, 0x34, 0x12, 0, 0,	     /* mov ebp, 0x1234 */
    0x83, 0x05, 0x08, 0, 0, 0, 0x01, /* add dword [rip+8], 1 */
    0x48, 0x89, 0xf8,		     /* mov rax, rdi */
    0x48, 0x89, 0xf7,		     /* mov rdi, rsi */
    0x41, 0xb8, 0,    0, 0, 0,	     /* mov r8d, imm32 (rewritten) */
    0xff, 0xd0,			     /* call rax */
    0x5d,			     /* pop rbp */
    0xc3,			     /* ret */
};

WL_NOINLINE unsigned long rwx_run(unsigned char *page, time_t deadline)
{
	unsigned long x = 1;
	struct timespec nap = {0, 3000000};

	for (unsigned int i = 0; time(NULL) < deadline; i++) {
		const unsigned char *code = i % 2 ? garbage : framed;
		size_t size = i % 2 ? sizeof(garbage) : sizeof(framed);
		unsigned char *at = page + (i % 64) * 64;

		memcpy(at, code, size);
		__builtin___clear_cache((char *)at, (char *)at + size);
		x = ((code_fn)(void *)at)(rwx_cb, x);
		WL_OPAQUE(x);
		memset(at, 0xcc, size); /* int3: nothing stale stays runnable */
		nanosleep(&nap, NULL);
	}
	return x;
}

int main(int argc, char **argv)
{
	time_t deadline = wl_deadline(argc, argv);
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED) {
		perror("mmap rwx");
		return 1;
	}
	memset(page, 0xcc, 4096);
	wl_ready();
	return (int)(rwx_run(page, deadline) & 0);
}
