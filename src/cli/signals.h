/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stop signals of `record` and `agent`: SIGINT, SIGTERM and SIGHUP all ask
 * for a clean stop (the outputs are written, the queues flushed). A second
 * one cuts that exit short: record exits at once (status 128 + signal),
 * the agent stops flushing (cli__exit_flush_cut_short()) and a backstop
 * timer bounds the rest. Handlers only touch a sig_atomic_t and call
 * async-signal-safe functions (write, alarm, _exit).
 */
#ifndef OMNIPROF_CLI_SIGNALS_H
#define OMNIPROF_CLI_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

/* Stop signals received so far (0: keep running). */
extern volatile sig_atomic_t cli__stop_requests;

/*
 * Installs the handlers (sigaction) and ignores SIGPIPE. exit_on_second:
 * a second stop signal exits at once with 128 + its number; otherwise it is
 * only counted, and an exit bound set with cli__exit_backstop() is
 * brought forward to 2 s. 0 or -errno.
 */
int cli__catch_stop_signals(bool exit_on_second);

/*
 * A bound on the exit: from the first stop signal (from now if one came
 * already) the process exits (status 1, one line on stderr) if it is still
 * running after seconds, 2 s after a second signal; for an exit whose parts
 * cannot all be interrupted (the last interval's build, a stuck main thread).
 */
void cli__exit_backstop(unsigned int seconds);

#endif
