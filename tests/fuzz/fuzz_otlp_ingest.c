// SPDX-License-Identifier: Apache-2.0
/*
 * OTLP profiles as omniprof serve receives them from the network
 * (src/serve/otlp_ingest.c): decoding, the validation of every dictionary
 * index, and storing into an in-memory SQLite store. A refused input must
 * leave nothing behind; an accepted one is stored.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "serve/ingest.h"
#include "serve/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct store *s;
	char why[256];
	int64_t n, before;

	if (!s) {
		struct store_opts o = {0};

		if (store__open(":memory:", &o, &s))
			abort();
	}
	before = store__count(s, 0, INT64_MAX);
	if (otlp_ingest(s, data, size, why, sizeof(why), &n) &&
	    store__count(s, 0, INT64_MAX) != before)
		abort(); /* a refused request changed the store */
	return 0;
}
