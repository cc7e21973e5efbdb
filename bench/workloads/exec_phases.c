// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -I tests/workloads
/*
 * Exec-to-first-complete-sample latency: started with the CLOCK_MONOTONIC
 * time (ns) just before its exec, it spins in main -> step_a -> step_b ->
 * phase_NN, where NN is the number of PHASE_MS slices since that time (then
 * phase_late). The first phase with a completely unwound sample in the
 * profile bounds the latency. Built without frame pointers and with rbp
 * clobbered in step_a and step_b, so only the stack deltas give main.
 * Usage: exec_phases START_NS [LIFETIME_MS]
 */
#include "workload.h"

#define PHASE_MS 5

static long long start_ns, end_ns;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Spins until the phase is over (or the lifetime ends); returns its work. */
#define PHASE(n)                                                                                   \
	WL_NOINLINE unsigned long phase_##n(unsigned long x)                                       \
	{                                                                                          \
		long long until = start_ns + (1##n - 100 + 1) * PHASE_MS * 1000000ll;              \
		do                                                                                 \
			x = wl_spin_n(x, 2000);                                                    \
		while (now_ns() < until && now_ns() < end_ns);                                     \
		return x;                                                                          \
	}

PHASE(00) PHASE(01) PHASE(02) PHASE(03) PHASE(04) PHASE(05) PHASE(06) PHASE(07)
PHASE(08) PHASE(09) PHASE(10) PHASE(11) PHASE(12) PHASE(13) PHASE(14) PHASE(15)
PHASE(16) PHASE(17) PHASE(18) PHASE(19) PHASE(20) PHASE(21) PHASE(22) PHASE(23)
PHASE(24) PHASE(25) PHASE(26) PHASE(27) PHASE(28) PHASE(29) PHASE(30) PHASE(31)
PHASE(32) PHASE(33) PHASE(34) PHASE(35) PHASE(36) PHASE(37) PHASE(38) PHASE(39)

static unsigned long (*const phases[])(unsigned long) = {
    phase_00, phase_01, phase_02, phase_03, phase_04, phase_05, phase_06, phase_07,
    phase_08, phase_09, phase_10, phase_11, phase_12, phase_13, phase_14, phase_15,
    phase_16, phase_17, phase_18, phase_19, phase_20, phase_21, phase_22, phase_23,
    phase_24, phase_25, phase_26, phase_27, phase_28, phase_29, phase_30, phase_31,
    phase_32, phase_33, phase_34, phase_35, phase_36, phase_37, phase_38, phase_39,
};

WL_NOINLINE unsigned long phase_late(unsigned long x)
{
	do
		x = wl_spin_n(x, 2000);
	while (now_ns() < end_ns);
	return x;
}

WL_NOINLINE unsigned long step_b(unsigned long x)
{
	unsigned long p = x * 3, q = x * 5, s = x * 7, t = x * 11, u = x * 13;
	long long k;

	WL_OPAQUE(p);
	WL_OPAQUE(q);
	WL_OPAQUE(s);
	WL_OPAQUE(t);
	WL_OPAQUE(u);
	while ((k = (now_ns() - start_ns) / (PHASE_MS * 1000000ll)) < 40 && now_ns() < end_ns)
		x = phases[k < 0 ? 0 : k](x);
	x = phase_late(x);
	WL_OPAQUE(p);
	WL_OPAQUE(q);
	WL_OPAQUE(s);
	WL_OPAQUE(t);
	WL_OPAQUE(u);
	return x ^ p ^ q ^ s ^ t ^ u;
}

WL_NOINLINE unsigned long step_a(unsigned long x)
{
	unsigned long p = x * 3, q = x * 5, s = x * 7, t = x * 11, u = x * 13;

	WL_OPAQUE(p);
	WL_OPAQUE(q);
	WL_OPAQUE(s);
	WL_OPAQUE(t);
	WL_OPAQUE(u);
	x = step_b(x + 1);
	WL_OPAQUE(p);
	WL_OPAQUE(q);
	WL_OPAQUE(s);
	WL_OPAQUE(t);
	WL_OPAQUE(u);
	return x ^ p ^ q ^ s ^ t ^ u;
}

int main(int argc, char **argv)
{
	start_ns = argc > 1 ? atoll(argv[1]) : now_ns();
	end_ns = start_ns + (argc > 2 ? atoll(argv[2]) : 300) * 1000000ll;
	return (int)(step_a(1) & 0);
}
