// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the log between a primary and its backups.
 *
 * A backup's log is written by the primary's RDMA WRITEs into the free
 * part of its ring (or pulled by its own READs while it catches up). What
 * lands is not a record until it is verified and published here. The
 * functions of that exchange, on either side:
 *
 * - rdmalog_log_plan(), on the primary: judges a backup's copy by the
 *   (log id, LSN, stream position, tail) it reports against this log:
 *   join, pull a range, restart (reset), busy, another log's history, or
 *   diverged; and sets the floor below which the primary must not reuse
 *   ring space the backup still retains.
 * - rdmalog_log_apply() and rdmalog_log_apply_pulled(), on a backup:
 *   verify the records that should start at the head (magic, version,
 *   header CRC, contiguous LSN, epoch, length, payload CRC) up to what
 *   the primary says is committed or what was pulled, and publish them
 *   as an appender would: under the log's lock, head, next_lsn and the
 *   index move together.
 * - rdmalog_log_reset() restarts a backup's log whose continuation the
 *   primary no longer retains; rdmalog_log_follow() binds a backup's log
 *   to the primary's (log id, epoch).
 *
 * The ring's invariants, the lock rules and why an optimistic reader
 * never sees an overwritten byte are in log.c's top comment; the two
 * files share kmod/log_priv.h.
 */
#include <linux/errno.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>

#include "../uapi/rdmalog_genl.h"
#include "log.h"
#include "log_priv.h"
#include "stats.h"
#include "trace.h"

int rdmalog_log_plan(struct rdmalog_log *log, u64 id, u64 lsn, u64 pos,
		     u64 tail, u64 floor, bool pull,
		     const struct rdmalog_log_es *es, bool es_only,
		     struct rdmalog_log_plan *p)
{
	bool boundary, es_end = false;
	u64 fl;
	int kind;

	memset(p, 0, sizeof(*p));
	if (tail > pos)
		return RDMALOG_PLAN_DIVERGED;
	spin_lock_bh(&log->lock);
	if (log->dead) {
		kind = RDMALOG_PLAN_DIVERGED;
		goto out;
	}
	/*
	 * Positions mean something only within one log: a backup of
	 * another is another history, whatever its positions -- unless its
	 * log never held a record (LSN 1 at position 0: nothing to mix).
	 */
	if (id != log->id && (lsn != 1 || pos || tail)) {
		kind = RDMALOG_PLAN_OTHER;
		goto out;
	}
	/*
	 * It holds our epoch-start record and all before it, as we do (its
	 * RING: Documentation/protocol.rst): it starts after the record,
	 * under this lock with the check that no commit timeout removed it.
	 */
	if (es && id == log->id && es->lsn >= lsn &&
	    rdmalog_log_es_current_locked(log, es)) {
		lsn = es->lsn + 1;
		pos = *rdmalog_log_slot(log, lsn);
		pull = false;
		es_end = true;
	} else if (es_only) {
		kind = RDMALOG_PLAN_LATER;
		goto out;
	}
	boundary = lsn >= log->first_lsn && lsn <= log->next_lsn &&
		   *rdmalog_log_slot(log, lsn) == pos;
	if (boundary) {
		kind = pull && lsn < log->commit_lsn ? RDMALOG_PLAN_PULL :
						       RDMALOG_PLAN_JOIN;
		p->start_pos = pos;
		p->start_lsn = lsn;
		fl = min(floor, tail);
	} else if (lsn < log->first_lsn && pos <= log->tail) {
		/* Our history, but we no longer retain what follows it. */
		kind = RDMALOG_PLAN_RESET;
		p->start_pos = log->tail;
		p->start_lsn = log->first_lsn;
		fl = min(floor, log->tail);
	} else {
		kind = RDMALOG_PLAN_DIVERGED;
		goto out;
	}
	/*
	 * What we will write or let it read from there (up to head, and
	 * later appends up to the floor + capacity) must not reach the
	 * bytes it still retains.
	 */
	if (fl > p->start_pos || log->head - fl > log->capacity) {
		kind = RDMALOG_PLAN_DIVERGED;
		goto out;
	}
	/*
	 * An appender reserved space under the floor in force and writes it
	 * without the lock: not below that reservation's end - capacity,
	 * not now (the backup is judged again when it reconnects).
	 */
	if (log->reserved_end && log->reserved_end - fl > log->capacity) {
		kind = RDMALOG_PLAN_BUSY;
		goto out;
	}
	/* Not reached with @es_only (a JOIN after the record): not set. */
	if (es_only && kind != RDMALOG_PLAN_JOIN)
		goto out;
	p->target_pos = *rdmalog_log_slot(log, log->commit_lsn);
	p->target_lsn = log->commit_lsn;
	if (kind == RDMALOG_PLAN_JOIN || p->target_lsn < p->start_lsn) {
		p->target_pos = p->start_pos;
		p->target_lsn = p->start_lsn;
	}
	p->floor = fl;
	p->es = es_end && kind == RDMALOG_PLAN_JOIN;
	log->floor = fl;
out:
	spin_unlock_bh(&log->lock);
	/* Nothing was set but for a JOIN (the floor with it). */
	if (es_only && kind != RDMALOG_PLAN_JOIN)
		kind = RDMALOG_PLAN_LATER;
	return kind;
}

/*
 * Verify the record that should start at stream position @pos with LSN
 * @lsn, within [@pos, @limit). Return: its footprint, or 0 with *@why set
 * (and *@incomplete set when the only fault is that it does not end below
 * @limit).
 */
static u64 rdmalog_log_verify_at(struct rdmalog_log *log, u64 pos, u64 lsn,
				 u64 limit, u64 max_epoch, u64 *epoch,
				 u32 *gen, const char **why, bool *incomplete)
{
	struct rdmalog_ring_record rec;
	u64 footprint, e;
	u32 len, g;

	*incomplete = false;
	if (limit - pos < RDMALOG_LOG_HDR_SIZE) {
		*why = "a record header runs past the commit point";
		*incomplete = true;
		return 0;
	}
	rdmalog_ring_read(log, pos, &rec, sizeof(rec));
	len = le32_to_cpu(rec.len);
	if (le32_to_cpu(rec.magic) != RDMALOG_RECORD_MAGIC ||
	    le16_to_cpu(rec.version) != RDMALOG_RECORD_VERSION ||
	    !rdmalog_rec_flags_ok(&rec)) {
		*why = "bad record magic, version or flags";
		return 0;
	}
	if (le32_to_cpu(rec.hdr_crc) != rdmalog_hdr_crc(&rec)) {
		*why = "record header CRC32C mismatch";
		return 0;
	}
	if (le64_to_cpu(rec.lsn) != lsn) {
		*why = "record LSNs are not contiguous";
		return 0;
	}
	e = le64_to_cpu(rec.epoch);
	g = le32_to_cpu(rec.gen);
	if (!e || e > max_epoch) {
		*why = "record of a later epoch than its primary's";
		return 0;
	}
	/*
	 * (epoch, generation) never goes back along a log: a record a
	 * primary removed, left after the one written in its place, has an
	 * older generation; one of a deposed primary, an older epoch.
	 */
	if (e < *epoch || (e == *epoch && g < *gen)) {
		*why = "record of an older epoch or truncation generation than the one before it";
		return 0;
	}
	if (!len || len > log->max_record) {
		*why = "record length out of range";
		return 0;
	}
	footprint = rdmalog_log_footprint(len);
	if (limit - pos < footprint) {
		*why = "a record runs past the commit point";
		*incomplete = true;
		return 0;
	}
	if (rdmalog_ring_crc(log, pos + RDMALOG_LOG_HDR_SIZE, len) !=
	    le32_to_cpu(rec.data_crc)) {
		*why = "record payload CRC32C mismatch";
		return 0;
	}
	*epoch = e;
	*gen = g;
	return footprint;
}

/*
 * rdmalog_log_apply() and rdmalog_log_apply_pulled(): verify and expose
 * the records from head on that end at or below @limit (@limit ==
 * @upto_pos: all of them up to @upto_lsn, ending exactly there).
 */
static int rdmalog_log_apply_below(struct rdmalog_log *log, u64 limit,
				   u64 upto_pos, u64 upto_lsn, u64 epoch,
				   const char **why)
{
	u64 pos, lsn, tail, fp, n, last;
	bool dead, incomplete;
	int ret = 0;
	u32 gen;

	*why = NULL;
	rdmalog_log_lock_appends(log);
	spin_lock_bh(&log->lock);
	dead = log->dead;
	pos = log->head;
	lsn = log->next_lsn;
	tail = log->tail;
	gen = log->gen;
	last = log->last_epoch;
	spin_unlock_bh(&log->lock);
	if (dead) {
		ret = -ENETDOWN;
		goto out;
	}
	if (upto_lsn <= lsn)
		goto out;
	if (upto_pos < pos || upto_pos - tail > log->capacity ||
	    limit > upto_pos) {
		/* The notice is wrong, not a record: a bad message. */
		rdmalog_stats_inc(RDMALOG_STAT_BAD_MSGS);
		*why = "commit point outside the ring";
		ret = -EBADMSG;
		goto out;
	}
	if (limit < pos)
		goto out;
	n = lsn;
	/*
	 * Nobody writes [pos, limit) any more: the primary wrote it before
	 * the notice (or we pulled it), and rewrites only uncommitted bytes.
	 * The index slots of LSNs above next_lsn are read by nobody (and
	 * alias no retained LSN: upto_pos - tail <= capacity), so they are
	 * filled in without the lock and become visible with next_lsn below.
	 */
	while (lsn < upto_lsn) {
		fp = rdmalog_log_verify_at(log, pos, lsn, limit, epoch, &last,
					   &gen, why, &incomplete);
		if (!fp && incomplete && limit < upto_pos) {
			*why = NULL;	/* the rest is not here yet */
			break;
		}
		if (!fp) {
			rdmalog_stats_inc(RDMALOG_STAT_CRC_ERRORS);
			ret = -EBADMSG;
			goto out;
		}
		pos += fp;
		lsn++;
		*rdmalog_log_slot(log, lsn) = pos;
		cond_resched();
	}
	if (lsn == upto_lsn && pos != upto_pos) {
		rdmalog_stats_inc(RDMALOG_STAT_BAD_MSGS);
		*why = "the commit point is not where the records end";
		ret = -EBADMSG;
		goto out;
	}
	n = lsn - n;
	if (!n)
		goto out;
	spin_lock_bh(&log->lock);
	if (log->dead) {
		ret = -ENETDOWN;
	} else {
		trace_rdmalog_apply(lsn - n, lsn);
		log->head = pos;
		log->next_lsn = lsn;
		log->commit_lsn = lsn;
		log->gen = gen;
		log->last_epoch = last;
	}
	spin_unlock_bh(&log->lock);
	if (!ret) {
		rdmalog_stats_add(RDMALOG_STAT_APPLIED_RECORDS, n);
		rdmalog_log_wake(&log->commit_wq);
	}
out:
	rdmalog_log_unlock_appends(log);
	return ret;
}

int rdmalog_log_apply(struct rdmalog_log *log, u64 upto_pos, u64 upto_lsn,
		      u64 epoch, const char **why)
{
	return rdmalog_log_apply_below(log, upto_pos, upto_pos, upto_lsn, epoch,
				       why);
}

int rdmalog_log_apply_pulled(struct rdmalog_log *log, u64 limit,
			     u64 upto_pos, u64 upto_lsn, u64 epoch,
			     const char **why)
{
	return rdmalog_log_apply_below(log, limit, upto_pos, upto_lsn, epoch,
				       why);
}

int rdmalog_log_reset(struct rdmalog_log *log, u64 lsn, u64 pos)
{
	u64 dropped = 0;
	int ret = 0;

	rdmalog_log_lock_appends(log);
	spin_lock_bh(&log->lock);
	if (log->dead) {
		ret = -ENETDOWN;
	} else if (lsn <= log->next_lsn || pos < log->head ||
		   !list_empty(&log->waiters)) {
		ret = -EINVAL;
	} else {
		/*
		 * As a trim of everything, then a jump: readers of the
		 * discarded records see first_lsn above them (-ERANGE).
		 */
		dropped = log->next_lsn - log->first_lsn;
		log->first_lsn = lsn;
		log->commit_lsn = lsn;
		log->next_lsn = lsn;
		log->tail = pos;
		log->head = pos;
		*rdmalog_log_slot(log, lsn) = pos;
	}
	spin_unlock_bh(&log->lock);
	rdmalog_log_unlock_appends(log);
	if (ret)
		return ret;
	if (dropped)
		rdmalog_stats_add(RDMALOG_STAT_TRIMMED_RECORDS, dropped);
	rdmalog_stats_inc(RDMALOG_STAT_LOG_RESETS);
	rdmalog_log_wake(&log->commit_wq);
	rdmalog_log_wake(&log->space_wq);
	return 0;
}

int rdmalog_log_follow(struct rdmalog_log *log, u64 id, u64 epoch)
{
	int ret = 0;

	spin_lock_bh(&log->lock);
	if (log->dead) {
		ret = -ENETDOWN;
	} else if (log->id != id) {
		/* Another log only while this one never held a record. */
		if (log->head || log->next_lsn != 1 || !id) {
			ret = -ESTALE;
		} else {
			log->id = id;
			log->epoch = epoch;
		}
	} else if (epoch > log->epoch) {
		/* The same log, led by a later primary (a leader change). */
		log->epoch = epoch;
	}
	spin_unlock_bh(&log->lock);
	return ret;
}

/*
 * What the ring holds past the head (rdmalog_log_held()): from *@pos /
 * *@lsn (the head and next LSN; *@epoch and *@gen those of the record
 * before), every record that verifies, contiguous, of no later epoch
 * than @max_epoch and of no older (epoch, generation) than the record
 * before it. On return they describe where that ends: *@lsn is the LSN
 * after the last one. Caller holds rdmalog_log_lock_appends().
 */
static void rdmalog_log_walk_held(struct rdmalog_log *log, u64 *pos,
				  u64 *lsn, u64 limit, u64 max_epoch,
				  u64 *epoch, u32 *gen)
{
	u64 fp, e = *epoch;
	const char *why;
	bool incomplete;
	u32 g = *gen;

	for (;;) {
		fp = rdmalog_log_verify_at(log, *pos, *lsn, limit, max_epoch,
					   &e, &g, &why, &incomplete);
		if (!fp)
			break;
		*pos += fp;
		++*lsn;
		*epoch = e;
		*gen = g;
		cond_resched();
	}
}

void rdmalog_log_held(struct rdmalog_log *log, struct rdmalog_log_held *held)
{
	u64 pos, lsn, limit, max_epoch;
	bool leading;

	/*
	 * A primary's ring holds nothing past its head but the records its
	 * appenders are copying, which nobody holds yet: its head is all,
	 * read without waiting for those copies (a periodic beat asks).
	 */
	spin_lock_bh(&log->lock);
	leading = log->leading;
	if (leading) {
		lsn = log->next_lsn;
		held->gen = log->gen;
		held->epoch = log->last_epoch;
	}
	spin_unlock_bh(&log->lock);
	if (!leading) {
		rdmalog_log_lock_appends(log);
		spin_lock_bh(&log->lock);
		pos = log->head;
		lsn = log->next_lsn;
		limit = log->tail + log->capacity;
		held->gen = log->gen;
		held->epoch = log->last_epoch;
		max_epoch = log->epoch;
		spin_unlock_bh(&log->lock);
		/*
		 * Past the head: what the primary wrote and had not (or not
		 * yet here) said is committed.
		 */
		rdmalog_log_walk_held(log, &pos, &lsn, limit, max_epoch,
				      &held->epoch, &held->gen);
		rdmalog_log_unlock_appends(log);
	}
	held->lsn = lsn - 1;
	if (!held->lsn) {
		held->epoch = 0;
		held->gen = 0;
	}
}

int rdmalog_log_hold_epoch_start(struct rdmalog_log *log, u64 id,
				 const struct rdmalog_log_es *es)
{
	u64 pos, lsn, limit, max_epoch, epoch, fp;
	int ret = 0;
	u32 gen;

	fp = RDMALOG_LOG_ES_FOOTPRINT;
	rdmalog_log_lock_appends(log);
	spin_lock_bh(&log->lock);
	if (log->dead)
		ret = -ENETDOWN;
	else if (log->leading || es->epoch <= log->epoch)
		ret = -EINVAL;
	else if (!id || log->id != id)
		ret = -ESTALE;
	pos = log->head;
	lsn = log->next_lsn;
	limit = log->tail + log->capacity;
	gen = log->gen;
	epoch = log->last_epoch;
	max_epoch = log->epoch;
	spin_unlock_bh(&log->lock);
	if (ret)
		goto out;
	rdmalog_log_walk_held(log, &pos, &lsn, limit, max_epoch, &epoch, &gen);
	if (lsn == 1) {
		epoch = 0;
		gen = 0;
	}
	/*
	 * It continues exactly what we hold (Documentation/protocol.rst,
	 * "The epoch-start record travels with the LEAD"): the same last
	 * record, (epoch, generation, LSN), at the same place.
	 */
	if (lsn != es->lsn || pos != es->pos || epoch != es->prev_epoch ||
	    gen != es->prev_gen) {
		ret = -ESTALE;
		goto out;
	}
	if (fp > limit - pos) {
		ret = -ENOSPC;
		goto out;
	}
	rdmalog_log_write_es(log, es);
	spin_lock_bh(&log->lock);
	if (log->dead)
		ret = -ENETDOWN;
	else
		log->epoch = max(log->epoch, es->epoch);
	spin_unlock_bh(&log->lock);
out:
	rdmalog_log_unlock_appends(log);
	return ret;
}

int rdmalog_log_lead(struct rdmalog_log *log, u64 epoch, u64 id,
		     struct rdmalog_log_held *held)
{
	u64 pos, lsn, limit, fp, max_epoch, e, n;
	const char *why;
	bool incomplete;
	int ret = 0;
	u32 g;

	rdmalog_log_lock_appends(log);
	spin_lock_bh(&log->lock);
	if (log->dead)
		ret = -ENETDOWN;
	else if (epoch <= log->epoch)
		ret = -EINVAL;
	pos = log->head;
	lsn = log->next_lsn;
	limit = log->tail + log->capacity;
	e = log->last_epoch;
	g = log->gen;
	max_epoch = log->epoch;
	spin_unlock_bh(&log->lock);
	if (ret)
		goto out;
	/*
	 * As rdmalog_log_held() counts them, and with their index slots
	 * filled in (read by nobody above next_lsn) before they are
	 * published below. Nothing writes the ring: no primary holds it.
	 */
	n = lsn;
	for (;;) {
		fp = rdmalog_log_verify_at(log, pos, lsn, limit, max_epoch,
					   &e, &g, &why, &incomplete);
		if (!fp)
			break;
		pos += fp;
		lsn++;
		*rdmalog_log_slot(log, lsn) = pos;
		cond_resched();
	}
	n = lsn - n;
	spin_lock_bh(&log->lock);
	if (log->dead) {
		ret = -ENETDOWN;
	} else {
		log->head = pos;
		log->next_lsn = lsn;
		log->last_epoch = e;
		log->epoch = epoch;
		log->gen = 0;
		log->lead_lsn = lsn;
		log->lead_prev_epoch = lsn > 1 ? e : 0;
		log->lead_prev_gen = lsn > 1 ? g : 0;
		log->leading = true;
		if (!log->id)
			log->id = id;
	}
	spin_unlock_bh(&log->lock);
	held->lsn = lsn - 1;
	held->epoch = lsn > 1 ? e : 0;
	held->gen = lsn > 1 ? g : 0;
	if (n)
		pr_info("took %llu record%s its primary had not committed, up to LSN %llu\n",
			n, n == 1 ? "" : "s", lsn - 1);
out:
	rdmalog_log_unlock_appends(log);
	return ret;
}

u64 rdmalog_log_step_down(struct rdmalog_log *log)
{
	struct rdmalog_ring_record rec;
	struct rdmalog_log_waiter *w;
	u64 n = 0, last = 0;
	bool read = false;

	rdmalog_log_lock_appends(log);
	spin_lock_bh(&log->lock);
	if (!log->dead) {
		n = log->next_lsn - log->commit_lsn;
		list_for_each_entry(w, &log->waiters, node)
			if (w->lsn >= log->commit_lsn)
				w->err = -ENOTCONN;
		log->head = *rdmalog_log_slot(log, log->commit_lsn);
		log->next_lsn = log->commit_lsn;
		log->lead_lsn = log->next_lsn;
		/* An appender waiting for space fails (-EROFS), woken below. */
		log->leading = false;
		/* Its last record's (epoch, generation), if retained. */
		read = log->next_lsn > log->first_lsn;
		if (read)
			last = *rdmalog_log_slot(log, log->next_lsn - 1);
	}
	spin_unlock_bh(&log->lock);
	/* rdmalog_log_lock_appends(): nothing writes the ring. */
	if (read)
		rdmalog_ring_read(log, last, &rec, sizeof(rec));
	spin_lock_bh(&log->lock);
	if (read) {
		log->last_epoch = le64_to_cpu(rec.epoch);
		log->gen = le32_to_cpu(rec.gen);
	}
	spin_unlock_bh(&log->lock);
	rdmalog_log_unlock_appends(log);
	rdmalog_log_wake(&log->commit_wq);
	rdmalog_log_wake(&log->space_wq);
	return n;
}

u64 rdmalog_log_id(struct rdmalog_log *log)
{
	u64 id;

	spin_lock_bh(&log->lock);
	id = log->id;
	spin_unlock_bh(&log->lock);
	return id;
}
