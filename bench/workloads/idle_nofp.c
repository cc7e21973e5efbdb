// build: gcc -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -I tests/workloads
/*
 * nofp_chain.h's main -> a_01 -> ... -> a_20 -> leaf (GCC, no frame pointers),
 * but the leaf first sleeps until SIGUSR1: an idle process, with its whole
 * chain on the stack, that wakes when the test says so and then spins for
 * SECONDS. Usage: idle_nofp SECONDS
 */
#include <signal.h>
#include <time.h>

static sigset_t wake_set;
static time_t started;

/* SIGUSR1 is blocked from the start, so a signal sent before the wait is kept. */
__attribute__((constructor)) static void block_wake(void)
{
	sigemptyset(&wake_set);
	sigaddset(&wake_set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &wake_set, NULL);
	started = time(NULL);
}

/* The spin's length is what main's deadline gave (SECONDS), counted from the wake. */
#define NOFP_LEAF_WAIT(deadline)                                                                   \
	do {                                                                                       \
		int sig_;                                                                          \
		time_t spin_ = (deadline) - started;                                               \
		while (sigwait(&wake_set, &sig_))                                                  \
			;                                                                          \
		(deadline) = time(NULL) + spin_;                                                   \
	} while (0)

#include "nofp_chain.h"
