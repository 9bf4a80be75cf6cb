/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - private to the log's two files: log.c (the ring: appends,
 * commits, reads, trims, and the rules of the top comment) and
 * log_follow.c (between a primary and its backups: a backup's copy
 * judged, verified and applied as the primary's WRITEs land, restarted).
 * Nothing else includes it; the rest of the module sees log.h.
 */
#ifndef _RDMALOG_LOG_PRIV_H
#define _RDMALOG_LOG_PRIV_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "log.h"

#define RDMALOG_LOG_HDR_SIZE	sizeof(struct rdmalog_ring_record)
/* Footprint of the smallest record (1 byte of payload). */
#define RDMALOG_LOG_MIN_FOOTPRINT \
	ALIGN(RDMALOG_LOG_HDR_SIZE + 1, RDMALOG_RECORD_ALIGN)

/**
 * struct rdmalog_log - one log (see the comment at the top of log.c)
 * @ref: references: the node holds one while the log is up, every open
 *	descriptor one; the last rdmalog_log_put() frees everything
 * @ring: @capacity bytes of ring, allocated at creation, freed on release;
 *	written only in its free part: by an appender in the space it
 *	reserved, or by a holder of rdmalog_log_lock_appends()
 * @mem: the chunks behind @ring (rdmalog_log_ring_alloc()); constant
 * @capacity: ring size in bytes, a multiple of PAGE_SIZE (not necessarily
 *	a power of two); constant
 * @max_record: largest payload; constant
 * @epoch: a primary's: stamped into every record it appends; a backup's:
 *	the epoch of the primary it follows, the highest so far (records of
 *	any epoch up to it are taken); under @lock (set by
 *	rdmalog_log_follow(), with @id)
 * @id: the log's identity (&struct rdmalog_log_params); a backup's, set
 *	by rdmalog_log_follow(), and changed by it only while the log has
 *	never held a record (@next_lsn 1, @head 0); under @lock. While it is
 *	0 the log has never held a record
 * @nr_slots: entries of @pos_of; constant
 * @lock: protects @head, @tail, @first_lsn, @commit_lsn, @next_lsn,
 *	@pos_of and @dead, and orders ring accesses (see the top of
 *	log.c). Innermost lock; never held while sleeping or touching user
 *	memory. Taken with _bh everywhere: replication reads positions and
 *	commits from its completion handlers (softirq)
 * @head: stream position where the next record starts
 * @tail: stream position of record @first_lsn
 * @first_lsn: oldest retained record
 * @commit_lsn: every record below it is committed
 * @next_lsn: LSN of the next append
 * @pos_of: stream position of LSN l in pos_of[l % @nr_slots], valid for
 *	@first_lsn <= l <= @next_lsn
 * @dead: set once by rdmalog_log_shutdown(), never cleared
 * @gen: a primary's: the truncation generation stamped into appended
 *	records, raised by every rdmalog_log_truncate() that removes some
 *	(changed under @append_mutex and @lock); a backup's: the generation
 *	of its last published record (under @append_mutex and @lock)
 * @last_epoch: the epoch of the last published record (a primary's:
 *	@epoch once it appended); along the log (epoch, generation) never
 *	decreases. Under @append_mutex and @lock
 * @append_mutex: serializes appenders' reservations of ring space (only
 *	that: they copy and checksum their records without it, at once);
 *	rdmalog_log_lock_appends() takes it to stop new reservations and
 *	waits for the fills in flight. Taken before @lock. Readers and
 *	rdmalog_log_trim() never take it: neither waits for the other nor
 *	for an appender
 * @fill_wq: appenders whose filled record waits for the ones reserved
 *	before it (records are published in LSN order), and holders of
 *	append_mutex waiting for the fills in flight to end; woken when a
 *	record is published or the last fill in flight ends, on a rollback
 *	and on shutdown
 * @pending: &struct rdmalog_log_waiter of the records reserved and not
 *	published yet, in LSN order (their LSNs follow @next_lsn, their
 *	positions @head); under @lock
 * @filling: how many of them are still being filled; under @lock
 * @commit_wq: readers waiting for a record to be committed, appenders
 *	waiting for their own commit, pollers; woken on commit, trim and
 *	shutdown
 * @spinning: an appender spins for its commit (rdmalog_log_sleep_commit()),
 *	reaping completions through &rdmalog_log_hooks.poll; one at a time,
 *	the others sleep (its reaping commits their records too)
 * @space_wq: appenders waiting for ring space, pollers; woken on trim,
 *	floor rise, truncation and shutdown
 * @floor: replication's floor (rdmalog_log_set_floor()), U64_MAX for
 *	none; under @lock
 * @reserved_end: where the space appenders reserved and have not
 *	published yet ends (the end of the last of @pending; 0: none); under
 *	@lock. rdmalog_log_plan() must not lower @floor under it
 * @lead_lsn: a primary's first LSN of its epoch: rdmalog_log_truncate()
 *	removes nothing below it (the records before it, adopted when it
 *	won its election, may have been committed by the primary before it).
 *	1 for a log created by a primary; under @append_mutex and @lock
 * @lead_prev_epoch: with @lead_lsn, the epoch of record @lead_lsn - 1
 *	(0: none), what a LEAD says comes before the epoch-start record;
 *	under @append_mutex and @lock
 * @lead_prev_gen: its generation; the same
 * @leading: appends are taken: a primary's log, from its creation or
 *	rdmalog_log_lead() to rdmalog_log_step_down(). An appender checks
 *	it when it reserves space (an appender waiting for space when the
 *	primary steps down fails with -EROFS, never writes a backup's ring);
 *	under @append_mutex and @lock
 * @paused: a switchover is on (rdmalog_log_pause()): appenders wait as
 *	for space (a non-blocking one gets -EAGAIN); under @lock
 * @refusing: a switchover hands the log over (rdmalog_log_pause()):
 *	appenders fail with -EROFS as after a step-down; under @lock
 * @self_commit: appends commit themselves (rdmalog_log_set_policy());
 *	under @lock
 * @commit_timeout: jiffies an append waits for its commit otherwise;
 *	under @lock
 * @join_until_ns: until when (ktime_get_ns()) a new primary's backups may
 *	still be joining (rdmalog_log_post_epoch_start()): an append's
 *	wait for its commit is longer by what is left of it then, so that
 *	no append of that window times out, and removes the epoch-start
 *	record with its own, before the backups could join; 0 once past
 *	(the first wait after it clears it); under @lock
 * @waiters: &struct rdmalog_log_waiter of appends waiting for their commit;
 *	under @lock
 * @hooks: replication's callbacks, or NULL; set before use, then constant
 */
struct rdmalog_log {
	struct kref ref;
	void *ring;
	struct rdmalog_ring_mem mem;
	size_t capacity;
	u32 max_record;
	u64 epoch;
	u64 id;
	u64 nr_slots;

	spinlock_t lock;		/* innermost, see above */
	u64 head;
	u64 tail;
	u64 first_lsn;
	u64 commit_lsn;
	u64 next_lsn;
	u64 *pos_of;
	bool dead;
	u32 gen;
	u64 last_epoch;

	struct mutex append_mutex;	/* before @lock */
	wait_queue_head_t fill_wq;
	struct list_head pending;
	unsigned int filling;
	wait_queue_head_t commit_wq;
	wait_queue_head_t space_wq;
	atomic_t spinning;

	u64 floor;
	u64 reserved_end;
	u64 lead_lsn;
	u64 lead_prev_epoch;
	u32 lead_prev_gen;
	bool leading;
	bool paused;
	bool refusing;
	bool self_commit;
	unsigned long commit_timeout;
	u64 join_until_ns;
	struct list_head waiters;
	const struct rdmalog_log_hooks *hooks;
};

static inline u64 rdmalog_log_footprint(u64 len)
{
	return ALIGN(RDMALOG_LOG_HDR_SIZE + len, RDMALOG_RECORD_ALIGN);
}

/*
 * Whether a record header's flags are known, for its payload length:
 * none (an application's record), or an epoch-start record (8 bytes).
 */
static inline bool rdmalog_rec_flags_ok(const struct rdmalog_ring_record *rec)
{
	u16 flags = le16_to_cpu(rec->flags);

	return !flags || (flags == RDMALOG_RECORD_EPOCH_START &&
			  le32_to_cpu(rec->len) == sizeof(__le64));
}

static inline u64 *rdmalog_log_slot(struct rdmalog_log *log, u64 lsn)
{
	u64 rem;

	div64_u64_rem(lsn, log->nr_slots, &rem);
	return &log->pos_of[rem];
}

/* log.c: the ring's bytes and their CRCs, with no lock */
/* Copy stream bytes [@pos, @pos + @len) of the ring into @buf. */
void rdmalog_ring_read(struct rdmalog_log *log, u64 pos, void *buf, size_t len);
/* CRC32C (as the uapi defines it) of stream bytes [@pos, @pos + @len). */
u32 rdmalog_ring_crc(struct rdmalog_log *log, u64 pos, size_t len);
/* CRC32C of @rec's header up to its @hdr_crc. */
u32 rdmalog_hdr_crc(const struct rdmalog_ring_record *rec);
/*
 * Write the epoch-start record @es names at its position, as the primary
 * that appended it wrote it (log.c); the caller holds append_mutex and
 * owns those ring bytes.
 */
void rdmalog_log_write_es(struct rdmalog_log *log,
			  const struct rdmalog_log_es *es);
/*
 * Whether the primary's log still holds the epoch-start record @es (as
 * rdmalog_log_epoch_start() gave it): false once a commit timeout
 * removed it (its LSN may be another record's now). Lock held.
 */
bool rdmalog_log_es_current_locked(struct rdmalog_log *log,
				   const struct rdmalog_log_es *es);
/*
 * Stop appenders from writing the ring: take append_mutex (no new
 * reservation) and wait for the fills in flight to end; a record reserved
 * after one whose fill failed is given back to its appender, who reserves
 * again. On return no record is reserved and unpublished (the ring's free
 * part is the caller's, head and next_lsn are where the next record goes).
 * Sleeps, uninterruptibly: a fill ends when its copy from user memory does.
 */
void rdmalog_log_lock_appends(struct rdmalog_log *log);
void rdmalog_log_unlock_appends(struct rdmalog_log *log);
/* Wake @wq's sleepers, if any (after the state they wait for changed). */
void rdmalog_log_wake(wait_queue_head_t *wq);

#endif /* _RDMALOG_LOG_PRIV_H */
