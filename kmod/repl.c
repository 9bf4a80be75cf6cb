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
 * bytes), followed in the same ib_post_send() by one signalled APPEND
 * Send. At most %RDMALOG_REPL_MAX_BATCHES batches are in flight to a
 * backup (also bounded by send buffers, its receive credits and
 * %RDMALOG_REPL_MAX_WRITES): whatever is published meanwhile goes out in
 * the next one, posted from the completion: that is group commit.
 *
 * On an RC queue pair over InfiniBand or RoCE, the APPEND's successful
 * completion means the responder acknowledged it and every WRITE before it
 * (they complete in order), so the backup holds those bytes: the held LSN
 * of the backup moves to the APPEND's LSN, and the commit rule runs. On
 * iWARP a completion only says the data left, so there (and with the
 * force_ack parameter) APPENDs ask for an ACK and only ACKs move the held
 * LSN (Documentation/protocol.rst).
 *
 * The commit rule: durability async commits locally (the append commits
 * itself); quorum needs floor(N / 2) backups holding a record (with the
 * primary that is a majority of the N configured nodes), all needs every
 * one of the N - 1. The commit LSN is the needed-th largest held LSN among
 * the joined backups. An APPEND carries our commit and first LSN; a
 * commit that moved after the last APPEND to a backup goes out in a
 * commit-only APPEND once that backup has none in flight.
 *
 * The floor: we never overwrite ring space a joined backup still retains
 * (its tail, from RING and ACKs, plus the capacity): rdmalog_log_set_floor()
 * with the lowest such tail makes appenders wait. Backups trim only what
 * we trimmed (APPEND's first LSN), and report their tail in ACKs.
 *
 * A commit timeout removes every uncommitted record (log.c); before that,
 * rdmalog_repl_quiesce() stops posting and waits until nothing of the ring
 * is in flight, and rdmalog_repl_resume() rewinds every backup's posted
 * position and starts a new generation (ACKs of older ones are ignored).
 *
 * Backup side
 *
 * An APPEND is noted under the endpoint's lock and the apply work queued:
 * it verifies every record up to the APPEND's commit point and publishes
 * them committed (rdmalog_log_apply()), trims to the primary's first LSN,
 * and ACKs when asked, when its tail moved, or (rdmalog_repl_after_rx())
 * when a quarter of the receive buffers wait to be handed back. A record
 * that fails verification drops the connection.
 *
 * Locking: rdmalog_repl.lock (spinlock, _bh outside softirq) protects the
 * state below and the primary-side fields of every joined endpoint's
 * &struct rdmalog_repl_ep; it is taken before an endpoint's lock (sending)
 * and before the log's lock (positions, commit, floor). The backup-side
 * fields are under the endpoint's lock. Joined endpoints are referenced by
 * the list; apply work holds a reference while queued.
 */
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/module.h>
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

/* The commit rule. Caller holds the lock. */
static void rdmalog_repl_commit_locked(void)
{
	u32 needed = rdmalog_repl_needed(rdmalog_repl.durability,
					 rdmalog_repl.nr_nodes);
	u64 held[RDMALOG_MAX_PEERS];
	struct rdmalog_repl_ep *r;
	u32 n = 0;

	if (!needed || !rdmalog_repl.running || !rdmalog_repl_is_primary())
		return;
	list_for_each_entry(r, &rdmalog_repl.eps, node)
		if (n < ARRAY_SIZE(held))
			held[n++] = r->held_lsn;
	if (n < needed)
		return;
	sort(held, n, sizeof(held[0]), rdmalog_repl_cmp_desc, NULL);
	rdmalog_log_commit(rdmalog_repl.log, held[needed - 1]);
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

/* An APPEND's send buffer: what its completion tells the commit rule. */
enum {
	RDMALOG_REPL_SB_END_POS,	/* the APPEND's head */
	RDMALOG_REPL_SB_END_LSN,	/* its next_lsn */
	RDMALOG_REPL_SB_GEN,		/* its gen */
};

static void rdmalog_repl_notice_done(struct rdmalog_ep *ep,
				     struct rdmalog_sbuf *sb, bool ok);

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
 * closed by an APPEND, or a commit-only APPEND. Lock held.
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
			return;
		/* A commit-only APPEND waits for the ones in flight. */
		if (!data && r->notices)
			return;
		if (data && (r->writes >= RDMALOG_REPL_MAX_WRITES ||
			     r->notices >= RDMALOG_REPL_MAX_BATCHES))
			return;

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

			/* The CPU wrote it; the device reads it next. */
			rdmalog_ring_map_sync(map, cur, len, false);
			sges[n].addr = dma;
			sges[n].length = len;
			sges[n].lkey = ep->pd->local_dma_lkey;
			memset(&wrs[n], 0, sizeof(wrs[n]));
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

		err = rdmalog_ep_send_chain(ep, &m, sizeof(m),
					    RDMALOG_MSG_APPEND, 2,
					    n ? &wrs[0].wr : NULL, n,
					    rdmalog_repl_sbuf_init, &b);
		if (err == -EAGAIN || err == -ENOTCONN)
			return;	/* credits or buffers: retried on completion */
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
	}
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

static const struct rdmalog_log_hooks rdmalog_repl_hooks = {
	.kick = rdmalog_repl_kick,
	.quiesce = rdmalog_repl_quiesce,
	.resume = rdmalog_repl_resume,
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
	r->ack_mode = force_ack ||
		      rdma_protocol_iwarp(ep->ibdev, ep->cm_id->port_num);
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

/* An APPEND's send completion (CQ context). */
static void rdmalog_repl_notice_done(struct rdmalog_ep *ep,
				     struct rdmalog_sbuf *sb, bool ok)
{
	u64 end_pos = sb->priv[RDMALOG_REPL_SB_END_POS];
	u64 end_lsn = sb->priv[RDMALOG_REPL_SB_END_LSN];
	u32 gen = sb->priv[RDMALOG_REPL_SB_GEN];
	struct rdmalog_repl_ep *r = &ep->repl;

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
		rdmalog_repl_commit_locked();
	}
	if (rdmalog_repl.paused)
		wake_up_all(&rdmalog_repl.quiesce_wq);
	else if (ok)
		rdmalog_repl_kick_locked();
	spin_unlock(&rdmalog_repl.lock);
}

const char *rdmalog_repl_ack_received(struct rdmalog_ep *ep,
				      const struct rdmalog_msg_ack *m)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	u64 tail = le64_to_cpu(m->tail);
	u64 held = le64_to_cpu(m->held_lsn);
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
		rdmalog_repl_commit_locked();
	}
	rdmalog_repl_kick_locked();
out:
	spin_unlock(&rdmalog_repl.lock);
	return why;
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

static void rdmalog_repl_apply_work(struct work_struct *work)
{
	struct rdmalog_ep *ep = container_of(work, struct rdmalog_ep,
					     repl.apply_work);
	struct rdmalog_repl_ep *r = &ep->repl;
	struct rdmalog_log *log = rdmalog_repl.log;
	struct rdmalog_log_state st;
	struct rdmalog_log_pos pos;
	bool valid, ack;
	const char *why;
	u64 trim, cpos, clsn, first, epoch;
	int err;

	if (!log || test_bit(RDMALOG_EP_DEAD, &ep->flags))
		goto out;
	rdmalog_inject_delay(RDMALOG_INJ_REPL_APPLY);
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
out:
	rdmalog_ep_put(ep);
}

void rdmalog_repl_ep_stop(struct rdmalog_ep *ep)
{
	if (cancel_work_sync(&ep->repl.apply_work))
		rdmalog_ep_put(ep);
}

const char *rdmalog_repl_append_received(struct rdmalog_ep *ep,
					 const struct rdmalog_msg_append *m)
{
	struct rdmalog_repl_ep *r = &ep->repl;
	u64 head = le64_to_cpu(m->head), next = le64_to_cpu(m->next_lsn);
	u64 cpos = le64_to_cpu(m->commit_pos);
	u64 clsn = le64_to_cpu(m->commit_lsn);
	u64 first = le64_to_cpu(m->first_lsn);

	if (cpos > head || clsn > next || first > clsn)
		return "APPEND with inconsistent positions";
	/*
	 * Records of the log we follow, or of the first one we are given;
	 * asked once per connection (its primary's log cannot change).
	 */
	if (!r->follows && rdmalog_repl.log) {
		if (rdmalog_log_follow(rdmalog_repl.log, ep->peer_log_id,
				       le64_to_cpu(m->hdr.epoch)) == -ESTALE)
			return "APPEND from the primary of another log";
		r->follows = true;
	}
	spin_lock(&ep->lock);
	if (clsn < r->nt.commit_lsn || cpos < r->nt.commit_pos ||
	    first < r->nt.first_lsn) {
		spin_unlock(&ep->lock);
		return "APPEND moved the commit or first LSN back";
	}
	r->nt.head = head;
	r->nt.next_lsn = next;
	r->nt.commit_pos = cpos;
	r->nt.commit_lsn = clsn;
	r->nt.first_lsn = first;
	r->nt.epoch = le64_to_cpu(m->hdr.epoch);
	r->nt.flags = le32_to_cpu(m->flags);
	r->nt.gen = le32_to_cpu(m->gen);
	r->nt_valid = true;
	if (r->nt.flags & RDMALOG_APPEND_F_ACK)
		r->ack_due = true;
	spin_unlock(&ep->lock);

	rdmalog_ep_get(ep);		/* the work's */
	if (!queue_work(rdmalog_repl_wq, &r->apply_work))
		rdmalog_ep_put(ep);
	return NULL;
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
	retry = ep->repl.ack_retry;
	if (retry) {
		ep->repl.ack_retry = false;
		ep->repl.ack_due = true;
	}
	spin_unlock(&ep->lock);
	if (retry) {
		rdmalog_ep_get(ep);		/* the work's */
		if (!queue_work(rdmalog_repl_wq, &ep->repl.apply_work))
			rdmalog_ep_put(ep);
	} else if (credits) {
		rdmalog_repl_send_ack(ep);
	}
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
	if (r->nt_valid || r->ack_due || r->ack_retry)
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
	spin_unlock_bh(&rdmalog_repl.lock);
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
	/* As a new up period's: no backup saw an APPEND of ours since. */
	rdmalog_repl.gen = 1;
	if (rdmalog_repl.running)
		rdmalog_repl_policy_locked(commit_timeout_ms);
	spin_unlock_bh(&rdmalog_repl.lock);
}

int rdmalog_repl_init(void)
{
	rdmalog_repl_wq = alloc_workqueue("rdmalog_repl", WQ_UNBOUND, 0);
	return rdmalog_repl_wq ? 0 : -ENOMEM;
}

void rdmalog_repl_exit(void)
{
	destroy_workqueue(rdmalog_repl_wq);
}
