build-m/tests/e2e/test_agent: tests/e2e/test_agent.c tests/lib/testutil.h
tests/lib/testutil.h:
