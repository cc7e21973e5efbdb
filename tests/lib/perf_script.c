// SPDX-License-Identifier: Apache-2.0
#include "perf_script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

double perf_script__rooted(const char *data, const char *comm, perf_root_fn is_root, long *samples,
			   double *depth)
{
	char *out = NULL, last[256] = "";
	long total = 0, rooted = 0, frames = 0;
	bool in_sample = false;

	*samples = 0;
	*depth = 0;
	/* --no-inline: perf 6.1 names inlined frames through addr2line, which took 30-100 s for
	 * 3 s of a clang++ loop at load 9 (1.5 s without); the outermost frame is never inlined. */
	if (tu_run(&out, "perf script -i %s --no-inline -F ip,sym%s%s%s 2>/dev/null", data,
		   comm ? " --comms '" : "", comm ? comm : "", comm ? "'" : "") ||
	    !out) {
		free(out);
		return -1;
	}
	/* Samples are blocks of frame lines ("\t addr sym"), leaf first, ended by a blank line. */
	for (char *line = out;; line++) {
		char *nl = strchr(line, '\n');
		bool frame;

		if (nl)
			*nl = '\0';
		frame = line[strspn(line, " \t")] != '\0';
		if (frame) {
			char *p = line + strspn(line, " \t");

			p += strcspn(p, " \t"); /* the address */
			p += strspn(p, " \t");
			snprintf(last, sizeof(last), "%.*s", (int)strcspn(p, " +("), p);
			in_sample = true;
			frames++;
		}
		if ((!nl || !frame) && in_sample) {
			total++;
			rooted += is_root(last, strlen(last));
			in_sample = false;
		}
		if (!nl)
			break;
		line = nl;
	}
	free(out);
	*samples = total;
	*depth = total ? (double)frames / (double)total : 0;
	return total ? 100.0 * (double)rooted / (double)total : -1;
}
