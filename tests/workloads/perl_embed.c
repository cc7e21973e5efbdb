// build: gcc -O2 -g -fno-omit-frame-pointer -D_REENTRANT -D_GNU_SOURCE -fwrapv -fno-strict-aliasing -D_FILE_OFFSET_BITS=64 -I/usr/lib/x86_64-linux-gnu/perl/5.36/CORE -Wl,--no-as-needed -l:libperl.so.5.36 -lpthread
/*
 * A program that embeds libperl (Debian's libperl.so.5.36) and runs one
 * interpreter on each of three threads of its own, none on the main
 * thread: perl_embed SCRIPT SECONDS. Thread i runs SCRIPT SECONDS MODE
 * with MODE chain, anon and eval (tests/workloads/perl/perl_chain.pl), so
 * each thread has a chain of its own. libperl's thread-local interpreter
 * pointer has no fixed offset from the thread pointer, and PL_curinterp is
 * the first interpreter only: a thread's interpreter is found through
 * PL_thr_key, the pthread key perl sets on each thread that runs one.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <EXTERN.h>
#include <perl.h>

#define THREADS 3

static const char *script, *seconds;
static const char *const modes[THREADS] = {"chain", "anon", "eval"};
static pthread_mutex_t construct_lock = PTHREAD_MUTEX_INITIALIZER;

static void *run_interpreter(void *arg)
{
	char *argv[] = {"perl", (char *)script, (char *)seconds, (char *)arg, NULL};
	PerlInterpreter *my_perl;
	int rc = 1;

	/* perl_alloc() and perl_construct() touch process-wide state. */
	pthread_mutex_lock(&construct_lock);
	my_perl = perl_alloc();
	if (my_perl) {
		PERL_SET_CONTEXT(my_perl);
		perl_construct(my_perl);
		PL_exit_flags |= PERL_EXIT_DESTRUCT_END;
	}
	pthread_mutex_unlock(&construct_lock);
	if (!my_perl)
		return (void *)1;
	if (!perl_parse(my_perl, NULL, 4, argv, NULL))
		rc = perl_run(my_perl);
	perl_destruct(my_perl);
	perl_free(my_perl);
	return (void *)(long)rc;
}

int main(int argc, char **argv, char **env)
{
	pthread_t t[THREADS];
	int rc = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s SCRIPT SECONDS\n", argv[0]);
		return 2;
	}
	script = argv[1];
	seconds = argv[2];
	/* Each interpreter says "ready"; the reader may have gone after the first. */
	signal(SIGPIPE, SIG_IGN);
	PERL_SYS_INIT3(&argc, &argv, &env);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, run_interpreter, (void *)modes[i]))
			return 1;
	for (int i = 0; i < THREADS; i++) {
		void *r;

		pthread_join(t[i], &r);
		rc |= r != NULL;
	}
	PERL_SYS_TERM();
	return rc;
}
