// SPDX-License-Identifier: Apache-2.0
/*
 * Runs a fuzz target without libFuzzer, over files and folders of inputs
 * (the committed seeds and every crash found so far, tests/fuzz/regressions/):
 * what `make test` does with each target, normal and under ASan + UBSan.
 * Prints one line per input and "N passed, 0 failed"; a crash or a sanitizer
 * report ends the process, which the test runner counts as a failure.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/read_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	char *buf = NULL;
	size_t len = 0;

	if (read_file(path, &buf, &len)) {
		printf("FAIL %s: unreadable\n", path);
		return 1;
	}
	LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
	free(buf);
	printf("PASS %s (%zu bytes)\n", path, len);
	return 0;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *dir;
		struct dirent *de;

		if (stat(argv[i], &st) || !S_ISDIR(st.st_mode)) {
			run_file(argv[i]) ? failed++ : passed++;
			continue;
		}
		dir = opendir(argv[i]);
		while (dir && (de = readdir(dir))) {
			char path[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			run_file(path) ? failed++ : passed++;
		}
		if (dir)
			closedir(dir);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
