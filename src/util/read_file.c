// SPDX-License-Identifier: Apache-2.0
#include "util/read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int read_file(const char *path, char **out, size_t *out_len)
{
	size_t len = 0, cap = 16384;
	char *buf = malloc(cap), *tmp;
	int fd, err = 0;
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	/* /proc files report size 0: read until EOF. */
	for (;;) {
		if (cap - len < 4096) {
			cap *= 2;
			tmp = realloc(buf, cap);
			if (!tmp) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = tmp;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto cleanup;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	buf = NULL;
cleanup:
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}
