// build: gcc -O2 -fPIC -shared -fvisibility=hidden -s
/*
 * A stand-in for a stripped CRuby 3.3+ libruby (a distribution's, with no
 * .symtab): ruby_current_ec and rb_vm_exec are hidden, so no symbol names
 * them, and only exported functions' code leads to them. As in CRuby,
 * rb_errinfo and rb_thread_current begin by reading ruby_current_ec, and
 * rb_iseq_eval and rb_iseq_eval_main call rb_vm_exec (and both call a
 * smaller error path too). Another TLS variable comes first, so the ec's
 * offset in the block is not 0 (3.3 has ruby_nt_serial), and the file holds
 * it in the GOT pair's second word.
 * tests/unit/test_ruby_binary.c inspects it and loads it: the module id
 * and offset found must lead to the variable its own code returns.
 */
#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

struct thread {
	void *self;
};
struct ec {
	void *vm_stack, *cfp;
	struct thread *thread_ptr;
	void *errinfo;
	long depth;
};

__thread unsigned long ruby_nt_serial = 1; /* .tdata: placed before .tbss */
__thread struct ec *ruby_current_ec;
EXPORT const char ruby_version[] = "3.3.10";

__attribute__((noinline, noclone)) static void *stack_overflow(struct ec *ec)
{
	ec->errinfo = ec;
	return NULL;
}

/* Not CRuby's loop: a function of some size that is not the error path. */
__attribute__((noinline, noclone)) void *rb_vm_exec(struct ec *ec)
{
	long acc = 0;

	for (long i = 0; i < ec->depth; i++) {
		acc += (long)ec->cfp * i;
		if (acc & 0x40)
			ec->vm_stack = (char *)ec->vm_stack + acc;
		else if (acc & 0x80)
			ec->cfp = (char *)ec->cfp - i;
	}
	ec->depth = acc;
	return ec->errinfo;
}

EXPORT void *rb_errinfo(void)
{
	return ruby_current_ec->errinfo;
}

EXPORT void *rb_thread_current(void)
{
	return ruby_current_ec->thread_ptr->self;
}

EXPORT void *rb_iseq_eval(void *iseq)
{
	struct ec *ec = ruby_current_ec;

	if (ec->depth > 1000)
		return stack_overflow(ec);
	ec->cfp = iseq;
	return rb_vm_exec(ec);
}

EXPORT void *rb_iseq_eval_main(void *iseq)
{
	struct ec *ec = ruby_current_ec;

	ruby_nt_serial++;
	if (ec->depth > 2000)
		return stack_overflow(ec);
	ec->vm_stack = iseq;
	return rb_vm_exec(ec);
}

/* For the test: this thread's ruby_current_ec and rb_vm_exec, as its own code has them. */
EXPORT struct ec **ruby_stripped_ec(void)
{
	return &ruby_current_ec;
}

EXPORT void *ruby_stripped_vm_exec(void)
{
	return (void *)rb_vm_exec;
}
