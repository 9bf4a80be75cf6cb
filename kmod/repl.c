// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - replication: the primary writes its ring into the backups'
 * rings with one-sided RDMA WRITEs, commits from its completion queue, and
 * tells the backups what is committed; a backup verifies and exposes it.
 *
 * Primary side
 *
 * A backup "joins" when its RING arrives and its head is one of our record
 * boundaries (rdmalog_repl_ep_join()): from then on every stream byte we
 * hold from its head on goes to the same ring offset of its ring. Each
 * kick (after an append is published, after a trim, after a completion or
 * credits came back) posts, per joined backup, everything between what was
 * already posted and our head: up to %RDMALOG_REPL_BATCH_WRITES unsignalled
 * RDMA WRITEs (split at our chunk boundaries, which include the ring's
 * end, at the backup's segment boundaries and at %RDMALOG_REPL_MAX_WRITE
 * bytes), followed in the same ib_post_send() by one signalled RDMA WRITE
 * of a notice (&struct rdmalog_notice: how far the ring is written, the
 * commit point, the trim point) into the backup's notice block, which its
 * RING granted. At most %RDMALOG_REPL_MAX_BATCHES batches are in flight
 * to a backup (also bounded by send buffers and %RDMALOG_REPL_MAX_WRITES):
 * whatever is published meanwhile goes out in the next one, posted from
 * the completion: that is group commit.
 *
 * On an RC queue pair over InfiniBand or RoCE, the notice's successful
 * completion means the responder acknowledged it and every WRITE before it
 * (they complete in order), so the backup holds those bytes: the held LSN
 * of the backup moves to the notice's LSN, and the commit rule runs. On
 * iWARP a completion only says the data left, so there (and with the
 * force_read parameter) each notice's WRITE is followed by an RDMA READ
 * of it (read-back mode): the READ completes only after every WRITE
 * before it on the queue pair was placed, and its completion moves the
 * held LSN as the notice's would. Where the backup did not grant the
 * read, and with the force_ack parameter, every notice is followed by a
 * NOTIFY, the notice asks for an ACK, and only ACKs move the held LSN
 * (Documentation/protocol.rst).
 *
 * The commit rule: durability async commits locally (the append commits
 * itself); quorum needs floor(N / 2) backups holding a record (with the
 * primary that is a majority of the N configured nodes), all needs every
 * one of the N - 1. The commit LSN is the needed-th largest held LSN among
 * the joined backups. A notice carries our commit and first LSN; a
 * commit that moved after the last notice to a backup goes out in a
 * commit-only notice once that backup has none in flight and no batch
 * carried it for commit_delay_us (the commit timer).
 *
 * The backup's CPU takes no part in any of it. It is asked to take its
 * notice (a NOTIFY message) only when something needs it: a WAIT of its
 * (a reader there waits for a record: the first notice whose commit
 * passes it), a trim (the backup's tail frees our ring), and once every
 * notify_kib of stream, so that what a leader change verifies beyond a
 * backup's head stays bounded.
 *
 * The floor: we never overwrite ring space a joined backup still retains
 * (its tail, from RING and ACKs, plus the capacity): rdmalog_log_set_floor()
 * with the lowest such tail makes appenders wait. Backups trim only what
 * we trimmed (a notice's first LSN), and report their tail in ACKs.
 *
 * A commit timeout removes every uncommitted record (log.c); before that,
 * rdmalog_repl_quiesce() stops posting and waits until nothing of the ring
 * is in flight, and rdmalog_repl_resume() rewinds every backup's posted
 * position and starts a new generation (ACKs of older ones are ignored).
 *
 * Backup side
 *
 * The primary's connection that holds our ring is our source
 * (rdmalog_repl_ring_sent()). Its notices are taken (read from the notice
 * block, checked, noted under the endpoint's lock) and applied --
 * every record up to the notice's commit point verified and published
 * committed (rdmalog_log_apply()), then trimmed to the primary's first
 * LSN -- when something needs them: a reader that finds no record
 * (rdmalog_repl_demand(), through &rdmalog_log_hooks.demand, which also
 * sends a WAIT before the reader sleeps), a NOTIFY, the state being
 * shown. Then it ACKs when the notice asked, when its tail moved, or
 * (rdmalog_repl_after_rx()) when a quarter of the receive buffers wait to
 * be handed back. A record that fails verification drops the connection.
 *
 * Locking: rdmalog_repl.lock (spinlock, _bh outside softirq) protects the
 * state below and the primary-side fields of every joined endpoint's
 * &struct rdmalog_repl_ep; it is taken before an endpoint's lock (sending)
 * and before the log's lock (positions, commit, floor). The backup-side
 * fields are under the endpoint's lock. Joined endpoints are referenced by
 * the list; apply work holds a reference while queued.
 */
#include <linux/crc32c.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "ep.h"
#include "inject.h"
#include "log.h"
#include "rdma_dev.h"
#include "repl.h"
#include "ring_map.h"
#include "ring_mr.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"

/* Largest single RDMA WRITE. */
#define RDMALOG_REPL_MAX_WRITE		SZ_1M
/*
 * Batches in flight to one backup: what is published meanwhile waits for a
 * completion and goes out in one batch (group commit).
 */
#define RDMALOG_REPL_MAX_BATCHES	2
/* How long a quiesce waits before it drops connections that stall it. */
#define RDMALOG_REPL_QUIESCE_MS		10000

static bool force_ack;
module_param(force_ack, bool, 0444);
MODULE_PARM_DESC(force_ack,
		 "count a backup's copy only once it ACKs (as on iWARP), on every device");

static unsigned int notify_kib = 512;
module_param(notify_kib, uint, 0644);
MODULE_PARM_DESC(notify_kib,
		 "ask a backup to take its notice at least every this many KiB written to it (at most a quarter of the ring; 0: after every notice)");

static unsigned int commit_delay_us = 1000;
module_param(commit_delay_us, uint, 0644);
MODULE_PARM_DESC(commit_delay_us,
		 "how long a commit that moved waits for the next batch to carry it before it goes to the backups in a notice of its own (0: at once)");

/* Tries at a notice block that does not verify (a WRITE landing in it). */
#define RDMALOG_REPL_NOTICE_TRIES	20

/**
 * struct rdmalog_repl_state - replication of this node
 * @lock: see the top of this file
 * @running: between rdmalog_repl_start() and rdmalog_repl_stop()
 * @paused: a quiesce is in progress: nothing is posted
 * @log: the log of the up period, referenced while running
 * @capacity: its ring capacity
 * @role: &enum rdmalog_role
 * @durability: &enum rdmalog_durability requested
 * @nr_nodes: nodes of the cluster, this one included
 * @gen: truncation generation (see &struct rdmalog_msg_append)
 * @eps: joined endpoints (&rdmalog_repl_ep.node)
 * @holds: endpoints of backups catching up (&rdmalog_repl_ep.hold_node):
 *	they keep the floor down until they join or leave
 * @quiesce_wq: a quiesce waiting for in-flight work to drain
 * @in_sync_changed: &rdmalog_repl_params.in_sync_changed of the up period
 * @src: (backup) the endpoint of the primary our ring and notice block are
 *	granted to, referenced (rdmalog_repl_ring_sent()), until its
 *	rdmalog_repl_ep_stop(); what a reader's demand takes notices from
 * @commit_timer: armed when a commit moved and no batch carried it: when
 *	it fires (softirq) the commit goes out in commit-only notices
 * @commit_push: set by the timer around its kick: commit-only notices go
 */
struct rdmalog_repl_state {
	spinlock_t lock; /* see above */
	bool running;
	bool paused;
	struct rdmalog_log *log;
	u64 capacity;
	u32 role;
	u32 durability;
	u32 nr_nodes;
	u32 gen;
	struct list_head eps;
	struct list_head holds;
	wait_queue_head_t quiesce_wq;
	void (*in_sync_changed)(void);
	struct rdmalog_ep *src;
	struct hrtimer commit_timer;
	bool commit_push;
};

static struct rdmalog_repl_state rdmalog_repl = {
	.lock = __SPIN_LOCK_UNLOCKED(rdmalog_repl.lock),
	.eps = LIST_HEAD_INIT(rdmalog_repl.eps),
	.holds = LIST_HEAD_INIT(rdmalog_repl.holds),
	.quiesce_wq = __WAIT_QUEUE_HEAD_INITIALIZER(rdmalog_repl.quiesce_wq),
};

/* Tell the owner that a backup joined or left. No lock held. */
static void rdmalog_repl_in_sync_changed(void)
{
	/* Set by rdmalog_repl_start(), before any endpoint can join. */
	if (rdmalog_repl.in_sync_changed)
		rdmalog_repl.in_sync_changed();
}

/* The backups' apply work. Not WQ_MEM_RECLAIM: nothing reclaims through it. */
static struct workqueue_struct *rdmalog_repl_wq;

/* Backups that must hold a record before it commits. */
static u32 rdmalog_repl_needed(u32 durability, u32 nr_nodes)
{
	switch (durability) {
	case RDMALOG_DURABLE_QUORUM:
		return nr_nodes / 2;
	case RDMALOG_DURABLE_ALL:
		return nr_nodes ? nr_nodes - 1 : 0;
	default:
		return 0;
	}
}

static bool rdmalog_repl_is_primary(void)
{
	/* A node with no role set appends locally, like a primary. */
	return rdmalog_repl.role != RDMALOG_ROLE_BACKUP;
}

/* ------------------------------------------------------------------ */
/* Primary side */

static int rdmalog_repl_cmp_desc(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * The commit rule. Caller holds the lock; it wakes the committed
 * appenders (rdmalog_log_wake_commit()) once it dropped it when this
 * returns true.
 */
static bool rdmalog_repl_advance_locked(void)
{
	u32 needed = rdmalog_repl_needed(rdmalog_repl.durability,
					 rdmalog_repl.nr_nodes);
	u64 held[RDMALOG_MAX_PEERS];
	struct rdmalog_repl_ep *r;
	u32 n = 0;

	if (!needed || !rdmalog_repl.running || !rdmalog_repl_is_primary())
		return false;
	list_for_each_entry(r, &rdmalog_repl.eps, node)
		if (n < ARRAY_SIZE(held))
			held[n++] = r->held_lsn;
	if (n < needed)
		return false;
	sort(held, n, sizeof(held[0]), rdmalog_repl_cmp_desc, NULL);
	return rdmalog_log_advance_commit(rdmalog_repl.log, held[needed - 1]);
}

/* The commit rule, and its wakeups, where they are rare. Lock held. */
static void rdmalog_repl_commit_locked(void)
{
	if (rdmalog_repl_advance_locked())
		rdmalog_log_wake_commit(rdmalog_repl.log);
}

/*
 * The lowest tail of the joined backups and of those catching up, U64_MAX
 * for none. Lock held.
 */
static u64 rdmalog_repl_floor_locked(const struct rdmalog_repl_ep *except)
{
	struct rdmalog_repl_ep *r;
	u64 floor = U64_MAX;

	list_for_each_entry(r, &rdmalog_repl.eps, node)
		if (r != except)
			floor = min(floor, r->r_tail);
	list_for_each_entry(r, &rdmalog_repl.holds, hold_node)
		if (r != except)
			floor = min(floor, r->hold_floor);
	return floor;
}

struct rdmalog_repl_batch {
	u64 end_bpos;
	u64 end_lsn;
	u32 gen;
};

/* A notice's send buffer: what its completion tells the commit rule. */
enum {
	RDMALOG_REPL_SB_END_POS,	/* the notice's head */
	RDMALOG_REPL_SB_END_LSN,	/* its next_lsn */
	RDMALOG_REPL_SB_GEN,		/* its gen */
};

static void rdmalog_repl_notice_done(struct rdmalog_ep *ep,
				     struct rdmalog_sbuf *sb, bool ok);

static void rdmalog_repl_sbuf_init(struct rdmalog_sbuf *sb, void *arg);

/* A notice's CRC32C, as a record's (seed ~0, inverted). */
static u32 rdmalog_notice_crc(const struct rdmalog_msg_append *m)
{
	return ~crc32c(~0U, m, sizeof(*m));
}

/* Stream bytes after which a backup is asked to take its notice. */
static u64 rdmalog_repl_notify_bytes(void)
{
	return min_t(u64, (u64)READ_ONCE(notify_kib) * SZ_1K,
		     rdmalog_repl.capacity / 4);
}

/*
 * Send the NOTIFY owed to @ep, if any: one answers every WAIT before it.
 * Lock held.
 */
static void rdmalog_repl_notify_locked(struct rdmalog_ep *ep)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	struct rdmalog_msg_notify m = {};
	int err;

	if (r->wait_lsn && r->sent_commit > r->wait_lsn)
		r->notify_due = true;
	if (!r->notify_due || !r->notice_seq)
		return;
	m.notice_seq = cpu_to_le64(r->notice_seq);
	err = rdmalog_ep_send(ep, &m, sizeof(m), RDMALOG_MSG_NOTIFY, 2);
	if (err == -EAGAIN || err == -ENOTCONN)
		return;	/* credits or buffers: the next kick sends it */
	if (err) {
		r->errors++;
		rdmalog_ep_error(ep, "cannot send NOTIFY: %d", err);
		return;
	}
	rdmalog_stats_inc(RDMALOG_STAT_NOTIFIES_SENT);
	r->notify_due = false;
	r->wait_lsn = 0;
	r->notified_pos = r->sent_bpos;
	r->notified_first = r->sent_first;
}

/*
 * RDMA WRITE notice @m into @ep's notice block after the @n WRITEs of
 * @pre, its completion telling the commit rule about @b. Lock held.
 */
static int rdmalog_repl_post_notice(struct rdmalog_ep *ep,
				    const struct rdmalog_msg_append *m,
				    struct ib_send_wr *pre, u32 n,
				    struct rdmalog_repl_batch *b)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	struct rdmalog_notice nb = {};
	int err;

	nb.append = *m;
	nb.append.hdr.magic = cpu_to_le32(RDMALOG_MSG_MAGIC);
	nb.append.hdr.version = RDMALOG_PROTO_VERSION;
	nb.append.hdr.type = RDMALOG_MSG_APPEND;
	nb.append.hdr.length = cpu_to_le16(sizeof(*m));
	nb.append.hdr.seq = cpu_to_le32(r->notice_seq + 1);
	nb.append.hdr.epoch = cpu_to_le64(rdmalog_conn_epoch());
	nb.crc = cpu_to_le32(rdmalog_notice_crc(&nb.append));
	err = rdmalog_ep_write_chain(ep, &nb, sizeof(nb),
				     ep->remote_notice.addr,
				     ep->remote_notice.rkey, r->read_mode, pre, n,
				     rdmalog_repl_sbuf_init, b);
	if (!err)
		r->notice_seq++;
	return err;
}

static void rdmalog_repl_sbuf_init(struct rdmalog_sbuf *sb, void *arg)
{
	const struct rdmalog_repl_batch *b = arg;

	sb->done = rdmalog_repl_notice_done;
	sb->priv[RDMALOG_REPL_SB_END_POS] = b->end_bpos;
	sb->priv[RDMALOG_REPL_SB_END_LSN] = b->end_lsn;
	sb->priv[RDMALOG_REPL_SB_GEN] = b->gen;
}

/*
 * Post to one joined backup what it lacks of @pos: batches of WRITEs, each
 * closed by a notice, or a commit-only notice; then a NOTIFY if owed.
 * Lock held.
 */
static void rdmalog_repl_push_locked(struct rdmalog_ep *ep,
				     const struct rdmalog_log_pos *pos)
{
	struct ib_rdma_wr wrs[RDMALOG_REPL_BATCH_WRITES];
	struct ib_sge sges[RDMALOG_REPL_BATCH_WRITES];
	const struct rdmalog_ring_map *map = ep->ring_map;
	struct rdmalog_repl_ep *r = &ep->repl;
	u64 cap = rdmalog_repl.capacity;
	struct rdmalog_msg_append m;
	struct rdmalog_repl_batch b;
	u64 cur, first, cpos, clsn;
	u32 n, i;
	int err;

	first = min(pos->first_lsn, pos->commit_lsn);
	for (;;) {
		bool data = r->sent_pos < pos->head;

		if (!data && r->sent_commit >= min(pos->commit_lsn, r->sent_lsn) &&
		    r->sent_first >= min(first, r->sent_lsn))
			break;
		/* A commit-only notice waits for the ones in flight, */
		if (!data && r->notices)
			break;
		/*
		 * and for commit_delay_us, for the next batch to carry it (as
		 * every batch does): none of its own on the hot path.
		 */
		if (!data && !rdmalog_repl.commit_push &&
		    READ_ONCE(commit_delay_us)) {
			/*
			 * Not hrtimer_active(): a callback past its kick
			 * would leave this commit to nobody. Starting it
			 * again while it runs queues it once more.
			 */
			if (!hrtimer_is_queued(&rdmalog_repl.commit_timer))
				hrtimer_start(&rdmalog_repl.commit_timer,
					      ns_to_ktime((u64)READ_ONCE(commit_delay_us) *
							    NSEC_PER_USEC),
					      HRTIMER_MODE_REL_SOFT);
			break;
		}
		if (data && (r->writes >= RDMALOG_REPL_MAX_WRITES ||
			     r->notices >= RDMALOG_REPL_MAX_BATCHES))
			break;

		cur = r->sent_pos;
		for (n = 0; cur < pos->head && n < RDMALOG_REPL_BATCH_WRITES &&
		     r->writes + n < RDMALOG_REPL_MAX_WRITES; n++) {
			u64 off, len, raddr, room, dma, contig;
			u32 rkey;

			div64_u64_rem(cur, cap, &off);
			if (off >= map->capacity ||
			    !rdmalog_ring_mr_remote(ep, off, &raddr, &rkey, &room)) {
				rdmalog_ep_error(ep, "ring offset %llu outside the rings",
						 off);
				return;
			}
			dma = rdmalog_ring_map_dma(map, off, &contig);
			len = min3(pos->head - cur, contig, room);
			len = min_t(u64, len, RDMALOG_REPL_MAX_WRITE);

			memset(&wrs[n], 0, sizeof(wrs[n]));
			sges[n].length = len;
			sges[n].lkey = ep->pd->local_dma_lkey;
			if (len <= ep->max_inline) {
				/* copied from the ring by the post */
				sges[n].addr = (uintptr_t)
					rdmalog_log_ring_va(rdmalog_repl.log,
							    cur);
				wrs[n].wr.send_flags = IB_SEND_INLINE;
			} else {
				/* The CPU wrote it; the device reads it next. */
				rdmalog_ring_map_sync(map, cur, len, false);
				sges[n].addr = dma;
			}
			wrs[n].wr.opcode = IB_WR_RDMA_WRITE;
			wrs[n].wr.sg_list = &sges[n];
			wrs[n].wr.num_sge = 1;
			wrs[n].remote_addr = raddr;
			wrs[n].rkey = rkey;
			if (n)
				wrs[n - 1].wr.next = &wrs[n].wr;
			cur += len;
		}

		/* Only a batch that reaches head ends on a known boundary. */
		b.gen = rdmalog_repl.gen;
		if (cur == pos->head) {
			b.end_bpos = pos->head;
			b.end_lsn = pos->next_lsn;
		} else {
			b.end_bpos = r->sent_bpos;
			b.end_lsn = r->sent_lsn;
		}
		/*
		 * The backup may expose only what it was sent: a backlog
		 * (a backup that joined behind) goes out in several batches,
		 * and the commit point it is told never passes them.
		 */
		cpos = pos->commit_pos;
		clsn = pos->commit_lsn;
		if (clsn > b.end_lsn) {
			cpos = b.end_bpos;
			clsn = b.end_lsn;
		}
		memset(&m, 0, sizeof(m));
		m.head = cpu_to_le64(b.end_bpos);
		m.next_lsn = cpu_to_le64(b.end_lsn);
		m.commit_pos = cpu_to_le64(cpos);
		m.commit_lsn = cpu_to_le64(clsn);
		m.first_lsn = cpu_to_le64(min(first, clsn));
		m.flags = cpu_to_le32(r->ack_mode ? RDMALOG_APPEND_F_ACK : 0);
		m.gen = cpu_to_le32(b.gen);

		err = rdmalog_repl_post_notice(ep, &m, n ? &wrs[0].wr : NULL, n,
					       &b);
		if (err == -EAGAIN || err == -ENOTCONN)
			return;	/* send buffers: retried on completion */
		if (err) {
			r->errors++;
			rdmalog_ep_error(ep, "cannot post replication: %d", err);
			return;
		}
		trace_rdmalog_post(ep->conn->peer_id, r->sent_pos, cur,
				   cur - r->sent_pos, n, b.end_lsn);
		for (i = 0; i < n; i++)
			r->bytes += sges[i].length;
		rdmalog_stats_inc(RDMALOG_STAT_REPL_BATCHES);
		if (n) {
			rdmalog_stats_add(RDMALOG_STAT_REPL_WRITES, n);
			rdmalog_stats_add(RDMALOG_STAT_REPL_BYTES,
					  cur - r->sent_pos);
		}
		r->records += b.end_lsn - r->sent_lsn;
		r->sent_pos = cur;
		r->sent_bpos = b.end_bpos;
		r->sent_lsn = b.end_lsn;
		r->sent_commit = clsn;
		r->sent_first = min(first, clsn);
		r->writes += n;
		r->notices++;
		r->batches++;
		/*
		 * The backup's CPU takes it only when asked: in ACK mode, for
		 * a reader, for a trim (it frees our ring), and once every
		 * notify_kib (what a leader change verifies stays bounded).
		 */
		if (r->ack_mode || r->sent_first > r->notified_first ||
		    b.end_bpos - r->notified_pos >= rdmalog_repl_notify_bytes())
			r->notify_due = true;
	}
	rdmalog_repl_notify_locked(ep);
}

/* Push to every joined backup. Lock held. */
static void rdmalog_repl_kick_locked(void)
{
	struct rdmalog_log_pos pos;
	struct rdmalog_repl_ep *r;

	if (!rdmalog_repl.running || rdmalog_repl.paused ||
	    !rdmalog_repl_is_primary() || list_empty(&rdmalog_repl.eps))
		return;
	rdmalog_log_get_pos(rdmalog_repl.log, &pos);
	list_for_each_entry(r, &rdmalog_repl.eps, node)
		rdmalog_repl_push_locked(container_of(r, struct rdmalog_ep,
						      repl), &pos);
}

/* A commit no batch carried: commit-only notices now (softirq). */
static enum hrtimer_restart rdmalog_repl_commit_timer(struct hrtimer *t)
{
	spin_lock(&rdmalog_repl.lock);
	rdmalog_repl.commit_push = true;
	rdmalog_repl_kick_locked();
	rdmalog_repl.commit_push = false;
	spin_unlock(&rdmalog_repl.lock);
	return HRTIMER_NORESTART;
}

static void rdmalog_repl_kick(void)
{
	spin_lock_bh(&rdmalog_repl.lock);
	rdmalog_repl_kick_locked();
	spin_unlock_bh(&rdmalog_repl.lock);
}

static bool rdmalog_repl_idle(void)
{
	struct rdmalog_repl_ep *r;
	bool idle = true;

	spin_lock_bh(&rdmalog_repl.lock);
	list_for_each_entry(r, &rdmalog_repl.eps, node)
		if (r->writes || r->notices)
			idle = false;
	spin_unlock_bh(&rdmalog_repl.lock);
	return idle;
}

/* Is @log the log being replicated? Caller holds &rdmalog_repl.lock. */
static bool rdmalog_repl_ours_locked(struct rdmalog_log *log)
{
	lockdep_assert_held(&rdmalog_repl.lock);
	return rdmalog_repl.running && rdmalog_repl.log == log;
}

static void rdmalog_repl_quiesce(struct rdmalog_log *log)
{
	struct rdmalog_repl_ep *r;

	spin_lock_bh(&rdmalog_repl.lock);
	/* A log of an earlier up period: this one's backups are not its. */
	if (!rdmalog_repl_ours_locked(log)) {
		spin_unlock_bh(&rdmalog_repl.lock);
		return;
	}
	rdmalog_repl.paused = true;
	spin_unlock_bh(&rdmalog_repl.lock);
	if (wait_event_timeout(rdmalog_repl.quiesce_wq, rdmalog_repl_idle(),
			       msecs_to_jiffies(RDMALOG_REPL_QUIESCE_MS)))
		return;
	/* A backup that does not complete in that long is dropped. */
	spin_lock_bh(&rdmalog_repl.lock);
	list_for_each_entry(r, &rdmalog_repl.eps, node)
		if (r->writes || r->notices)
			rdmalog_ep_error(container_of(r, struct rdmalog_ep,
						      repl),
					 "replication stalled for %u ms",
					 RDMALOG_REPL_QUIESCE_MS);
	spin_unlock_bh(&rdmalog_repl.lock);
	/* Their drain completes (flushes) everything, then they leave. */
	wait_event(rdmalog_repl.quiesce_wq, rdmalog_repl_idle());
}

static void rdmalog_repl_resume(struct rdmalog_log *log, u64 head,
				u64 next_lsn)
{
	struct rdmalog_repl_ep *r;

	spin_lock_bh(&rdmalog_repl.lock);
	/* Stopped and started again meanwhile: that start unpaused. */
	if (!rdmalog_repl_ours_locked(log)) {
		spin_unlock_bh(&rdmalog_repl.lock);
		return;
	}
	rdmalog_repl.gen++;
	list_for_each_entry(r, &rdmalog_repl.eps, node) {
		if (r->sent_pos > head) {
			r->sent_pos = head;
			r->sent_bpos = head;
			r->sent_lsn = next_lsn;
		}
		r->done_pos = min(r->done_pos, head);
		r->held_lsn = min(r->held_lsn, next_lsn);
		r->acked_lsn = min(r->acked_lsn, next_lsn);
	}
	rdmalog_repl.paused = false;
	rdmalog_repl_kick_locked();
	spin_unlock_bh(&rdmalog_repl.lock);
}

/* Joined backups whose completions a spinning appender reaps. */
#define RDMALOG_REPL_POLL_EPS	8

/*
 * &rdmalog_log_hooks.busy_poll: an appender spins for its commit. It owns
 * the joined backups' CQs meanwhile and reaps them, so the completion that
 * commits its record runs here, in its context, rather than from softirq
 * after an interrupt (and then a wakeup). It spins with preemption off,
 * as NAPI's busy poll does, so that it is never scheduled out while the
 * CQs are its own (the softirq leaves an owned CQ to its owner), and
 * stops as soon as the scheduler wants the CPU. Process context, no lock
 * held.
 */
static void rdmalog_repl_busy_poll(struct rdmalog_log *log,
				   bool (*done)(void *arg), void *arg,
				   u64 until_ns)
{
	struct rdmalog_ep *eps[RDMALOG_REPL_POLL_EPS];
	bool owned[RDMALOG_REPL_POLL_EPS] = {};
	struct rdmalog_repl_ep *r;
	int i, n = 0, got;
	u64 reaped = 0;

	spin_lock_bh(&rdmalog_repl.lock);
	if (rdmalog_repl_ours_locked(log) && !rdmalog_repl.paused) {
		list_for_each_entry(r, &rdmalog_repl.eps, node) {
			eps[n] = container_of(r, struct rdmalog_ep, repl);
			rdmalog_ep_get(eps[n]);
			if (++n == RDMALOG_REPL_POLL_EPS)
				break;
		}
	}
	spin_unlock_bh(&rdmalog_repl.lock);
	preempt_disable();
	for (;;) {
		for (i = 0; i < n; i++) {
			/* the softirq may be reaping it: ours next time */
			if (!owned[i])
				owned[i] = rdmalog_ep_poll_begin(eps[i]);
			if (!owned[i])
				continue;
			got = rdmalog_ep_poll(eps[i]);
			if (got < 0) {
				/* going away: it never becomes ours again */
				rdmalog_ep_poll_end(eps[i]);
				owned[i] = false;
			} else {
				reaped += got;
			}
		}
		if (done(arg) || ktime_get_ns() >= until_ns || need_resched())
			break;
		cpu_relax();
	}
	for (i = 0; i < n; i++)
		if (owned[i])
			rdmalog_ep_poll_end(eps[i]);
	preempt_enable();
	for (i = 0; i < n; i++)
		rdmalog_ep_put(eps[i]);
	if (reaped)
		rdmalog_stats_add(RDMALOG_STAT_POLLED_COMPLETIONS, reaped);
}

static bool rdmalog_repl_demand(struct rdmalog_log *log, u64 lsn, bool sync);

static const struct rdmalog_log_hooks rdmalog_repl_hooks = {
	.kick = rdmalog_repl_kick,
	.busy_poll = rdmalog_repl_busy_poll,
	.quiesce = rdmalog_repl_quiesce,
	.resume = rdmalog_repl_resume,
	.demand = rdmalog_repl_demand,
};

int rdmalog_repl_ep_join(struct rdmalog_ep *ep, u64 head, u64 next_lsn,
			 u64 tail, bool pull, const struct rdmalog_log_es *es,
			 bool es_only, struct rdmalog_log_plan *plan)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	int kind = es_only ? RDMALOG_PLAN_LATER : RDMALOG_PLAN_DIVERGED;
	bool had, put = false;

	memset(plan, 0, sizeof(*plan));
	spin_lock_bh(&rdmalog_repl.lock);
	/*
	 * The release sets DEAD before rdmalog_repl_ep_leave() takes this
	 * lock: a join from catch-up work that comes after the leave sees it
	 * and adds nothing.
	 */
	if (!rdmalog_repl.running || !rdmalog_repl_is_primary() || r->joined ||
	    !ep->ring_map || test_bit(RDMALOG_EP_DEAD, &ep->flags))
		goto out;
	/* A catch-up's hold (and its list reference) passes on or ends. */
	kind = rdmalog_log_plan(rdmalog_repl.log, ep->peer_log_id, next_lsn,
				head, tail,
				rdmalog_repl_floor_locked(r), pull, es, es_only,
				plan);
	if (kind == RDMALOG_PLAN_LATER)
		goto out;
	if (kind == RDMALOG_PLAN_PULL || kind == RDMALOG_PLAN_RESET) {
		/*
		 * It follows our log from our CATCHUP on (or drops the
		 * connection): its JOIN is judged as of our log.
		 */
		WRITE_ONCE(ep->peer_log_id, rdmalog_log_id(rdmalog_repl.log));
		/* It reads [start, target) of our ring until it joins. */
		r->hold_floor = plan->floor;
		if (!r->holding) {
			r->holding = true;
			rdmalog_ep_get(ep);		/* the list's */
			list_add_tail(&r->hold_node, &rdmalog_repl.holds);
		}
		goto out;
	}
	had = r->holding;
	if (had) {
		list_del_init(&r->hold_node);
		r->holding = false;
	}
	if (kind != RDMALOG_PLAN_JOIN) {
		put = had;
		rdmalog_log_set_floor(rdmalog_repl.log,
				      rdmalog_repl_floor_locked(NULL));
		goto out;
	}
	/*
	 * Where a WRITE's completion does not prove placement: a READ after
	 * each notice does, or else the backup's ACKs (force_ack tests those).
	 */
	r->read_mode = ep->remote_notice.readable && !force_ack;
	r->ack_mode = !r->read_mode &&
		      (force_ack ||
		       rdma_protocol_iwarp(ep->ibdev, ep->cm_id->port_num));
	/* Its head, or (plan->es) the end of our epoch-start record. */
	head = plan->start_pos;
	next_lsn = plan->start_lsn;
	r->sent_pos = head;
	r->sent_bpos = head;
	r->sent_lsn = next_lsn;
	r->done_pos = head;
	r->held_lsn = next_lsn;
	r->acked_lsn = next_lsn;
	r->joined_lsn = next_lsn;
	r->r_tail = tail;
	r->sent_commit = 0;
	r->sent_first = 0;
	r->notified_pos = head;
	r->notified_first = 0;
	r->notify_due = false;
	r->joined = true;
	if (!had)
		rdmalog_ep_get(ep);	/* the list's (else the hold's passes on) */
	list_add_tail(&r->node, &rdmalog_repl.eps);
	rdmalog_stats_inc(RDMALOG_STAT_JOINS);
	/*
	 * It wrote our epoch-start record into its ring before its RING
	 * (Documentation/protocol.rst), and holds what we hold up to it: it
	 * joined after it, counted as holding it as an ACK would count it. A
	 * commit timeout that removes it later lowers the held LSN as for
	 * every joined backup (rdmalog_repl_resume()); the plan checked that
	 * none did before.
	 */
	if (plan->es)
		rdmalog_repl_commit_locked();
	rdmalog_repl_kick_locked();
out:
	spin_unlock_bh(&rdmalog_repl.lock);
	if (put)
		rdmalog_ep_put(ep);
	if (kind == RDMALOG_PLAN_JOIN)
		rdmalog_repl_in_sync_changed();
	return kind;
}

void rdmalog_repl_ep_unhold(struct rdmalog_ep *ep)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	bool held;

	spin_lock_bh(&rdmalog_repl.lock);
	held = r->holding;
	if (held) {
		list_del_init(&r->hold_node);
		r->holding = false;
		if (rdmalog_repl.log)
			rdmalog_log_set_floor(rdmalog_repl.log,
					      rdmalog_repl_floor_locked(NULL));
	}
	spin_unlock_bh(&rdmalog_repl.lock);
	if (held)
		rdmalog_ep_put(ep);
}

void rdmalog_repl_ep_leave(struct rdmalog_ep *ep)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	bool joined;

	rdmalog_repl_ep_unhold(ep);
	spin_lock_bh(&rdmalog_repl.lock);
	joined = r->joined;
	if (joined) {
		list_del_init(&r->node);
		r->joined = false;
		if (rdmalog_repl.log)
			rdmalog_log_set_floor(rdmalog_repl.log,
					      rdmalog_repl_floor_locked(NULL));
	}
	spin_unlock_bh(&rdmalog_repl.lock);
	wake_up_all(&rdmalog_repl.quiesce_wq);
	if (joined) {
		rdmalog_ep_put(ep);
		rdmalog_repl_in_sync_changed();
	}
}

/* A notice's completion (CQ context). */
static void rdmalog_repl_notice_done(struct rdmalog_ep *ep,
				     struct rdmalog_sbuf *sb, bool ok)
{
	u64 end_pos = sb->priv[RDMALOG_REPL_SB_END_POS];
	u64 end_lsn = sb->priv[RDMALOG_REPL_SB_END_LSN];
	u32 gen = sb->priv[RDMALOG_REPL_SB_GEN];
	struct rdmalog_repl_ep *r = &ep->repl;
	struct rdmalog_log *log = NULL;

	spin_lock(&rdmalog_repl.lock);
	trace_rdmalog_completion(ep->conn->peer_id, end_lsn, ok);
	r->writes -= min(r->writes, sb->nr_writes);
	if (r->notices)
		r->notices--;
	if (!ok)
		r->errors++;
	if (ok && r->joined && gen == rdmalog_repl.gen) {
		r->done_pos = max(r->done_pos, end_pos);
		if (!r->ack_mode)
			r->held_lsn = max(r->held_lsn, end_lsn);
		if (rdmalog_repl_advance_locked())
			log = rdmalog_repl.log;
	}
	if (rdmalog_repl.paused)
		wake_up_all(&rdmalog_repl.quiesce_wq);
	else if (ok)
		rdmalog_repl_kick_locked();
	spin_unlock(&rdmalog_repl.lock);
	/*
	 * Outside the lock: the next posts do not wait for the wakeups. The
	 * log lives while an endpoint is joined (rdmalog_repl_stop()).
	 */
	if (log)
		rdmalog_log_wake_commit(log);
}

const char *rdmalog_repl_ack_received(struct rdmalog_ep *ep,
				      const struct rdmalog_msg_ack *m)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	u64 tail = le64_to_cpu(m->tail);
	u64 held = le64_to_cpu(m->held_lsn);
	struct rdmalog_log *log = NULL;
	const char *why = NULL;

	spin_lock(&rdmalog_repl.lock);
	if (!r->joined)
		goto out;
	if (tail < r->r_tail) {
		why = "ACK moved the tail back";
		goto out;
	}
	if (tail > r->sent_pos) {
		why = "ACK with a tail beyond what was written";
		goto out;
	}
	if (tail != r->r_tail) {
		r->r_tail = tail;
		rdmalog_log_set_floor(rdmalog_repl.log,
				      rdmalog_repl_floor_locked(NULL));
	}
	if (le32_to_cpu(m->gen) == rdmalog_repl.gen && r->ack_mode) {
		if (held > r->sent_lsn) {
			why = "ACK of records never written";
			goto out;
		}
		r->acked_lsn = max(r->acked_lsn, held);
		r->held_lsn = max(r->held_lsn, min(held, r->sent_lsn));
		if (rdmalog_repl_advance_locked())
			log = rdmalog_repl.log;
	}
	rdmalog_repl_kick_locked();
out:
	spin_unlock(&rdmalog_repl.lock);
	if (log)
		rdmalog_log_wake_commit(log);
	return why;
}

const char *rdmalog_repl_wait_received(struct rdmalog_ep *ep,
				       const struct rdmalog_msg_wait *m)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	u64 lsn = le64_to_cpu(m->lsn);

	if (!lsn || m->reserved)
		return "WAIT with LSN 0 or reserved bits set";
	spin_lock(&rdmalog_repl.lock);
	/* Kept while it catches up: its first notices after JOIN answer. */
	r->wait_lsn = r->wait_lsn ? min(r->wait_lsn, lsn) : lsn;
	if (r->joined)
		rdmalog_repl_notify_locked(ep);
	spin_unlock(&rdmalog_repl.lock);
	return NULL;
}

void rdmalog_repl_ep_info(struct rdmalog_ep *ep,
			  struct rdmalog_repl_peer_info *info)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	struct rdmalog_log_state st;

	spin_lock_bh(&rdmalog_repl.lock);
	info->joined = r->joined;
	info->bytes = r->bytes;
	info->records = r->records;
	info->held_lsn = r->held_lsn;
	info->errors = r->errors;
	if (r->joined && rdmalog_repl.log) {
		rdmalog_log_get_state(rdmalog_repl.log, &st);
		info->lag = st.next_lsn > r->held_lsn ?
			    st.next_lsn - r->held_lsn : 0;
	}
	spin_unlock_bh(&rdmalog_repl.lock);
}

u32 rdmalog_repl_effective(u32 requested, u32 *in_sync, u32 *needed)
{
	struct rdmalog_repl_ep *r;
	u32 n = 0, nodes;

	spin_lock_bh(&rdmalog_repl.lock);
	list_for_each_entry(r, &rdmalog_repl.eps, node)
		n++;
	nodes = rdmalog_repl.nr_nodes;
	spin_unlock_bh(&rdmalog_repl.lock);
	*in_sync = n;
	*needed = rdmalog_repl_needed(requested, nodes);
	if (n >= *needed)
		return requested;
	if (requested == RDMALOG_DURABLE_ALL &&
	    n >= rdmalog_repl_needed(RDMALOG_DURABLE_QUORUM, nodes))
		return RDMALOG_DURABLE_QUORUM;
	return RDMALOG_DURABLE_ASYNC;
}

/* ------------------------------------------------------------------ */
/* Backup side */

/* Send an ACK with what we hold. Any context; false when not sent. */
static bool rdmalog_repl_send_ack(struct rdmalog_ep *ep)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	struct rdmalog_log *log = READ_ONCE(rdmalog_repl.log);
	struct rdmalog_log_pos pos;
	struct rdmalog_msg_ack m = {};

	if (!log || rdmalog_inject_fail(RDMALOG_INJ_FAIL_ACK))
		return false;
	rdmalog_log_get_pos(log, &pos);
	spin_lock_bh(&ep->lock);
	m.held_pos = cpu_to_le64(r->nt.head);
	m.held_lsn = cpu_to_le64(r->nt.next_lsn);
	m.gen = cpu_to_le32(r->nt.gen);
	spin_unlock_bh(&ep->lock);
	m.commit_lsn = cpu_to_le64(pos.commit_lsn);
	m.tail = cpu_to_le64(pos.tail);
	m.first_lsn = cpu_to_le64(pos.first_lsn);
	if (rdmalog_ep_send(ep, &m, sizeof(m), RDMALOG_MSG_ACK, 1))
		return false;
	WRITE_ONCE(r->last_tail, pos.tail);
	return true;
}

void rdmalog_repl_tail_sent(struct rdmalog_ep *ep, u64 tail)
{
	WRITE_ONCE(ep->repl.last_tail, tail);
}

/*
 * Check notice @m of our primary on @ep as an APPEND and note it. Caller
 * holds @apply_mutex. Return: NULL, or why the connection must go.
 */
static const char *rdmalog_repl_note(struct rdmalog_ep *ep,
				     const struct rdmalog_msg_append *m)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	u64 head = le64_to_cpu(m->head), next = le64_to_cpu(m->next_lsn);
	u64 cpos = le64_to_cpu(m->commit_pos);
	u64 clsn = le64_to_cpu(m->commit_lsn);
	u64 first = le64_to_cpu(m->first_lsn);
	u64 epoch = le64_to_cpu(m->hdr.epoch);

	if (le32_to_cpu(m->hdr.magic) != RDMALOG_MSG_MAGIC ||
	    m->hdr.version != RDMALOG_PROTO_VERSION ||
	    m->hdr.type != RDMALOG_MSG_APPEND ||
	    le16_to_cpu(m->hdr.length) != sizeof(*m) || m->hdr.credits ||
	    m->hdr.reserved)
		return "notice with a bad header";
	if (epoch < rdmalog_conn_epoch())
		return "data from a primary of an older epoch";
	if (epoch != ep->hello_epoch)
		return "data of another epoch than the primary's HELLO";
	if (le32_to_cpu(m->flags) & ~RDMALOG_APPEND_F_ACK)
		return "notice with unknown flags";
	if (cpos > head || clsn > next || first > clsn)
		return "notice with inconsistent positions";
	/*
	 * Records of the log we follow, or of the first one we are given;
	 * asked once per connection (its primary's log cannot change).
	 */
	if (!r->follows && rdmalog_repl.log) {
		if (rdmalog_log_follow(rdmalog_repl.log, ep->peer_log_id,
				       epoch) == -ESTALE)
			return "notice from the primary of another log";
		r->follows = true;
	}
	spin_lock_bh(&ep->lock);
	if (clsn < r->nt.commit_lsn || cpos < r->nt.commit_pos ||
	    first < r->nt.first_lsn) {
		spin_unlock_bh(&ep->lock);
		return "notice moved the commit or first LSN back";
	}
	r->nt.head = head;
	r->nt.next_lsn = next;
	r->nt.commit_pos = cpos;
	r->nt.commit_lsn = clsn;
	r->nt.first_lsn = first;
	r->nt.epoch = epoch;
	r->nt.flags = le32_to_cpu(m->flags);
	r->nt.gen = le32_to_cpu(m->gen);
	r->nt_valid = true;
	if (r->nt.flags & RDMALOG_APPEND_F_ACK)
		r->ack_due = true;
	spin_unlock_bh(&ep->lock);
	return NULL;
}

/*
 * Take the latest notice from @ep's notice block if it is new. Caller
 * holds @apply_mutex; process context (it may wait for a WRITE landing in
 * the block). Return: NULL, or why the connection must go.
 */
static const char *rdmalog_repl_take_notice(struct rdmalog_ep *ep)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	struct rdmalog_notice nb;
	u32 seq, named;
	const char *why;
	int tries;

	/*
	 * The NOTIFY's number first: a NOTIFY arrives after the notice it
	 * names was placed (they go on one RC queue pair), so the block read
	 * after it holds that notice or a later one. Read the other way
	 * round, a notice and its NOTIFY landing in between looked like a
	 * NOTIFY of a notice the block did not hold.
	 */
	spin_lock_bh(&ep->lock);
	named = r->notify_seq;
	spin_unlock_bh(&ep->lock);
	smp_rmb();	/* the block after the number */
	rdmalog_inject_delay(RDMALOG_INJ_NOTICE_TAKE);
	for (tries = 0;; tries++) {
		rdmalog_ring_notice_read(ep, &nb, sizeof(nb));
		seq = le32_to_cpu(nb.append.hdr.seq);
		if (!seq && !nb.append.hdr.magic)
			break;		/* nothing written yet */
		if (le32_to_cpu(nb.crc) == rdmalog_notice_crc(&nb.append))
			break;
		if (tries == RDMALOG_REPL_NOTICE_TRIES)
			return "notice block that does not verify";
		usleep_range(10, 50);
	}
	if ((s32)(seq - named) < 0)
		return "NOTIFY of a notice not in the notice block";
	if ((s32)(seq - r->taken_seq) < 0 || nb.reserved)
		return "notice block moved back, or reserved bits set";
	if (seq == r->taken_seq)
		return NULL;
	why = rdmalog_repl_note(ep, &nb.append);
	if (!why)
		r->taken_seq = seq;
	return why;
}

/* Ask our primary on @ep to NOTIFY once what a reader waits for commits. */
static void rdmalog_repl_send_wait(struct rdmalog_ep *ep, u64 commit_lsn)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	struct rdmalog_msg_wait m = {};
	u64 want;

	spin_lock_bh(&ep->lock);
	want = r->want_lsn;
	if (want && want < commit_lsn) {
		r->want_lsn = 0;	/* it is here */
		want = 0;
	}
	if (!want || r->armed) {
		spin_unlock_bh(&ep->lock);
		return;
	}
	r->armed = true;
	r->wait_retry = false;
	spin_unlock_bh(&ep->lock);
	m.lsn = cpu_to_le64(want);
	if (!rdmalog_ep_send(ep, &m, sizeof(m), RDMALOG_MSG_WAIT, 2)) {
		rdmalog_stats_inc(RDMALOG_STAT_WAITS_SENT);
		return;
	}
	/* No credit or buffer: the next message we receive retries. */
	spin_lock_bh(&ep->lock);
	r->armed = false;
	r->wait_retry = true;
	spin_unlock_bh(&ep->lock);
}

/*
 * Take the latest notice on @ep, verify and expose what it says is
 * committed, trim to its first LSN, and send the ACK and WAIT owed.
 * Process context.
 */
static void rdmalog_repl_apply(struct rdmalog_ep *ep)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	struct rdmalog_log *log = rdmalog_repl.log;
	struct rdmalog_log_state st;
	struct rdmalog_log_pos pos;
	bool valid, ack;
	const char *why;
	u64 trim, cpos, clsn, first, epoch;
	int err;

	if (!log || !test_bit(RDMALOG_EP_RING_REG, &ep->flags))
		return;
	rdmalog_inject_delay(RDMALOG_INJ_REPL_APPLY);
	mutex_lock(&r->apply_mutex);
	/* Under the mutex: rdmalog_repl_ep_stop() waits for us. */
	if (test_bit(RDMALOG_EP_DEAD, &ep->flags))
		goto out;
	why = rdmalog_repl_take_notice(ep);
	if (why) {
		rdmalog_stats_inc(RDMALOG_STAT_BAD_MSGS);
		pr_warn_ratelimited("node %u: dropping the connection to node %u: %s (its notice block)\n",
				    ep->conn->local.node_id, ep->conn->peer_id,
				    why);
		rdmalog_ep_error(ep, "bad notice: %s", why);
		goto out;
	}
	spin_lock_bh(&ep->lock);
	valid = r->nt_valid;
	r->nt_valid = false;
	ack = r->ack_due;
	r->ack_due = false;
	cpos = r->nt.commit_pos;
	clsn = r->nt.commit_lsn;
	first = r->nt.first_lsn;
	epoch = r->nt.epoch;
	spin_unlock_bh(&ep->lock);

	if (valid) {
		u64 head, next;

		rdmalog_stats_inc(RDMALOG_STAT_APPLY_RUNS);
		/* The primary's WRITEs wrote [head, cpos): we verify it. */
		rdmalog_log_get_head(log, &head, &next);
		if (cpos > head && ep->ring_map)
			rdmalog_ring_map_sync(ep->ring_map, head, cpos - head,
					      true);
		err = rdmalog_log_apply(log, cpos, clsn, epoch, &why);
		if (err == -EBADMSG) {
			pr_err_ratelimited("node %u: a record from primary %u failed verification: %s\n",
					   ep->conn->local.node_id,
					   ep->conn->peer_id, why);
			rdmalog_ep_error(ep, "record failed verification: %s",
					 why);
			goto out;
		}
		if (err)
			goto out;
		rdmalog_log_get_state(log, &st);
		trim = min(first, st.commit_lsn);
		if (trim > st.first_lsn)
			rdmalog_log_trim(log, trim);
	}
	rdmalog_log_get_pos(log, &pos);
	if ((ack || READ_ONCE(r->last_tail) != pos.tail) &&
	    !rdmalog_repl_send_ack(ep) && ack) {
		/* In ACK mode the primary's commit waits for it: re-arm. */
		spin_lock_bh(&ep->lock);
		r->ack_retry = true;
		spin_unlock_bh(&ep->lock);
	}
	rdmalog_repl_send_wait(ep, pos.commit_lsn);
out:
	mutex_unlock(&r->apply_mutex);
}

static void rdmalog_repl_apply_work(struct work_struct *work)
{
	struct rdmalog_ep *ep = container_of(work, struct rdmalog_ep,
					     repl.apply_work);

	rdmalog_repl_apply(ep);
	rdmalog_ep_put(ep);
}

static void rdmalog_repl_queue_apply(struct rdmalog_ep *ep)
{
	rdmalog_ep_get(ep);		/* the work's */
	if (!queue_work(rdmalog_repl_wq, &ep->repl.apply_work))
		rdmalog_ep_put(ep);
}

void rdmalog_repl_ep_stop(struct rdmalog_ep *ep)
{
	bool was;

	if (cancel_work_sync(&ep->repl.apply_work))
		rdmalog_ep_put(ep);
	/*
	 * A reader's demand may be taking a notice: the notice block goes
	 * with the release. DEAD is set: any later one does nothing.
	 */
	mutex_lock(&ep->repl.apply_mutex);
	mutex_unlock(&ep->repl.apply_mutex);
	spin_lock_bh(&rdmalog_repl.lock);
	was = rdmalog_repl.src == ep;
	if (was)
		rdmalog_repl.src = NULL;
	spin_unlock_bh(&rdmalog_repl.lock);
	if (was)
		rdmalog_ep_put(ep);
}

void rdmalog_repl_ring_sent(struct rdmalog_ep *ep, u64 tail)
{
	struct rdmalog_ep *old;

	rdmalog_repl_tail_sent(ep, tail);
	rdmalog_ep_get(ep);
	spin_lock_bh(&rdmalog_repl.lock);
	old = rdmalog_repl.src;
	rdmalog_repl.src = ep;
	spin_unlock_bh(&rdmalog_repl.lock);
	if (old)
		rdmalog_ep_put(old);
}

const char *rdmalog_repl_notify_received(struct rdmalog_ep *ep,
					 const struct rdmalog_msg_notify *m)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	u64 seq = le64_to_cpu(m->notice_seq);

	if (!seq || seq > U32_MAX || m->reserved)
		return "NOTIFY with a bad notice number or reserved bits set";
	spin_lock(&ep->lock);
	if ((s32)((u32)seq - r->notify_seq) > 0)
		r->notify_seq = seq;
	r->armed = false;
	spin_unlock(&ep->lock);
	rdmalog_repl_queue_apply(ep);
	return NULL;
}

/*
 * A reader of @log wants record @lsn (0: nobody waits; the state is
 * asked for): take our primary's latest notice, in the caller's context
 * (@sync) or the apply work's; with @lsn, ask the primary to NOTIFY once
 * it is committed. Return: false when this node takes notices from no
 * primary (nothing was done).
 */
static bool rdmalog_repl_demand(struct rdmalog_log *log, u64 lsn, bool sync)
{
	struct rdmalog_ep *ep;
	struct rdmalog_repl_ep *r;

	spin_lock_bh(&rdmalog_repl.lock);
	ep = rdmalog_repl_ours_locked(log) ? rdmalog_repl.src : NULL;
	if (ep)
		rdmalog_ep_get(ep);
	spin_unlock_bh(&rdmalog_repl.lock);
	if (!ep)
		return false;
	r = &ep->repl;
	if (lsn) {
		spin_lock_bh(&ep->lock);
		if (!r->want_lsn || lsn < r->want_lsn)
			r->want_lsn = lsn;
		spin_unlock_bh(&ep->lock);
	}
	if (sync)
		rdmalog_repl_apply(ep);
	else
		rdmalog_repl_queue_apply(ep);
	rdmalog_ep_put(ep);
	return true;
}

void rdmalog_repl_after_rx(struct rdmalog_ep *ep)
{
	bool credits, retry;

	if (ep->repl.joined) {
		spin_lock(&rdmalog_repl.lock);
		rdmalog_repl_kick_locked();
		spin_unlock(&rdmalog_repl.lock);
		return;
	}
	if (!test_bit(RDMALOG_EP_RING_REG, &ep->flags))
		return;
	spin_lock(&ep->lock);
	credits = ep->grant >= RDMALOG_RECV_DEPTH / 4;
	retry = ep->repl.ack_retry || ep->repl.wait_retry;
	if (ep->repl.ack_retry) {
		ep->repl.ack_retry = false;
		ep->repl.ack_due = true;
	}
	ep->repl.wait_retry = false;
	spin_unlock(&ep->lock);
	if (retry)
		rdmalog_repl_queue_apply(ep);
	else if (credits)
		rdmalog_repl_send_ack(ep);
}

const char *rdmalog_repl_ep_idle(struct rdmalog_ep *ep)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	const char *why = NULL;

	spin_lock_bh(&rdmalog_repl.lock);
	if (r->joined || r->holding)
		why = "it replicates from this node";
	spin_unlock_bh(&rdmalog_repl.lock);
	if (why)
		return why;
	spin_lock_bh(&ep->lock);
	if (r->nt_valid || r->ack_due || r->ack_retry || r->armed ||
	    r->wait_retry)
		why = "this node replicates from it";
	spin_unlock_bh(&ep->lock);
	return why;
}

/* ------------------------------------------------------------------ */
/* Set-up */

void rdmalog_repl_ep_init(struct rdmalog_ep *ep)
{
	INIT_LIST_HEAD(&ep->repl.node);
	INIT_LIST_HEAD(&ep->repl.hold_node);
	mutex_init(&ep->repl.apply_mutex);
	INIT_WORK(&ep->repl.apply_work, rdmalog_repl_apply_work);
}

/* Apply the policy to the log. Lock held. */
static void rdmalog_repl_policy_locked(u32 timeout_ms)
{
	bool self = !rdmalog_repl_is_primary() ||
		    !rdmalog_repl_needed(rdmalog_repl.durability,
					 rdmalog_repl.nr_nodes);

	rdmalog_log_set_policy(rdmalog_repl.log, self, timeout_ms);
	if (!self)
		rdmalog_repl_commit_locked();
}

void rdmalog_repl_start(const struct rdmalog_repl_params *p)
{
	struct rdmalog_log_state st;

	rdmalog_log_get(p->log);
	rdmalog_log_get_state(p->log, &st);
	rdmalog_log_set_hooks(p->log, &rdmalog_repl_hooks);
	spin_lock_bh(&rdmalog_repl.lock);
	rdmalog_repl.log = p->log;
	rdmalog_repl.capacity = st.capacity;
	rdmalog_repl.role = p->role;
	rdmalog_repl.durability = p->durability;
	rdmalog_repl.nr_nodes = p->nr_nodes;
	rdmalog_repl.in_sync_changed = p->in_sync_changed;
	rdmalog_repl.gen = 1;
	rdmalog_repl.paused = false;
	rdmalog_repl.running = true;
	rdmalog_repl_policy_locked(p->commit_timeout_ms);
	spin_unlock_bh(&rdmalog_repl.lock);
}

void rdmalog_repl_stop(void)
{
	struct rdmalog_log *log;

	spin_lock_bh(&rdmalog_repl.lock);
	rdmalog_repl.running = false;
	/* conn.c released every endpoint: none is joined any more. */
	WARN_ON_ONCE(!list_empty(&rdmalog_repl.eps));
	WARN_ON_ONCE(!list_empty(&rdmalog_repl.holds));
	WARN_ON_ONCE(rdmalog_repl.src);
	spin_unlock_bh(&rdmalog_repl.lock);
	/* Not running: a late timer posts nothing; it must be done. */
	hrtimer_cancel(&rdmalog_repl.commit_timer);
	/* Queued apply work holds endpoint references, not the log's. */
	flush_workqueue(rdmalog_repl_wq);
	spin_lock_bh(&rdmalog_repl.lock);
	log = rdmalog_repl.log;
	rdmalog_repl.log = NULL;
	spin_unlock_bh(&rdmalog_repl.lock);
	rdmalog_log_put(log);
}

bool rdmalog_repl_queue(struct work_struct *work)
{
	return queue_work(rdmalog_repl_wq, work);
}

struct rdmalog_log *rdmalog_repl_log(void)
{
	return READ_ONCE(rdmalog_repl.log);
}

void rdmalog_repl_set_policy(u32 durability, u32 nr_nodes,
			     u32 commit_timeout_ms)
{
	spin_lock_bh(&rdmalog_repl.lock);
	rdmalog_repl.durability = durability;
	rdmalog_repl.nr_nodes = nr_nodes;
	if (rdmalog_repl.running)
		rdmalog_repl_policy_locked(commit_timeout_ms);
	spin_unlock_bh(&rdmalog_repl.lock);
}

void rdmalog_repl_set_role(u32 role, u32 commit_timeout_ms)
{
	spin_lock_bh(&rdmalog_repl.lock);
	WARN_ON_ONCE(!list_empty(&rdmalog_repl.eps));
	WARN_ON_ONCE(!list_empty(&rdmalog_repl.holds));
	rdmalog_repl.role = role;
	/* As a new up period's: no backup saw a notice of ours since. */
	rdmalog_repl.gen = 1;
	if (rdmalog_repl.running)
		rdmalog_repl_policy_locked(commit_timeout_ms);
	spin_unlock_bh(&rdmalog_repl.lock);
}

int rdmalog_repl_init(void)
{
	hrtimer_init(&rdmalog_repl.commit_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_SOFT);
	rdmalog_repl.commit_timer.function = rdmalog_repl_commit_timer;
	rdmalog_repl_wq = alloc_workqueue("rdmalog_repl", WQ_UNBOUND, 0);
	return rdmalog_repl_wq ? 0 : -ENOMEM;
}

void rdmalog_repl_exit(void)
{
	hrtimer_cancel(&rdmalog_repl.commit_timer);
	destroy_workqueue(rdmalog_repl_wq);
}
