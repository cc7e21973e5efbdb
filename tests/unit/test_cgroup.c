// SPDX-License-Identifier: Apache-2.0
/*
 * Container ids from /proc/PID/cgroup texts as each runtime writes them
 * (cgroup v1 and v2, cgroupfs and systemd drivers), and container names from
 * runtime configuration files laid out under a temporary root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc/cgroup.h"

#define ID  "3f4a1c0e9b8d7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a21"
#define ID2 "aaaabbbbccccddddeeeeffff0000111122223333444455556666777788889999"

static void expect_id(const char *text, const char *want)
{
	char out[CGROUP_ID_LEN + 1];

	assert_int_equal(cgroup__parse_container_id(text, out), 0);
	assert_string_equal(out, want);
}

static void expect_none(const char *text)
{
	char out[CGROUP_ID_LEN + 1];

	assert_int_equal(cgroup__parse_container_id(text, out), -ENOENT);
}

static void test_docker_v1_cgroupfs(void **state)
{
	(void)state;
	expect_id("12:pids:/docker/" ID "\n"
		  "11:memory:/docker/" ID "\n"
		  "1:name=systemd:/docker/" ID "\n",
		  ID);
}

static void test_docker_v2_systemd(void **state)
{
	(void)state;
	expect_id("0::/system.slice/docker-" ID ".scope\n", ID);
}

static void test_containerd_cri_cgroupfs(void **state)
{
	(void)state;
	expect_id("0::/kubepods/burstable/pod6a1c2d3e-1111-2222-3333-444455556666/" ID "\n", ID);
}

static void test_containerd_cri_systemd(void **state)
{
	(void)state;
	expect_id("0::/kubepods.slice/kubepods-besteffort.slice/"
		  "kubepods-besteffort-pod6a1c2d3e_1111_2222_3333_444455556666.slice/"
		  "cri-containerd-" ID ".scope\n",
		  ID);
}

static void test_crio(void **state)
{
	(void)state;
	expect_id("0::/kubepods.slice/kubepods-burstable.slice/"
		  "kubepods-burstable-pod11112222_3333_4444_5555_666677778888.slice/crio-" ID
		  ".scope\n",
		  ID);
	/* Nested cgroup inside the container's scope (systemd in a container). */
	expect_id("0::/kubepods.slice/crio-" ID ".scope/init.scope\n", ID);
}

static void test_podman(void **state)
{
	(void)state;
	expect_id("0::/machine.slice/libpod-" ID ".scope/container\n", ID);
	expect_id("0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID
		  ".scope\n",
		  ID);
	/* conmon watches the container but is not in it. */
	expect_none("0::/machine.slice/libpod-conmon-" ID ".scope\n");
}

static void test_nerdctl_and_plain_containerd(void **state)
{
	(void)state;
	expect_id("0::/default/" ID "\n", ID);
	expect_id("0::/system.slice/nerdctl-" ID ".scope\n", ID);
}

static void test_uppercase_is_lowered(void **state)
{
	char upper[] = "0::/docker/" ID "\n";

	(void)state;
	for (char *p = upper + 11; *p && *p != '\n'; p++)
		*p = (char)((*p >= 'a' && *p <= 'f') ? *p - 32 : *p);
	expect_id(upper, ID);
}

static void test_innermost_wins(void **state)
{
	(void)state;
	/* Docker in docker: the process belongs to the inner container. */
	expect_id("0::/docker/" ID "/docker/" ID2 "\n", ID2);
}

static void test_host_processes(void **state)
{
	(void)state;
	expect_none("0::/init.scope\n");
	expect_none("0::/user.slice/user-1000.slice/session-3.scope\n");
	expect_none("12:memory:/\n1:name=systemd:/system.slice/sshd.service\n");
	expect_none("");
	/* 63 and 65 digits are not ids; a bare hex word in a longer one is not either. */
	expect_none("0::/docker/"
		    "3f4a1c0e9b8d7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2"
		    "\n");
	expect_none("0::/docker/" ID "0\n");
	expect_none("0::/docker/x" ID "\n");
	/* A line without the two colons is skipped, not misread. */
	expect_none("/docker/" ID "\n");
}

static void test_live_process(void **state)
{
	char out[CGROUP_ID_LEN + 1];
	int err;

	(void)state;
	/* This test's own process: in a container or not, the call succeeds or says ENOENT. */
	err = cgroup__container_id((uint32_t)getpid(), out);
	assert_true(err == 0 || err == -ENOENT);
	assert_int_equal(cgroup__container_id(0x7ffffffe, out), -ENOENT);
}

/* ---- container names ----------------------------------------------------- */

static void write_file(const char *root, const char *rel, const char *text)
{
	char path[4096], cmd[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_container_names(void **state)
{
	char root[] = "/tmp/omniprof-cgroup-XXXXXX", out[256], cmd[128];

	(void)state;
	assert_non_null(mkdtemp(root));
	write_file(root, "var/lib/docker/containers/" ID "/config.v2.json",
		   "{\"StreamConfig\":{},\"State\":{\"Running\":true},\"ID\":\"" ID
		   "\",\"Name\":\"/web-frontend\",\"Driver\":\"overlay2\"}");
	write_file(root, "run/containerd/io.containerd.runtime.v2.task/k8s.io/" ID2 "/config.json",
		   "{\"annotations\": {\"io.kubernetes.cri.container-type\": \"container\",\n"
		   "  \"io.kubernetes.cri.container-name\": \"checkout\",\n"
		   "  \"io.kubernetes.cri.sandbox-name\": \"checkout-7d9\"}}");

	assert_int_equal(cgroup__container_name(root, ID, out, sizeof(out)), 0);
	assert_string_equal(out, "web-frontend");
	assert_int_equal(cgroup__container_name(root, ID2, out, sizeof(out)), 0);
	assert_string_equal(out, "checkout");
	/* Truncated to the buffer, still terminated. */
	assert_int_equal(cgroup__container_name(root, ID, out, 4), 0);
	assert_string_equal(out, "web");
	assert_int_equal(cgroup__container_name(root, "0123", out, sizeof(out)), -ENOENT);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_docker_v1_cgroupfs),
	    cmocka_unit_test(test_docker_v2_systemd),
	    cmocka_unit_test(test_containerd_cri_cgroupfs),
	    cmocka_unit_test(test_containerd_cri_systemd),
	    cmocka_unit_test(test_crio),
	    cmocka_unit_test(test_podman),
	    cmocka_unit_test(test_nerdctl_and_plain_containerd),
	    cmocka_unit_test(test_uppercase_is_lowered),
	    cmocka_unit_test(test_innermost_wins),
	    cmocka_unit_test(test_host_processes),
	    cmocka_unit_test(test_live_process),
	    cmocka_unit_test(test_container_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
