// SPDX-License-Identifier: Apache-2.0
#include "util/read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/array.h"

int read_file(const char *path, char **out, size_t *out_len)
{
	size_t len = 0, cap = 16384;
	char *buf = malloc(cap);
	int fd, err = 0;
	struct stat st;
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	/* O_NONBLOCK: a FIFO planted where a file was expected does not block the open. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -ENODEV;
		goto cleanup;
	}
	/* /proc files report size 0: read until EOF, but never without end. */
	for (;;) {
		if (len >= READ_FILE_MAX) {
			err = -EFBIG;
			goto cleanup;
		}
		if (cap - len < 4096 && array__reserve(buf, cap, cap * 2)) {
			err = -ENOMEM;
			goto cleanup;
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
