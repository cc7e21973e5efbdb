// SPDX-License-Identifier: Apache-2.0
/*
 * The OpenTelemetry conventions of the agent's settings: the k=v lists of
 * OTEL_EXPORTER_OTLP_HEADERS / OTEL_RESOURCE_ATTRIBUTES (trimmed, values
 * percent-decoded, a bad entry refuses the whole list), booleans, the OTLP
 * request URL from the generic endpoint (signal path appended for HTTP) and
 * the signal's own one (used as it is), and the URL check done at start.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/otel_env.h"
#include "export/destination.h"
#include "export/metrics_server.h"

static void test_kv_list(void **state)
{
	struct otel_kv *kv;
	const char *why;
	size_t n;

	(void)state;
	assert_int_equal(otel__parse_kv_list(" api-key = secret%20value , ,Authorization=Basic%20"
					     "dTpw%3D%3D,empty=,deployment.environment=prod",
					     &kv, &n, &why),
			 0);
	assert_int_equal(n, 4);
	assert_string_equal(kv[0].key, "api-key");
	assert_string_equal(kv[0].value, "secret value");
	assert_string_equal(kv[1].key, "Authorization");
	assert_string_equal(kv[1].value, "Basic dTpw==");
	assert_string_equal(kv[2].key, "empty");
	assert_string_equal(kv[2].value, "");
	assert_string_equal(kv[3].value, "prod");
	otel__kv_free(kv, n);

	assert_int_equal(otel__parse_kv_list("", &kv, &n, &why), 0);
	assert_int_equal(n, 0);
	otel__kv_free(kv, n);

	assert_int_equal(otel__parse_kv_list("a=1,justakey,b=2", &kv, &n, &why), -EINVAL);
	assert_non_null(why);
	assert_null(kv);
	assert_int_equal(otel__parse_kv_list("a=%zz", &kv, &n, &why), -EINVAL);
	assert_int_equal(otel__parse_kv_list("a=%2", &kv, &n, &why), -EINVAL);
	assert_int_equal(otel__parse_kv_list("a=x%00y", &kv, &n, &why), -EINVAL);
	assert_int_equal(otel__parse_kv_list(" =v", &kv, &n, &why), -EINVAL);
}

static void test_bool(void **state)
{
	(void)state;
	assert_true(otel__bool("true"));
	assert_true(otel__bool("TRUE"));
	assert_false(otel__bool("false"));
	assert_false(otel__bool("1")); /* the spec's booleans are the word only */
	assert_false(otel__bool(NULL));
}

static char *url_of(const char *endpoint, enum transport_kind protocol, bool exact, bool insecure)
{
	struct destination_opts o = {
	    .kind = DESTINATION_OTLP,
	    .endpoint = endpoint,
	    .protocol = protocol,
	    .exact_url = exact,
	    .insecure = insecure,
	};
	char *url = destination__url(&o);

	assert_non_null(url);
	return url;
}

static void expect_url(const char *endpoint, enum transport_kind protocol, bool exact,
		       bool insecure, const char *want)
{
	char *url = url_of(endpoint, protocol, exact, insecure);

	assert_string_equal(url, want);
	free(url);
}

static void test_endpoint_urls(void **state)
{
	(void)state;
	/* OTEL_EXPORTER_OTLP_ENDPOINT over HTTP: the signal's path appended. */
	expect_url("http://collector:4318/", TRANSPORT_HTTP, false, false,
		   "http://collector:4318" OTLP_HTTP_PATH);
	expect_url("https://otel.example.com/base", TRANSPORT_HTTP, false, false,
		   "https://otel.example.com/base" OTLP_HTTP_PATH);
	/* OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT: as it is. */
	expect_url("http://collector:4318/custom/profiles", TRANSPORT_HTTP, true, false,
		   "http://collector:4318/custom/profiles");
	/* gRPC: the method's path, whichever variable. */
	expect_url("http://collector:4317", TRANSPORT_GRPC, true, false,
		   "http://collector:4317" OTLP_GRPC_PATH);
	/* HOST:PORT: the scheme from --insecure / OTEL_EXPORTER_OTLP_INSECURE. */
	expect_url("collector:4317", TRANSPORT_GRPC, false, true,
		   "http://collector:4317" OTLP_GRPC_PATH);
	expect_url("collector", TRANSPORT_HTTP, false, false,
		   "https://collector:" OTLP_HTTP_DEFAULT_PORT OTLP_HTTP_PATH);
}

static void test_url_check(void **state)
{
	static const char *const good[] = {
	    "http://collector:4318/v1development/profiles",
	    "https://[::1]:4317/x",
	    "http://10.0.0.1",
	};
	static const char *const bad[] = {
	    "ftp://collector:21/", "http://",	     "http://host:99999/", "http://ho st/",
	    "http://[::1/",	   "collector:4317", "http://host:0/",
	};
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(destination__check_url(good[i], &why), 0);
		assert_null(why);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(destination__check_url(bad[i], &why), -EINVAL);
		assert_non_null(why);
	}
}

/* --metrics-listen: an address literal and a port, refused at start otherwise. */
static void test_metrics_address(void **state)
{
	static const char *const good[] = {"127.0.0.1:9464", "0.0.0.0:1", "[::1]:65535",
					   "localhost:9464"};
	static const char *const bad[] = {
	    "9464",	":9464",	   "127.0.0.1:", "127.0.0.1:0",	 "127.0.0.1:65536",
	    "1.2.3:80", "host.example:80", "[::1:80",	 "127.0.0.1:80x"};
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(metrics_server__check_address(good[i], &why), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(metrics_server__check_address(bad[i], &why), -EINVAL);
		assert_non_null(why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kv_list),	    cmocka_unit_test(test_bool),
	    cmocka_unit_test(test_endpoint_urls),   cmocka_unit_test(test_url_check),
	    cmocka_unit_test(test_metrics_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
