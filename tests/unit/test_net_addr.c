// SPDX-License-Identifier: Apache-2.0
/*
 * Listen addresses (util/net_addr.c): IPv4, localhost and bracketed IPv6
 * are taken with their port; anything else is refused with a reason; only
 * loopback addresses count as loopback (serve refuses the others without a
 * token).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/net_addr.h"

static void test_accepted(void **state)
{
	static const struct {
		const char *in;
		int family;
		uint16_t port;
		bool loopback;
	} cases[] = {
	    {"127.0.0.1:7070", AF_INET, 7070, true},
	    {"localhost:4317", AF_INET, 4317, true},
	    {"127.8.9.10:1", AF_INET, 1, true},
	    {"0.0.0.0:7070", AF_INET, 7070, false},
	    {"10.1.2.3:65535", AF_INET, 65535, false},
	    {"[::1]:7070", AF_INET6, 7070, true},
	    {"[::ffff:127.0.0.1]:80", AF_INET6, 80, true},
	    {"[::]:7070", AF_INET6, 7070, false},
	    {"[fe80::1]:9", AF_INET6, 9, false},
	};
	struct sockaddr_storage ss;
	socklen_t sl = 0;
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(net_addr__parse(cases[i].in, false, &ss, &sl, &why), 0);
		assert_null(why);
		assert_int_equal(ss.ss_family, cases[i].family);
		assert_int_equal(sl, cases[i].family == AF_INET6 ? sizeof(struct sockaddr_in6)
								 : sizeof(struct sockaddr_in));
		assert_int_equal(net_addr__port(&ss), cases[i].port);
		assert_int_equal(net_addr__is_loopback(&ss), cases[i].loopback);
	}
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
	    "",
	    "7070",
	    ":7070",
	    "127.0.0.1",
	    "127.0.0.1:",
	    "127.0.0.1:x",
	    "127.0.0.1:65536",
	    "127.0.0.1:-1",
	    "::1:7070",
	    "[::1]7070",
	    "[::1:7070",
	    "[]:7070",
	    "[127.0.0.1]:80",
	    "example.com:80",
	    "1.2.3.4.5:80",
	    "[0123456789012345678901234567890123456789012345678901234567890123456789]:1",
	};
	struct sockaddr_storage ss;
	socklen_t sl;
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_int_not_equal(net_addr__parse(bad[i], false, &ss, &sl, &why), 0);
		assert_non_null(why);
	}
}

static void test_port0(void **state)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	const char *why;

	(void)state;
	/* Port 0 lets the kernel pick: only where the caller says it is meaningful. */
	assert_int_not_equal(net_addr__parse("127.0.0.1:0", false, &ss, &sl, &why), 0);
	assert_int_equal(net_addr__parse("127.0.0.1:0", true, &ss, &sl, &why), 0);
	assert_int_equal(net_addr__port(&ss), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_accepted),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_port0),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
