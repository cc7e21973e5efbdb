/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which container a process runs in, from its cgroup path, and the name its
 * runtime gave that container. Container runtimes put each container in a
 * cgroup whose last path component carries the 64-hex-digit container id:
 *
 *   docker (cgroupfs)        /docker/ID
 *   docker (systemd)         /system.slice/docker-ID.scope
 *   containerd CRI, k8s      /kubepods/burstable/podUID/ID
 *                            /kubepods.slice/.../cri-containerd-ID.scope
 *   cri-o                    /kubepods.slice/.../crio-ID.scope
 *   podman                   /machine.slice/libpod-ID.scope[/container]
 *   containerd, nerdctl      /default/ID, /system.slice/nerdctl-ID.scope
 *
 * in cgroup v1 (one line per hierarchy, "N:controllers:/path") and v2 (one
 * line, "0::/path") alike. Conmon (the podman / cri-o monitor, "*-conmon-ID")
 * is not the container and is skipped.
 */
#ifndef OMNIPROF_PROC_CGROUP_H
#define OMNIPROF_PROC_CGROUP_H

#include <stddef.h>
#include <stdint.h>

#define CGROUP_ID_LEN 64

/* Container id in the text of /proc/PID/cgroup: 0 and out (lowercase hex), or
 * -ENOENT when the process is in no container. */
int cgroup__parse_container_id(const char *text, char out[CGROUP_ID_LEN + 1]);
/* The same for a live process. 0, -ENOENT, or -errno when the file cannot be read. */
int cgroup__container_id(uint32_t pid, char out[CGROUP_ID_LEN + 1]);

/*
 * The container's name as its runtime stored it under root ("/" on a live
 * host, a fixture folder in tests): docker's config.v2.json "Name", or the
 * Kubernetes container name annotation of a containerd or cri-o bundle.
 * 0 and out, or -ENOENT.
 */
int cgroup__container_name(const char *root, const char *id, char *out, size_t size);

#endif
