// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - catch-up: a backup that is behind the primary pulls the
 * committed records it lacks with RDMA READ before it joins replication.
 *
 * Primary side
 *
 * A backup's RING says where its log ends. The work (process context:
 * a grant maps registrations) has rdmalog_repl_ep_join() judge it against
 * ours (rdmalog_log_plan()): at one of our record boundaries with every
 * committed record, it joins at once; at a boundary below our commit
 * point it must PULL [its head, our commit point); below our first
 * retained record it must RESET (restart its log at our first record) and
 * pull from there; if it retains bytes that an append being written now
 * would overwrite in its ring, not now (the connection goes, and it is
 * judged again when it is back); anything else is a diverged log, not
 * replicated to. A RING that says the backup holds the epoch-start
 * record our LEAD named is judged in the completion handler first: if
 * that record is still ours, the backup joins after it there and then
 * (the commit rule runs: the leader change's last step is not behind the
 * work); else the work judges it as any other.
 * For PULL and RESET the floor is held at the backup's tail-to-be, so no
 * append overwrites what it is about to read, and we grant it REMOTE_READ
 * on our ring for this connection only: FRWR registrations of our ring on
 * the connection's PD (fresh keys for every grant), posted before the
 * CATCHUP message on the same send queue, and invalidated (LOCAL_INV)
 * before anything else is done with its JOIN; they die with the QP in any
 * case. After the JOIN the backup is judged again, allowing it to join
 * below our commit point (replication WRITEs the rest: what was committed
 * while it pulled); only if we trimmed past it meanwhile does it get
 * another round, at most %RDMALOG_CU_MAX_ROUNDS per connection.
 *
 * Backup side
 *
 * The CATCHUP is checked in the completion handler; the work item then
 * restarts the log if asked (rdmalog_log_reset(): counted, logged,
 * announced with a LOG_RESET event) or checks that the range starts at
 * our head, checks that the range fits our ring without touching what we
 * retain, and posts up to %RDMALOG_CU_MAX_READS RDMA READs of at most
 * %RDMALOG_CU_MAX_READ bytes each from the primary's ring into the same
 * offsets of ours (split at the ring's end and at either side's segment
 * boundaries). Each completion posts the next READ and queues the work,
 * which verifies and exposes every whole record that arrived
 * (rdmalog_log_apply_pulled(): header, LSN continuity, epoch, both
 * CRC32C); a record that fails drops the connection. When the whole range
 * is in and verified, the work sends JOIN with our new position.
 *
 * Locking and lifetime: &rdmalog_catchup_ep.lock (see catchup.h) protects
 * the state; posting takes &rdmalog_ep.lock (through the send helpers or
 * directly, for the READs) only after it is released. The work runs on the
 * replication workqueue (rdmalog_repl_queue()), which is flushed before the
 * log of the up period goes, and holds an endpoint reference; the
 * endpoint's close work cancels it or waits for its run
 * (rdmalog_catchup_ep_stop()), and READs and registrations are completed
 * (flushed) by ib_drain_qp(), before the endpoint's resources go. READs
 * may complete out of their ranges' order (one can be posted after a
 * later one): @pulled only covers the longest completed prefix.
 */
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "catchup.h"
#include "ep.h"
#include "inject.h"
#include "log.h"
#include "netlink.h"
#include "proto.h"
#include "repl.h"
#include "ring_map.h"
#include "ring_mr.h"
#include "stats.h"

/*
 * The last log restart of this up period, for the node's status message:
 * a reset is never silent. Cleared when the node comes up.
 */
static DEFINE_SPINLOCK(rdmalog_cu_note_lock);
static char rdmalog_cu_note[128];

void rdmalog_catchup_status_msg(char *buf, size_t len)
{
	spin_lock_bh(&rdmalog_cu_note_lock);
	strscpy(buf, rdmalog_cu_note, len);
	spin_unlock_bh(&rdmalog_cu_note_lock);
}

void rdmalog_catchup_clear_note(void)
{
	spin_lock_bh(&rdmalog_cu_note_lock);
	rdmalog_cu_note[0] = '\0';
	spin_unlock_bh(&rdmalog_cu_note_lock);
}

/*
 * A restart at @lsn, the log having been at @pos: logged, and kept for
 * status. Nothing is discarded when the log held no record.
 */
static void rdmalog_cu_reset_note(struct rdmalog_ep *ep, u64 lsn,
				  const struct rdmalog_log_pos *pos)
{
	char what[64];

	if (pos->next_lsn > pos->first_lsn)
		snprintf(what, sizeof(what), "LSNs %llu to %llu discarded",
			 pos->first_lsn, pos->next_lsn - 1);
	else
		strscpy(what, "no record discarded", sizeof(what));
	pr_warn_ratelimited("node %u: restarted the log at LSN %llu: primary %u no longer retains what follows our LSN %llu (%s)\n",
			    ep->conn->local.node_id, lsn, ep->conn->peer_id,
			    pos->next_lsn, what);
	spin_lock_bh(&rdmalog_cu_note_lock);
	snprintf(rdmalog_cu_note, sizeof(rdmalog_cu_note),
		 "log restarted at LSN %llu by primary %u (%s)", lsn,
		 ep->conn->peer_id, what);
	spin_unlock_bh(&rdmalog_cu_note_lock);
}

/* ------------------------------------------------------------------ */
/* Primary side */

static void rdmalog_cu_queue(struct rdmalog_ep *ep);

static void rdmalog_cu_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_ep *ep = container_of(wc->wr_cqe, struct rdmalog_ep,
					     cu.reg_cqe);

	rdmalog_ep_wc_ok(ep, wc, "catch-up read grant");
}

/* The last LOCAL_INV of a grant completed: its JOIN may be judged. */
static void rdmalog_cu_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_ep *ep = container_of(wc->wr_cqe, struct rdmalog_ep,
					     cu.inv_cqe);
	struct rdmalog_catchup_ep *cu = &ep->cu;
	bool done;

	if (!rdmalog_ep_wc_ok(ep, wc, "catch-up read grant revocation"))
		return;
	spin_lock(&cu->lock);
	done = cu->inv_left && !--cu->inv_left;
	if (done)
		cu->revoked = true;
	spin_unlock(&cu->lock);
	if (done)
		rdmalog_cu_queue(ep);
}

/* The MR of bit @bit of &rdmalog_catchup_ep.granted. */
static struct ib_mr *rdmalog_cu_mr(struct rdmalog_ep *ep, unsigned int bit)
{
	return bit == RDMALOG_CU_WRAP_BIT ? ep->ring_wrap_mr :
					    ep->ring_regs[bit].mr;
}

/*
 * Post the LOCAL_INV of every MR a grant registered, each signalled: the
 * last completion (rdmalog_cu_inv_done()) says the keys are dead. Caller
 * holds &rdmalog_ep.lock and checked that it is live, and set
 * &rdmalog_catchup_ep.inv_left to the MRs in @granted.
 */
static int rdmalog_cu_post_invs(struct rdmalog_ep *ep, unsigned long granted)
{
	unsigned int bit;
	int err = 0;

	for_each_set_bit(bit, &granted, BITS_PER_LONG) {
		struct ib_send_wr wr = {};

		wr.opcode = IB_WR_LOCAL_INV;
		wr.wr_cqe = &ep->cu.inv_cqe;
		wr.send_flags = IB_SEND_SIGNALED;
		wr.ex.invalidate_rkey = rdmalog_cu_mr(ep, bit)->rkey;
		err = ib_post_send(ep->qp, &wr, NULL);
		if (err)
			break;
	}
	return err;
}

/*
 * Post the REG_MR (REMOTE_READ only) of every MR in @granted, the first
 * behind a fence (rdmalog_ep_reg_fence()). As above.
 */
static int rdmalog_cu_post_regs(struct rdmalog_ep *ep, unsigned long granted)
{
	bool first = true;
	unsigned int bit;
	int err = 0;

	for_each_set_bit(bit, &granted, BITS_PER_LONG) {
		struct ib_mr *mr = rdmalog_cu_mr(ep, bit);
		struct ib_reg_wr reg = {};
		struct ib_send_wr fence;

		reg.wr.opcode = IB_WR_REG_MR;
		reg.wr.wr_cqe = &ep->cu.reg_cqe;
		reg.wr.send_flags = IB_SEND_SIGNALED;
		reg.mr = mr;
		reg.key = mr->rkey;
		reg.access = IB_ACCESS_REMOTE_READ;
		err = ib_post_send(ep->qp, first ?
				   rdmalog_ep_reg_fence(ep, &fence, &reg.wr) :
				   &reg.wr, NULL);
		if (err)
			break;
		first = false;
	}
	return err;
}

/*
 * Map @mr over ring offsets [@lo, @hi) (inside one registration) at
 * address %RDMALOG_RING_IOVA + @lo, with a new key. Return: 0 or -EIO.
 */
static int rdmalog_cu_map(struct rdmalog_ep *ep, struct ib_mr *mr, u64 lo,
			  u64 hi)
{
	int nents, n;

	nents = rdmalog_ring_map_fill_sg(ep->ring_map, lo, hi, ep->ring_sg);
	/* A new key for every grant: an old one never works again. */
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	n = ib_map_mr_sg(mr, ep->ring_sg, nents, NULL, ep->ring_page_size);
	if (n != nents || mr->length != hi - lo)
		return -EIO;
	/* Ring offsets, not our DMA addresses: the page offset is kept. */
	mr->iova = RDMALOG_RING_IOVA + lo;
	return 0;
}

static void rdmalog_cu_seg(struct rdmalog_msg_catchup *m, unsigned int *n,
			   u64 lo, u64 hi, u32 rkey)
{
	m->seg[*n].addr = cpu_to_le64(RDMALOG_RING_IOVA + lo);
	m->seg[*n].length = cpu_to_le32(hi - lo);
	m->seg[*n].rkey = cpu_to_le32(rkey);
	(*n)++;
}

/*
 * Register exactly ring offsets [@s, @e1) and [0, @e2) (the range, split
 * at the ring's end; @e2 <= @s, 0 when it does not wrap), and describe the
 * whole ring in @m's segments, in ring order: a registration's part is one
 * segment whose key reads only what the range covers of it (or nothing:
 * a fresh key never registered), and the one part both pieces of a
 * wrapped range touch is two segments, the second MR reading [its start,
 * @e2). *@granted: the MRs registered (&rdmalog_catchup_ep.granted).
 * Return: 0 or -EIO.
 */
static int rdmalog_cu_map_grant(struct rdmalog_ep *ep, u64 s, u64 e1,
				u64 e2, struct rdmalog_msg_catchup *m,
				unsigned long *granted)
{
	const struct rdmalog_ring_map *map = ep->ring_map;
	unsigned int i, n = 0;

	*granted = 0;

	for (i = 0; i < ep->ring_nr_regs; i++) {
		struct ib_mr *mr = ep->ring_regs[i].mr;
		u64 a = map->regs[i].start, b = a + map->regs[i].len;
		u64 lo1 = max(a, s), hi1 = min(b, e1);
		u64 hi2 = min(b, e2);

		if (lo1 < hi1 && a < hi2) {
			/* [a, hi2) by the second MR, then [hi2, b) by this one. */
			if (rdmalog_cu_map(ep, ep->ring_wrap_mr, a, hi2) ||
			    rdmalog_cu_map(ep, mr, lo1, hi1))
				return -EIO;
			rdmalog_cu_seg(m, &n, a, hi2, ep->ring_wrap_mr->rkey);
			rdmalog_cu_seg(m, &n, hi2, b, mr->rkey);
			*granted |= BIT(RDMALOG_CU_WRAP_BIT) | BIT(i);
			continue;
		}
		if (lo1 < hi1 || a < hi2) {
			if (lo1 < hi1 ? rdmalog_cu_map(ep, mr, lo1, hi1) :
					rdmalog_cu_map(ep, mr, a, hi2))
				return -EIO;
			*granted |= BIT(i);
		} else {
			ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
		}
		rdmalog_cu_seg(m, &n, a, b, mr->rkey);
	}
	m->nr_segs = cpu_to_le32(n);
	return 0;
}

/*
 * Grant the backup read access to [start, target) of our ring, and no
 * other byte, and send it the CATCHUP for @plan. The catch-up work.
 * Return: NULL, or why the connection must go.
 */
static const char *rdmalog_cu_serve(struct rdmalog_ep *ep,
				    const struct rdmalog_log_plan *plan,
				    bool reset)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;
	u64 cap = ep->conn->local.capacity;
	u64 len = plan->target_pos - plan->start_pos;
	struct rdmalog_msg_catchup m = {};
	unsigned long granted;
	u64 s, e1, e2;
	int err = 0;

	/* Empty for a restart at a commit point we trimmed to: no grant. */
	if (len > cap)
		return "catch-up range outside the ring";
	div64_u64_rem(plan->start_pos, cap, &s);
	e1 = min(cap, s + len);
	e2 = s + len - e1;
	/* The backup reads [start, target): committed, written no more. */
	rdmalog_ring_map_sync(ep->ring_map, plan->start_pos, len, false);
	/*
	 * The endpoint's release waits for the work:
	 * rdmalog_catchup_ep_stop().
	 */
	if (reset)
		rdmalog_inject_delay(RDMALOG_INJ_CU_GRANT);
	if (rdmalog_cu_map_grant(ep, s, e1, e2, &m, &granted))
		return "cannot map the ring for a catch-up";
	spin_lock_bh(&cu->lock);
	cu->state = RDMALOG_CATCHUP_SERVING;
	cu->start_pos = plan->start_pos;
	cu->start_lsn = plan->start_lsn;
	cu->target_pos = plan->target_pos;
	cu->target_lsn = plan->target_lsn;
	cu->since = jiffies;
	cu->granted = granted;
	cu->rounds++;
	spin_unlock_bh(&cu->lock);

	/* The registrations execute before the CATCHUP is sent. */
	cu->reg_cqe.done = rdmalog_cu_reg_done;
	spin_lock_bh(&ep->lock);
	err = ep->live ? rdmalog_cu_post_regs(ep, granted) : -ENOTCONN;
	spin_unlock_bh(&ep->lock);
	if (err == -ENOTCONN)
		return NULL;
	if (err)
		return "cannot post the catch-up read grant";

	m.start_pos = cpu_to_le64(plan->start_pos);
	m.start_lsn = cpu_to_le64(plan->start_lsn);
	m.target_pos = cpu_to_le64(plan->target_pos);
	m.target_lsn = cpu_to_le64(plan->target_lsn);
	m.flags = cpu_to_le32(reset ? RDMALOG_CATCHUP_F_RESET : 0);
	err = rdmalog_ep_send(ep, &m,
			      RDMALOG_MSG_CATCHUP_LEN(le32_to_cpu(m.nr_segs)),
			      RDMALOG_MSG_CATCHUP, 2);
	if (err && err != -ENOTCONN)
		return "cannot send the CATCHUP";
	pr_info_ratelimited("node %u: node %u is behind: it pulls LSN %llu to %llu (%llu bytes)%s\n",
			    ep->conn->local.node_id, ep->conn->peer_id,
			    plan->start_lsn, plan->target_lsn,
			    plan->target_pos - plan->start_pos,
			    reset ? ", restarting its log" : "");
	return NULL;
}

/* Queue the work with a reference. Any context. */
static void rdmalog_cu_queue(struct rdmalog_ep *ep)
{
	rdmalog_ep_get(ep);
	if (!rdmalog_repl_queue(&ep->cu.work))
		rdmalog_ep_put(ep);
}

/*
 * The backup joined (@plan): no catch-up, and its event from the work.
 * Any context. Return: the judgement, for the kernel log.
 */
static const char *rdmalog_cu_joined(struct rdmalog_ep *ep,
				     const struct rdmalog_log_plan *plan)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;

	spin_lock_bh(&cu->lock);
	cu->state = RDMALOG_CATCHUP_NONE;
	cu->notify_joined = true;
	spin_unlock_bh(&cu->lock);
	rdmalog_cu_queue(ep);
	if (plan->es)
		return ep->repl.ack_mode ?
			"holds our epoch-start record, replicating after it (ACK mode)" :
			ep->repl.read_mode ?
			"holds our epoch-start record, replicating after it (read-back mode)" :
			"holds our epoch-start record, replicating after it";
	return ep->repl.ack_mode ? "in sync, replicating (ACK mode)" :
	       ep->repl.read_mode ? "in sync, replicating (read-back mode)" :
				    "in sync, replicating";
}

/* Its RING judged: *@what. Any context. */
static void rdmalog_cu_ring_judged(struct rdmalog_ep *ep, const char *what)
{
	pr_info_ratelimited("node %u: node %u granted its ring (%llu bytes, %u segment%s): %s\n",
			    ep->conn->local.node_id, ep->conn->peer_id,
			    ep->conn->local.capacity, ep->remote_ring.nr_segs,
			    ep->remote_ring.nr_segs == 1 ? "" : "s", what);
}

/*
 * Judge the backup at @pos and act on it; @pull as for
 * rdmalog_log_plan(); *@what: the judgement, for the kernel log. The
 * catch-up work. Return: NULL or why the connection must go.
 */
static const char *rdmalog_cu_judge(struct rdmalog_ep *ep,
				    const struct rdmalog_cu_pos *pos,
				    bool pull, const char **what)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;
	struct rdmalog_log_plan plan;
	int kind;

	kind = rdmalog_repl_ep_join(ep, pos->head, pos->next_lsn, pos->tail,
				    pull, pos->es ? &ep->lead_es : NULL, false,
				    &plan);
	switch (kind) {
	case RDMALOG_PLAN_JOIN:
		*what = rdmalog_cu_joined(ep, &plan);
		return NULL;
	case RDMALOG_PLAN_PULL:
	case RDMALOG_PLAN_RESET:
		*what = kind == RDMALOG_PLAN_PULL ?
			"behind, catching up" :
			"behind our first retained record: restarting its log, catching up";
		if (ep->cu.rounds >= RDMALOG_CU_MAX_ROUNDS) {
			rdmalog_repl_ep_unhold(ep);
			return "catch-up does not converge";
		}
		if (!ep->ring_regs) {
			rdmalog_repl_ep_unhold(ep);
			*what = ep->ring_why ?:
				"behind, and our ring cannot be registered";
			return NULL;
		}
		return rdmalog_cu_serve(ep, &plan, kind == RDMALOG_PLAN_RESET);
	case RDMALOG_PLAN_BUSY:
		/* Not the backup's fault: no bad message; it reconnects. */
		*what = "retains what an append being written overwrites: not now";
		rdmalog_ep_error(ep, "our ring is too full to take it now");
		return NULL;
	default:
		/* Refused because the endpoint is going: nothing to judge. */
		if (test_bit(RDMALOG_EP_DEAD, &ep->flags)) {
			*what = "the connection is closing";
			return NULL;
		}
		spin_lock_bh(&cu->lock);
		cu->state = RDMALOG_CATCHUP_NONE;
		cu->diverged = true;
		cu->notify_diverged = true;
		spin_unlock_bh(&cu->lock);
		*what = kind == RDMALOG_PLAN_OTHER ?
			"holds records of another log, diverged, not replicating" :
			"diverged, not replicating";
		return NULL;
	}
}

const char *rdmalog_catchup_ring(struct rdmalog_ep *ep, u64 head,
				 u64 next_lsn, u64 tail,
				 const struct rdmalog_log_es *es)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;
	struct rdmalog_log_plan plan;

	if (tail > head)
		return "RING with a tail above its head";
	/*
	 * One that holds our epoch-start record, still ours, joins after it
	 * here and now, and the commit rule runs: the leader change's last
	 * step, not behind the work. Anything else is judged by the work.
	 */
	if (es && rdmalog_repl_ep_join(ep, head, next_lsn, tail, true, es,
				       true, &plan) == RDMALOG_PLAN_JOIN) {
		rdmalog_cu_ring_judged(ep, rdmalog_cu_joined(ep, &plan));
		return NULL;
	}
	spin_lock(&cu->lock);
	cu->ring_rx = true;
	cu->ring = (struct rdmalog_cu_pos){ head, next_lsn, tail, !!es };
	spin_unlock(&cu->lock);
	rdmalog_cu_queue(ep);
	return NULL;
}

const char *rdmalog_catchup_join_received(struct rdmalog_ep *ep,
					  const struct rdmalog_msg_join *m)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;
	u64 head = le64_to_cpu(m->head), next = le64_to_cpu(m->next_lsn);
	u64 tail = le64_to_cpu(m->tail);

	if (tail > head)
		return "JOIN with a tail above its head";
	spin_lock(&cu->lock);
	if (cu->state != RDMALOG_CATCHUP_SERVING || cu->join_rx ||
	    cu->inv_left || cu->revoked) {
		spin_unlock(&cu->lock);
		return "JOIN without a CATCHUP";
	}
	cu->join_rx = true;
	cu->join = (struct rdmalog_cu_pos){ head, next, tail };
	spin_unlock(&cu->lock);
	rdmalog_cu_queue(ep);
	return NULL;
}

/* Judge as above; when the connection must go, drop it: return false. */
static bool rdmalog_cu_judge_or_drop(struct rdmalog_ep *ep,
				     const struct rdmalog_cu_pos *pos,
				     bool pull, const char **what)
{
	const char *why = rdmalog_cu_judge(ep, pos, pull, what);

	if (!why)
		return true;
	rdmalog_stats_inc(RDMALOG_STAT_BAD_MSGS);
	rdmalog_ep_error(ep, "%s", why);
	return false;
}

/* Work: judge the backup whose RING arrived. Return: false to stop. */
static bool rdmalog_cu_judge_ring(struct rdmalog_ep *ep)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;
	struct rdmalog_cu_pos pos;
	const char *what;
	bool ring;

	spin_lock_bh(&cu->lock);
	ring = cu->ring_rx;
	cu->ring_rx = false;
	pos = cu->ring;
	spin_unlock_bh(&cu->lock);
	if (!ring)
		return true;
	rdmalog_inject_delay(RDMALOG_INJ_CU_RING);
	/*
	 * One that holds our epoch-start record lacks nothing before it:
	 * it joins after it even below our commit point, if the record is
	 * still ours (rdmalog_log_plan()); else it is judged at its head.
	 */
	if (!rdmalog_cu_judge_or_drop(ep, &pos, true, &what))
		return false;
	rdmalog_cu_ring_judged(ep, what);
	return true;
}

/*
 * Work: judge a RING; after a JOIN revoke the grant, and once every key of
 * it is dead (the LOCAL_INVs completed), judge the backup again.
 */
static void rdmalog_cu_primary_work(struct rdmalog_ep *ep)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;
	bool join, revoked, notify, diverged;
	unsigned long granted = 0;
	struct rdmalog_cu_pos pos;
	const char *what;
	int err;

	if (!rdmalog_cu_judge_ring(ep))
		return;
	spin_lock_bh(&cu->lock);
	join = cu->join_rx;
	cu->join_rx = false;
	if (join) {
		granted = cu->granted;
		cu->granted = 0;
		cu->inv_left = hweight_long(granted);
		cu->revoked = !granted;
	}
	spin_unlock_bh(&cu->lock);

	if (join && granted) {
		/* Nothing of the JOIN counts until its keys are dead. */
		cu->inv_cqe.done = rdmalog_cu_inv_done;
		spin_lock_bh(&ep->lock);
		err = ep->live ? rdmalog_cu_post_invs(ep, granted) : -ENOTCONN;
		spin_unlock_bh(&ep->lock);
		if (err) {
			if (err != -ENOTCONN)
				rdmalog_ep_error(ep, "cannot revoke the catch-up read grant: %d",
						 err);
			return;
		}
	}

	spin_lock_bh(&cu->lock);
	revoked = cu->revoked;
	cu->revoked = false;
	pos = cu->join;
	spin_unlock_bh(&cu->lock);
	if (revoked) {
		if (!rdmalog_cu_judge_or_drop(ep, &pos, false, &what))
			return;
		pr_info_ratelimited("node %u: node %u caught up to LSN %llu: %s\n",
				    ep->conn->local.node_id, ep->conn->peer_id,
				    pos.next_lsn, what);
	}

	spin_lock_bh(&cu->lock);
	notify = cu->notify_joined;
	cu->notify_joined = false;
	diverged = cu->notify_diverged;
	cu->notify_diverged = false;
	spin_unlock_bh(&cu->lock);
	if (notify)
		rdmalog_conn_notify_ep(ep, RDMALOG_EVENT_PEER_JOINED, 0);
	if (diverged)
		rdmalog_conn_notify_ep(ep, RDMALOG_EVENT_PEER_DIVERGED, 0);
}

/* ------------------------------------------------------------------ */
/* Backup side */

static void rdmalog_cu_read_done(struct ib_cq *cq, struct ib_wc *wc);

/*
 * Post READs while slots are free and bytes are left. Any context, without
 * either lock. Return: 0 or a negative errno (-ENOTCONN: not live).
 */
static int rdmalog_cu_post_reads(struct rdmalog_ep *ep)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;
	u64 cap = ep->conn->local.capacity;

	for (;;) {
		struct rdmalog_cu_read *rd;
		struct ib_rdma_wr wr = {};
		struct ib_sge sge;
		u64 off, len, raddr, laddr, rroom, lroom;
		u32 rkey, lkey;
		int err;

		spin_lock_bh(&cu->lock);
		if (cu->state != RDMALOG_CATCHUP_PULLING || !cu->started ||
		    cu->inflight >= RDMALOG_CU_MAX_READS ||
		    cu->posted >= cu->target_pos) {
			spin_unlock_bh(&cu->lock);
			return 0;
		}
		off = cu->posted % cap;
		len = min3(cu->target_pos - cu->posted,
			   (u64)RDMALOG_CU_MAX_READ, cap - off);
		if (!rdmalog_ring_mr_remote(ep, off, &raddr, &rkey, &rroom) ||
		    !rdmalog_ring_mr_local(ep, off, &laddr, &lkey, &lroom)) {
			spin_unlock_bh(&cu->lock);
			return -EINVAL;
		}
		len = min3(len, rroom, lroom);
		rd = &cu->reads[cu->next_read];
		cu->next_read = (cu->next_read + 1) % RDMALOG_CU_MAX_READS;
		cu->posted += len;
		cu->inflight++;
		rd->end = cu->posted;
		rd->len = len;
		rd->done = false;
		spin_unlock_bh(&cu->lock);
		/*
		 * A completion may reserve and post a later range before this
		 * one is posted: @pulled is the longest completed prefix.
		 */
		rdmalog_inject_delay(RDMALOG_INJ_CU_POST);

		sge.addr = laddr;
		sge.length = len;
		sge.lkey = lkey;
		wr.wr.opcode = IB_WR_RDMA_READ;
		wr.wr.wr_cqe = &rd->cqe;
		wr.wr.send_flags = IB_SEND_SIGNALED;
		wr.wr.sg_list = &sge;
		wr.wr.num_sge = 1;
		wr.remote_addr = raddr;
		wr.rkey = rkey;
		err = rdmalog_ep_post(ep, &wr.wr, NULL);
		if (err)
			return err;
	}
}

static void rdmalog_cu_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_cu_read *rd = container_of(wc->wr_cqe,
						  struct rdmalog_cu_read, cqe);
	struct rdmalog_ep *ep = rd->ep;
	struct rdmalog_catchup_ep *cu = &ep->cu;
	u64 bytes = 0;
	int err;

	if (!rdmalog_ep_wc_ok(ep, wc, "catch-up read"))
		return;
	spin_lock(&cu->lock);
	/*
	 * READs posted out of their ranges' order complete out of it: only
	 * the oldest reserved READs that are done move @pulled.
	 */
	rd->done = true;
	while (cu->inflight && cu->reads[cu->oldest_read].done) {
		struct rdmalog_cu_read *o = &cu->reads[cu->oldest_read];

		o->done = false;
		cu->pulled = o->end;
		bytes += o->len;
		cu->oldest_read = (cu->oldest_read + 1) % RDMALOG_CU_MAX_READS;
		cu->inflight--;
	}
	cu->round_bytes += bytes;
	cu->bytes += bytes;
	spin_unlock(&cu->lock);
	if (bytes)
		rdmalog_stats_add(RDMALOG_STAT_CATCHUP_BYTES, bytes);
	err = rdmalog_cu_post_reads(ep);
	if (err && err != -ENOTCONN) {
		rdmalog_ep_error(ep, "cannot post a catch-up read: %d", err);
		return;
	}
	rdmalog_cu_queue(ep);
}

const char *rdmalog_catchup_received(struct rdmalog_ep *ep,
				     const struct rdmalog_msg_catchup *m)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;
	u64 spos = le64_to_cpu(m->start_pos), slsn = le64_to_cpu(m->start_lsn);
	u64 tpos = le64_to_cpu(m->target_pos), tlsn = le64_to_cpu(m->target_lsn);
	u32 flags = le32_to_cpu(m->flags);
	const char *why;

	if (flags & ~RDMALOG_CATCHUP_F_RESET)
		return "CATCHUP with unknown flags";
	if (spos > tpos || slsn > tlsn || !slsn ||
	    tpos - spos > ep->conn->local.capacity ||
	    (spos == tpos && slsn != tlsn) || (spos != tpos && slsn == tlsn))
		return "CATCHUP with an inconsistent range";
	spin_lock(&cu->lock);
	if (cu->state != RDMALOG_CATCHUP_NONE || cu->inflight) {
		spin_unlock(&cu->lock);
		return "CATCHUP while catching up";
	}
	spin_unlock(&cu->lock);
	/* The primary's ring, as a RING describes ours. */
	why = rdmalog_ring_mr_take_segs(ep, m->seg, le32_to_cpu(m->nr_segs),
					RDMALOG_MSG_CATCHUP);
	if (why)
		return why;
	spin_lock(&cu->lock);
	cu->state = RDMALOG_CATCHUP_PULLING;
	cu->reset = flags & RDMALOG_CATCHUP_F_RESET;
	cu->started = false;
	cu->join_sent = false;
	cu->epoch = le64_to_cpu(m->hdr.epoch);
	cu->start_pos = spos;
	cu->start_lsn = slsn;
	cu->target_pos = tpos;
	cu->target_lsn = tlsn;
	cu->posted = spos;
	cu->pulled = spos;
	/* No READ is in flight (checked above): the slots start afresh. */
	cu->next_read = 0;
	cu->oldest_read = 0;
	cu->since = jiffies;
	cu->round_bytes = 0;
	spin_unlock(&cu->lock);
	rdmalog_stats_inc(RDMALOG_STAT_CATCHUPS);
	rdmalog_cu_queue(ep);
	return NULL;
}

/* Work, first run of a round: put the log at the start of the range. */
static const char *rdmalog_cu_start(struct rdmalog_ep *ep,
				    struct rdmalog_log *log)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;
	u64 spos, slsn, tpos, tlsn, epoch;
	struct rdmalog_log_pos pos;
	bool reset;
	int err;

	spin_lock_bh(&cu->lock);
	reset = cu->reset;
	spos = cu->start_pos;
	slsn = cu->start_lsn;
	tpos = cu->target_pos;
	tlsn = cu->target_lsn;
	epoch = cu->epoch;
	spin_unlock_bh(&cu->lock);

	/* Records of the log we follow, or of the first one we are given. */
	err = rdmalog_log_follow(log, ep->peer_log_id, epoch);
	if (err == -ENETDOWN)
		return NULL;
	if (err)
		return "CATCHUP from the primary of another log";
	rdmalog_log_get_pos(log, &pos);
	if (reset) {
		err = rdmalog_log_reset(log, slsn, spos);
		if (err == -ENETDOWN)
			return NULL;
		if (err)
			return "CATCHUP would move our log back";
		rdmalog_cu_reset_note(ep, slsn, &pos);
		rdmalog_conn_notify_ep(ep, RDMALOG_EVENT_LOG_RESET, slsn);
		rdmalog_log_get_pos(log, &pos);
	}
	if (pos.head != spos || pos.next_lsn != slsn)
		return "CATCHUP does not start at our head";
	/* The READs must not land on records we retain. */
	if (tpos - pos.tail > ep->conn->local.capacity)
		return "CATCHUP range overlaps what we retain";
	spin_lock_bh(&cu->lock);
	cu->started = true;
	spin_unlock_bh(&cu->lock);
	pr_info_ratelimited("node %u: catching up from primary %u: LSN %llu to %llu (%llu bytes)\n",
			    ep->conn->local.node_id, ep->conn->peer_id, slsn,
			    tlsn, tpos - spos);
	return NULL;
}

/* Work: send JOIN with where the log is now. */
static int rdmalog_cu_send_join(struct rdmalog_ep *ep,
				struct rdmalog_log *log)
{
	struct rdmalog_msg_join m = {};
	struct rdmalog_log_pos pos;

	rdmalog_log_get_pos(log, &pos);
	m.head = cpu_to_le64(pos.head);
	m.next_lsn = cpu_to_le64(pos.next_lsn);
	m.commit_lsn = cpu_to_le64(pos.commit_lsn);
	m.tail = cpu_to_le64(pos.tail);
	rdmalog_repl_tail_sent(ep, pos.tail);
	return rdmalog_ep_send(ep, &m, sizeof(m), RDMALOG_MSG_JOIN, 2);
}

static void rdmalog_cu_backup_work(struct rdmalog_ep *ep,
				   struct rdmalog_log *log)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;
	const char *why = NULL;
	u64 pulled, tpos, tlsn, epoch, head, next;
	bool started, done;
	int err;

	spin_lock_bh(&cu->lock);
	if (cu->state != RDMALOG_CATCHUP_PULLING || cu->join_sent) {
		spin_unlock_bh(&cu->lock);
		return;
	}
	started = cu->started;
	spin_unlock_bh(&cu->lock);
	if (!started) {
		why = rdmalog_cu_start(ep, log);
		if (why)
			goto bad;
		err = rdmalog_cu_post_reads(ep);
		if (err && err != -ENOTCONN) {
			rdmalog_ep_error(ep, "cannot post a catch-up read: %d",
					 err);
			return;
		}
	}

	spin_lock_bh(&cu->lock);
	pulled = cu->pulled;
	tpos = cu->target_pos;
	tlsn = cu->target_lsn;
	epoch = cu->epoch;
	spin_unlock_bh(&cu->lock);
	/* Our READs wrote [head, pulled): the CPU verifies it next. */
	rdmalog_log_get_head(log, &head, &next);
	if (pulled > head)
		rdmalog_ring_map_sync(ep->ring_map, head, pulled - head, true);
	err = rdmalog_log_apply_pulled(log, pulled, tpos, tlsn, epoch, &why);
	if (err == -EBADMSG) {
		pr_err_ratelimited("node %u: a record pulled from primary %u failed verification: %s\n",
				   ep->conn->local.node_id, ep->conn->peer_id,
				   why);
		rdmalog_ep_error(ep, "pulled record failed verification: %s",
				 why);
		return;
	}
	if (err)
		return;
	if (pulled < tpos)
		return;

	/*
	 * Everything is in and verified: join. The round ends before the
	 * JOIN goes: the primary may answer it with the next CATCHUP (a
	 * RESET round, it trimmed past us) at once.
	 */
	spin_lock_bh(&cu->lock);
	done = !cu->join_sent;
	cu->join_sent = true;
	if (done)
		cu->state = RDMALOG_CATCHUP_NONE;
	spin_unlock_bh(&cu->lock);
	if (!done)
		return;
	err = rdmalog_cu_send_join(ep, log);
	if (err && err != -ENOTCONN) {
		rdmalog_ep_error(ep, "cannot send JOIN: %d", err);
		return;
	}
	rdmalog_inject_delay(RDMALOG_INJ_CU_JOIN);
	pr_info_ratelimited("node %u: caught up with primary %u at LSN %llu\n",
			    ep->conn->local.node_id, ep->conn->peer_id, tlsn);
	return;

bad:
	rdmalog_stats_inc(RDMALOG_STAT_BAD_MSGS);
	pr_warn_ratelimited("node %u: dropping the connection to node %u: %s\n",
			    ep->conn->local.node_id, ep->conn->peer_id, why);
	rdmalog_ep_error(ep, "bad message: %s", why);
}

static void rdmalog_cu_work(struct work_struct *work)
{
	struct rdmalog_ep *ep = container_of(work, struct rdmalog_ep,
					     cu.work);
	struct rdmalog_log *log = rdmalog_repl_log();

	/* Nothing more once the connection is failing: it is going away. */
	if (log && !test_bit(RDMALOG_EP_DEAD, &ep->flags) &&
	    !test_bit(RDMALOG_EP_ERROR, &ep->flags)) {
		if (READ_ONCE(ep->cu.state) == RDMALOG_CATCHUP_PULLING)
			rdmalog_cu_backup_work(ep, log);
		else
			rdmalog_cu_primary_work(ep);
	}
	rdmalog_ep_put(ep);
}

void rdmalog_catchup_ep_stop(struct rdmalog_ep *ep)
{
	/*
	 * RDMALOG_EP_DEAD is set: a run queued after this returns at once.
	 * One that is running finishes before the registrations, the ring
	 * and the replication state it works on go.
	 */
	if (cancel_work_sync(&ep->cu.work))
		rdmalog_ep_put(ep);
}

bool rdmalog_catchup_pulling(struct rdmalog_ep *ep)
{
	return READ_ONCE(ep->cu.state) == RDMALOG_CATCHUP_PULLING;
}

void rdmalog_catchup_ep_info(struct rdmalog_ep *ep,
			     struct rdmalog_catchup_info *info)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;
	unsigned int ms;

	spin_lock_bh(&cu->lock);
	info->state = cu->state;
	info->bytes = cu->bytes;
	info->diverged = cu->diverged;
	info->left = 0;
	info->rate = 0;
	if (cu->state == RDMALOG_CATCHUP_PULLING) {
		info->left = cu->target_pos - cu->pulled;
		ms = jiffies_to_msecs(jiffies - cu->since);
		info->rate = div_u64(cu->round_bytes * MSEC_PER_SEC,
				     max(ms, 1U));
	} else if (cu->state == RDMALOG_CATCHUP_SERVING) {
		info->left = cu->target_pos - cu->start_pos;
	}
	spin_unlock_bh(&cu->lock);
}

const char *rdmalog_catchup_ep_idle(struct rdmalog_ep *ep)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;
	bool busy;

	spin_lock_bh(&cu->lock);
	busy = cu->state != RDMALOG_CATCHUP_NONE || cu->ring_rx || cu->join_rx;
	spin_unlock_bh(&cu->lock);
	return busy ? "a catch-up is under way on it" : NULL;
}

void rdmalog_catchup_ep_init(struct rdmalog_ep *ep)
{
	struct rdmalog_catchup_ep *cu = &ep->cu;
	unsigned int i;

	spin_lock_init(&cu->lock);
	INIT_WORK(&cu->work, rdmalog_cu_work);
	for (i = 0; i < RDMALOG_CU_MAX_READS; i++) {
		cu->reads[i].ep = ep;
		cu->reads[i].cqe.done = rdmalog_cu_read_done;
	}
}
