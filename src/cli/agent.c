// SPDX-License-Identifier: Apache-2.0
/*
 * `omniprof agent`: sample continuously and, every interval, hand that
 * interval's profile to each destination's export queue (OTLP over gRPC or
 * HTTP, Pyroscope). The sampling thread only builds and encodes the profile;
 * the network belongs to the queues' threads, so a slow or absent backend
 * never delays reading the ring buffer. SIGINT, SIGTERM and SIGHUP stop
 * sampling, send the last partial interval and flush the queues; the whole
 * exit (last build, encode, deliveries) ends within --flush-timeout, and a
 * second signal ends the flush at once.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <strings.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cli/otel_env.h"
#include "cli/self_metrics.h"
#include "engine/session.h"
#include "cli/signals.h"
#include "export/destination.h"
#include "export/metrics_server.h"
#include "export/transport.h"
#include "proc/process_labels.h"
#include "profile/profile.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/memory.h"
#include "util/safe_open.h"

#define DEFAULT_INTERVAL_S 5
#define DEFAULT_QUEUE_SIZE 60 /* intervals: 5 minutes at the default interval */
#define DEFAULT_FLUSH_S	   10
#define MAX_HEADERS	   32
/* Per interval: 8 MiB of event times at most, then samples are only counted. */
#define MAX_TIMESTAMPS (1u << 20)
/* --off-cpu's default share of context switches recorded: see docs/architecture.md, "Off-CPU",
 * for its cost. */
#define AGENT_OFFCPU_DEFAULT_P 0.01

struct agent_opts {
	struct cli_common common; /* -F, -p, --no-kernel, symbols, -v */
	double interval_s;
	const char *otlp_endpoint;
	enum transport_kind otlp_protocol;
	bool insecure;
	const char *ca_file, *cert_file, *key_file;
	char *headers[MAX_HEADERS]; /* "Key: value", owned */
	size_t n_headers;
	const char *pyroscope_url;
	const char *pyroscope_auth; /* user:password */
	const char *service_name;
	size_t queue_size;
	double flush_s;
	bool otlp_exact_url;		/* OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT: used as is */
	char otlp_endpoint_origin[256]; /* where it came from, for messages */
	char pyroscope_url_origin[256];
	long otlp_timeout_ms; /* 0: the transport's default */
	bool otlp_no_compression;
	/* Resource attributes (key, value pairs, owned); service.name kept apart. */
	char *attrs[2 * OTLP_MAX_EXTRA_ATTRS];
	size_t n_attrs;
	char *attr_service_name; /* owned */
	enum log_format log_format;
	const char *metrics_listen;
	uint64_t offcpu_threshold; /* --off-cpu: P * 2^32; 0: off */
};

static int add_header(struct agent_opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	const char *bad = strpbrk(arg, "\r\n:");

	if (!eq || eq == arg || (bad && bad < eq)) {
		pr_err("--header: '%s' is not KEY=VALUE", arg);
		return -EINVAL;
	}
	if (strpbrk(eq, "\r\n")) {
		pr_err("--header: a value cannot span lines");
		return -EINVAL;
	}
	/* The same name again (from a higher source, or repeated): the last value wins. */
	for (size_t i = 0; i < o->n_headers; i++) {
		if (!strncasecmp(o->headers[i], arg, (size_t)(eq - arg)) &&
		    o->headers[i][eq - arg] == ':') {
			free(o->headers[i]);
			o->headers[i] = o->headers[--o->n_headers];
			break;
		}
	}
	if (o->n_headers == MAX_HEADERS) {
		pr_err("--header: at most %d headers", MAX_HEADERS);
		return -E2BIG;
	}
	if (asprintf(&o->headers[o->n_headers], "%.*s: %s", (int)(eq - arg), arg, eq + 1) < 0)
		return -ENOMEM;
	o->n_headers++;
	return 0;
}

/* "k1=v1,k2=v2" (OTEL_EXPORTER_OTLP_HEADERS' form, values percent-decoded): each added. */
static int add_header_list(struct agent_opts *o, const char *list)
{
	struct otel_kv *kv;
	const char *why;
	size_t n;
	int err = otel__parse_kv_list(list, &kv, &n, &why);

	if (err) {
		pr_err("headers '%s': %s", list, why ? why : strerror(-err));
		return err;
	}
	for (size_t i = 0; i < n && !err; i++) {
		char *h;

		if (asprintf(&h, "%s=%s", kv[i].key, kv[i].value) < 0) {
			err = -ENOMEM;
			break;
		}
		err = add_header(o, h);
		free(h);
	}
	otel__kv_free(kv, n);
	return err;
}

/* "k1=v1,k2=v2" resource attributes: merged by key, the last value winning;
 * service.name becomes the service name. */
static int add_attributes(struct agent_opts *o, const char *list)
{
	struct otel_kv *kv;
	const char *why;
	size_t n;
	int err = otel__parse_kv_list(list, &kv, &n, &why);

	if (err) {
		pr_err("resource attributes '%s': %s", list, why ? why : strerror(-err));
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		size_t j;

		if (!strcmp(kv[i].key, "service.name")) {
			free(o->attr_service_name);
			o->attr_service_name = kv[i].value;
			o->service_name = kv[i].value;
			kv[i].value = NULL;
			continue;
		}
		for (j = 0; j < o->n_attrs; j++)
			if (!strcmp(o->attrs[2 * j], kv[i].key))
				break;
		if (j == OTLP_MAX_EXTRA_ATTRS) {
			pr_err("resource attributes: at most %d", OTLP_MAX_EXTRA_ATTRS);
			err = -E2BIG;
			break;
		}
		if (j == o->n_attrs) {
			o->attrs[2 * j] = kv[i].key;
			kv[i].key = NULL;
			o->n_attrs++;
		} else {
			free(o->attrs[2 * j + 1]);
		}
		o->attrs[2 * j + 1] = kv[i].value;
		kv[i].value = NULL;
	}
	otel__kv_free(kv, n);
	return err;
}

static int parse_seconds(const char *flag, const char *arg, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (*end || !(v > 0) || v > 86400) {
		pr_err("%s: '%s' is not a number of seconds between 0 and 86400", flag, arg);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

#define STR_(x) #x
#define STR(x)	STR_(x)

enum {
	OPT_OTLP_ENDPOINT = CLI_KEY_OWN,
	OPT_OTLP_PROTOCOL,
	OPT_INSECURE,
	OPT_CA_FILE,
	OPT_CERT_FILE,
	OPT_KEY_FILE,
	OPT_HEADER,
	OPT_PYROSCOPE_URL,
	OPT_PYROSCOPE_AUTH,
	OPT_SERVICE_NAME,
	OPT_QUEUE_SIZE,
	OPT_FLUSH_TIMEOUT,
	OPT_OTLP_TIMEOUT,
	OPT_OTLP_COMPRESSION,
	OPT_RESOURCE_ATTRIBUTES,
	OPT_LOG_FORMAT,
	OPT_METRICS_LISTEN,
	/* Only from the environment (agent_env): */
	OPT_OTLP_ENDPOINT_EXACT,
	OPT_HEADER_LIST,
	OPT_OFF_CPU,
};

static const struct cli_option agent_options[] = {
    {.key = 'i',
     .name = "interval",
     .arg = "SECONDS",
     .help = "report every SECONDS (default " STR(DEFAULT_INTERVAL_S) ")"},
    {.key = CLI_KEY_FREQUENCY},
    {.key = CLI_KEY_PID, .help = "only this process (repeatable, or comma-separated)"},
    {.key = CLI_KEY_NO_KERNEL},
    CLI_TARGET_OPTIONS,
    {.key = OPT_OTLP_ENDPOINT,
     .name = "otlp-endpoint",
     .arg = "H:P",
     .help = "send OTLP profiles (gRPC default port " OTLP_GRPC_DEFAULT_PORT ",\n"
	     "HTTP " OTLP_HTTP_DEFAULT_PORT ")"},
    {.key = OPT_OTLP_PROTOCOL,
     .name = "otlp-protocol",
     .arg = "P",
     .help = "grpc (default) or http (also http/protobuf)"},
    {.key = OPT_OTLP_TIMEOUT,
     .name = "otlp-timeout",
     .arg = "MS",
     .help = "bound of one request in milliseconds (default\n10000)"},
    {.key = OPT_OTLP_COMPRESSION,
     .name = "otlp-compression",
     .arg = "C",
     .help = "gzip (default) or none"},
    {.key = OPT_INSECURE, .name = "insecure", .help = "plain text instead of TLS"},
    {.key = OPT_CA_FILE,
     .name = "ca-file",
     .arg = "FILE",
     .help = "trust this CA bundle instead of the system's"},
    {.key = OPT_CERT_FILE,
     .name = "cert-file",
     .arg = "FILE",
     .help = "client certificate (mutual TLS)"},
    {.key = OPT_KEY_FILE, .name = "key-file", .arg = "FILE", .help = "client key"},
    {.key = OPT_HEADER,
     .name = "header",
     .arg = "KEY=VALUE",
     .help = "add a request header, e.g. for auth (repeatable)"},
    {.key = OPT_PYROSCOPE_URL,
     .name = "pyroscope-url",
     .arg = "URL",
     .help = "push pprof to a Pyroscope server (http://host:4040)"},
    {.key = OPT_PYROSCOPE_AUTH,
     .name = "pyroscope-basic-auth",
     .arg = "USER:PASSWORD",
     .help = "(or OMNIPROF_PYROSCOPE_BASIC_AUTH in the\nenvironment)"},
    {.key = OPT_SERVICE_NAME,
     .name = "service-name",
     .arg = "NAME",
     .help = "service.name of every process (default: the\ncontainer's name when known, else the "
	     "executable's\nname)"},
    {.key = OPT_RESOURCE_ATTRIBUTES,
     .name = "resource-attributes",
     .arg = "K=V,...",
     .help = "more attributes of every resource (values\npercent-encoded, as in "
	     "OTEL_RESOURCE_ATTRIBUTES)"},
    {.key = OPT_QUEUE_SIZE,
     .name = "queue-size",
     .arg = "N",
     .help = "intervals kept per destination while it is down\n(default " STR(
	 DEFAULT_QUEUE_SIZE) "; then the oldest are dropped)"},
    {.key = OPT_FLUSH_TIMEOUT,
     .name = "flush-timeout",
     .arg = "SECONDS",
     .help = "bound of the exit after a stop signal: last interval\nand delivery of what is "
	     "queued (default " STR(DEFAULT_FLUSH_S) ")"},
    {.key = OPT_OFF_CPU,
     .name = "off-cpu",
     .arg = "P",
     .optional = true,
     .help = "also send where threads wait (an off_cpu profile in\nnanoseconds): each switch "
	     "away from the CPU recorded\nwith probability P (default " STR(
		 AGENT_OFFCPU_DEFAULT_P) ", see docs/architecture.md)"},
    {.key = CLI_KEY_DEMANGLE},
    {.key = CLI_KEY_DEBUG_DIR},
    {.key = CLI_KEY_NO_DEBUGINFOD,
     .help = "accepted as for record; the agent never asks\ndebuginfod servers"},
    {.key = CLI_KEY_SYMBOL_CACHE_MB,
     .help = "memory bound of the symbol cache (default %s; more\nsaves reloading symbols each "
	     "interval)"},
    {.key = CLI_KEY_TABLE_CACHE},
    {.key = OPT_METRICS_LISTEN,
     .name = "metrics-listen",
     .arg = "ADDR:PORT",
     .help = "serve the agent's own metrics (Prometheus text)\nat http://ADDR:PORT/metrics"},
    {.key = OPT_LOG_FORMAT,
     .name = "log-format",
     .arg = "F",
     .help = "text (default: UTC time, level, message) or json\n(one object per line)"},
    {.key = CLI_KEY_CONFIG},
    {.key = CLI_KEY_VERBOSE, .help = "one line per interval (-vv: debug output)"},
};

static int agent_option(void *ctx, int key, const char *arg)
{
	struct agent_opts *o = ctx;
	char *end;
	long v;

	switch (key) {
	case 'i':
		return parse_seconds("--interval", arg, &o->interval_s);
	case OPT_OTLP_ENDPOINT:
	case OPT_OTLP_ENDPOINT_EXACT:
		o->otlp_endpoint = arg;
		o->otlp_exact_url = key == OPT_OTLP_ENDPOINT_EXACT;
		snprintf(o->otlp_endpoint_origin, sizeof(o->otlp_endpoint_origin), "%s",
			 *cli__origin() ? cli__origin() : "--otlp-endpoint");
		return 0;
	case OPT_OTLP_PROTOCOL:
		if (!strcmp(arg, "grpc")) {
			o->otlp_protocol = TRANSPORT_GRPC;
		} else if (!strcmp(arg, "http") || !strcmp(arg, "http/protobuf")) {
			o->otlp_protocol = TRANSPORT_HTTP;
		} else {
			pr_err("--otlp-protocol: '%s' is neither grpc nor http/protobuf%s", arg,
			       strcmp(arg, "http/json") ? "" : " (http/json is not supported)");
			return -EINVAL;
		}
		return 0;
	case OPT_OTLP_TIMEOUT:
		v = strtol(arg, &end, 10);
		if (*end || v < 1 || v > 3600000) {
			pr_err(
			    "--otlp-timeout: '%s' is not a number of milliseconds (1 to 3600000)",
			    arg);
			return -EINVAL;
		}
		o->otlp_timeout_ms = v;
		return 0;
	case OPT_OTLP_COMPRESSION:
		if (strcmp(arg, "gzip") && strcmp(arg, "none")) {
			pr_err("--otlp-compression: '%s' is neither gzip nor none", arg);
			return -EINVAL;
		}
		o->otlp_no_compression = !strcmp(arg, "none");
		return 0;
	case OPT_RESOURCE_ATTRIBUTES:
		return add_attributes(o, arg);
	case OPT_HEADER_LIST:
		return add_header_list(o, arg);
	case OPT_LOG_FORMAT:
		if (log__parse_format(arg, &o->log_format)) {
			pr_err("--log-format: '%s' is neither text nor json", arg);
			return -EINVAL;
		}
		log__set_format(o->log_format);
		return 0;
	case OPT_METRICS_LISTEN:
		o->metrics_listen = arg;
		return 0;
	case OPT_INSECURE:
		o->insecure = cli__flag_on(arg);
		return 0;
	case OPT_CA_FILE:
		o->ca_file = arg;
		return 0;
	case OPT_CERT_FILE:
		o->cert_file = arg;
		return 0;
	case OPT_KEY_FILE:
		o->key_file = arg;
		return 0;
	case OPT_HEADER:
		return add_header(o, arg) ? -EINVAL : 0;
	case OPT_PYROSCOPE_URL:
		o->pyroscope_url = arg;
		snprintf(o->pyroscope_url_origin, sizeof(o->pyroscope_url_origin), "%s",
			 *cli__origin() ? cli__origin() : "--pyroscope-url");
		return 0;
	case OPT_PYROSCOPE_AUTH:
		o->pyroscope_auth = arg;
		return 0;
	case OPT_SERVICE_NAME:
		o->service_name = arg;
		return 0;
	case OPT_QUEUE_SIZE:
		v = strtol(arg, &end, 10);
		if (*end || v < 1 || v > 100000) {
			pr_err("--queue-size: '%s' is not a number between 1 and 100000", arg);
			return -EINVAL;
		}
		o->queue_size = (size_t)v;
		return 0;
	case OPT_OFF_CPU:
		return cli__parse_offcpu(arg, AGENT_OFFCPU_DEFAULT_P, &o->offcpu_threshold);
	case OPT_FLUSH_TIMEOUT:
		return parse_seconds("--flush-timeout", arg, &o->flush_s);
	}
	return -EINVAL;
}

/*
 * The OpenTelemetry SDK's environment variables (the OTLP exporter's and the
 * resource's), between the config file and the command line. For each
 * setting the generic variable comes first and the profiles signal's own
 * one overrides it. An empty variable counts as unset. A list the spec's
 * rules refuse (headers, resource attributes) is ignored with a warning, as
 * the spec asks; any other refused value stops the start like a bad flag.
 */
static int agent_env(const struct cli_command *cmd, struct cli_common *c, void *ctx)
{
	static const struct {
		const char *name;
		int key;
	} vars[] = {
	    {"OTEL_RESOURCE_ATTRIBUTES", OPT_RESOURCE_ATTRIBUTES},
	    {"OTEL_SERVICE_NAME", OPT_SERVICE_NAME},
	    {"OTEL_EXPORTER_OTLP_ENDPOINT", OPT_OTLP_ENDPOINT},
	    {"OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", OPT_OTLP_ENDPOINT_EXACT},
	    {"OTEL_EXPORTER_OTLP_PROTOCOL", OPT_OTLP_PROTOCOL},
	    {"OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL", OPT_OTLP_PROTOCOL},
	    {"OTEL_EXPORTER_OTLP_HEADERS", OPT_HEADER_LIST},
	    {"OTEL_EXPORTER_OTLP_PROFILES_HEADERS", OPT_HEADER_LIST},
	    {"OTEL_EXPORTER_OTLP_INSECURE", OPT_INSECURE},
	    {"OTEL_EXPORTER_OTLP_PROFILES_INSECURE", OPT_INSECURE},
	    {"OTEL_EXPORTER_OTLP_CERTIFICATE", OPT_CA_FILE},
	    {"OTEL_EXPORTER_OTLP_PROFILES_CERTIFICATE", OPT_CA_FILE},
	    {"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", OPT_CERT_FILE},
	    {"OTEL_EXPORTER_OTLP_PROFILES_CLIENT_CERTIFICATE", OPT_CERT_FILE},
	    {"OTEL_EXPORTER_OTLP_CLIENT_KEY", OPT_KEY_FILE},
	    {"OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY", OPT_KEY_FILE},
	    {"OTEL_EXPORTER_OTLP_TIMEOUT", OPT_OTLP_TIMEOUT},
	    {"OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", OPT_OTLP_TIMEOUT},
	    {"OTEL_EXPORTER_OTLP_COMPRESSION", OPT_OTLP_COMPRESSION},
	    {"OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION", OPT_OTLP_COMPRESSION},
	};
	int err;

	(void)ctx;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i].name);

		if (!v || !*v)
			continue;
		if (vars[i].key == OPT_RESOURCE_ATTRIBUTES || vars[i].key == OPT_HEADER_LIST) {
			struct otel_kv *kv;
			const char *why;
			size_t n;

			err = otel__parse_kv_list(v, &kv, &n, &why);
			otel__kv_free(kv, n);
			if (err == -EINVAL) {
				pr_warn("%s ignored: %s", vars[i].name, why);
				continue;
			}
		}
		if (vars[i].key == OPT_INSECURE)
			v = otel__bool(v) ? "true" : "false";
		err = cli__set(cmd, c, ctx, vars[i].key, v, vars[i].name);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The endpoints as they will be used, checked now: a malformed URL is a
 * start-up error, not an export failing every interval. A scheme decides
 * TLS (http: plain, https: TLS, over --insecure) as the OTel spec says.
 */
static int check_endpoints(struct agent_opts *o)
{
	const char *why;
	char *url;
	int err = 0;

	if (o->otlp_endpoint) {
		struct destination_opts d = {
		    .kind = DESTINATION_OTLP,
		    .endpoint = o->otlp_endpoint,
		    .protocol = o->otlp_protocol,
		    .insecure = o->insecure,
		    .exact_url = o->otlp_exact_url,
		};

		if (!strncasecmp(o->otlp_endpoint, "http://", 7))
			o->insecure = true;
		else if (!strncasecmp(o->otlp_endpoint, "https://", 8))
			o->insecure = false;
		url = destination__url(&d);
		if (!url)
			return -ENOMEM;
		err = destination__check_url(url, &why);
		if (err)
			pr_err("OTLP endpoint '%s' (%s) is not usable: %s", o->otlp_endpoint,
			       o->otlp_endpoint_origin, why);
		free(url);
		if (err)
			return err;
	}
	if (o->pyroscope_url) {
		if (!strstr(o->pyroscope_url, "://")) {
			pr_err(
			    "Pyroscope URL '%s' (%s) is not usable: not a URL (http://HOST:PORT)",
			    o->pyroscope_url, o->pyroscope_url_origin);
			return -EINVAL;
		}
		err = destination__check_url(o->pyroscope_url, &why);
		if (err) {
			pr_err("Pyroscope URL '%s' (%s) is not usable: %s", o->pyroscope_url,
			       o->pyroscope_url_origin, why);
			return err;
		}
	}
	if (o->metrics_listen && metrics_server__check_address(o->metrics_listen, &why)) {
		pr_err("--metrics-listen '%s' is not usable: %s", o->metrics_listen, why);
		return -EINVAL;
	}
	return 0;
}

static const struct cli_command agent_command = {
    .name = "agent",
    .synopsis = "[--interval SECONDS] [-F HZ] [-p PID]... [--no-kernel]\n"
		"[--otlp-endpoint HOST:PORT [--otlp-protocol grpc|http]]\n"
		"[--pyroscope-url URL] [--config FILE] [options]",
    .footer = "Also read: OTEL_EXPORTER_OTLP_[PROFILES_]{ENDPOINT,PROTOCOL,HEADERS,\n"
	      "INSECURE,CERTIFICATE,CLIENT_CERTIFICATE,CLIENT_KEY,TIMEOUT,COMPRESSION},\n"
	      "OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES. Precedence: command line,\n"
	      "then environment, then --config file.",
    .options = agent_options,
    .n_options = sizeof(agent_options) / sizeof(agent_options[0]),
    .own = agent_option,
    .env = agent_env,
};

static int parse_args(int argc, char **argv, struct agent_opts *o)
{
	int first_arg, err;

	/* As before the shared table: the agent never asks debuginfod servers. */
	cli_common__init(&o->common, false);
	o->interval_s = DEFAULT_INTERVAL_S;
	o->otlp_protocol = TRANSPORT_GRPC;
	o->queue_size = DEFAULT_QUEUE_SIZE;
	o->flush_s = DEFAULT_FLUSH_S;
	o->pyroscope_auth = getenv("OMNIPROF_PYROSCOPE_BASIC_AUTH");
	/* A long-running service's log: timestamps and levels (--log-format json: objects). */
	o->log_format = LOG_FORMAT_TEXT;
	log__set_format(o->log_format);
	err = cli__parse(&agent_command, argc, argv, &o->common, o, &first_arg);
	if (err)
		return err;
	if (first_arg < argc) {
		pr_err("unexpected argument '%s'", argv[first_arg]);
		cli__usage(&agent_command, stderr);
		return -EINVAL;
	}
	if (!o->otlp_endpoint && !o->pyroscope_url) {
		pr_err("nowhere to send profiles: give --otlp-endpoint and/or --pyroscope-url");
		return -EINVAL;
	}
	if ((o->cert_file != NULL) != (o->key_file != NULL)) {
		pr_err("--cert-file and --key-file go together");
		return -EINVAL;
	}
	return check_endpoints(o);
}

struct agent {
	struct agent_opts *o;
	struct session ss;
	struct label_cache labels;
	struct destination otlp, pyroscope;
	uint64_t intervals;
	struct metrics_server *metrics; /* --metrics-listen, or NULL */
	uint64_t samples_total;		/* in the profiles built so far */
	uint64_t intervals_lost;	/* profiles that could not be built or encoded */
};

static int describe_process(void *ctx, uint32_t pid, const char *comm, struct otlp_resource *out)
{
	struct agent *a = ctx;
	const struct process_labels *l = label_cache__get(&a->labels, pid, comm);

	if (!l)
		return -ENOMEM;
	out->service_name = l->service;
	out->host_name = a->labels.host_name;
	out->executable_name = l->exe_name;
	out->executable_path = l->exe_path;
	out->container_id = l->container_id;
	out->extra = (const char *const *)a->o->attrs;
	out->n_extra = a->o->n_attrs;
	return 0;
}

/*
 * Renders the metrics page from what the sampling thread sees now (BPF
 * counters, tables, the queues' counters) and publishes it. Called after
 * each interval: the page is at most one interval old; the RSS line is
 * added at each scrape.
 */
static void publish_metrics(struct agent *a)
{
	struct destination *ds[] = {&a->otlp, &a->pyroscope};
	static const char *const ds_names[] = {"otlp", "pyroscope"};
	char *text = NULL, name[160];
	size_t len = 0;
	FILE *f;

	if (!a->metrics)
		return;
	f = open_memstream(&text, &len);
	if (!f)
		return;
	self_metrics__write_sampling(f, &a->ss, a->samples_total,
				     "Samples in the profiles built so far.");
	self_metrics__head(f, "omniprof_intervals_total", "counter", "Intervals reported.");
	self_metrics__line(f, "omniprof_intervals_total", a->intervals);
	self_metrics__head(f, "omniprof_intervals_lost_total", "counter",
			   "Intervals whose profile could not be built or encoded.");
	self_metrics__line(f, "omniprof_intervals_lost_total", a->intervals_lost);
	{
		/* A family's samples together, as the format wants: one family at a time. */
		static const struct {
			const char *name, *type, *help, *reason;
		} fams[] = {
		    {"omniprof_export_queue_depth", "gauge",
		     "Intervals waiting to be sent, by destination.", NULL},
		    {"omniprof_export_sent_total", "counter",
		     "Intervals delivered, by destination.", NULL},
		    {"omniprof_export_send_failures_total", "counter",
		     "Failed sends (retried or refused), by destination.", NULL},
		    {"omniprof_export_dropped_total", "counter",
		     "Intervals dropped, by destination and reason.", "queue_full"},
		    {"omniprof_export_dropped_total", NULL, NULL, "rejected"},
		};
		struct export_queue_stats st[2] = {{0}};

		for (size_t i = 0; i < 2; i++)
			if (ds[i]->q)
				export_queue__stats(ds[i]->q, &st[i]);
		for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
			if (fams[k].type)
				self_metrics__head(f, fams[k].name, fams[k].type, fams[k].help);
			for (size_t i = 0; i < 2; i++) {
				uint64_t v = k == 0   ? st[i].queued
					     : k == 1 ? st[i].batches_sent
					     : k == 2 ? st[i].retries + st[i].dropped_rejected
					     : k == 3 ? st[i].dropped_full
						      : st[i].dropped_rejected;

				if (!ds[i]->q)
					continue;
				if (fams[k].reason)
					snprintf(name, sizeof(name),
						 "%s{destination=\"%s\",reason=\"%s\"}",
						 fams[k].name, ds_names[i], fams[k].reason);
				else
					snprintf(name, sizeof(name), "%s{destination=\"%s\"}",
						 fams[k].name, ds_names[i]);
				self_metrics__line(f, name, v);
			}
		}
	}
	if (!fclose(f))
		metrics_server__publish(a->metrics, text, len);
	free(text);
}

/* -v: what the tables hold now, so growth would show. */
static void log_tables(const struct agent *a)
{
	const struct session_tables *t = &a->ss.tables;
	struct safe_open_stats so;

	pr_info("cpus: %d sampled; hotplug: %llu events closed, %llu reopened; ring: %llu of %llu "
		"KiB held at most when read, window moved %llu times",
		a->ss.s ? sampler__n_cpus(a->ss.s) : 0, (unsigned long long)a->ss.hotplug.closed,
		(unsigned long long)a->ss.hotplug.reopened,
		(unsigned long long)a->ss.hotplug.ring_high_water >> 10,
		(unsigned long long)a->ss.hotplug.ring_bytes >> 10,
		(unsigned long long)a->ss.hotplug.ring_window_moves);
	pr_info("tables: %zu processes, %zu files, %zu runtime code objects, %zu symbol files "
		"(%zu KiB); forgotten so far: %llu processes, %llu files; traces dropped: %llu",
		t->processes, t->files, t->runtime_objects, a->ss.sym.cache.n_entries,
		a->ss.sym.cache.cost >> 10, (unsigned long long)t->processes_purged,
		(unsigned long long)t->files_evicted, (unsigned long long)t->traces_dropped);
	pr_info("unwind tables: %llu loaded, %.1f ms built, %llu read back from the disk cache "
		"(%.1f ms)",
		(unsigned long long)a->ss.um.stats.tables_loaded,
		(double)a->ss.um.stats.build_ns / 1e6,
		(unsigned long long)a->ss.um.stats.cache_reads,
		(double)a->ss.um.stats.cache_read_ns / 1e6);
	pr_info(
	    "symbols: %llu file loads (%.1f ms; %llu evictions, %llu unloaded after a pass, "
	    "%llu idle, %llu reloads %.1f ms), frames named %llu (%.1f ms), remembered %llu (%llu "
	    "resets)",
	    (unsigned long long)a->ss.sym.stats.files_loaded, (double)a->ss.sym.stats.load_ns / 1e6,
	    (unsigned long long)a->ss.sym.cache.stats.evictions,
	    (unsigned long long)a->ss.sym.stats.pass_unloads,
	    (unsigned long long)a->ss.sym.cache.stats.idle_drops,
	    (unsigned long long)a->ss.sym.stats.reloads, (double)a->ss.sym.stats.reload_ns / 1e6,
	    (unsigned long long)a->ss.sym.memo.stats.misses, (double)a->ss.sym.stats.miss_ns / 1e6,
	    (unsigned long long)a->ss.sym.memo.stats.hits,
	    (unsigned long long)a->ss.sym.memo.stats.resets);
	safe_open__stats(&so);
	pr_info("files of targets: %llu opened; refused: %llu symlink, %llu directory, %llu FIFO, "
		"%llu socket, %llu device, %llu pseudo fs, %llu over the size cap, %llu magic "
		"link, %llu not the mapped inode",
		(unsigned long long)so.opened, (unsigned long long)so.refused[SAFE_OPEN_R_SYMLINK],
		(unsigned long long)so.refused[SAFE_OPEN_R_DIR],
		(unsigned long long)so.refused[SAFE_OPEN_R_FIFO],
		(unsigned long long)so.refused[SAFE_OPEN_R_SOCKET],
		(unsigned long long)so.refused[SAFE_OPEN_R_DEVICE],
		(unsigned long long)so.refused[SAFE_OPEN_R_PSEUDO_FS],
		(unsigned long long)so.refused[SAFE_OPEN_R_TOO_BIG],
		(unsigned long long)so.refused[SAFE_OPEN_R_ESCAPE],
		(unsigned long long)so.refused[SAFE_OPEN_R_MISMATCH]);
}

/*
 * Queues the interval's profiles (the CPU one and, with --off-cpu, the
 * off-CPU one; those with samples) for every destination: one OTLP request
 * holding both, one Pyroscope batch of a push per type.
 */
static void send_profiles(struct agent *a, const struct profile *cpu, const struct profile *off)
{
	const struct profile *ps[OTLP_MAX_PROFILES];
	size_t n = 0;
	int err;

	if (cpu && cpu->n_samples)
		ps[n++] = cpu;
	if (off && off->n_samples)
		ps[n++] = off;
	if (!n) {
		pr_info("interval %llu: no samples", (unsigned long long)a->intervals);
		return;
	}
	if (a->otlp.q) {
		struct export_batch *b;

		err = destination__encode(&a->otlp, ps, n, describe_process, a, &b);
		if (err) {
			a->intervals_lost++;
			pr_warn("interval %llu: cannot encode the profiles for OTLP: %s",
				(unsigned long long)a->intervals, strerror(-err));
		} else {
			pr_info("interval %llu: %llu samples, %llu processes, off-CPU %.3f s, "
				"OTLP %zu bytes",
				(unsigned long long)a->intervals,
				(unsigned long long)cpu->stats.samples,
				(unsigned long long)cpu->stats.processes,
				off ? (double)off->stats.samples / 1e9 : 0.0, b->requests[0].len);
			log_tables(a);
			destination__push(&a->otlp, b);
		}
	}
	if (a->pyroscope.q) {
		struct export_batch *b;

		err = destination__encode(&a->pyroscope, ps, n, describe_process, a, &b);
		if (err)
			pr_warn("interval %llu: cannot encode the Pyroscope pushes: %s",
				(unsigned long long)a->intervals, strerror(-err));
		else
			destination__push(&a->pyroscope, b);
	}
}

/* Takes the interval's profiles and queues them for every destination. */
static void export_interval(struct agent *a)
{
	struct profile *p = NULL, *offcpu;
	int err;

	err = session__take_profile(&a->ss, &p);
	/* Built with it (or NULL): freed whatever became of the CPU profile. */
	offcpu = session__take_offcpu_profile(&a->ss);
	if (err) {
		pr_warn("interval %llu lost: cannot build its profile: %s",
			(unsigned long long)a->intervals, strerror(-err));
		profile__free(offcpu);
		a->intervals_lost++;
		publish_metrics(a);
		return;
	}
	a->intervals++;
	a->samples_total += p->stats.samples;
	send_profiles(a, p, offcpu);
	label_cache__expire(&a->labels);
	profile__free(offcpu);
	profile__free(p);
	publish_metrics(a);
	if (a->intervals == 1) {
		/* Start-up is over (loader, BTF, TLS set-up, the first naming and
		 * sending): its code pages go, what runs from now on comes back. */
		struct timespec c0, c1;
		uint64_t t0 = clock__now_ns();
		size_t dropped;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
		dropped = memory__drop_code_pages();
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
		pr_debug("code pages given back after the first interval: %zu KiB in %.1f ms (%.1f "
			 "ms of CPU)",
			 dropped >> 10, (double)(clock__now_ns() - t0) / 1e6,
			 (double)(c1.tv_sec - c0.tv_sec) * 1e3 +
			     (double)(c1.tv_nsec - c0.tv_nsec) / 1e6);
	}
}

/*
 * Waits for the queues to deliver what they hold, until deadline_ns
 * (CLOCK_MONOTONIC); a second stop signal brings the deadline to now. The
 * queues' threads end by themselves at the deadline (transfers in flight are
 * aborted then); what they did not deliver is counted when they stop.
 */
static void flush(struct agent *a, uint64_t deadline_ns)
{
	struct destination *ds[] = {&a->otlp, &a->pyroscope};
	bool cut = false;

	for (size_t i = 0; i < 2; i++)
		destination__set_deadline(ds[i], deadline_ns);
	for (size_t i = 0; i < 2;) {
		if (!cut && cli__stop_requests >= 2) {
			cut = true;
			pr_warn("second stop signal: cutting the exit flush short");
			for (size_t j = 0; j < 2; j++)
				destination__set_deadline(ds[j],
							  session__clock_ns(CLOCK_MONOTONIC));
		}
		if (destination__wait(ds[i], 100))
			i++;
	}
}

int cmd_agent(int argc, char **argv)
{
	struct agent *a = calloc(1, sizeof(*a));
	struct session_opts sopts = {0};
	uint64_t interval_ns, next_ns;
	uint64_t flush_deadline;
	uint32_t flush_ms;
	const char *why;
	int ret = 1, err;

	if (!a || !(a->o = calloc(1, sizeof(*a->o)))) {
		pr_err("out of memory");
		free(a);
		return 1;
	}
	err = parse_args(argc, argv, a->o);
	if (err) {
		ret = err > 0 ? 0 : 2;
		goto cleanup;
	}
	if (cli__check_privileges())
		goto cleanup;
	/* From here a stop signal ends the run cleanly, even while it starts. */
	if (cli__catch_stop_signals(false)) {
		pr_err("cannot install signal handlers: %s", strerror(errno));
		goto cleanup;
	}
	/* The exit's parts that cannot be interrupted (the last build, a main thread
	 * stuck in a file) are bounded by a timer started by the stop signal itself. */
	cli__exit_backstop((unsigned int)a->o->flush_s + 3);
	if (transport__global_init(&why)) {
		pr_err("cannot start the exporters: %s", why);
		goto cleanup;
	}
	label_cache__init(&a->labels, a->o->service_name);
	if (a->o->metrics_listen && metrics_server__start(a->o->metrics_listen, &a->metrics))
		goto cleanup;

	if (a->o->otlp_endpoint) {
		struct destination_opts d = {
		    .kind = DESTINATION_OTLP,
		    .endpoint = a->o->otlp_endpoint,
		    .protocol = a->o->otlp_protocol,
		    .insecure = a->o->insecure,
		    .ca_file = a->o->ca_file,
		    .cert_file = a->o->cert_file,
		    .key_file = a->o->key_file,
		    .headers = (const char *const *)a->o->headers,
		    .n_headers = a->o->n_headers,
		    .queue_size = a->o->queue_size,
		    .exact_url = a->o->otlp_exact_url,
		    .no_compression = a->o->otlp_no_compression,
		    .timeout_ms = a->o->otlp_timeout_ms,
		};

		if (destination__start(&a->otlp, &d))
			goto cleanup;
	}
	if (a->o->pyroscope_url) {
		struct destination_opts d = {
		    .kind = DESTINATION_PYROSCOPE,
		    .endpoint = a->o->pyroscope_url,
		    .ca_file = a->o->ca_file,
		    .cert_file = a->o->cert_file,
		    .key_file = a->o->key_file,
		    .headers = (const char *const *)a->o->headers,
		    .n_headers = a->o->n_headers,
		    .basic_auth = a->o->pyroscope_auth,
		    .queue_size = a->o->queue_size,
		};

		if (destination__start(&a->pyroscope, &d))
			goto cleanup;
	}

	cli_common__to_session(&a->o->common, &sopts);
	sopts.keep_events = true;
	sopts.max_timestamps = MAX_TIMESTAMPS;
	sopts.bounded = true;
	sopts.tables_on_first_sample = true;
	sopts.offcpu_threshold = a->o->offcpu_threshold;
	if (session__start(&a->ss, &sopts))
		goto cleanup;
	/* Executable names read as processes appear, before short-lived ones are gone. */
	if (label_cache__listen(&a->labels, &a->ss.c.procs))
		pr_warn("process names: no room for a process table listener; short-lived "
			"processes may be named by their comm");

	pr_notice("agent: sampling %s on %d CPUs at %u Hz, reporting every %gs%s%s",
		  a->o->common.n_pids ? "the given processes" : "the whole system",
		  sampler__n_cpus(a->ss.s), a->o->common.frequency_hz, a->o->interval_s,
		  a->metrics ? "; metrics at http://" : "", a->metrics ? a->o->metrics_listen : "");
	publish_metrics(a);

	interval_ns = (uint64_t)(a->o->interval_s * 1e9);
	next_ns = a->ss.interval_start_ns + interval_ns;
	while (!cli__stop_requests) {
		uint64_t now;

		if (session__run(&a->ss, next_ns, &cli__stop_requests))
			break;
		if (cli__stop_requests)
			break;
		export_interval(a);
		now = session__clock_ns(CLOCK_MONOTONIC);
		next_ns += interval_ns;
		if (next_ns <= now) /* building took longer than an interval: skip ahead */
			next_ns = now + interval_ns;
	}
	/* The last, partial interval, then whatever the queues still hold: all of it
	 * within --flush-timeout of the stop. */
	flush_ms = (uint32_t)(a->o->flush_s * 1000);
	flush_deadline = session__clock_ns(CLOCK_MONOTONIC) + (uint64_t)flush_ms * 1000000ull;
	/* A transfer in flight gives up at the deadline, whatever libcurl's own timeouts. */
	destination__set_transfer_deadline(&a->otlp, flush_deadline);
	destination__set_transfer_deadline(&a->pyroscope, flush_deadline);
	session__stop_sampling(&a->ss);
	if (cli__stop_requests < 2)
		export_interval(a);
	/* Both destinations flush at once, within the one deadline. */
	flush(a, flush_deadline);
	destination__stop(&a->otlp, 0, true);
	destination__stop(&a->pyroscope, 0, true);
	ret = 0;

cleanup:
	destination__stop(&a->otlp, 0, false);
	destination__stop(&a->pyroscope, 0, false);
	metrics_server__free(a->metrics);
	session__clear(&a->ss);
	label_cache__clear(&a->labels);
	for (size_t i = 0; i < a->o->n_headers; i++)
		free(a->o->headers[i]);
	for (size_t i = 0; i < 2 * a->o->n_attrs; i++)
		free(a->o->attrs[i]);
	free(a->o->attr_service_name);
	cli_common__clear(&a->o->common);
	log__flush_suppressed();
	log__set_format(LOG_FORMAT_PLAIN);
	free(a->o);
	free(a);
	return ret;
}
