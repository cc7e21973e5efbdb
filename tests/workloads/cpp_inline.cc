// build: g++ -O2 -g -fno-omit-frame-pointer
/*
 * An -O2 C++ program whose hot function is a template inlined into its
 * caller: main -> hot_loop (a real frame) -> kern::mix<unsigned long> (always
 * inlined, so it has no frame and no symbol of its own: only DWARF tells
 * that the samples are in it). The test expects the inlined function as its
 * own frame above hot_loop, named as each --demangle mode says.
 * Usage: cpp_inline SECONDS
 */
#include "workload.h"

namespace kern
{

template <typename T> inline __attribute__((always_inline)) T mix(T x, long rounds)
{
	for (long i = 0; i < rounds; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		x ^= x >> 29;
	}
	return x;
}

} // namespace kern

WL_NOINLINE unsigned long hot_loop(unsigned long x, time_t deadline)
{
	do {
		x = kern::mix<unsigned long>(x, 1000000);
		WL_OPAQUE(x);
	} while (time(NULL) < deadline);
	return x;
}

int main(int argc, char **argv)
{
	time_t deadline = wl_deadline(argc, argv);

	wl_ready();
	printf("%lu\n", hot_loop((unsigned long)argc, deadline) & 1);
	return 0;
}
