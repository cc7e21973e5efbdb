// build: gcc -O2 -g -shared -fPIC -fno-optimize-sibling-calls
/*
 * C called from Python through ctypes that calls back into Python:
 * py_mixed.py's call_into_c -> cb_outer -> cb_middle -> (the callback, a
 * Python function) -> py_callback -> cb_leaf. Built without frame-pointer
 * flags: the native frames unwind with their CFI.
 */
#define NOINLINE __attribute__((noinline))

typedef long (*callback_fn)(long);

NOINLINE long cb_middle(callback_fn fn, long n)
{
	long sum = 0;

	for (long i = 0; i < n; i++)
		sum += fn(i);
	__asm__ volatile("" : "+r"(sum));
	return sum;
}

NOINLINE long cb_outer(callback_fn fn, long n)
{
	long r = cb_middle(fn, n);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}
