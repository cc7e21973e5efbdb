// SPDX-License-Identifier: Apache-2.0
/* `omniprof record`'s files: pprof, folded stacks and the flame graph, written as one set. */
#include "export/exporters.h"
#include "export/output_set.h"

static int pprof_cb(int fd, void *ctx)
{
	return pprof__write_fd(ctx, fd);
}

static int folded_stdio(FILE *f, void *ctx)
{
	return folded__write(ctx, f);
}

static int folded_cb(int fd, void *ctx)
{
	return output_fd__stdio(fd, folded_stdio, ctx);
}

static int flamegraph_stdio(FILE *f, void *ctx)
{
	return flamegraph__write(ctx, f, "omniprof CPU profile");
}

static int flamegraph_cb(int fd, void *ctx)
{
	return output_fd__stdio(fd, flamegraph_stdio, ctx);
}

static int offcpu_flamegraph_stdio(FILE *f, void *ctx)
{
	return flamegraph__write(ctx, f, "omniprof off-CPU profile (nanoseconds off CPU)");
}

static int offcpu_flamegraph_cb(int fd, void *ctx)
{
	return output_fd__stdio(fd, offcpu_flamegraph_stdio, ctx);
}

int record_set__write_all(const struct profile *p, const struct profile *offcpu,
			  struct output_dir *dir)
{
	const struct output_item items[] = {
	    {"profile.pb.gz", pprof_cb, (void *)p},
	    {"stacks.folded", folded_cb, (void *)p},
	    {"flamegraph.html", flamegraph_cb, (void *)p},
	    {"offcpu.pb.gz", pprof_cb, (void *)offcpu},
	    {"offcpu.folded", folded_cb, (void *)offcpu},
	    {"offcpu.html", offcpu_flamegraph_cb, (void *)offcpu},
	};

	return output_set__write(dir, items, offcpu ? 6 : 3);
}

int record_set__write(const struct profile *p, struct output_dir *dir)
{
	const struct output_item items[] = {
	    {"profile.pb.gz", pprof_cb, (void *)p},
	    {"stacks.folded", folded_cb, (void *)p},
	    {"flamegraph.html", flamegraph_cb, (void *)p},
	};

	return output_set__write(dir, items, sizeof(items) / sizeof(items[0]));
}
