// SPDX-License-Identifier: Apache-2.0
#include "proc/vdso_image.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static int write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

int vdso_image__read(const struct remote_memory *mem, uint64_t start, uint64_t end, uint8_t **bytes)
{
	size_t len = (size_t)(end - start);
	uint8_t *buf;
	int err;

	*bytes = NULL;
	if (end <= start || end - start > VDSO_IMAGE_MAX)
		return -E2BIG;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	/* A live source only reads (process_vm_readv): the target is not stopped or touched. */
	err = remote_memory__read(mem, start, buf, len);
	if (err) {
		free(buf);
		return err;
	}
	*bytes = buf;
	return 0;
}

int vdso_image__memfd(const uint8_t *bytes, size_t len)
{
	int fd = memfd_create("vdso", MFD_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = write_all(fd, bytes, len);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int vdso_image__copy(const struct remote_memory *mem, uint64_t start, uint64_t end)
{
	uint8_t *buf;
	int err = vdso_image__read(mem, start, end, &buf), fd;

	if (err)
		return err;
	fd = vdso_image__memfd(buf, (size_t)(end - start));
	free(buf);
	return fd;
}
