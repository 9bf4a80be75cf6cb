// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the log ring.
 *
 * The log is a byte stream laid over a ring of @capacity bytes. Stream
 * position P lives at ring byte P mod capacity. Records follow each other
 * in the stream, each a struct rdmalog_ring_record (48 bytes, little
 * endian) followed by its payload and zero padding up to
 * RDMALOG_RECORD_ALIGN; a record, header included, may wrap around the
 * ring's end. The record with LSN 1 starts at stream position 0.
 *
 * Positions and LSNs only grow:
 *
 *	tail <= head,   head - tail <= capacity
 *	first_lsn <= commit_lsn <= next_lsn
 *
 * [tail, head) holds the records first_lsn .. next_lsn - 1; the rest of
 * the ring is free. Every record takes at least RDMALOG_LOG_MIN_FOOTPRINT
 * bytes, so at most capacity / RDMALOG_LOG_MIN_FOOTPRINT records are
 * retained and the index pos_of[] of capacity / RDMALOG_LOG_MIN_FOOTPRINT
 * + 1 slots holds, without collision, the stream position of every LSN in
 * first_lsn .. next_lsn (the last one being head, where the next record
 * will start): pos_of[lsn % nr_slots].
 *
 * Appending: an appender takes append_mutex and, under lock, reserves the
 * ring space of its record behind those reserved before it (their end is
 * reserved_end) and takes the next LSN; it lets go of append_mutex at
 * once. It then copies and checksums its record into that space with no
 * lock held, beside the other appenders doing the same in theirs: nobody
 * else writes there, and the only readers there are late readers of
 * records trimmed meanwhile, which throw away what they read (see below).
 * Records are published in LSN order, under lock (next_lsn, head and the
 * index move together), so a partly written record is never visible:
 * the appender that ends the fill of the oldest pending record publishes
 * it and every filled one after it; one that ends its fill early waits
 * for that. A fill that fails (-EFAULT: user memory went away) leaves a
 * hole that the records after it cannot be published over: its appender
 * takes append_mutex, waits for the fills in flight, and gives every
 * record reserved after its own back to its appender, who reserves and
 * copies it again (rdmalog_log_lock_appends()). Commit is a separate step
 * (rdmalog_log_commit): replication commits from its completion handlers
 * once enough backups hold a record, unless appends commit themselves
 * (async durability, or a cluster of one). An append waits for its commit
 * up to the commit timeout; then every uncommitted record is removed
 * (rdmalog_log_truncate(): head and next_lsn move back to the commit
 * point, the only time they move back) and their appends fail.
 *
 * A backup's log is written by the primary's RDMA WRITEs into the free
 * part of its ring; rdmalog_log_apply() (log_follow.c, with the other
 * functions between a primary and its backups) verifies and publishes
 * what the primary says is committed. Replication keeps the primary from reusing
 * ring space that a backup still retains (the floor).
 *
 * Reading is optimistic, like a seqlock read side: a reader holds no lock
 * while it touches the ring or user memory, so a reader stalled in a page
 * fault (userfaultfd, FUSE) holds up neither trims nor appends. It looks
 * up the record's stream range [pos, next) under lock, verifies the header
 * and payload CRC from the ring, copies the payload out, and then checks
 * under lock that the record is still retained (first_lsn <= its LSN, that
 * is tail <= pos). If it is not, a trim ran meanwhile and an appender may
 * have overwritten some of the bytes either read saw: the reader discards
 * everything it found and returns -ERANGE, as for a record trimmed before
 * the read began. One check after both reads covers both.
 *
 * Why a passed check means that no read saw an overwritten byte: an
 * appender writes only stream positions [head, tail + capacity) as it saw
 * them at reservation, and while tail <= pos that range aliases no ring
 * byte of [pos, next) (both lie in [pos, pos + capacity)). So the bytes of
 * the record are rewritten only by an appender whose reservation saw a
 * tail above pos, set by some trim T. Sections under lock are totally
 * ordered; the reader's check saw the old first_lsn, so its section came
 * before T's, and T's came before the appender's reservation, which saw
 * T's tail. The reader's ring reads precede its check's spin_unlock()
 * (RELEASE; the spin_lock() before it is only an ACQUIRE and would let
 * them slip into the section, but no further), T's lock and unlock carry
 * that on, and the appender's ring writes follow its spin_lock() (ACQUIRE):
 * every read happens before every write that could change what it read.
 * The other way round, an appender writes its record before the
 * spin_unlock() that publishes it, and a reader looks a record up only
 * after a spin_lock() that sees it committed, so it reads it whole.
 */
#include <crypto/hash.h>
#include <linux/crc32c.h>
#include <linux/kcsan-checks.h>
#include <linux/kref.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>

#include "../uapi/rdmalog_genl.h"
#include "compat.h"
#include "inject.h"
#include "log.h"
#include "log_priv.h"
#include "stats.h"
#include "trace.h"

/*
 * Where an appender's record is (&struct rdmalog_log_waiter.state), under
 * the log's lock: on @pending while RESERVED (being filled), FILLED or
 * FAILED; then PUBLISHED (on @waiters), or RETRY (taken off @pending by a
 * rollback: reserve again) or REMOVED (the failed one itself, or any on a
 * dead log).
 */
enum rdmalog_fill_state {
	RDMALOG_FILL_RESERVED,
	RDMALOG_FILL_FILLED,
	RDMALOG_FILL_FAILED,
	RDMALOG_FILL_PUBLISHED,
	RDMALOG_FILL_RETRY,
	RDMALOG_FILL_REMOVED,
};

/*
 * The crc32c driver the crypto API picks now: the one libcrc32c bound
 * when it loaded, as modprobe loads the crc32c drivers before it (its
 * soft dependency). Read only, for the benchmarks and the curious.
 */
static int rdmalog_crc32c_driver_get(char *buf, const struct kernel_param *kp)
{
	struct crypto_shash *tfm = crypto_alloc_shash("crc32c", 0, 0);
	int n;

	if (IS_ERR(tfm))
		return scnprintf(buf, PAGE_SIZE, "none (error %ld)\n",
				 PTR_ERR(tfm));
	n = scnprintf(buf, PAGE_SIZE, "%s\n", crypto_shash_driver_name(tfm));
	crypto_free_shash(tfm);
	return n;
}

static const struct kernel_param_ops rdmalog_crc32c_driver_ops = {
	.get = rdmalog_crc32c_driver_get,
};
module_param_cb(crc32c_driver, &rdmalog_crc32c_driver_ops, NULL, 0444);
MODULE_PARM_DESC(crc32c_driver,
		 "the CRC32C driver records are checked with (read only)");

/* One contiguous piece of a range of the ring. */
struct rdmalog_seg {
	void *p;
	size_t len;
};

/* CRC32C as the uapi defines it: seed ~0, final xor ~0. */
static u32 rdmalog_crc_finish(u32 crc)
{
	return ~crc;
}

#define RDMALOG_CRC_SEED	(~0U)

/*
 * The (at most two) pieces of ring that hold stream bytes [pos, pos + len);
 * len <= capacity. Returns how many pieces are non-empty.
 */
static int rdmalog_ring_segs(const struct rdmalog_log *log, u64 pos,
			     size_t len, struct rdmalog_seg seg[2])
{
	u64 off;
	size_t room;

	div64_u64_rem(pos, log->capacity, &off);
	room = log->capacity - (size_t)off;
	seg[0].p = log->ring + (size_t)off;
	seg[0].len = min(len, room);
	seg[1].p = log->ring;
	seg[1].len = len - seg[0].len;
	return seg[1].len ? 2 : 1;
}

static void rdmalog_ring_write(struct rdmalog_log *log, u64 pos,
			       const void *buf, size_t len)
{
	struct rdmalog_seg seg[2];
	int i, n = rdmalog_ring_segs(log, pos, len, seg);

	for (i = 0; i < n; i++) {
		memcpy(seg[i].p, buf, seg[i].len);
		buf += seg[i].len;
	}
}

static void rdmalog_ring_zero(struct rdmalog_log *log, u64 pos, size_t len)
{
	struct rdmalog_seg seg[2];
	int i, n = rdmalog_ring_segs(log, pos, len, seg);

	for (i = 0; i < n; i++)
		memset(seg[i].p, 0, seg[i].len);
}

void *rdmalog_log_ring_va(struct rdmalog_log *log, u64 pos)
{
	u64 off;

	div64_u64_rem(pos, log->capacity, &off);
	return log->ring + (size_t)off;
}

void rdmalog_ring_read(struct rdmalog_log *log, u64 pos, void *buf, size_t len)
{
	struct rdmalog_seg seg[2];
	int i, n = rdmalog_ring_segs(log, pos, len, seg);

	for (i = 0; i < n; i++) {
		memcpy(buf, seg[i].p, seg[i].len);
		buf += seg[i].len;
	}
}

/* Returns false when @from could not be copied whole. */
static bool rdmalog_ring_copy_from_iter(struct rdmalog_log *log, u64 pos,
					struct iov_iter *from, size_t len)
{
	struct rdmalog_seg seg[2];
	int i, n = rdmalog_ring_segs(log, pos, len, seg);

	for (i = 0; i < n; i++)
		if (copy_from_iter(seg[i].p, seg[i].len, from) != seg[i].len)
			return false;
	return true;
}

/* Returns false when @to could not take it whole. */
static bool rdmalog_ring_copy_to_iter(struct rdmalog_log *log, u64 pos,
				      struct iov_iter *to, size_t len)
{
	struct rdmalog_seg seg[2];
	int i, n = rdmalog_ring_segs(log, pos, len, seg);

	for (i = 0; i < n; i++)
		if (copy_to_iter(seg[i].p, seg[i].len, to) != seg[i].len)
			return false;
	return true;
}

u32 rdmalog_ring_crc(struct rdmalog_log *log, u64 pos, size_t len)
{
	struct rdmalog_seg seg[2];
	int i, n = rdmalog_ring_segs(log, pos, len, seg);
	u32 crc = RDMALOG_CRC_SEED;

	for (i = 0; i < n; i++)
		crc = crc32c(crc, seg[i].p, seg[i].len);
	return rdmalog_crc_finish(crc);
}

u32 rdmalog_hdr_crc(const struct rdmalog_ring_record *rec)
{
	return rdmalog_crc_finish(crc32c(RDMALOG_CRC_SEED, rec,
					 offsetof(struct rdmalog_ring_record,
						  hdr_crc)));
}

/*
 * The ring's memory: rdmalog_log_ring_alloc() and rdmalog_log_ring_free()
 * are its only owners. The ring is @nr_chunks physically contiguous chunks
 * of 2^@chunk_order pages, all the same size, vmap()ed in order into one
 * contiguous kernel address range, so that everything above sees a linear
 * ring while RDMA registers a few large pages (conn.c: an FRWR MR page
 * size of the chunk size, 4 MiB chunks: 512 of them per MR on rxe).
 *
 * The order starts at %RDMALOG_RING_MAX_ORDER (4 MiB on x86-64), lowered
 * while rounding the capacity up to whole chunks would waste more than
 * 1/16 of it (the last chunk is used only up to @capacity), and on
 * fragmentation: a failed allocation frees everything and retries one
 * order lower, down to single pages. The chunks are zeroed (__GFP_ZERO),
 * so that no stale kernel memory can ever be sent to a peer; they are not
 * compound pages and are freed with __free_pages() at their order.
 */
#define RDMALOG_RING_MAX_ORDER	min(10, RDMALOG_MAX_PAGE_ORDER)

static int rdmalog_log_ring_alloc_order(struct rdmalog_ring_mem *m,
					unsigned int order)
{
	size_t chunk = PAGE_SIZE << order;
	unsigned long i, j, nr = DIV_ROUND_UP(m->capacity, chunk);
	unsigned long nr_pages = nr << order;
	gfp_t gfp = GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN;
	struct page **pages;

	if (order)
		gfp |= __GFP_NORETRY;
	if (nr_pages > UINT_MAX)
		return -ENOMEM;
	m->chunks = kvcalloc(nr, sizeof(*m->chunks), GFP_KERNEL);
	if (!m->chunks)
		return -ENOMEM;
	pages = kvcalloc(nr_pages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		goto err_free_array;
	for (i = 0; i < nr; i++) {
		m->chunks[i] = alloc_pages(gfp, order);
		if (!m->chunks[i])
			goto err_free_chunks;
		for (j = 0; j < (1UL << order); j++)
			pages[(i << order) + j] = m->chunks[i] + j;
		cond_resched();
	}
	m->ring = vmap(pages, nr_pages, VM_MAP, PAGE_KERNEL);
	kvfree(pages);
	pages = NULL;
	if (!m->ring)
		goto err_free_chunks;
	m->nr_chunks = nr;
	m->chunk_order = order;
	rdmalog_live_add(RDMALOG_STAT_LIVE_RING_PAGES, nr_pages);
	return 0;

err_free_chunks:
	while (i--)
		__free_pages(m->chunks[i], order);
	kvfree(pages);
err_free_array:
	kvfree(m->chunks);
	m->chunks = NULL;
	return -ENOMEM;
}

static int rdmalog_log_ring_alloc(struct rdmalog_log *log)
{
	struct rdmalog_ring_mem *m = &log->mem;
	int order = RDMALOG_RING_MAX_ORDER;

	m->capacity = log->capacity;
	while (order > 0 &&
	       round_up(m->capacity, PAGE_SIZE << order) - m->capacity >
	       m->capacity / 16)
		order--;
	for (; order >= 0; order--)
		if (!rdmalog_log_ring_alloc_order(m, order)) {
			log->ring = m->ring;
			return 0;
		}
	return -ENOMEM;
}

static void rdmalog_log_ring_free(struct rdmalog_log *log)
{
	struct rdmalog_ring_mem *m = &log->mem;
	unsigned long i;

	vunmap(m->ring);
	for (i = 0; i < m->nr_chunks; i++)
		__free_pages(m->chunks[i], m->chunk_order);
	rdmalog_live_add(RDMALOG_STAT_LIVE_RING_PAGES,
			 -(long)(m->nr_chunks << m->chunk_order));
	kvfree(m->chunks);
	memset(m, 0, sizeof(*m));
	log->ring = NULL;
}

/*
 * kvmalloc() refuses sizes above INT_MAX (an index for a ring of more than
 * about 15 GiB); plain vmalloc serves those.
 */
static u64 *rdmalog_log_index_alloc(u64 nr_slots)
{
	size_t bytes;

	if (nr_slots > SIZE_MAX / sizeof(u64))
		return NULL;
	bytes = nr_slots * sizeof(u64);
	if (bytes <= INT_MAX)
		return kvzalloc(bytes, GFP_KERNEL | __GFP_NOWARN);
	return __vmalloc(bytes, GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN);
}

struct rdmalog_log *rdmalog_log_create(const struct rdmalog_log_params *p)
{
	struct rdmalog_log *log;
	int ret;

	BUILD_BUG_ON(sizeof(struct rdmalog_ring_record) != 48);
	BUILD_BUG_ON(offsetof(struct rdmalog_ring_record, hdr_crc) != 44);

	if (!p->capacity || !PAGE_ALIGNED(p->capacity) || !p->max_record ||
	    p->max_record > div_u64(p->capacity, 4) ||
	    p->max_record > RDMALOG_LOG_MAX_RECORD_LIMIT)
		return ERR_PTR(-EINVAL);
	if (p->capacity > SIZE_MAX)	/* 32-bit: cannot be mapped anyway */
		return ERR_PTR(-ENOMEM);

	log = kzalloc(sizeof(*log), GFP_KERNEL);
	if (!log)
		return ERR_PTR(-ENOMEM);
	kref_init(&log->ref);
	log->capacity = p->capacity;
	log->max_record = p->max_record;
	log->epoch = p->epoch;
	log->last_epoch = p->epoch;
	log->id = p->id;
	log->nr_slots = div_u64(p->capacity, RDMALOG_LOG_MIN_FOOTPRINT) + 1;
	spin_lock_init(&log->lock);
	mutex_init(&log->append_mutex);
	init_waitqueue_head(&log->fill_wq);
	INIT_LIST_HEAD(&log->pending);
	init_waitqueue_head(&log->commit_wq);
	init_waitqueue_head(&log->space_wq);
	INIT_LIST_HEAD(&log->waiters);
	log->floor = U64_MAX;
	log->lead_lsn = 1;
	log->leading = !p->backup;
	log->self_commit = true;
	log->commit_timeout = msecs_to_jiffies(RDMALOG_DEFAULT_COMMIT_TIMEOUT_MS);

	log->pos_of = rdmalog_log_index_alloc(log->nr_slots);
	if (!log->pos_of) {
		ret = -ENOMEM;
		goto err_free_log;
	}
	ret = rdmalog_log_ring_alloc(log);
	if (ret)
		goto err_free_index;

	log->first_lsn = 1;
	log->commit_lsn = 1;
	log->next_lsn = 1;
	*rdmalog_log_slot(log, 1) = 0;
	rdmalog_live_add(RDMALOG_STAT_LIVE_LOGS, 1);
	return log;

err_free_index:
	kvfree(log->pos_of);
err_free_log:
	mutex_destroy(&log->append_mutex);
	kfree(log);
	return ERR_PTR(ret);
}

static void rdmalog_log_release(struct kref *ref)
{
	struct rdmalog_log *log = container_of(ref, struct rdmalog_log, ref);

	rdmalog_log_ring_free(log);
	kvfree(log->pos_of);
	mutex_destroy(&log->append_mutex);
	kfree(log);
	rdmalog_live_add(RDMALOG_STAT_LIVE_LOGS, -1);
}

void rdmalog_log_get(struct rdmalog_log *log)
{
	kref_get(&log->ref);
}

void rdmalog_log_put(struct rdmalog_log *log)
{
	if (log)
		kref_put(&log->ref, rdmalog_log_release);
}

void rdmalog_log_wake(wait_queue_head_t *wq)
{
	/* Pairs with the barrier in prepare_to_wait(), see wq_has_sleeper(). */
	if (wq_has_sleeper(wq))
		wake_up_all(wq);
}

void rdmalog_log_shutdown(struct rdmalog_log *log)
{
	spin_lock_bh(&log->lock);
	log->dead = true;
	spin_unlock_bh(&log->lock);
	rdmalog_log_wake(&log->fill_wq);
	rdmalog_log_wake(&log->commit_wq);
	rdmalog_log_wake(&log->space_wq);
}

bool rdmalog_log_is_dead(struct rdmalog_log *log)
{
	bool dead;

	spin_lock_bh(&log->lock);
	dead = log->dead;
	spin_unlock_bh(&log->lock);
	return dead;
}

/*
 * Caller holds lock. Below the floor, a backup may still hold the bytes
 * that an append would overwrite (the floor never exceeds head).
 */
static bool rdmalog_log_fits_locked(struct rdmalog_log *log, u64 footprint)
{
	u64 end = log->reserved_end ?: log->head;

	return end - min(log->tail, log->floor) + footprint <= log->capacity;
}

/* Wait condition of appenders blocked on a full ring. */
static bool rdmalog_log_space_or_dead(struct rdmalog_log *log, u64 footprint)
{
	bool ret;

	spin_lock_bh(&log->lock);
	ret = log->dead || !log->leading || log->refusing ||
	      (!log->paused && rdmalog_log_fits_locked(log, footprint));
	spin_unlock_bh(&log->lock);
	return ret;
}

/* Wait condition of readers and of appenders waiting for their commit. */
static bool rdmalog_log_committed_or_dead(struct rdmalog_log *log, u64 lsn)
{
	bool ret;

	spin_lock_bh(&log->lock);
	ret = log->dead || lsn < log->commit_lsn;
	spin_unlock_bh(&log->lock);
	return ret;
}

/*
 * An appender's entry on commit_wq: a commit wakes it only once its record
 * is committed (the commit LSN is the wake key; a wake without one, for
 * a shutdown or a removal, wakes it as every other sleeper).
 */
struct rdmalog_commit_wait {
	struct wait_queue_entry wq;
	u64 lsn;
};

static int rdmalog_commit_wake(struct wait_queue_entry *wq, unsigned int mode,
			       int sync, void *key)
{
	struct rdmalog_commit_wait *cw = container_of(wq, struct rdmalog_commit_wait,
						      wq);
	const u64 *commit = key;

	if (commit && cw->lsn >= *commit)
		return 0;
	return autoremove_wake_function(wq, mode, sync, key);
}

bool rdmalog_log_advance_commit(struct rdmalog_log *log, u64 upto_lsn)
{
	bool advanced = false;

	spin_lock_bh(&log->lock);
	upto_lsn = min(upto_lsn, log->next_lsn);
	if (upto_lsn > log->commit_lsn) {
		trace_rdmalog_commit(log->commit_lsn, upto_lsn);
		log->commit_lsn = upto_lsn;
		advanced = true;
	}
	spin_unlock_bh(&log->lock);
	return advanced;
}

void rdmalog_log_wake_commit(struct rdmalog_log *log)
{
	u64 commit = READ_ONCE(log->commit_lsn);

	/* Pairs with the barrier in prepare_to_wait_event(). */
	if (wq_has_sleeper(&log->commit_wq))
		__wake_up(&log->commit_wq, TASK_NORMAL, 0, &commit);
}

void rdmalog_log_commit(struct rdmalog_log *log, u64 upto_lsn)
{
	if (rdmalog_log_advance_commit(log, upto_lsn))
		rdmalog_log_wake_commit(log);
}

/*
 * Wait until ring space for @footprint bytes is free and reserve it for
 * @w's record, behind every record reserved before it: @w goes on
 * @pending, @w->pos and @w->lsn say where and what the record will be,
 * *@epoch and *@gen what its header says. The space stays free until the
 * record is published (only appenders consume it). -EROFS when the log
 * does not lead (a backup's, or its primary stepped down).
 */
static int rdmalog_log_reserve(struct rdmalog_log *log, u64 footprint,
			       bool nonblock, struct rdmalog_log_waiter *w,
			       u64 *epoch, u32 *gen)
{
	struct rdmalog_log_waiter *last;
	bool dead, fits, leading, overlap = false;

	for (;;) {
		if (mutex_lock_interruptible(&log->append_mutex))
			return -ERESTARTSYS;
		spin_lock_bh(&log->lock);
		dead = log->dead;
		leading = log->leading && !log->refusing;
		fits = !log->paused && rdmalog_log_fits_locked(log, footprint);
		if (!dead && leading && fits) {
			last = list_empty(&log->pending) ? NULL :
			       list_last_entry(&log->pending,
					       struct rdmalog_log_waiter, node);
			w->pos = last ? last->pos + last->footprint : log->head;
			w->lsn = last ? last->lsn + 1 : log->next_lsn;
			w->footprint = footprint;
			w->state = RDMALOG_FILL_RESERVED;
			w->err = 0;
			list_add_tail(&w->node, &log->pending);
			overlap = log->filling;
			log->filling++;
			log->reserved_end = w->pos + footprint;
			*epoch = log->epoch;
			*gen = log->gen;
		}
		spin_unlock_bh(&log->lock);
		mutex_unlock(&log->append_mutex);
		if (dead || !leading)
			return dead ? -ENETDOWN : -EROFS;
		if (fits) {
			if (overlap)
				rdmalog_stats_inc(RDMALOG_STAT_APPEND_OVERLAPS);
			return 0;
		}

		/*
		 * Wait without append_mutex so that non-blocking appenders
		 * and small records are not stuck behind us; a woken
		 * appender rechecks under the mutex.
		 */
		if (nonblock)
			return -EAGAIN;
		rdmalog_stats_inc(RDMALOG_STAT_WRITER_WAITS);
		if (wait_event_interruptible(log->space_wq,
					     rdmalog_log_space_or_dead(log,
								       footprint)))
			return -ERESTARTSYS;
	}
}

/*
 * Write the header of record @lsn at @pos, its @len bytes of payload in
 * the ring behind it already (the CRC is of what the ring holds).
 */
static void rdmalog_log_put_header(struct rdmalog_log *log, u64 pos,
				   u64 lsn, size_t len, u16 flags, u64 epoch,
				   u64 timestamp_ns, u32 gen)
{
	struct rdmalog_ring_record rec = {};

	rec.magic = cpu_to_le32(RDMALOG_RECORD_MAGIC);
	rec.version = cpu_to_le16(RDMALOG_RECORD_VERSION);
	rec.flags = cpu_to_le16(flags);
	rec.len = cpu_to_le32(len);
	rec.data_crc = cpu_to_le32(rdmalog_ring_crc(log,
						    pos + RDMALOG_LOG_HDR_SIZE,
						    len));
	rec.lsn = cpu_to_le64(lsn);
	rec.epoch = cpu_to_le64(epoch);
	rec.timestamp_ns = cpu_to_le64(timestamp_ns);
	rec.gen = cpu_to_le32(gen);
	rec.hdr_crc = cpu_to_le32(rdmalog_hdr_crc(&rec));
	rdmalog_ring_write(log, pos, &rec, sizeof(rec));
}

/*
 * Write record @lsn (payload from @from, @len bytes) at stream position
 * @pos, in free ring space the caller reserved (read only by late readers
 * of records trimmed meanwhile, which discard what they see).
 */
static int rdmalog_log_fill(struct rdmalog_log *log, u64 pos, u64 lsn,
			    struct iov_iter *from, size_t len, u16 flags,
			    u64 epoch, u32 gen)
{
	u64 footprint = rdmalog_log_footprint(len);
	u64 data = pos + RDMALOG_LOG_HDR_SIZE;

	if (!rdmalog_ring_copy_from_iter(log, data, from, len))
		return -EFAULT;
	rdmalog_ring_zero(log, data + len,
			  footprint - RDMALOG_LOG_HDR_SIZE - len);
	rdmalog_log_put_header(log, pos, lsn, len, flags, epoch,
			       ktime_get_real_ns(), gen);
	return 0;
}

void rdmalog_log_write_es(struct rdmalog_log *log,
			  const struct rdmalog_log_es *es)
{
	__le64 epoch = cpu_to_le64(es->epoch);
	u64 data = es->pos + RDMALOG_LOG_HDR_SIZE;

	rdmalog_ring_write(log, data, &epoch, sizeof(epoch));
	rdmalog_ring_zero(log, data + sizeof(epoch),
			  rdmalog_log_footprint(sizeof(epoch)) -
			  RDMALOG_LOG_HDR_SIZE - sizeof(epoch));
	rdmalog_log_put_header(log, es->pos, es->lsn, sizeof(epoch),
			       RDMALOG_RECORD_EPOCH_START, es->epoch,
			       es->timestamp_ns, es->gen);
}

/*
 * Publish the pending records that are filled and follow the published
 * ones, in LSN order: each becomes visible (head, next_lsn and the index
 * move) and its appender's waiter goes on @waiters. Lock held. Return:
 * the LSN after the last one published, 0 if none was.
 */
static u64 rdmalog_log_publish_locked(struct rdmalog_log *log)
{
	struct rdmalog_log_waiter *w, *n;
	u64 published = 0;

	if (log->dead)
		return 0;
	list_for_each_entry_safe(w, n, &log->pending, node) {
		if (w->state != RDMALOG_FILL_FILLED)
			break;
		log->head += w->footprint;
		log->next_lsn = w->lsn + 1;
		*rdmalog_log_slot(log, w->lsn + 1) = log->head;
		w->state = RDMALOG_FILL_PUBLISHED;
		list_move_tail(&w->node, &log->waiters);
		published = w->lsn + 1;
	}
	if (list_empty(&log->pending))
		log->reserved_end = 0;
	return published;
}

/*
 * Give every pending record back to its appender (RETRY; the failed one
 * REMOVED): after a fill failed, once no fill is in flight, with
 * append_mutex held. The records after the failed one are reserved again
 * from its place. Lock held.
 */
static void rdmalog_log_rollback_locked(struct rdmalog_log *log)
{
	struct rdmalog_log_waiter *w, *n;

	list_for_each_entry_safe(w, n, &log->pending, node) {
		if (w->state == RDMALOG_FILL_FILLED)
			rdmalog_stats_inc(RDMALOG_STAT_APPEND_RETRIES);
		w->state = w->state == RDMALOG_FILL_FILLED ?
			   RDMALOG_FILL_RETRY : RDMALOG_FILL_REMOVED;
		list_del_init(&w->node);
	}
	log->reserved_end = 0;
}

void rdmalog_log_lock_appends(struct rdmalog_log *log)
{
	bool rolled = false;

	mutex_lock(&log->append_mutex);
	wait_event(log->fill_wq, !READ_ONCE(log->filling));
	spin_lock_bh(&log->lock);
	/* The rest were published when their fills ended, unless dead. */
	if (!list_empty(&log->pending)) {
		rdmalog_log_rollback_locked(log);
		rolled = true;
	}
	spin_unlock_bh(&log->lock);
	if (rolled) {
		rdmalog_log_wake(&log->fill_wq);
		/* the failed record's space is free again */
		rdmalog_log_wake(&log->space_wq);
	}
}

void rdmalog_log_unlock_appends(struct rdmalog_log *log)
{
	mutex_unlock(&log->append_mutex);
}

/* Wait condition of a filled record waiting for its publish. */
static bool rdmalog_log_settled(struct rdmalog_log *log,
				struct rdmalog_log_waiter *w)
{
	bool ret;

	spin_lock_bh(&log->lock);
	ret = w->state != RDMALOG_FILL_FILLED || log->dead;
	spin_unlock_bh(&log->lock);
	return ret;
}

/*
 * The end of @w's fill (@err: its outcome): publish what can be, then
 * wait until @w's record is published (0, and @w is on the waiters; the
 * record commits itself when appends do), to be reserved again
 * (-EAGAIN) or lost with the log (-ENETDOWN), or, when its own fill
 * failed, give back the records reserved after it and return @err.
 */
static int rdmalog_log_fill_done(struct rdmalog_log *log,
				 struct rdmalog_log_waiter *w, int err)
{
	bool wake, self;
	u64 published;
	int ret;

	spin_lock_bh(&log->lock);
	w->state = err ? RDMALOG_FILL_FAILED : RDMALOG_FILL_FILLED;
	log->filling--;
	published = rdmalog_log_publish_locked(log);
	wake = published || !log->filling;
	self = log->self_commit;
	spin_unlock_bh(&log->lock);
	if (wake)
		rdmalog_log_wake(&log->fill_wq);
	if (published && self)
		rdmalog_log_commit(log, published);
	if (err) {
		/* Whoever drains first takes @w off @pending. */
		rdmalog_log_lock_appends(log);
		rdmalog_log_unlock_appends(log);
		return err;
	}

	wait_event(log->fill_wq, rdmalog_log_settled(log, w));
	spin_lock_bh(&log->lock);
	switch (w->state) {
	case RDMALOG_FILL_PUBLISHED:
		ret = 0;
		break;
	case RDMALOG_FILL_RETRY:
		ret = -EAGAIN;
		break;
	default:
		/* dead, still pending */
		list_del_init(&w->node);
		w->state = RDMALOG_FILL_REMOVED;
		ret = -ENETDOWN;
		break;
	}
	spin_unlock_bh(&log->lock);
	return ret;
}

/* Wait condition of an append waiting for its commit. */
static bool rdmalog_log_decided(struct rdmalog_log *log,
				struct rdmalog_log_waiter *w)
{
	bool ret;

	spin_lock_bh(&log->lock);
	ret = log->dead || w->err || w->lsn < log->commit_lsn;
	spin_unlock_bh(&log->lock);
	return ret;
}

/*
 * How long an append expects its commit: an average of the last ones, in
 * ns (a hint: READ_ONCE/WRITE_ONCE, races lose an update).
 */
static u64 rdmalog_commit_ewma_ns;

static unsigned int poll_us = 50;
module_param(poll_us, uint, 0644);
MODULE_PARM_DESC(poll_us,
		 "an append spins up to this long for its commit, reaping the completions itself, before it sleeps, when commits have come that fast and no other append spins (0: never)");

/* A spinning appender's: log and waiter. */
struct rdmalog_log_spin {
	struct rdmalog_log *log;
	struct rdmalog_log_waiter *w;
};

/* Whether a spinning appender's record is decided (a hint, no lock). */
static bool rdmalog_log_spun(void *arg)
{
	struct rdmalog_log_spin *spin = arg;

	return READ_ONCE(spin->log->commit_lsn) > spin->w->lsn ||
	       READ_ONCE(spin->w->err) || READ_ONCE(spin->log->dead);
}

/*
 * Until @w's record is decided or @timeout (jiffies) runs out: spin first
 * when commits come within poll_us and no other appender spins, reaping
 * the completions that commit (no interrupt, no sleep, no wakeup), then
 * sleep on
 * commit_wq, woken only by the commit of @w's record (or a shutdown or
 * removal). Killable. Return: jiffies left (at least 1), 0 when it ran
 * out, -ERESTARTSYS on a fatal signal.
 */
static long rdmalog_log_sleep_commit(struct rdmalog_log *log,
				     struct rdmalog_log_waiter *w,
				     long timeout)
{
	u64 budget = (u64)READ_ONCE(poll_us) * NSEC_PER_USEC;
	u64 start = ktime_get_ns(), took, avg;
	struct rdmalog_commit_wait cw = { .lsn = w->lsn };
	struct rdmalog_log_spin spin = { .log = log, .w = w };
	long left = timeout;

	avg = READ_ONCE(rdmalog_commit_ewma_ns);
	if (budget && avg <= budget && !atomic_cmpxchg(&log->spinning, 0, 1)) {
		budget = min(budget, 2 * avg + NSEC_PER_USEC);
		if (log->hooks && log->hooks->busy_poll)
			log->hooks->busy_poll(log, rdmalog_log_spun, &spin,
					      start + budget);
		else
			while (!rdmalog_log_spun(&spin) &&
			       ktime_get_ns() - start < budget &&
			       !need_resched())
				cpu_relax();
		atomic_set_release(&log->spinning, 0);
	}
	init_wait_entry(&cw.wq, 0);
	cw.wq.func = rdmalog_commit_wake;
	for (;;) {
		if (prepare_to_wait_event(&log->commit_wq, &cw.wq,
					  TASK_KILLABLE)) {
			left = -ERESTARTSYS;
			break;
		}
		if (rdmalog_log_decided(log, w))
			break;
		left = schedule_timeout(left);
		if (!left) {
			/* as wait_event_*_timeout(): the last look decides */
			if (rdmalog_log_decided(log, w))
				left = 1;
			break;
		}
	}
	finish_wait(&log->commit_wq, &cw.wq);
	took = ktime_get_ns() - start;
	avg = READ_ONCE(rdmalog_commit_ewma_ns);
	WRITE_ONCE(rdmalog_commit_ewma_ns, avg ? avg - avg / 8 + took / 8 :
		   took);
	return left;
}

/*
 * Wait for the commit of @w's record: killable (the record is appended
 * already, and a restarted write would append it twice), bounded by the
 * commit timeout and what is left of a new primary's join window, after
 * which every uncommitted record is removed.
 */
static int rdmalog_log_wait_commit(struct rdmalog_log *log,
				   struct rdmalog_log_waiter *w)
{
	unsigned long timeout;
	long left;
	int ret;
	u64 now;

	spin_lock_bh(&log->lock);
	timeout = log->commit_timeout;
	/* The clock read only in a join window, which ends here once past. */
	if (log->join_until_ns) {
		now = ktime_get_ns();
		if (log->join_until_ns > now)
			timeout += nsecs_to_jiffies(log->join_until_ns - now);
		else
			log->join_until_ns = 0;
	}
	spin_unlock_bh(&log->lock);
	left = rdmalog_log_sleep_commit(log, w, timeout);
	if (!left) {
		rdmalog_stats_inc(RDMALOG_STAT_COMMIT_TIMEOUTS);
		rdmalog_log_truncate(log);
	}

	spin_lock_bh(&log->lock);
	list_del(&w->node);
	if (w->err)
		ret = w->err;		/* first: the LSN may be reused */
	else if (w->lsn < log->commit_lsn)
		ret = 0;
	else if (log->dead)
		ret = -ENETDOWN;
	else if (left < 0)
		ret = -EINTR;		/* fatal signal: nobody sees it */
	else
		ret = -ETIMEDOUT;	/* not reached: truncate removed it */
	spin_unlock_bh(&log->lock);
	return ret;
}

/*
 * Reserve, fill and publish a record with header @flags, its wait for the
 * commit on @w; replication is kicked. On success the caller must wait
 * (rdmalog_log_wait_commit()). Counts a failure once space was
 * reserved, as the wait counts its own.
 */
static int rdmalog_log_post(struct rdmalog_log *log, struct iov_iter *from,
			    bool nonblock, u16 flags,
			    struct rdmalog_log_waiter *w, u64 *lsnp)
{
	size_t len = iov_iter_count(from);
	u64 footprint, epoch;
	int ret;
	u32 gen;

	if (rdmalog_log_is_dead(log))
		return -ENETDOWN;
	if (!len)
		return -EINVAL;
	if (len > log->max_record)
		return -EMSGSIZE;
	footprint = rdmalog_log_footprint(len);

	do {
		ret = rdmalog_log_reserve(log, footprint, nonblock, w, &epoch,
					  &gen);
		if (ret)
			return ret;
		/* Holding the reservation: the interleaving of review-kernel.md #5. */
		rdmalog_inject_delay(RDMALOG_INJ_LOG_FILL);
		ret = rdmalog_log_fill(log, w->pos, w->lsn, from, len, flags,
				       epoch, gen);
		/* Before replication can see it: traces stay in order. */
		if (!ret)
			trace_rdmalog_append(w->lsn, len, w->pos);
		ret = rdmalog_log_fill_done(log, w, ret);
		/* An earlier fill failed: ours goes where that one was. */
		if (ret == -EAGAIN)
			iov_iter_revert(from, len);
	} while (ret == -EAGAIN);
	if (ret)
		goto err;

	/*
	 * Replication writes it to the backups and commits it from its
	 * completion handlers (or it committed itself when published).
	 */
	if (log->hooks)
		log->hooks->kick();
	*lsnp = w->lsn;
	return 0;

err:
	rdmalog_stats_inc(RDMALOG_STAT_APPEND_ERRORS);
	return ret;
}

/* The end of an append posted with @w (@len bytes): wait, and count. */
static int rdmalog_log_post_wait(struct rdmalog_log *log,
				 struct rdmalog_log_waiter *w, size_t len)
{
	int ret = rdmalog_log_wait_commit(log, w);

	if (ret) {
		rdmalog_stats_inc(RDMALOG_STAT_APPEND_ERRORS);
		return ret;
	}
	rdmalog_stats_inc(RDMALOG_STAT_APPENDS);
	rdmalog_stats_add(RDMALOG_STAT_APPEND_BYTES, len);
	return 0;
}

int rdmalog_log_append(struct rdmalog_log *log, struct iov_iter *from,
		       bool nonblock, u64 *lsnp)
{
	size_t len = iov_iter_count(from);
	struct rdmalog_log_waiter w;
	u64 lsn;
	int ret;

	ret = rdmalog_log_post(log, from, nonblock, 0, &w, &lsn);
	if (!ret)
		ret = rdmalog_log_post_wait(log, &w, len);
	if (!ret)
		*lsnp = lsn;
	return ret;
}

int rdmalog_log_post_epoch_start(struct rdmalog_log *log, bool nonblock,
				 u32 join_ms, struct rdmalog_log_waiter *w,
				 u64 *lsnp)
{
	__le64 epoch;
	struct kvec v = { .iov_base = &epoch, .iov_len = sizeof(epoch) };
	struct iov_iter it;

	spin_lock_bh(&log->lock);
	epoch = cpu_to_le64(log->epoch);
	log->join_until_ns = max(log->join_until_ns, ktime_get_ns() +
				 (u64)join_ms * NSEC_PER_MSEC);
	spin_unlock_bh(&log->lock);
	iov_iter_kvec(&it, ITER_SOURCE, &v, 1, sizeof(epoch));
	return rdmalog_log_post(log, &it, nonblock, RDMALOG_RECORD_EPOCH_START,
				w, lsnp);
}

int rdmalog_log_wait_epoch_start(struct rdmalog_log *log,
				 struct rdmalog_log_waiter *w)
{
	return rdmalog_log_post_wait(log, w, sizeof(__le64));
}

/* The epoch-start record's header if record @lsn is it. Lock held. */
static bool rdmalog_log_es_read_locked(struct rdmalog_log *log, u64 lsn,
				       struct rdmalog_ring_record *rec)
{
	if (!log->leading || lsn < log->first_lsn || lsn >= log->next_lsn)
		return false;
	rdmalog_ring_read(log, *rdmalog_log_slot(log, lsn), rec, sizeof(*rec));
	return le16_to_cpu(rec->flags) & RDMALOG_RECORD_EPOCH_START &&
	       le64_to_cpu(rec->epoch) == log->epoch;
}

bool rdmalog_log_epoch_start(struct rdmalog_log *log,
			     struct rdmalog_log_es *es)
{
	struct rdmalog_ring_record rec;
	bool ok;

	spin_lock_bh(&log->lock);
	ok = rdmalog_log_es_read_locked(log, log->lead_lsn, &rec);
	if (ok) {
		es->pos = *rdmalog_log_slot(log, log->lead_lsn);
		es->lsn = log->lead_lsn;
		es->epoch = log->epoch;
		es->timestamp_ns = le64_to_cpu(rec.timestamp_ns);
		es->gen = le32_to_cpu(rec.gen);
		es->prev_epoch = log->lead_prev_epoch;
		es->prev_gen = log->lead_prev_gen;
	}
	spin_unlock_bh(&log->lock);
	return ok;
}

bool rdmalog_log_es_current_locked(struct rdmalog_log *log,
				   const struct rdmalog_log_es *es)
{
	struct rdmalog_ring_record rec;

	lockdep_assert_held(&log->lock);
	return es->lsn == log->lead_lsn && es->epoch == log->epoch &&
	       rdmalog_log_es_read_locked(log, es->lsn, &rec) &&
	       *rdmalog_log_slot(log, es->lsn) == es->pos &&
	       le64_to_cpu(rec.timestamp_ns) == es->timestamp_ns &&
	       le32_to_cpu(rec.gen) == es->gen;
}

bool rdmalog_log_quiet(struct rdmalog_log *log)
{
	bool quiet;

	spin_lock_bh(&log->lock);
	quiet = !log->reserved_end;
	spin_unlock_bh(&log->lock);
	return quiet;
}

void rdmalog_log_pause(struct rdmalog_log *log, bool pause, bool refuse)
{
	spin_lock_bh(&log->lock);
	log->paused = pause;
	log->refusing = refuse;
	spin_unlock_bh(&log->lock);
	rdmalog_log_wake(&log->space_wq);
}

bool rdmalog_log_adopted_pending(struct rdmalog_log *log)
{
	bool ret;

	spin_lock_bh(&log->lock);
	ret = log->commit_lsn < log->lead_lsn;
	spin_unlock_bh(&log->lock);
	return ret;
}

/*
 * Whether record @lsn is still retained: the check a reader makes after it
 * read the record's ring bytes. True means that no appender wrote over
 * them before or while they were read; the spin_unlock() here is what
 * orders those reads before any later overwrite (see the top of this
 * file).
 */
static bool rdmalog_log_retained(struct rdmalog_log *log, u64 lsn)
{
	bool ret;

	spin_lock_bh(&log->lock);
	ret = lsn >= log->first_lsn;
	spin_unlock_bh(&log->lock);
	return ret;
}

/* Whether @rec is a sound header for record @lsn taking @footprint bytes. */
static bool rdmalog_rec_ok(const struct rdmalog_log *log,
			   const struct rdmalog_ring_record *rec, u64 lsn,
			   u64 footprint)
{
	u32 len = le32_to_cpu(rec->len);

	return le32_to_cpu(rec->magic) == RDMALOG_RECORD_MAGIC &&
	       le16_to_cpu(rec->version) == RDMALOG_RECORD_VERSION &&
	       rdmalog_rec_flags_ok(rec) && le64_to_cpu(rec->lsn) == lsn &&
	       le32_to_cpu(rec->hdr_crc) == rdmalog_hdr_crc(rec) &&
	       len && len <= log->max_record &&
	       rdmalog_log_footprint(len) == footprint;
}

/*
 * Verify record @lsn at stream position @pos (the next record starts at
 * @next) and copy its payload to @to. The caller found it committed and
 * retained under lock and holds nothing now, so a trim may discard it and
 * an appender overwrite it at any moment: what the ring reads find counts
 * only once rdmalog_log_retained() says afterwards that the record is
 * still there. Until then nothing is counted, logged or stored in @hdr;
 * if it is not, the result is -ERANGE whatever the reads found (@to may
 * have been written to, as on -EFAULT).
 */
static ssize_t rdmalog_log_copy_out(struct rdmalog_log *log, u64 lsn,
				    u64 pos, u64 next, struct iov_iter *to,
				    struct rdmalog_record_header *hdr)
{
	u64 data = pos + RDMALOG_LOG_HDR_SIZE;
	struct rdmalog_ring_record rec;
	bool bad_hdr = false;
	u32 len, crc = 0;
	ssize_t ret;

	/*
	 * These reads race with the appender that reuses the space of a
	 * record trimmed meanwhile; such a race is detected below and what
	 * it produced thrown away, so KCSAN is told to let them be.
	 */
	kcsan_nestable_atomic_begin();
	rdmalog_ring_read(log, pos, &rec, sizeof(rec));
	len = le32_to_cpu(rec.len);
	if (!rdmalog_rec_ok(log, &rec, lsn, next - pos)) {
		bad_hdr = true;
		ret = -EBADMSG;
	} else if (len > iov_iter_count(to)) {
		ret = -EMSGSIZE;
	} else {
		/* The header fits the index: the payload is within [pos, next). */
		crc = rdmalog_ring_crc(log, data, len);
		if (crc != le32_to_cpu(rec.data_crc))
			ret = -EBADMSG;
		else if (!rdmalog_ring_copy_to_iter(log, data, to, len))
			ret = -EFAULT;	/* may sleep long: we hold nothing */
		else
			ret = len;
	}
	kcsan_nestable_atomic_end();

	if (!rdmalog_log_retained(log, lsn))
		return -ERANGE;

	if (ret == -EBADMSG) {
		rdmalog_stats_inc(RDMALOG_STAT_CRC_ERRORS);
		if (bad_hdr)
			pr_err_ratelimited("record %llu: corrupt header\n",
					   lsn);
		else
			pr_err_ratelimited("record %llu: payload CRC32C %08x, header says %08x\n",
					   lsn, crc, le32_to_cpu(rec.data_crc));
		return ret;
	}
	if (hdr && (ret >= 0 || ret == -EMSGSIZE)) {
		hdr->lsn = lsn;
		hdr->epoch = le64_to_cpu(rec.epoch);
		hdr->timestamp_ns = le64_to_cpu(rec.timestamp_ns);
		hdr->len = len;
		hdr->crc32c = le32_to_cpu(rec.data_crc);
		hdr->flags = le16_to_cpu(rec.flags);
		hdr->reserved = 0;
	}
	if (ret >= 0) {
		rdmalog_stats_inc(RDMALOG_STAT_READS);
		rdmalog_stats_add(RDMALOG_STAT_READ_BYTES, len);
	}
	return ret;
}

/* &rdmalog_log_hooks.demand, if there is one. */
static bool rdmalog_log_demand(struct rdmalog_log *log, u64 lsn, bool sync)
{
	return log->hooks && log->hooks->demand &&
	       log->hooks->demand(log, lsn, sync);
}

void rdmalog_log_refresh(struct rdmalog_log *log)
{
	rdmalog_log_demand(log, 0, true);
}

ssize_t rdmalog_log_read(struct rdmalog_log *log, u64 lsn,
			 struct iov_iter *to, bool nonblock, bool wait,
			 struct rdmalog_record_header *hdr)
{
	u64 pos = 0, next = 0;
	bool asked = false;
	ssize_t ret;

	for (;;) {
		spin_lock_bh(&log->lock);
		if (log->dead) {
			ret = -ENETDOWN;
		} else if (lsn < log->first_lsn) {
			ret = -ERANGE;
		} else if (lsn >= log->commit_lsn) {
			ret = -ENODATA;
		} else {
			pos = *rdmalog_log_slot(log, lsn);
			next = *rdmalog_log_slot(log, lsn + 1);
			ret = 0;
		}
		spin_unlock_bh(&log->lock);
		if (!ret)
			break;

		/*
		 * A backup: what its primary told since, and (before a
		 * sleep) a word to it to tell us when @lsn commits.
		 */
		if (ret == -ENODATA && !asked) {
			asked = true;
			if (rdmalog_log_demand(log, wait && !nonblock ? lsn : 0,
					       true))
				continue;
		}
		if (ret != -ENODATA || !wait)
			return ret;
		if (nonblock)
			return -EAGAIN;
		/* Trim stops at commit_lsn: @lsn cannot be trimmed meanwhile. */
		rdmalog_stats_inc(RDMALOG_STAT_READER_WAITS);
		if (wait_event_interruptible(log->commit_wq,
					     rdmalog_log_committed_or_dead(log,
									   lsn)))
			return -ERESTARTSYS;
		asked = false;
	}

	return rdmalog_log_copy_out(log, lsn, pos, next, to, hdr);
}

/* Caller holds lock. 0: trim to @lsn; 1: nothing to do; < 0: error. */
static int rdmalog_log_trim_check_locked(struct rdmalog_log *log, u64 lsn)
{
	if (log->dead)
		return -ENETDOWN;
	if (lsn > log->commit_lsn)
		return -ERANGE;
	if (lsn <= log->first_lsn)
		return 1;
	return 0;
}

int rdmalog_log_trim(struct rdmalog_log *log, u64 lsn)
{
	u64 trimmed = 0;
	int ret;

	/*
	 * Readers copying out a record discarded here are not waited for:
	 * they find out afterwards (rdmalog_log_retained()) and return
	 * -ERANGE. Moving tail under lock orders their ring reads before the
	 * writes of whichever appender reuses the space.
	 */
	spin_lock_bh(&log->lock);
	ret = rdmalog_log_trim_check_locked(log, lsn);
	if (!ret) {
		trimmed = lsn - log->first_lsn;
		log->tail = *rdmalog_log_slot(log, lsn);
		log->first_lsn = lsn;
	}
	spin_unlock_bh(&log->lock);
	if (ret)
		return ret < 0 ? ret : 0;

	rdmalog_stats_inc(RDMALOG_STAT_TRIMS);
	rdmalog_stats_add(RDMALOG_STAT_TRIMMED_RECORDS, trimmed);
	/* Writers may fit now; pollers whose cursor fell behind get EPOLLERR. */
	rdmalog_log_wake(&log->space_wq);
	rdmalog_log_wake(&log->commit_wq);
	/* The backups trim when told (and then let us reuse the space). */
	if (log->hooks)
		log->hooks->kick();
	return 0;
}

void rdmalog_log_get_state(struct rdmalog_log *log,
			   struct rdmalog_log_state *st)
{
	spin_lock_bh(&log->lock);
	st->first_lsn = log->first_lsn;
	st->commit_lsn = log->commit_lsn;
	st->next_lsn = log->next_lsn;
	st->used = log->head - log->tail;
	spin_unlock_bh(&log->lock);
	st->capacity = log->capacity;
	st->max_record = log->max_record;
	st->epoch = log->epoch;
	st->id = log->id;
}

__poll_t rdmalog_log_poll(struct rdmalog_log *log, struct file *file,
			  poll_table *wait, u64 cursor)
{
	u64 max_footprint = rdmalog_log_footprint(log->max_record);
	__poll_t mask = 0;
	bool demand = false;

	poll_wait(file, &log->commit_wq, wait);
	poll_wait(file, &log->space_wq, wait);

	spin_lock_bh(&log->lock);
	if (log->dead) {
		mask = EPOLLIN | EPOLLRDNORM | EPOLLOUT | EPOLLWRNORM |
		       EPOLLERR | EPOLLHUP;
	} else {
		if (cursor < log->first_lsn)
			mask |= EPOLLIN | EPOLLRDNORM | EPOLLERR;
		else if (cursor < log->commit_lsn)
			mask |= EPOLLIN | EPOLLRDNORM;
		else
			demand = true;
		if (rdmalog_log_fits_locked(log, max_footprint))
			mask |= EPOLLOUT | EPOLLWRNORM;
	}
	spin_unlock_bh(&log->lock);
	/* A backup: its work takes the notice and wakes commit_wq. */
	if (demand)
		rdmalog_log_demand(log, cursor, false);
	return mask;
}

const struct rdmalog_ring_mem *rdmalog_log_ring_mem(struct rdmalog_log *log)
{
	return &log->mem;
}

void rdmalog_log_get_head(struct rdmalog_log *log, u64 *head, u64 *next_lsn)
{
	spin_lock_bh(&log->lock);
	*head = log->head;
	*next_lsn = log->next_lsn;
	spin_unlock_bh(&log->lock);
}

void rdmalog_log_get_pos(struct rdmalog_log *log, struct rdmalog_log_pos *p)
{
	spin_lock_bh(&log->lock);
	p->tail = log->tail;
	p->head = log->head;
	p->commit_pos = *rdmalog_log_slot(log, log->commit_lsn);
	p->first_lsn = log->first_lsn;
	p->commit_lsn = log->commit_lsn;
	p->next_lsn = log->next_lsn;
	spin_unlock_bh(&log->lock);
}

void rdmalog_log_set_hooks(struct rdmalog_log *log,
			   const struct rdmalog_log_hooks *hooks)
{
	log->hooks = hooks;
}

void rdmalog_log_set_policy(struct rdmalog_log *log, bool self_commit,
			    u32 timeout_ms)
{
	u64 next;

	spin_lock_bh(&log->lock);
	log->self_commit = self_commit;
	log->commit_timeout = msecs_to_jiffies(timeout_ms);
	next = log->next_lsn;
	spin_unlock_bh(&log->lock);
	/* Switched to committing locally: what waits is committed now. */
	if (self_commit)
		rdmalog_log_commit(log, next);
}

void rdmalog_log_set_floor(struct rdmalog_log *log, u64 floor)
{
	bool rose;

	spin_lock_bh(&log->lock);
	rose = floor > log->floor;
	log->floor = floor;
	spin_unlock_bh(&log->lock);
	if (rose)
		rdmalog_log_wake(&log->space_wq);
}

u64 rdmalog_log_truncate(struct rdmalog_log *log)
{
	struct rdmalog_log_waiter *w;
	u64 n = 0, head, next, from;
	bool hooks;

	/* A timed-out writer: the interleaving of review-kernel.md #6. */
	rdmalog_inject_delay(RDMALOG_INJ_LOG_TRUNCATE);
	rdmalog_log_lock_appends(log);
	/* A dead log has nothing to remove and nothing to tell. */
	spin_lock_bh(&log->lock);
	hooks = log->hooks && !log->dead;
	spin_unlock_bh(&log->lock);
	if (hooks)
		log->hooks->quiesce(log);
	spin_lock_bh(&log->lock);
	/* Nothing below the epoch's first record: it may be committed. */
	from = max(log->commit_lsn, log->lead_lsn);
	if (!log->dead && log->next_lsn > from) {
		n = log->next_lsn - from;
		list_for_each_entry(w, &log->waiters, node)
			if (w->lsn >= from)
				w->err = -ETIMEDOUT;
		log->head = *rdmalog_log_slot(log, from);
		log->next_lsn = from;
		/* What is written from here on is told from what was. */
		log->gen++;
	}
	head = log->head;
	next = log->next_lsn;
	spin_unlock_bh(&log->lock);
	if (hooks)
		log->hooks->resume(log, head, next);
	rdmalog_log_unlock_appends(log);
	if (n) {
		rdmalog_stats_add(RDMALOG_STAT_TRUNCATED_RECORDS, n);
		pr_warn_ratelimited("commit timeout: removed %llu uncommitted record%s from LSN %llu on\n",
				    n, n == 1 ? "" : "s", next);
	}
	rdmalog_log_wake(&log->commit_wq);
	rdmalog_log_wake(&log->space_wq);
	return n;
}
