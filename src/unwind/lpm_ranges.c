// SPDX-License-Identifier: Apache-2.0
#include "unwind/lpm_ranges.h"

#include <errno.h>

#include "unwind/unwind_maps.h"
#include "util/log.h"

uint64_t lpm_ranges__range_id(bool elf, uint64_t table_id, int open_error, bool anonymous)
{
	if (elf)
		return table_id;
	if (open_error == -ETIMEDOUT)
		return FILE_ID_NO_TABLE;
	return anonymous || open_error == -ENOEXEC ? OP_TABLE_ID_ANON : 0;
}

static void remove_ranges(struct unwind_maps *um, uint32_t pid, const struct lpm_ranges *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct lpm_range *m = lpm_ranges__at(r, i);

		if (m->range_id)
			unwind_maps__remove_range(um, pid, m->start, m->end);
	}
}

void lpm_ranges__release(struct unwind_maps *um, const struct lpm_ranges *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct lpm_range *m = lpm_ranges__at(r, i);

		if (m->table_id) {
			unwind_maps__release(um, m->table_id);
			m->table_id = 0;
		}
	}
}

void lpm_ranges__unpublish(struct unwind_maps *um, uint32_t pid, const struct lpm_ranges *r)
{
	remove_ranges(um, pid, r);
	lpm_ranges__release(um, r);
	unwind_maps__remove_pid(um, pid);
}

static bool same_range(const struct lpm_range *a, const struct lpm_range *b)
{
	return a->start == b->start && a->end == b->end && a->range_id == b->range_id &&
	       a->bias == b->bias;
}

/* Does [start, end) overlap a range of r (sorted) with a table? */
static bool overlaps_table(const struct lpm_ranges *r, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < r->n && lpm_ranges__at(r, i)->start < end; i++)
		if (lpm_ranges__at(r, i)->range_id && lpm_ranges__at(r, i)->end > start)
			return true;
	return false;
}

/*
 * The shared LPM trie is nearly full (or refused an insert): the process
 * holding the most entries loses all of them and unwinds with frame
 * pointers from then on (its pid marker stays, so its samples are walked,
 * not sent as stack copies), so the others keep their tables. True when a
 * process was evicted.
 */
static bool evict_greediest(struct unwind_maps *um, const struct lpm_owner *owner)
{
	uint32_t entries, pid = unwind_maps__greediest_pid(um, &entries);
	struct lpm_ranges r;
	bool *evicted;

	if (!pid || !owner->find(owner->ctx, pid, &r, &evicted) || *evicted)
		return false;
	remove_ranges(um, pid, &r);
	lpm_ranges__release(um, &r);
	for (size_t i = 0; i < r.n; i++)
		lpm_ranges__at(&r, i)->range_id = 0;
	*evicted = true;
	um->stats.evicted_processes++;
	um->stats.evicted_entries += entries;
	pr_warn("pid %u held %u of %u unwind mapping entries: evicted, its stacks use frame "
		"pointers from now on",
		pid, entries, um->max_mappings);
	return true;
}

uint64_t lpm_ranges__acquire_within_share(struct unwind_maps *um, uint64_t table_id,
					  const struct elf_file *build_from, uint64_t *pages)
{
	uint32_t n = 0;
	bool loaded = unwind_maps__table_loaded(um, table_id, &n);

	if (!loaded && *pages >= UNWIND_TABLE_PAGES_PER_PROCESS) {
		um->stats.tables_refused_share++;
		return 0;
	}
	if (unwind_maps__acquire(um, table_id, build_from)) {
		/* No table (counted there): frame pointers for this file. */
		unwind_maps__release(um, table_id);
		return 0;
	}
	unwind_maps__table_loaded(um, table_id, &n);
	*pages += n;
	return table_id;
}

/* Inserts m's range (new: no range of old published overlaps it, so none of its
 * entries is in the trie); a full trie evicts the greediest process and tries once more. */
static int add_range_evicting(struct unwind_maps *um, uint32_t pid, const struct lpm_range *m,
			      bool new, const bool *evicted, const struct lpm_owner *owner)
{
	int (*add)(struct unwind_maps *, uint32_t, uint64_t, uint64_t, uint64_t, uint64_t) =
	    new ? unwind_maps__add_new_range : unwind_maps__add_range;
	int err = add(um, pid, m->start, m->end, m->range_id, m->bias);

	if ((err == -ENOSPC || err == -E2BIG) && evict_greediest(um, owner)) {
		if (*evicted)
			return err;
		err = add(um, pid, m->start, m->end, m->range_id, m->bias);
	}
	return err;
}

/* An evicted process publishes nothing but its pid marker; its old ranges are gone. */
static void publish_evicted(struct unwind_maps *um, uint32_t pid, const struct lpm_ranges *r,
			    const struct lpm_ranges *old, const struct lpm_owner *owner)
{
	for (size_t i = 0; i < r->n; i++)
		lpm_ranges__at(r, i)->table_id = lpm_ranges__at(r, i)->range_id = 0;
	remove_ranges(um, pid, old);
	lpm_ranges__release(um, old);
	unwind_maps__add_pid(um, pid, OP_MARKER_F_PARTIAL);
	/* Headroom for the next process: the greediest go while the trie is nearly full. */
	while (unwind_maps__over_high_water(um) && evict_greediest(um, owner))
		;
}

void lpm_ranges__publish(struct unwind_maps *um, uint32_t pid, const struct lpm_ranges *r,
			 const struct lpm_ranges *old, bool *evicted, const struct lpm_owner *owner)
{
	bool rewrite = false, partial = false;
	size_t j = 0;

	if (*evicted) {
		publish_evicted(um, pid, r, old, owner);
		return;
	}
	for (size_t i = 0, k = 0; i < r->n && !*evicted; i++) {
		struct lpm_range *m = lpm_ranges__at(r, i);
		/* Ranges of old with a table are in the trie (a refused one has none). */
		bool new = !overlaps_table(old, m->start, m->end);
		int err;

		/* Unchanged since old (both sorted by start): its entries are there as they
		 * would be written (a re-read wrote each again, two syscalls an entry). */
		while (k < old->n && lpm_ranges__at(old, k)->start < m->start)
			k++;
		if (m->range_id && k < old->n && same_range(lpm_ranges__at(old, k), m))
			continue;
		err = m->range_id ? add_range_evicting(um, pid, m, new, evicted, owner) : 0;

		if (err) {
			if (m->table_id)
				unwind_maps__release(um, m->table_id);
			m->table_id = m->range_id = 0;
			partial = true;
		}
	}
	if (*evicted) {
		/* pid was the greediest: what it still held goes too. */
		publish_evicted(um, pid, r, old, owner);
		return;
	}
	/* Both lists are sorted by start: one merge walk finds the unchanged ranges. */
	for (size_t i = 0; i < old->n; i++) {
		const struct lpm_range *o = lpm_ranges__at(old, i);

		if (!o->range_id)
			continue;
		while (j < r->n && lpm_ranges__at(r, j)->start < o->start)
			j++;
		if (j < r->n && same_range(o, lpm_ranges__at(r, j)))
			continue;
		unwind_maps__remove_range(um, pid, o->start, o->end);
		rewrite |= overlaps_table(r, o->start, o->end);
	}
	if (rewrite)
		for (size_t i = 0; i < r->n; i++) {
			const struct lpm_range *m = lpm_ranges__at(r, i);

			if (m->range_id)
				unwind_maps__add_range(um, pid, m->start, m->end, m->range_id,
						       m->bias);
		}
	lpm_ranges__release(um, old);
	unwind_maps__add_pid(um, pid, partial ? OP_MARKER_F_PARTIAL : 0);
}
