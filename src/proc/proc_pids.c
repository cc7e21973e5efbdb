// SPDX-License-Identifier: Apache-2.0
#include "proc/proc_pids.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>

int proc_pids__for_each(int (*fn)(uint32_t pid, void *ctx), void *ctx)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	int ret = 0;

	if (!dir)
		return -errno;
	while (!ret && (de = readdir(dir))) {
		char *end;
		unsigned long pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtoul(de->d_name, &end, 10);
		if (*end || !pid || pid > UINT32_MAX)
			continue;
		ret = fn((uint32_t)pid, ctx);
	}
	closedir(dir);
	return ret;
}
