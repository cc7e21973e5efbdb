// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
/*
 * main -> wait_outer -> wait_loop spins while a CPU-time timer (ITIMER_PROF,
 * every 5 ms) delivers SIGPROF; the handler on_sigprof -> handler_leaf spins
 * for a fixed amount of work (a few ms). Samples in handler_leaf must unwind
 * through the kernel's signal frame (libc's __restore_rt trampoline) back
 * into wait_loop, wait_outer and main.
 * Usage: signal_handler SECONDS
 */
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#include "workload.h"

static volatile unsigned long handled;

WL_NOINLINE unsigned long handler_leaf(unsigned long x)
{
	return wl_spin_n(x, 3000000);
}

WL_NOINLINE void on_sigprof(int sig)
{
	unsigned long r = handler_leaf(handled + (unsigned long)sig);

	WL_OPAQUE(r);
	handled = handled + 1 + (r & 0);
}

WL_NOINLINE unsigned long wait_loop(time_t deadline)
{
	unsigned long x = 1;

	while (time(NULL) < deadline)
		x = wl_spin_n(x, 100000);
	return x;
}

WL_NOINLINE unsigned long wait_outer(time_t deadline)
{
	unsigned long r = wait_loop(deadline);

	WL_OPAQUE(r);
	return r ^ handled;
}

int main(int argc, char **argv)
{
	time_t deadline = wl_deadline(argc, argv);
	struct itimerval every = {.it_interval = {0, 5000}, .it_value = {0, 5000}};
	struct sigaction sa;
	unsigned long r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigprof;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) || setitimer(ITIMER_PROF, &every, NULL)) {
		perror("signal_handler: timer");
		return 1;
	}
	wl_ready();
	r = wait_outer(deadline);
	printf("%lu\n", r & 1);
	return 0;
}
