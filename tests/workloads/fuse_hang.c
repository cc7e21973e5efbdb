// build: gcc -O2 -g -D_FILE_OFFSET_BITS=64 -I/usr/include/fuse3 -Wl,--no-as-needed -lfuse3
// -lpthread
/*
 * A FUSE file system with one file, NAME, serving the bytes of SOURCE, until
 * the file HANG_FLAG exists: from then on every open and read of it blocks
 * for ever (a hung NFS server, a malicious FUSE mount). Not a workload to
 * profile: the server tests/e2e/test_file_worker.c mounts (as root, with
 * allow_other, so the attacker account can map the file).
 * Usage: fuse_hang SOURCE NAME HANG_FLAG MOUNTPOINT [fuse options...]
 */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *data;
static size_t size;
static const char *name;
static const char *hang_flag;

/* Blocks this request's thread for ever once told to. */
static void maybe_hang(void)
{
	if (access(hang_flag, F_OK))
		return;
	for (;;)
		pause();
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (path[0] == '/' && !strcmp(path + 1, name)) {
		st->st_mode = S_IFREG | 0755;
		st->st_nlink = 1;
		st->st_size = (off_t)size;
		return 0;
	}
	return -ENOENT;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/"))
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, name, NULL, 0, 0);
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	if (path[0] != '/' || strcmp(path + 1, name))
		return -ENOENT;
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	maybe_hang();
	/* Pages read before the hang stay cached for the process that mapped them. */
	fi->keep_cache = 1;
	return 0;
}

static int fs_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	maybe_hang();
	if (off < 0 || (size_t)off >= size)
		return 0;
	if (len > size - (size_t)off)
		len = size - (size_t)off;
	memcpy(buf, data + off, len);
	return (int)len;
}

static const struct fuse_operations ops = {
    .getattr = fs_getattr,
    .readdir = fs_readdir,
    .open = fs_open,
    .read = fs_read,
};

int main(int argc, char **argv)
{
	FILE *f;
	long n;

	if (argc < 5) {
		fprintf(stderr,
			"usage: fuse_hang SOURCE NAME HANG_FLAG MOUNTPOINT [fuse options]\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		perror(argv[1]);
		return 1;
	}
	size = (size_t)n;
	data = malloc(size);
	if (!data || fread(data, 1, size, f) != size) {
		perror(argv[1]);
		return 1;
	}
	fclose(f);
	name = argv[2];
	hang_flag = argv[3];
	/* fuse_main sees: program, mountpoint, options. */
	argv[3] = argv[0];
	return fuse_main(argc - 3, argv + 3, &ops, NULL);
}
