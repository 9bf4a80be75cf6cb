/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - the log: an in-memory ring of records with LSNs.
 *
 * One struct rdmalog_log exists per "up" period of the node. It is created
 * by rdmalog_node_up(), shut down by rdmalog_node_down() and freed when
 * its last reference goes (every open descriptor holds one).
 *
 * The structure itself, its locks and its invariants are described in
 * log.c; everything here may be called from process context only and may
 * sleep unless stated otherwise.
 */
#ifndef _RDMALOG_LOG_H
#define _RDMALOG_LOG_H

#include <linux/align.h>
#include <linux/types.h>
#include <linux/poll.h>
#include <linux/uio.h>
#include "../uapi/rdmalog.h"

struct page;

struct rdmalog_log;

/**
 * struct rdmalog_log_params - what a log is created with
 * @capacity: ring bytes, multiple of PAGE_SIZE
 * @max_record: largest payload, <= capacity / 4
 * @epoch: epoch stamped into appended records (a backup's: 0 until it
 *	follows a primary)
 * @id: the log's identity: a primary's log, a random non-zero number made
 *	when it comes up; a backup's, 0 until it follows a primary's log
 *	(rdmalog_log_follow())
 * @backup: a backup's log: it takes no append until it leads
 *	(rdmalog_log_lead())
 */
struct rdmalog_log_params {
	u64 capacity;
	u32 max_record;
	u64 epoch;
	u64 id;
	bool backup;
};

/**
 * struct rdmalog_log_state - a consistent snapshot of the log's indices
 * @first_lsn: oldest retained record (== @next_lsn when empty)
 * @commit_lsn: every LSN below it is committed
 * @next_lsn: LSN of the next append
 * @capacity: ring bytes
 * @used: bytes held by retained records
 * @max_record: largest payload
 * @epoch: the epoch of the log's records
 * @id: the log's identity (0: a backup's that follows no log yet)
 */
struct rdmalog_log_state {
	u64 first_lsn;
	u64 commit_lsn;
	u64 next_lsn;
	u64 capacity;
	u64 used;
	u64 max_record;
	u64 epoch;
	u64 id;
};

/**
 * RDMALOG_LOG_MAX_RECORD_LIMIT - hard upper bound on @max_record
 *
 * The VFS clamps one read(2)/write(2)/writev(2) to MAX_RW_COUNT bytes, so
 * a larger record could neither be appended whole nor read back.
 */
#define RDMALOG_LOG_MAX_RECORD_LIMIT	MAX_RW_COUNT

/**
 * rdmalog_log_create() - allocate an empty log starting at LSN 1
 * @p: ring size, largest payload and epoch
 *
 * Return: the log with one reference held by the caller, or
 * ERR_PTR(-EINVAL) when @p->capacity is not a non-zero multiple of
 * PAGE_SIZE or @p->max_record is 0, above capacity / 4 or above
 * %RDMALOG_LOG_MAX_RECORD_LIMIT; ERR_PTR(-ENOMEM) when memory is short.
 * Never NULL.
 */
struct rdmalog_log *rdmalog_log_create(const struct rdmalog_log_params *p);

/** rdmalog_log_get() - take a reference; the caller must already hold one */
void rdmalog_log_get(struct rdmalog_log *log);

/**
 * rdmalog_log_put() - drop a reference; the last one frees ring and index.
 * A NULL @log is ignored.
 */
void rdmalog_log_put(struct rdmalog_log *log);

/**
 * rdmalog_log_shutdown() - mark the log dead and wake every waiter
 * @log: the log
 *
 * Blocked and later calls return -ENETDOWN (poll reports EPOLLERR |
 * EPOLLHUP). Idempotent; the memory stays until the last reference goes.
 */
void rdmalog_log_shutdown(struct rdmalog_log *log);

/** rdmalog_log_is_dead() - whether rdmalog_log_shutdown() was called */
bool rdmalog_log_is_dead(struct rdmalog_log *log);

/**
 * rdmalog_log_append() - append the whole of @from as one record
 * @log: the log
 * @from: the payload; fully consumed on success
 * @nonblock: fail with -EAGAIN instead of waiting for ring space
 * @lsn: out: the record's LSN on success
 *
 * Returns once the record is committed. A failed call leaves nothing in
 * the log that will ever be committed.
 *
 * Return: 0, -EINVAL (empty), -EMSGSIZE (above max_record), -EAGAIN,
 * -ERESTARTSYS (signal while waiting for space), -EFAULT, -ENETDOWN,
 * -ETIMEDOUT (not committed within the commit timeout: removed), -EINTR
 * (fatal signal while waiting for the commit: the outcome is unknown to
 * the caller, who is dying).
 */
int rdmalog_log_append(struct rdmalog_log *log, struct iov_iter *from,
		       bool nonblock, u64 *lsn);

/**
 * struct rdmalog_log_waiter - an append, from its reservation to the end
 * of its wait for the commit
 * @node: entry on the log's @pending from its reservation to its publish,
 *	then on its @waiters to the end of the wait; under the log's lock
 * @lsn: its record
 * @pos: where its record starts in the stream; set at its reservation
 * @footprint: the ring bytes its record takes; the same
 * @state: enum rdmalog_fill_state; under the log's lock
 * @err: set under the log's lock when the record is removed: by
 *	rdmalog_log_truncate() (-ETIMEDOUT) or rdmalog_log_step_down()
 *	(-ENOTCONN); checked before the commit LSN, because the LSN is
 *	reused by the next append and may be committed then
 *
 * The log's (log.c): its owner only provides the memory, on its stack,
 * from rdmalog_log_post_epoch_start() (or the append) to the end of the
 * wait, which must follow a successful post.
 */
struct rdmalog_log_waiter {
	struct list_head node;
	u64 lsn;
	u64 pos;
	u64 footprint;
	u8 state;
	int err;
};

/**
 * rdmalog_log_post_epoch_start() - append a new primary's first record,
 * not waiting for its commit
 * @log: the log, of the primary that just won its election
 *	(rdmalog_log_lead())
 * @nonblock: fail with -EAGAIN rather than wait for ring space
 * @join_ms: how long its backups may take to join: from now to then, every
 *	append's wait for its commit (this record's too) is that much longer
 *	than the commit timeout
 * @w: where the record waits for its commit; on success the caller must
 *	call rdmalog_log_wait_epoch_start() with it
 * @lsn: out: the record's LSN on success
 *
 * An epoch-start record (%RDMALOG_RECORD_EPOCH_START, its payload the
 * epoch), published as rdmalog_log_append() publishes: its commit
 * commits every record the primary adopted before it. Posted as soon as
 * the primary leads, before its LEADs (rdmalog_log_epoch_start() names it
 * in them) and before its backups joined: replication sends it with what
 * a backup lacks when it joins, unless the backup holds it already.
 *
 * Return: 0, or as rdmalog_log_append() before its wait for the commit
 * (-EAGAIN, -ERESTARTSYS, -ENETDOWN).
 */
int rdmalog_log_post_epoch_start(struct rdmalog_log *log, bool nonblock,
				 u32 join_ms, struct rdmalog_log_waiter *w,
				 u64 *lsn);

/**
 * rdmalog_log_wait_epoch_start() - wait for the commit of the record
 * rdmalog_log_post_epoch_start() posted with @w
 * @log: the log
 * @w: the post's
 *
 * Return: 0 once committed, or as rdmalog_log_append()'s wait
 * (-ETIMEDOUT, -ENOTCONN, -ENETDOWN, -EINTR).
 */
int rdmalog_log_wait_epoch_start(struct rdmalog_log *log,
				 struct rdmalog_log_waiter *w);

/**
 * struct rdmalog_log_es - an epoch-start record, as a LEAD names it
 * @pos: the stream position where it starts
 * @lsn: its LSN, the first of its epoch
 * @epoch: its epoch
 * @timestamp_ns: its header's
 * @prev_epoch: the epoch of the record before it (0: it is LSN 1)
 * @gen: its header's truncation generation
 * @prev_gen: the generation of the record before it
 *
 * With them, the header of the record is known entirely: its payload is
 * the epoch (8 bytes, little-endian).
 */
struct rdmalog_log_es {
	u64 pos;
	u64 lsn;
	u64 epoch;
	u64 timestamp_ns;
	u64 prev_epoch;
	u32 gen;
	u32 prev_gen;
};

/* RDMALOG_LOG_ES_FOOTPRINT - ring bytes of an epoch-start record */
#define RDMALOG_LOG_ES_FOOTPRINT \
	ALIGN(sizeof(struct rdmalog_ring_record) + sizeof(__le64), \
	      RDMALOG_RECORD_ALIGN)

/**
 * rdmalog_log_epoch_start() - a primary's epoch-start record, if its log
 * holds it
 * @log: the log
 * @es: out: the record, on true
 *
 * Process or softirq context.
 *
 * Return: true when @log leads and holds the epoch-start record of its
 * epoch (posted by rdmalog_log_post_epoch_start(), not removed since).
 */
bool rdmalog_log_epoch_start(struct rdmalog_log *log,
			     struct rdmalog_log_es *es);

/**
 * rdmalog_log_pause() - pause, refuse or resume the appends (a switchover)
 * @log: the primary's log
 * @pause: appenders wait from now on as for ring space (a non-blocking
 *	one gets -EAGAIN)
 * @refuse: appenders, waiting ones included, fail with -EROFS as after a
 *	step-down (the log is being handed over); above @pause
 *
 * Both false: they go on. Records appended before go on to their commit.
 */
void rdmalog_log_pause(struct rdmalog_log *log, bool pause, bool refuse);

/**
 * rdmalog_log_quiet() - no appender between its reservation and its
 * publication
 * @log: the log
 *
 * An appender that reserved ring space before the pause publishes its
 * record after it (the pause stops reservations only): until it has,
 * the next LSN does not show the record. A switchover waits for this
 * before it judges the drain.
 *
 * Return: true when no reservation is outstanding.
 */
bool rdmalog_log_quiet(struct rdmalog_log *log);

/**
 * rdmalog_log_adopted_pending() - whether records the primary adopted
 * when it took the lead (rdmalog_log_lead()) still wait for their commit
 * @log: the log
 *
 * Return: true while the commit point is below the first LSN of its
 * epoch: only a commit in its epoch (its epoch-start record's) commits
 * them.
 */
bool rdmalog_log_adopted_pending(struct rdmalog_log *log);

/**
 * rdmalog_log_read() - copy the payload of record @lsn to @to
 * @log: the log
 * @lsn: the record to read
 * @to: where the payload goes
 * @nonblock: with @wait, fail with -EAGAIN instead of sleeping
 * @wait: false: an uncommitted @lsn gives -ENODATA at once; true: wait
 *	for it to be committed (unless @nonblock)
 * @hdr: out (may be NULL): the header in host order, on success and on
 *	-EMSGSIZE
 *
 * Holds no lock while it copies to @to, so a stalled copy (a user page
 * served by userfaultfd or FUSE) holds up neither trims nor appends. On a
 * backup, a record not committed here has replication take what the
 * primary has told since (&rdmalog_log_hooks.demand) before the answer,
 * and again before each sleep. Process context.
 *
 * Return: the payload length, or -ERANGE (trimmed or 0; also when the
 * record was trimmed while it was being read: then @to may have been
 * written to), -ENODATA, -EAGAIN, -ERESTARTSYS, -EMSGSIZE (@to is too
 * small), -EBADMSG (header or payload CRC32C mismatch), -EFAULT,
 * -ENETDOWN.
 */
ssize_t rdmalog_log_read(struct rdmalog_log *log, u64 lsn,
			 struct iov_iter *to, bool nonblock, bool wait,
			 struct rdmalog_record_header *hdr);

/**
 * rdmalog_log_trim() - discard every record below @lsn
 * @log: the log
 * @lsn: the new first_lsn
 *
 * Does not sleep: readers still copying out a record discarded here are
 * not waited for; they fail with -ERANGE.
 *
 * Return: 0 (also when @lsn <= first_lsn: nothing to do), -ERANGE when
 * @lsn > commit_lsn, -ENETDOWN when dead.
 */
int rdmalog_log_trim(struct rdmalog_log *log, u64 lsn);

/**
 * rdmalog_log_commit() - mark every record below @upto_lsn committed
 * @log: the log
 * @upto_lsn: the new commit_lsn; clamped to next_lsn, never moves back
 *
 * Wakes readers and the appenders whose records it commits (only
 * those: rdmalog_log_wake_commit()). Takes only the
 * log's spinlock (BH-safe) and does not sleep, so replication may call it
 * from its completion handlers (softirq).
 */
void rdmalog_log_commit(struct rdmalog_log *log, u64 upto_lsn);

/**
 * struct rdmalog_ring_mem - the ring's memory, as RDMA registers it
 * @ring: the CPU's linear view: @chunks vmap()ed in order
 * @chunks: @nr_chunks physically contiguous, naturally aligned chunks of
 *	2^@chunk_order pages each (not compound pages), in ring order:
 *	ring byte B lives in chunk B >> (PAGE_SHIFT + @chunk_order)
 * @nr_chunks: DIV_ROUND_UP(@capacity, chunk size)
 * @chunk_order: the same for every chunk, 0 .. 10
 * @capacity: ring bytes (a multiple of PAGE_SIZE); the last chunk holds
 *	@capacity - (@nr_chunks - 1) * chunk size of them, the rest of it is
 *	never used (nor registered)
 *
 * All zeroed at allocation; owned by log.c.
 */
struct rdmalog_ring_mem {
	void *ring;
	struct page **chunks;
	unsigned long nr_chunks;
	unsigned int chunk_order;
	u64 capacity;
};

/**
 * rdmalog_log_ring_mem() - the ring's memory, for registration with RDMA
 * @log: the log
 *
 * Return: its description, constant and valid while the caller holds a
 * reference to @log.
 */
const struct rdmalog_ring_mem *rdmalog_log_ring_mem(struct rdmalog_log *log);

/**
 * rdmalog_log_get_head() - stream position and LSN of the next record
 * @log: the log
 * @head: out: where the next record starts in the stream
 * @next_lsn: out: its LSN
 *
 * Process or softirq context.
 */
void rdmalog_log_get_head(struct rdmalog_log *log, u64 *head, u64 *next_lsn);

/**
 * struct rdmalog_log_pos - stream positions and LSNs, one snapshot
 * @tail: stream position of record @first_lsn
 * @head: stream position where record @next_lsn will start
 * @commit_pos: stream position of record @commit_lsn
 * @first_lsn: oldest retained record
 * @commit_lsn: every record below it is committed
 * @next_lsn: LSN of the next record
 */
struct rdmalog_log_pos {
	u64 tail;
	u64 head;
	u64 commit_pos;
	u64 first_lsn;
	u64 commit_lsn;
	u64 next_lsn;
};

/** rdmalog_log_get_pos() - snapshot positions; process or softirq context */
void rdmalog_log_get_pos(struct rdmalog_log *log, struct rdmalog_log_pos *p);

/**
 * struct rdmalog_log_hooks - replication's part in appends (repl.c)
 * @kick: records were published or trimmed: replicate them. Called
 *	without any log lock, in process or softirq context; it only posts
 *	what the log being replicated has, whichever log calls it
 * @busy_poll: an appender of @log spins for its commit: until @done(@arg)
 *	or ktime_get_ns() reaches @until_ns (or the CPU is wanted), reap the
 *	completions that may commit it, in the caller's context (process,
 *	no lock held, must not sleep); may be NULL
 * @quiesce: before uncommitted records of @log are removed: stop posting
 *	and wait until nothing of the ring is in flight. Process context, may
 *	sleep; called with the append mutex held. Does nothing unless @log
 *	is the log being replicated (a log of an earlier up period lives on
 *	while a descriptor or a writer holds it)
 * @resume: after the removal: @log now ends at @head / @next_lsn; nothing
 *	unless @log is the log being replicated
 * @demand: a reader of @log on a backup finds record @lsn not committed
 *	(or, @lsn 0, its state is asked for): replication takes what the
 *	primary has told since (its notice block), in the caller's context
 *	(@sync: process context, no lock held; it may sleep) or in a work;
 *	with @lsn, it also asks the primary to be told once @lsn commits.
 *	Returns false when it did nothing (no primary writes to @log)
 *
 * Set once by rdmalog_log_set_hooks() before the log is used, constant
 * afterwards.
 */
struct rdmalog_log_hooks {
	void (*kick)(void);
	void (*busy_poll)(struct rdmalog_log *log, bool (*done)(void *arg),
			  void *arg, u64 until_ns);
	void (*quiesce)(struct rdmalog_log *log);
	void (*resume)(struct rdmalog_log *log, u64 head, u64 next_lsn);
	bool (*demand)(struct rdmalog_log *log, u64 lsn, bool sync);
};

/**
 * rdmalog_log_ring_va() - the kernel address of stream position @pos in
 * @log's ring (contiguous up to the ring's end): what an inline WRITE of
 * published bytes copies from
 * @log: the log
 * @pos: a stream position
 */
void *rdmalog_log_ring_va(struct rdmalog_log *log, u64 pos);

/**
 * rdmalog_log_advance_commit() - rdmalog_log_commit() without the wakeup
 * @log: the log
 * @upto_lsn: as there
 *
 * For a caller that holds its own lock: it calls rdmalog_log_wake_commit()
 * once it dropped it. Softirq-safe.
 *
 * Return: whether the commit LSN moved.
 */
bool rdmalog_log_advance_commit(struct rdmalog_log *log, u64 upto_lsn);

/**
 * rdmalog_log_wake_commit() - wake the readers and pollers of @log, and
 * the appenders whose records are committed (only those)
 * @log: the log
 *
 * Any context but a hard interrupt.
 */
void rdmalog_log_wake_commit(struct rdmalog_log *log);

void rdmalog_log_set_hooks(struct rdmalog_log *log,
			   const struct rdmalog_log_hooks *hooks);

/**
 * rdmalog_log_set_policy() - how appends commit
 * @log: the log
 * @self_commit: an append commits itself as soon as it is in the ring
 *	(async durability, or a cluster of one); otherwise it waits for
 *	replication's rdmalog_log_commit()
 * @timeout_ms: without @self_commit, how long an append waits for its
 *	commit. When it runs out, every uncommitted record is removed from
 *	the log (rdmalog_log_truncate()) and their appends fail with
 *	-ETIMEDOUT; a record that failed is never reported committed
 *
 * Process or softirq context.
 */
void rdmalog_log_set_policy(struct rdmalog_log *log, bool self_commit,
			    u32 timeout_ms);

/**
 * rdmalog_log_set_floor() - keep ring bytes from @floor on from reuse
 * @log: the log
 * @floor: appends write no stream position at or above @floor + capacity
 *	(U64_MAX: no limit beyond the log's own tail). Replication sets it
 *	to the lowest tail among the backups it writes to, so that it never
 *	overwrites a record a backup still holds
 *
 * Wakes appenders waiting for space when it rises. Softirq-safe.
 */
void rdmalog_log_set_floor(struct rdmalog_log *log, u64 floor);

/**
 * enum rdmalog_log_plan_kind - how a backup gets what it lacks of our log
 * @RDMALOG_PLAN_JOIN: it is at one of our record boundaries and (or: the
 *	caller allowed it) lacks no committed record: replicate to it
 * @RDMALOG_PLAN_PULL: at one of our record boundaries, below our commit
 *	point: it pulls [start, target) before it joins
 * @RDMALOG_PLAN_RESET: behind our first retained record: it restarts its
 *	log at our first record (start) and pulls up to target
 * @RDMALOG_PLAN_DIVERGED: it holds what we never had, or retains bytes we
 *	would overwrite, or we are dead: nothing can be done
 * @RDMALOG_PLAN_BUSY: it retains bytes that an append being written now
 *	overwrites in its ring: not now (judge it again later)
 * @RDMALOG_PLAN_OTHER: it holds records of another log (another history):
 *	never joined by position, not replicated to
 * @RDMALOG_PLAN_LATER: (@es_only of rdmalog_log_plan()) anything but a
 *	JOIN at the end of the epoch-start record: nothing was done, the
 *	backup is to be judged in full
 */
enum rdmalog_log_plan_kind {
	RDMALOG_PLAN_JOIN,
	RDMALOG_PLAN_PULL,
	RDMALOG_PLAN_RESET,
	RDMALOG_PLAN_DIVERGED,
	RDMALOG_PLAN_BUSY,
	RDMALOG_PLAN_OTHER,
	RDMALOG_PLAN_LATER,
};

/**
 * struct rdmalog_log_plan - where a backup starts, and up to where it pulls
 * @start_pos: stream position of record @start_lsn
 * @start_lsn: the backup's next LSN once it starts (restarted, if RESET)
 * @target_pos: stream position of record @target_lsn (== @start_pos for
 *	JOIN)
 * @target_lsn: our commit LSN (== @start_lsn for JOIN)
 * @floor: the floor set (see rdmalog_log_set_floor())
 * @es: JOIN at the end of the epoch-start record the backup holds (the
 *	@es of rdmalog_log_plan()): every record below @start_lsn is in its
 *	ring
 */
struct rdmalog_log_plan {
	u64 start_pos;
	u64 start_lsn;
	u64 target_pos;
	u64 target_lsn;
	u64 floor;
	bool es;
};

/**
 * rdmalog_log_plan() - judge a backup at @lsn / @pos against our log
 * @log: the log (of the primary)
 * @id: the log the backup follows (its HELLO's log id; 0: none yet)
 * @lsn: the backup's next LSN
 * @pos: the backup's head
 * @tail: the backup's tail
 * @floor: the floor of the other backups (U64_MAX for none)
 * @pull: a backup below our commit point must pull (else it joins and
 *	replication writes what it lacks)
 * @es: NULL, or our epoch-start record, which the backup says it holds
 *	with everything before it (it wrote it into its ring on our LEAD):
 *	if our log still holds it (no commit timeout removed it), the
 *	backup is judged at its end (the LSN after it) instead of @lsn /
 *	@pos, and joins there whatever @pull says (@p->es)
 * @es_only: judge only that: a backup that would not join at the end of
 *	@es is %RDMALOG_PLAN_LATER, and nothing is set
 * @p: out: the plan, for JOIN, PULL and RESET
 *
 * A backup that follows another log is never judged by position unless
 * its log never held a record (@lsn 1, @pos and @tail 0): otherwise
 * %RDMALOG_PLAN_OTHER.
 *
 * Atomically with the judgement, for JOIN, PULL and RESET, the floor is
 * set to the lower of @floor and the backup's tail-to-be, so that no
 * append overwrites what the backup retains or is about to read.
 * Softirq-safe.
 *
 * Return: &enum rdmalog_log_plan_kind.
 */
int rdmalog_log_plan(struct rdmalog_log *log, u64 id, u64 lsn, u64 pos,
		     u64 tail, u64 floor, bool pull,
		     const struct rdmalog_log_es *es, bool es_only,
		     struct rdmalog_log_plan *p);

/**
 * rdmalog_log_apply() - a backup exposes records the primary wrote
 * @log: the log (of a backup: nothing appends to it locally)
 * @upto_pos: stream position where record @upto_lsn starts
 * @upto_lsn: every record below it is committed on the primary
 * @epoch: the epoch every record must carry
 * @why: out: on -EBADMSG, what was wrong (static text)
 *
 * Verifies each record from head up to @upto_lsn as it lies in the ring
 * (magic, version, LSN continuity, epoch, header and payload CRC32C,
 * length within max_record, ending exactly at @upto_pos), then publishes
 * and commits them all. Process context.
 *
 * Return: 0 (also when @upto_lsn <= next_lsn: nothing to do), -EBADMSG
 * (nothing published), -ENETDOWN.
 */
int rdmalog_log_apply(struct rdmalog_log *log, u64 upto_pos, u64 upto_lsn,
		      u64 epoch, const char **why);

/**
 * rdmalog_log_apply_pulled() - rdmalog_log_apply() for a range being pulled
 * @log: the log (of a backup)
 * @limit: every stream byte below it is in the ring (pulled), @limit <=
 *	@upto_pos
 * @upto_pos: where record @upto_lsn starts (the end of the range)
 * @upto_lsn: every record below it is committed on the primary
 * @epoch: the epoch every record must carry
 * @why: out: on -EBADMSG, what was wrong (static text)
 *
 * Verifies as rdmalog_log_apply() does, but only the records that end at
 * or below @limit, and publishes those; a record that @limit cuts is left
 * for a later call. With @limit == @upto_pos it is rdmalog_log_apply().
 * Process context.
 *
 * Return: 0, -EBADMSG (nothing published), -ENETDOWN.
 */
int rdmalog_log_apply_pulled(struct rdmalog_log *log, u64 limit,
			     u64 upto_pos, u64 upto_lsn, u64 epoch,
			     const char **why);

/**
 * rdmalog_log_reset() - a backup restarts its log, empty, further on
 * @log: the log (of a backup: nothing appends to it locally)
 * @lsn: the new first, commit and next LSN; above the current next LSN
 * @pos: the new tail and head; at or above the current head
 *
 * What a backup does when the primary no longer retains the records that
 * follow its head: every retained record is discarded (counted as trimmed;
 * readers of them get -ERANGE as after a trim, pollers whose cursor is
 * below @lsn EPOLLERR), and the log continues at @lsn. Process context.
 *
 * Return: 0, -EINVAL (@lsn or @pos would not move the log forward, or
 * appends are waiting for their commit), -ENETDOWN.
 */
int rdmalog_log_reset(struct rdmalog_log *log, u64 lsn, u64 pos);

/**
 * rdmalog_log_follow() - a backup takes on the log of its primary
 * @log: the log (of a backup)
 * @id: the primary's log id (non-zero)
 * @epoch: the primary's epoch
 *
 * A backup follows exactly one log: the first primary whose records it is
 * given (its first CATCHUP or notice) makes its log that log, as long as
 * it never held a record (LSN 1 at position 0). Softirq-safe.
 *
 * Return: 0 (it follows @id now, or did already), -ESTALE (it follows
 * another log and held records), -ENETDOWN.
 */
int rdmalog_log_follow(struct rdmalog_log *log, u64 id, u64 epoch);

/**
 * struct rdmalog_log_held - the last record a log holds: a node's position
 * in an election (compared by @epoch, then @gen, then @lsn)
 * @epoch: its epoch (0 when the log holds none)
 * @gen: its truncation generation (&rdmalog_ring_record.gen)
 * @lsn: its LSN (0 when the log holds none)
 */
struct rdmalog_log_held {
	u64 epoch;
	u64 lsn;
	u32 gen;
};

/**
 * rdmalog_log_held() - the last record a backup's ring holds
 * @log: the log; of a backup whose primary can write to it no more
 *	(fenced), or the answer may be out of date at once
 * @held: out: the last published record, or the last of the records
 *	that follow it in the ring and verify (contiguous LSNs, the log's
 *	epoch, no older generation, both CRC32C) although no primary said
 *	they are committed yet. What was trimmed counts: a log whose
 *	records were all trimmed still holds its last one's LSN. A leading
 *	log's: its last published record (what its appenders copy is not
 *	held yet), with no wait for them. Process context.
 */
void rdmalog_log_held(struct rdmalog_log *log, struct rdmalog_log_held *held);

/**
 * rdmalog_log_hold_epoch_start() - a backup writes its new primary's
 * epoch-start record into its ring
 * @log: the log (of a backup); no primary but the one that sent @es holds
 *	its ring, and that one has not been told where it is yet (its RING
 *	follows)
 * @id: the log that primary leads
 * @es: the record, as its LEAD named it; @es->epoch is the LEAD's
 *
 * When the records the ring holds, as rdmalog_log_held() counts them, end
 * exactly where @es starts (@es->pos, LSN @es->lsn - 1 of epoch
 * @es->prev_epoch and generation @es->prev_gen), the log follows @id, and
 * the record fits below the tail plus the capacity: writes the record
 * there, byte for byte what the primary holds (uncommitted, not
 * published: as the primary's WRITE would have put it), and takes @es's
 * epoch as the log's (as rdmalog_log_follow() does), so that
 * rdmalog_log_held() counts it from now on. Otherwise nothing changes.
 * Process context.
 *
 * Return: 0 (written), -ESTALE (the ring does not end there, or the log
 * follows another), -ENOSPC (no room for it), -EINVAL (@es is not of a
 * later epoch than the log's, or the log leads), -ENETDOWN.
 */
int rdmalog_log_hold_epoch_start(struct rdmalog_log *log, u64 id,
				 const struct rdmalog_log_es *es);

/**
 * rdmalog_log_lead() - a backup's log becomes a primary's
 * @log: the log, of a backup that won an election; nothing writes its
 *	ring any more (no primary holds it: the caller stopped the
 *	connections)
 * @epoch: the epoch it leads; above the log's
 * @id: the identity to take if it follows no log yet (non-zero)
 * @held: out: the last record it holds now (as rdmalog_log_held())
 *
 * The records after the head that rdmalog_log_held() counts are
 * published, not committed: the new primary's commits decide them. From
 * now on the log appends in @epoch with generation 0, and
 * rdmalog_log_truncate() removes nothing below its next LSN. Process
 * context.
 *
 * Return: 0, -EINVAL (@epoch not above the log's), -ENETDOWN.
 */
int rdmalog_log_lead(struct rdmalog_log *log, u64 epoch, u64 id,
		     struct rdmalog_log_held *held);

/**
 * rdmalog_log_step_down() - a primary's log becomes a backup's
 * @log: the log, of a primary deposed by a later epoch's; nothing
 *	replicates or appends it any more (the caller stopped serving it)
 *
 * Every record not committed is removed, its append failing with
 * -ENOTCONN (its outcome is unknown: the new primary may hold it and
 * commit it); the log then holds what a backup holds, its committed
 * records, and follows the new primary from there. Process context.
 *
 * Return: the number of records removed.
 */
u64 rdmalog_log_step_down(struct rdmalog_log *log);

/* The log's identity (0: a backup's that follows no log yet). */
u64 rdmalog_log_id(struct rdmalog_log *log);

/**
 * rdmalog_log_truncate() - remove every uncommitted record
 * @log: the log
 *
 * What a commit timeout does (see rdmalog_log_set_policy()); the appends
 * of the removed records fail with -ETIMEDOUT. A primary that won an
 * election removes none of the records it adopted (rdmalog_log_lead()):
 * only its own epoch's. Process context.
 *
 * Return: the number of records removed.
 */
u64 rdmalog_log_truncate(struct rdmalog_log *log);

/**
 * rdmalog_log_refresh() - on a backup, take what the primary has told
 * since (&rdmalog_log_hooks.demand): before the state is shown. Process
 * context, no lock held; may sleep.
 * @log: the log
 */
void rdmalog_log_refresh(struct rdmalog_log *log);

/** rdmalog_log_get_state() - snapshot the indices under the log's lock */
void rdmalog_log_get_state(struct rdmalog_log *log,
			   struct rdmalog_log_state *st);

/**
 * rdmalog_log_poll() - poll mask for a descriptor whose cursor is @cursor
 * @log: the log
 * @file: the descriptor being polled
 * @wait: the poll table
 * @cursor: the descriptor's cursor (an LSN)
 *
 * Return: EPOLLIN | EPOLLRDNORM when a committed record is at @cursor
 * (plus EPOLLERR when @cursor is below first_lsn), EPOLLOUT | EPOLLWRNORM
 * when a max_record record fits, all of them plus EPOLLHUP when dead.
 */
__poll_t rdmalog_log_poll(struct rdmalog_log *log, struct file *file,
			  poll_table *wait, u64 cursor);

#endif /* _RDMALOG_LOG_H */
