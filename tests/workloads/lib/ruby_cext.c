// build: gcc -O2 -g -shared -fPIC -fno-optimize-sibling-calls -fno-inline -I/usr/include/ruby-3.1.0 -I/usr/include/x86_64-linux-gnu/ruby-3.1.0 -lruby-3.1
/*
 * A Ruby C extension (ruby_cext.rb requires it): CExt.call_block yields to
 * its block through two C functions of its own, so a profile must show
 * Ruby -> ruby_cext_call -> cext_middle -> rb_yield -> the Ruby block.
 */
#include <ruby.h>

__attribute__((noinline)) VALUE cext_middle(VALUE arg)
{
	VALUE r = rb_yield(arg);

	__asm__ volatile("" ::: "memory"); /* keeps the call a call, not a jump */
	return r;
}

__attribute__((noinline)) static VALUE ruby_cext_call(VALUE self)
{
	VALUE r = cext_middle(self);

	__asm__ volatile("" ::: "memory");
	return r;
}

void Init_ruby_cext(void)
{
	VALUE m = rb_define_module("CExt");

	rb_define_module_function(m, "call_block", ruby_cext_call, 0);
}
