// SPDX-License-Identifier: Apache-2.0
#include "cli/signals.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

volatile sig_atomic_t cli__stop_requests;

static volatile sig_atomic_t exit_on_second_signal;
static volatile sig_atomic_t backstop_s; /* 0: none */

/* Only async-signal-safe calls below: write, alarm, _exit. */
static void say(const char *msg)
{
	ssize_t r = write(STDERR_FILENO, msg, strlen(msg));

	(void)r;
}

static void on_stop_signal(int sig)
{
	/* The other stop signals are blocked while this runs (sa_mask): no lost count. */
	cli__stop_requests++;
	if (cli__stop_requests < 2) {
		/* Armed here, not by the main thread: that may be stuck (in a file). */
		if (backstop_s)
			alarm((unsigned int)backstop_s);
		return;
	}
	if (exit_on_second_signal) {
		say("omniprof: second stop signal: exiting without writing the outputs\n");
		_exit(128 + sig);
	}
	/* The agent's exit loop sees the count and stops flushing; bound it all the same. */
	if (backstop_s)
		alarm(2);
}

static void on_backstop(int sig)
{
	(void)sig;
	say("omniprof: the exit took longer than its deadline: exiting now, what was not "
	    "delivered is lost\n");
	_exit(1);
}

int cli__catch_stop_signals(bool exit_on_second)
{
	static const int stops[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa;

	exit_on_second_signal = exit_on_second;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaddset(&sa.sa_mask, stops[i]);
	/* No SA_RESTART: a blocking call returns EINTR and the loop looks at the count. */
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		if (sigaction(stops[i], &sa, NULL))
			return -errno;
	sa.sa_handler = on_backstop;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL))
		return -errno;
	/* A receiver that closes its end must not kill the agent. */
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL))
		return -errno;
	return 0;
}

void cli__exit_backstop(unsigned int seconds)
{
	backstop_s = (sig_atomic_t)(seconds ? seconds : 1);
	/* A signal that came before this was set armed nothing. */
	if (cli__stop_requests == 1)
		alarm(seconds ? seconds : 1);
	else if (cli__stop_requests >= 2)
		alarm(2);
}
