// build: g++ -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * C++ without frame pointers: main -> guarded_run (try/catch) ->
 * tmpl::Stage<12>::run -> ... -> tmpl::Stage<0>::run ->
 * tmpl::spin_leaf<unsigned long>. Stage<6> holds an object with a destructor,
 * so its frame has a cleanup landing pad; guarded_run catches tmpl::Bail,
 * which spin_leaf throws through the whole chain when the time is up. While
 * spinning, spin_leaf also calls side_path now and then, which throws and
 * catches an exception of its own. So the binary has .gcc_except_table
 * entries (LSDAs) and .cold parts for the functions on the chain.
 * Usage: cpp_templates SECONDS
 */
#include <stdexcept>

#include "workload.h"

namespace tmpl
{

struct Bail {
	unsigned long code;
};

static time_t deadline;
static unsigned long side_caught, destructed;

WL_NOINLINE void side_throw(unsigned long x)
{
	if (x != 0)
		throw std::runtime_error("side path");
}

WL_NOINLINE unsigned long side_path(unsigned long x)
{
	try {
		side_throw(x | 1);
	} catch (const std::runtime_error &) {
		side_caught++;
	}
	return x ^ side_caught;
}

template <typename T> WL_NOINLINE T spin_leaf(T x)
{
	for (unsigned long round = 0;; round++) {
		x = wl_spin_n(x, 1000000);
		if (time(NULL) >= deadline)
			throw Bail{(unsigned long)x};
		if (round % 64 == 63)
			x = side_path(x);
	}
}

struct Counted {
	~Counted()
	{
		destructed++;
	}
};

template <int N> struct Stage {
	WL_NOINLINE static unsigned long run(unsigned long x)
	{
		unsigned long r = Stage<N - 1>::run(x + N);

		WL_OPAQUE(r);
		return r ^ N;
	}
};

/* A stage with a local object to destroy when Bail passes through. */
template <> struct Stage<6> {
	WL_NOINLINE static unsigned long run(unsigned long x)
	{
		Counted guard;
		unsigned long r = Stage<5>::run(x + 6);

		WL_OPAQUE(r);
		return r ^ 6;
	}
};

template <> struct Stage<0> {
	WL_NOINLINE static unsigned long run(unsigned long x)
	{
		unsigned long r = spin_leaf<unsigned long>(x);

		WL_OPAQUE(r);
		return r;
	}
};

} // namespace tmpl

WL_NOINLINE unsigned long guarded_run(unsigned long x)
{
	try {
		return tmpl::Stage<12>::run(x);
	} catch (const tmpl::Bail &b) {
		return b.code;
	}
}

int main(int argc, char **argv)
{
	unsigned long r;

	tmpl::deadline = wl_deadline(argc, argv);
	wl_ready();
	r = guarded_run((unsigned long)argc);
	printf("%lu %lu %lu\n", r & 1, tmpl::side_caught, tmpl::destructed);
	return 0;
}
