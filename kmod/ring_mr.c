// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the ring's registrations on one connection (ring_mr.h), and
 * the ring grant (transport.h): a backup's REG_MRs and RING, at most one
 * primary at a time holding it, and the primary's check of a RING.
 *
 * A backup lets the primary RDMA WRITE into its ring: FRWR MRs on the
 * connection's PD, REMOTE_WRITE only (plus the LOCAL_WRITE the verbs
 * require with it), so the rkeys are good on that QP only and die with the
 * connection (the MRs are deregistered after the QP is drained and
 * destroyed). The primary's own ring is not registered remotely but for a
 * catch-up's read grant (catchup.c).
 *
 * The MRs map the scatterlists of the ring's DMA mapping for this device
 * (ring_map.c: one per device, shared by its endpoints, which also says
 * how the ring is cut into MRs). Each MR is one segment of the RING
 * message; a ring that the device cannot register gets no MRs: the
 * backup sends no RING, the primary does not replicate to it, and the
 * kernel log says why.
 *
 * Everything that sleeps (the mapping, ib_alloc_mr) is done in
 * rdmalog_ring_mr_setup() and, on a primary's endpoints,
 * rdmalog_ring_mr_setup_primary(), from rdmalog_ep_setup() (ep.c) under
 * the conn lock; the REG_MRs
 * and the RING message are posted from the receive handler once the
 * primary's HELLO arrives (softirq: ib_map_mr_sg() and ib_post_send() do
 * not sleep).
 */
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/kcsan-checks.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "ballot.h"
#include "ep.h"
#include "log.h"
#include "proto.h"
#include "rdma_dev.h"
#include "ring_map.h"
#include "ring_mr.h"
#include "stats.h"
#include "transport.h"

static bool force_read;
module_param(force_read, bool, 0444);
MODULE_PARM_DESC(force_read,
		 "prove placement by reading each notice back (as on iWARP), on every device; load time, on every node");

bool rdmalog_ring_read_back(const struct rdmalog_ep *ep)
{
	return force_read || ep->rdev->iwarp;
}

/* Allocate, map and get an MR for @pm; rdmalog_page_mr_free() unwinds. */
static int rdmalog_page_mr_setup(struct rdmalog_ep *ep,
				 struct rdmalog_page_mr *pm)
{
	struct ib_mr *mr;
	u64 d;

	pm->page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!pm->page)
		return -ENOMEM;
	d = ib_dma_map_page(ep->ibdev, pm->page, 0, PAGE_SIZE,
			    DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ep->ibdev, d))
		return -ENOMEM;
	pm->dma = d;
	pm->mapped = true;
	mr = ib_alloc_mr(ep->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	pm->mr = mr;
	rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, 1);
	return 0;
}

/* Its MR, its mapping, its page: what there is of them. */
static void rdmalog_page_mr_free(struct rdmalog_ep *ep,
				 struct rdmalog_page_mr *pm)
{
	if (pm->mr) {
		ib_dereg_mr(pm->mr);
		rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, -1);
		pm->mr = NULL;
	}
	if (pm->mapped)
		ib_dma_unmap_page(ep->ibdev, pm->dma, PAGE_SIZE,
				  DMA_FROM_DEVICE);
	pm->mapped = false;
	if (pm->page)
		__free_page(pm->page);
	pm->page = NULL;
}

/*
 * Map @pm's MR onto its page under a new key, at @iova (0: its DMA
 * address), for the REG_MR the caller posts. Does not sleep.
 */
static int rdmalog_page_mr_map(struct rdmalog_page_mr *pm, u64 iova)
{
	struct ib_mr *mr = pm->mr;
	struct scatterlist sg;

	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = pm->dma;
	sg_dma_len(&sg) = PAGE_SIZE;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	if (ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE) != 1)
		return -EINVAL;
	if (iova)
		mr->iova = iova;
	return 0;
}

/* The signalled REG_MR of @pm (mapped) with @access, completing at @cqe. */
static void rdmalog_page_mr_reg_wr(struct rdmalog_page_mr *pm,
				   struct ib_reg_wr *reg, struct ib_cqe *cqe,
				   int access)
{
	memset(reg, 0, sizeof(*reg));
	reg->wr.opcode = IB_WR_REG_MR;
	reg->wr.wr_cqe = cqe;
	reg->wr.send_flags = IB_SEND_SIGNALED;
	reg->mr = pm->mr;
	reg->key = pm->mr->rkey;
	reg->access = access;
}

/* A primary's read-back sink; none (no read-back) when it fails. */
static void rdmalog_proof_setup(struct rdmalog_ep *ep)
{
	if (rdmalog_page_mr_setup(ep, &ep->proof))
		rdmalog_page_mr_free(ep, &ep->proof);
}

static void rdmalog_proof_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_ep *ep = container_of(wc->wr_cqe, struct rdmalog_ep,
					     proof_cqe);

	rdmalog_ep_wc_ok(ep, wc, "read-back sink registration");
}

/*
 * Register the read-back sink, LOCAL_WRITE and REMOTE_WRITE (an iWARP
 * READ's response writes it), before any READ on the send queue. CQ
 * handler context. Return: 0 or the error of the post.
 */
static int rdmalog_proof_register(struct rdmalog_ep *ep)
{
	struct ib_reg_wr reg;

	if (rdmalog_page_mr_map(&ep->proof, 0))
		return -EINVAL;
	ep->proof_cqe.done = rdmalog_proof_reg_done;
	rdmalog_page_mr_reg_wr(&ep->proof, &reg, &ep->proof_cqe,
			       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	return rdmalog_ep_post(ep, &reg.wr, NULL);
}

/* A backup's notice block for the primary's notices. */
static int rdmalog_notice_setup(struct rdmalog_ep *ep)
{
	return rdmalog_page_mr_setup(ep, &ep->notice);
}

void rdmalog_ring_notice_read(struct rdmalog_ep *ep, void *buf, size_t len)
{
	ib_dma_sync_single_for_cpu(ep->ibdev, ep->notice.dma, len,
				   DMA_FROM_DEVICE);
	/* The device may be writing it: the notice's CRC says. */
	kcsan_nestable_atomic_begin();
	memcpy(buf, page_address(ep->notice.page), len);
	kcsan_nestable_atomic_end();
}

static void rdmalog_ring_mr_free(struct rdmalog_ep *ep)
{
	unsigned int i;

	rdmalog_page_mr_free(ep, &ep->notice);
	rdmalog_page_mr_free(ep, &ep->proof);

	if (ep->ring_wrap_mr) {
		ib_dereg_mr(ep->ring_wrap_mr);
		rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, -1);
		ep->ring_wrap_mr = NULL;
	}
	kfree(ep->ring_sg);
	ep->ring_sg = NULL;
	for (i = 0; i < ep->ring_nr_regs; i++) {
		if (ep->ring_regs[i].mr) {
			ib_dereg_mr(ep->ring_regs[i].mr);
			rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, -1);
		}
	}
	kfree(ep->ring_regs);
	ep->ring_regs = NULL;
	ep->ring_nr_regs = 0;
}

void rdmalog_ring_mr_release(struct rdmalog_ep *ep)
{
	rdmalog_ring_mr_free(ep);
	rdmalog_ring_map_put(ep->ring_map);
	ep->ring_map = NULL;
}

int rdmalog_ring_mr_setup(struct rdmalog_ep *ep, struct rdmalog_log *log)
{
	struct rdmalog_ring_map *map;
	const char *why = NULL;
	struct ib_mr *mr;
	unsigned int i;

	if (!log) {
		ep->ring_why = "no log";
		return 0;
	}
	map = rdmalog_ring_map_get(ep->rdev, log, &why);
	if (IS_ERR(map)) {
		ep->ring_why = why;
		return PTR_ERR(map);
	}
	ep->ring_map = map;
	if (map->reg_why) {
		ep->ring_why = map->reg_why;
		return 0;
	}
	ep->ring_regs = kcalloc(map->nr_regs, sizeof(*ep->ring_regs),
				GFP_KERNEL);
	if (!ep->ring_regs) {
		ep->ring_why = "out of memory";
		return 0;
	}
	ep->ring_page_size = map->page_size;
	for (i = 0; i < map->nr_regs; i++) {
		mr = ib_alloc_mr(ep->pd, IB_MR_TYPE_MEM_REG, map->regs[i].pages);
		ep->ring_nr_regs = i + 1;
		if (IS_ERR(mr)) {
			/* Not registered; still the source of our WRITEs. */
			rdmalog_ring_mr_free(ep);
			ep->ring_why = "cannot allocate a memory region";
			return 0;
		}
		ep->ring_regs[i].mr = mr;
		rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, 1);
	}
	/* Granted with the ring: no ring registration without it. */
	if (rdmalog_notice_setup(ep)) {
		rdmalog_ring_mr_free(ep);
		ep->ring_why = "cannot set up the notice block";
	}
	return 0;
}

int rdmalog_ring_mr_setup_primary(struct rdmalog_ep *ep)
{
	const struct rdmalog_ring_map *map = ep->ring_map;
	struct ib_mr *mr;

	/*
	 * Not set up yet (no device, PD or QP: rdmalog_ep_setup() sets it up
	 * as ours then, under this conn lock), or released.
	 */
	if (!ep->qp)
		return 0;
	/* Where a WRITE's completion does not prove placement. */
	if (rdmalog_ring_read_back(ep) && !ep->proof.mr)
		rdmalog_proof_setup(ep);
	/* Not registrable (@ring_why says why), or done already. */
	if (!ep->ring_regs || ep->ring_wrap_mr)
		return 0;
	/* What a catch-up grant needs besides (catchup.c). */
	ep->ring_sg = kcalloc(map->reg_pieces, sizeof(*ep->ring_sg),
			      GFP_KERNEL);
	mr = ib_alloc_mr(ep->pd, IB_MR_TYPE_MEM_REG, map->regs[0].pages);
	if (!ep->ring_sg || IS_ERR(mr)) {
		if (!IS_ERR(mr))
			ib_dereg_mr(mr);
		/* No catch-up without them: no registration at all. */
		rdmalog_ring_mr_free(ep);
		ep->ring_why = "cannot allocate a memory region";
		return -ENOMEM;
	}
	ep->ring_wrap_mr = mr;
	rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, 1);
	return 0;
}

const char *rdmalog_ring_mr_take_segs(struct rdmalog_ep *ep,
				      const struct rdmalog_ring_seg *segs,
				      u32 nr, u8 type)
{
	const char *what = type == RDMALOG_MSG_RING ? "RING" : "CATCHUP";
	u64 len = 0;
	u32 i;

	/* rdmalog_conn_process() checked 1 <= nr <= RDMALOG_RING_MAX_SEGS. */
	for (i = 0; i < nr; i++) {
		u64 addr = le64_to_cpu(segs[i].addr);
		u32 seg_len = le32_to_cpu(segs[i].length);
		u32 rkey = le32_to_cpu(segs[i].rkey);

		/* A RING's are whole MRs; a CATCHUP's may end anywhere. */
		if (!seg_len || (type == RDMALOG_MSG_RING &&
				 !IS_ALIGNED(seg_len, SZ_4K)))
			return "ring segment with a zero or unaligned length";
		if (!rkey)
			return "ring segment with a zero rkey";
		if (addr + seg_len < addr)
			return "ring segment whose address range wraps";
		len += seg_len;
		ep->remote_ring.seg[i].addr = addr;
		ep->remote_ring.seg[i].length = seg_len;
		ep->remote_ring.seg[i].rkey = rkey;
	}
	if (len != ep->conn->local.capacity)
		return "ring segments that do not add up to the ring capacity";
	ep->remote_ring.nr_segs = nr;
	pr_debug("node %u: %s from node %u: %u segments\n",
		 ep->conn->local.node_id, what, ep->conn->peer_id, nr);
	return NULL;
}

bool rdmalog_ring_mr_remote(const struct rdmalog_ep *ep, u64 off, u64 *addr,
			    u32 *rkey, u64 *room)
{
	u64 start = 0;
	u32 i;

	for (i = 0; i < ep->remote_ring.nr_segs; i++) {
		u64 len = ep->remote_ring.seg[i].length;

		if (off < start + len) {
			*addr = ep->remote_ring.seg[i].addr + (off - start);
			*rkey = ep->remote_ring.seg[i].rkey;
			*room = start + len - off;
			return true;
		}
		start += len;
	}
	return false;
}

bool rdmalog_ring_mr_local(const struct rdmalog_ep *ep, u64 off, u64 *addr,
			   u32 *lkey, u64 *room)
{
	u64 start = 0;
	unsigned int i;

	for (i = 0; i < ep->ring_nr_regs; i++) {
		const struct ib_mr *mr = ep->ring_regs[i].mr;

		if (off < start + mr->length) {
			*addr = mr->iova + (off - start);
			*lkey = mr->lkey;
			*room = start + mr->length - off;
			return true;
		}
		start += mr->length;
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* The ring grant: a backup's REG_MRs and RING, the primary's check */

static void rdmalog_ring_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_ep *ep = container_of(wc->wr_cqe, struct rdmalog_ep,
					     ring_cqe);

	rdmalog_ep_wc_ok(ep, wc, "ring registration");
}

/* rdmalog_ring_hold(): not now, the node changes its role. */
#define RDMALOG_RING_DEFER	(U32_MAX - 1)

/*
 * Make @ep the holder of our ring: a backup grants it to one primary at a
 * time (a new connection of the same peer takes over from its old one,
 * which is going), and never to one of an epoch below the one it voted
 * in. Return: 0; the peer id of the primary holding it; U32_MAX, with
 * *@fence the epoch, when @ep's epoch is fenced; or %RDMALOG_RING_DEFER
 * while the node changes its role (&rdmalog_conns.changing) or is no
 * longer a backup: then the grant is undone (%RDMALOG_EP_GRANT cleared,
 * under the lock, so that rdmalog_conn_role_end(), which clears
 * @changing under it, finds the bit clear and grants again) and the
 * caller drops its ballot hold.
 */
static u32 rdmalog_ring_hold(struct rdmalog_ep *ep, u64 *fence)
{
	struct rdmalog_ep *h;
	u32 other = 0;

	spin_lock_bh(&rdmalog_conns.ring_lock);
	h = rdmalog_conns.ring_holder;
	*fence = rdmalog_conns.fence_epoch;
	if (rdmalog_conns.changing ||
	    READ_ONCE(rdmalog_conns.role) != RDMALOG_ROLE_BACKUP) {
		clear_bit(RDMALOG_EP_LEAD_FENCE, &ep->flags);
		clear_bit(RDMALOG_EP_GRANT, &ep->flags);
		other = RDMALOG_RING_DEFER;
	} else if (ep->hello_epoch < *fence) {
		other = U32_MAX;
	} else if (!h || h == ep || h->conn->peer_id == ep->conn->peer_id) {
		rdmalog_conns.ring_holder = ep;
	} else {
		other = h->conn->peer_id;
	}
	spin_unlock_bh(&rdmalog_conns.ring_lock);
	return other;
}

/*
 * @ep's grant is dead (its QP destroyed): the ring is free again, and the
 * ballot word may open.
 */
void rdmalog_ring_unhold(struct rdmalog_ep *ep)
{
	bool was;

	spin_lock_bh(&rdmalog_conns.ring_lock);
	was = rdmalog_conns.ring_holder == ep;
	if (was)
		rdmalog_conns.ring_holder = NULL;
	spin_unlock_bh(&rdmalog_conns.ring_lock);
	/* rdmalog_conn_fence() may wait for it */
	if (was)
		wake_up_all(&rdmalog_conns.wq);
	if (test_and_clear_bit(RDMALOG_EP_GRANT, &ep->flags))
		rdmalog_ballot_unhold(RDMALOG_BALLOT_HOLD_GRANT);
}

/*
 * From now on no primary of an epoch below @epoch is granted our ring.
 * Return: the holder of an epoch below it, referenced, or NULL.
 */
static struct rdmalog_ep *rdmalog_ring_fence_holder(u64 epoch)
{
	struct rdmalog_ep *h;

	spin_lock_bh(&rdmalog_conns.ring_lock);
	rdmalog_conns.fence_epoch = max(rdmalog_conns.fence_epoch, epoch);
	h = rdmalog_conns.ring_holder;
	if (h && h->hello_epoch < epoch)
		rdmalog_ep_get(h);
	else
		h = NULL;
	spin_unlock_bh(&rdmalog_conns.ring_lock);
	return h;
}

/**
 * rdmalog_conn_raise_fence() - no primary below @epoch holds our ring
 * @epoch: an epoch this node voted in by compare-and-swap (its ballot
 *	word: the vote was cast while no primary held the ring)
 *
 * As rdmalog_conn_fence() but without waiting: a holder below @epoch
 * (none is expected: the word was open, so nothing held the ring) has
 * its connection closed. Any context but a hard interrupt.
 */
void rdmalog_conn_raise_fence(u64 epoch)
{
	struct rdmalog_ep *h = rdmalog_ring_fence_holder(epoch);

	if (!h)
		return;
	rdmalog_ep_error(h, "fenced: this node voted in epoch %llu", epoch);
	rdmalog_ep_put(h);
}

/*
 * rdmalog_conn_fence(), for a vote (@leader 0) or for the LEAD of node
 * @leader in @epoch (the close says which).
 */
static int rdmalog_ring_fence(u64 epoch, unsigned int timeout_ms, u32 *peer,
			      u32 leader)
{
	struct rdmalog_ep *h;
	long left;

	*peer = 0;
	h = rdmalog_ring_fence_holder(epoch);
	if (!h)
		return 0;
	*peer = h->conn->peer_id;
	if (leader)
		rdmalog_ep_error(h, "fenced: node %u leads epoch %llu", leader,
				 epoch);
	else
		rdmalog_ep_error(h, "fenced: this node votes in epoch %llu",
				 epoch);
	left = wait_event_timeout(rdmalog_conns.wq, !rdmalog_ring_is_holder(h),
				  msecs_to_jiffies(timeout_ms));
	rdmalog_ep_put(h);
	return left ? 0 : -ETIMEDOUT;
}

/**
 * rdmalog_conn_fence() - cut every primary of an epoch below @epoch off
 * our ring
 * @epoch: the epoch this node is about to vote in
 * @timeout_ms: how long to wait for the holder's queue pair to go
 * @peer: out: the node id of the primary cut off, 0 for none
 *
 * From now on no primary of an epoch below @epoch is granted our ring. If
 * one holds it, its connection is closed, and this returns once its queue
 * pair is destroyed: every WRITE it posted has been placed or never will
 * be (its queue pair went to the error state first). Process context.
 *
 * Return: 0 when nothing held the ring or when it was cut off,
 * -ETIMEDOUT when the holder's queue pair outlived @timeout_ms (the ring
 * may still change).
 */
int rdmalog_conn_fence(u64 epoch, unsigned int timeout_ms, u32 *peer)
{
	return rdmalog_ring_fence(epoch, timeout_ms, peer, 0);
}

bool rdmalog_ring_is_holder(struct rdmalog_ep *ep)
{
	bool is;

	spin_lock_bh(&rdmalog_conns.ring_lock);
	is = rdmalog_conns.ring_holder == ep;
	spin_unlock_bh(&rdmalog_conns.ring_lock);
	return is;
}

/*
 * The epoch-start record @ep's LEAD named, written into our ring if it
 * ends where the record starts (rdmalog_log_hold_epoch_start()): then our
 * RING says so, and the primary counts the record as held here without
 * a WRITE. We hold the ring for @ep: nobody else writes it. Process
 * context. Return: whether the record is in our ring.
 */
static bool rdmalog_ep_hold_es(struct rdmalog_ep *ep, struct rdmalog_log *log)
{
	const struct rdmalog_log_es *es = &ep->lead_es;
	int err;

	err = rdmalog_log_hold_epoch_start(log, READ_ONCE(ep->peer_log_id), es);
	if (err) {
		pr_info("node %u: does not hold node %u's epoch-start record (LSN %llu at %llu): %d\n",
			ep->conn->local.node_id, ep->conn->peer_id, es->lsn,
			es->pos, err);
		return false;
	}
	/*
	 * The CPU wrote ring bytes that the data path hands to the CPU
	 * (rdmalog_ring_map_sync()) before it verifies them: to the device
	 * first, as any CPU write into the ring is.
	 */
	if (ep->ring_map)
		rdmalog_ring_map_sync(ep->ring_map, es->pos,
				      RDMALOG_LOG_ES_FOOTPRINT, false);
	pr_info("node %u: holds node %u's epoch-start record, LSN %llu of epoch %llu, before it grants its ring\n",
		ep->conn->local.node_id, ep->conn->peer_id, es->lsn, es->epoch);
	return true;
}

/*
 * The primary's HELLO arrived and we are a backup: register the ring for
 * this connection and tell the primary where it is. CQ handler context,
 * or (@work) the grant work's, which writes the epoch-start record a LEAD
 * named (only it: that takes the log's mutex) and posts with bottom
 * halves off (a software device runs the posts when they come on again).
 * Return: NULL, or why the connection must be dropped.
 */
static const char *rdmalog_ep_grant_ring(struct rdmalog_ep *ep, bool work)
{
	struct rdmalog_log *log = READ_ONCE(rdmalog_conns.p.log);
	const struct rdmalog_ring_map *map = ep->ring_map;
	struct rdmalog_conn *conn = ep->conn;
	struct rdmalog_msg_ring m = {};
	struct rdmalog_log_state st;
	struct rdmalog_log_pos pos;
	unsigned int i;
	u64 first, fence;
	u32 holder;
	int n, err = 0;
	bool es = false;

	/* Before anything of its HELLO is acted on (a trim, a FWD). */
	holder = rdmalog_ring_hold(ep, &fence);
	if (holder == RDMALOG_RING_DEFER) {
		/* The end of the change grants again if we stay a backup. */
		rdmalog_ballot_unhold(RDMALOG_BALLOT_HOLD_GRANT);
		return NULL;
	}
	if (holder == U32_MAX) {
		rdmalog_ep_error(ep,
				 "it leads epoch %llu, below epoch %llu to which this node is fenced",
				 ep->hello_epoch, fence);
		return NULL;
	}
	if (holder) {
		ep->refusal = RDMALOG_REJ_LOCAL_SECOND_PRIMARY;
		rdmalog_ep_error(ep, "it says it is primary, and node %u is our primary",
				 holder);
		return NULL;
	}
	if (!ep->ring_regs) {
		pr_warn_ratelimited("node %u: not replicating from node %u: %s\n",
				    ep->conn->local.node_id, ep->conn->peer_id,
				    ep->ring_why ?: "no ring registration");
		return NULL;
	}
	if (!log || test_and_set_bit(RDMALOG_EP_RING_REG, &ep->flags))
		return NULL;

	for (i = 0; i < ep->ring_nr_regs; i++) {
		struct rdmalog_ring_reg *r = &ep->ring_regs[i];
		struct ib_mr *mr = r->mr;

		/* A new key for every registration of this MR. */
		ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
		n = ib_map_mr_sg(mr, map->regs[i].sgt.sgl, map->regs[i].nents,
				 NULL, ep->ring_page_size);
		if (n != map->regs[i].nents || mr->length > RDMALOG_RING_SEG_MAX)
			return "cannot map the ring for registration";
		/* Ring offsets, not our DMA addresses (before the REG_MR). */
		mr->iova = RDMALOG_RING_IOVA + map->regs[i].start;
		m.seg[i].addr = cpu_to_le64(mr->iova);
		m.seg[i].length = cpu_to_le32(mr->length);
		m.seg[i].rkey = cpu_to_le32(mr->rkey);
	}
	if (rdmalog_page_mr_map(&ep->notice, RDMALOG_NOTICE_IOVA))
		return "cannot map the notice block for registration";
	m.notice_addr = cpu_to_le64(ep->notice.mr->iova);
	m.notice_rkey = cpu_to_le32(ep->notice.mr->rkey);
	m.notice_len = cpu_to_le32(ep->notice.mr->length);

	/*
	 * Posted before the RING message on the same send queue: the primary
	 * learns the rkeys only after the registrations executed.
	 */
	ep->ring_cqe.done = rdmalog_ring_reg_done;
	if (work)
		local_bh_disable();
	spin_lock(&ep->lock);
	if (!ep->live)
		err = -ENOTCONN;
	for (i = 0; !err && i < ep->ring_nr_regs; i++) {
		struct ib_mr *mr = ep->ring_regs[i].mr;
		struct ib_reg_wr reg = {};
		struct ib_send_wr fence;

		reg.wr.opcode = IB_WR_REG_MR;
		reg.wr.wr_cqe = &ep->ring_cqe;
		reg.wr.send_flags = IB_SEND_SIGNALED;
		reg.mr = mr;
		reg.key = mr->rkey;
		reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
		/* the first behind a fence: the HELLO may be retransmitted */
		err = ib_post_send(ep->qp, i ? &reg.wr :
				   rdmalog_ep_reg_fence(ep, &fence, &reg.wr),
				   NULL);
	}
	if (!err) {
		/*
		 * The notice block: REMOTE_WRITE, as the ring, and where a
		 * WRITE's completion does not prove placement REMOTE_READ:
		 * the primary reads its notice back.
		 */
		struct ib_reg_wr reg;

		rdmalog_page_mr_reg_wr(&ep->notice, &reg, &ep->ring_cqe,
				       IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_REMOTE_WRITE |
				       (rdmalog_ring_read_back(ep) ?
					IB_ACCESS_REMOTE_READ : 0));
		err = ib_post_send(ep->qp, &reg.wr, NULL);
	}
	spin_unlock(&ep->lock);
	if (work)
		local_bh_enable();
	if (err == -ENOTCONN)
		return NULL;
	if (err)
		return "cannot post the ring registration";

	/*
	 * Trims are the primary's: drop what it no longer retains (its
	 * HELLO's first LSN), so that it can write all of our ring it needs
	 * -- if it is the primary of our log. Of another log it may not
	 * touch ours (it judges us another history); with none yet, we hold
	 * nothing to trim.
	 */
	spin_lock_bh(&conn->info_lock);
	first = conn->remote.first_lsn;
	spin_unlock_bh(&conn->info_lock);
	rdmalog_log_get_state(log, &st);
	if (st.id && st.id == ep->peer_log_id && first > st.first_lsn)
		rdmalog_log_trim(log, min(first, st.commit_lsn));
	/* Before the RING that says so, on the same connection. */
	if (work && test_bit(RDMALOG_EP_LEAD_ES, &ep->flags))
		es = rdmalog_ep_hold_es(ep, log);
	rdmalog_log_get_pos(log, &pos);
	m.head = cpu_to_le64(pos.head);
	m.next_lsn = cpu_to_le64(pos.next_lsn);
	m.commit_lsn = cpu_to_le64(pos.commit_lsn);
	m.tail = cpu_to_le64(pos.tail);
	m.log_id = cpu_to_le64(rdmalog_log_id(log));
	if (es)
		m.flags = cpu_to_le32(RDMALOG_RING_F_EPOCH_START);
	if (rdmalog_ring_read_back(ep))
		m.flags |= cpu_to_le32(RDMALOG_RING_F_NOTICE_READ);
	m.nr_segs = cpu_to_le32(ep->ring_nr_regs);
	if (work)
		local_bh_disable();
	rdmalog_ep_get_ops()->ring_sent(ep, pos.tail);
	err = rdmalog_ep_send(ep, &m, RDMALOG_MSG_RING_LEN(ep->ring_nr_regs),
			      RDMALOG_MSG_RING, 2);
	if (work)
		local_bh_enable();
	if (err && err != -ENOTCONN)
		return "cannot send the ring descriptor";
	return NULL;
}

/*
 * @ep's peer said by LEAD that it leads our log in a later epoch than the
 * primary that holds our ring: that one must be fenced before @ep is
 * granted it (Documentation/protocol.rst, "LEAD"). Any context.
 */
static bool rdmalog_ring_lead_fences(struct rdmalog_ep *ep)
{
	struct rdmalog_log *log = READ_ONCE(rdmalog_conns.p.log);
	u64 ours = log ? rdmalog_log_id(log) : 0;
	struct rdmalog_ep *h;
	bool older;

	if (!ours || READ_ONCE(ep->peer_log_id) != ours)
		return false;
	spin_lock_bh(&rdmalog_conns.ring_lock);
	h = rdmalog_conns.ring_holder;
	older = h && h->conn->peer_id != ep->conn->peer_id &&
		h->hello_epoch < ep->hello_epoch &&
		READ_ONCE(h->peer_log_id) == ours;
	spin_unlock_bh(&rdmalog_conns.ring_lock);
	return older;
}

/*
 * Grant the ring once both our HELLO is posted and the primary's arrived
 * (in either order: the RING must follow our HELLO). Each side sets its
 * bit, then looks at the other's; RING_REG makes it happen once.
 */
const char *rdmalog_ep_maybe_grant_ring(struct rdmalog_ep *ep)
{
	bool closed;

	/* Our set_bit before the other side's test_bit, and vice versa. */
	smp_mb__after_atomic();
	if (!test_bit(RDMALOG_EP_HELLO_TX, &ep->flags) ||
	    !test_bit(RDMALOG_EP_HELLO, &ep->flags) ||
	    !test_bit(RDMALOG_EP_PEER_PRIMARY, &ep->flags) ||
	    READ_ONCE(rdmalog_conns.role) != RDMALOG_ROLE_BACKUP)
		return NULL;
	/* Once, by whichever side comes second. */
	if (test_and_set_bit(RDMALOG_EP_GRANT, &ep->flags))
		return NULL;
	/*
	 * The ballot word stays closed while a primary may write the ring
	 * (the position a candidate reads in its block would change), and
	 * is closed before the ring is granted: a vote cast into it fences
	 * this primary first (Documentation/leader-change.rst, "Closed for
	 * whole operations"). Closing sleeps: a work does it.
	 */
	closed = rdmalog_ballot_hold(RDMALOG_BALLOT_HOLD_GRANT);
	/* Fencing waits for the old primary's QP: the work does it first. */
	if (test_bit(RDMALOG_EP_LEAD, &ep->flags) &&
	    rdmalog_ring_lead_fences(ep))
		set_bit(RDMALOG_EP_LEAD_FENCE, &ep->flags);
	/* The work, too, writes an epoch-start record a LEAD named. */
	if (!closed || test_bit(RDMALOG_EP_LEAD_FENCE, &ep->flags) ||
	    test_bit(RDMALOG_EP_LEAD_ES, &ep->flags)) {
		/*
		 * A new primary waits for it (a leader change's last round
		 * trip): ahead of this node's tasks. It may sleep for the
		 * fencing, as works there may.
		 */
		rdmalog_ep_get(ep);
		if (!queue_work(system_highpri_wq, &ep->grant_work))
			rdmalog_ep_put(ep);	/* not reached: queued once */
		return NULL;
	}
	return rdmalog_ep_grant_ring(ep, false);
}

/*
 * The primary's HELLO found the ballot word open, or its LEAD an older
 * primary of our log holding the ring or named its epoch-start record:
 * fence that one, close the word, then grant.
 */
void rdmalog_ep_grant_work(struct work_struct *work)
{
	struct rdmalog_ep *ep = container_of(work, struct rdmalog_ep,
					     grant_work);
	const char *why;
	u32 old;

	if (test_bit(RDMALOG_EP_LEAD_FENCE, &ep->flags) &&
	    rdmalog_ring_fence(ep->hello_epoch,
			       READ_ONCE(rdmalog_conns.peer_timeout_ms), &old,
			       ep->conn->peer_id)) {
		rdmalog_ep_error(ep,
				 "node %u's connection outlived the peer timeout: the ring is not granted",
				 old);
	} else if (rdmalog_ballot_close_expecting(test_bit(RDMALOG_EP_LEAD,
							    &ep->flags) ?
						   ep->hello_epoch : 0,
						   ep->conn->peer_id)) {
		/* Revoked, not read: a vote in it may fence this primary. */
		rdmalog_ep_error(ep, "the ballot word is being revoked: the ring is not granted");
	} else if (!test_bit(RDMALOG_EP_DEAD, &ep->flags)) {
		why = rdmalog_ep_grant_ring(ep, true);
		if (why)
			rdmalog_ep_error(ep, "%s", why);
	}
	rdmalog_ep_put(ep);
}

/*
 * A backup's RING arrived (we are the primary): validate it and have the
 * backup judged (&rdmalog_ep_ops.ring: catchup.c). CQ handler context.
 * Return: NULL, or why the connection must be dropped.
 */
const char *rdmalog_ep_ring_received(struct rdmalog_ep *ep,
				     const struct rdmalog_msg_ring *m)
{
	u32 flags = le32_to_cpu(m->flags);
	const char *why;

	if (READ_ONCE(rdmalog_conns.role) != RDMALOG_ROLE_PRIMARY)
		return "RING sent to a node that is not the primary";
	if (test_and_set_bit(RDMALOG_EP_RING_RX, &ep->flags))
		return "second RING";
	if (flags & ~(RDMALOG_RING_F_EPOCH_START | RDMALOG_RING_F_NOTICE_READ))
		return "RING with unknown flags";
	/* It answers our LEAD (ordered before it on this connection). */
	if ((flags & RDMALOG_RING_F_EPOCH_START) &&
	    !test_bit(RDMALOG_EP_LEAD_ES_TX, &ep->flags))
		return "RING holding an epoch-start record no LEAD of ours named";
	/*
	 * What it follows now: a HELLO long before (a connection we keep
	 * across our change of role, our LEAD) may have named none.
	 */
	WRITE_ONCE(ep->peer_log_id, le64_to_cpu(m->log_id));
	why = rdmalog_ring_mr_take_segs(ep, m->seg, le32_to_cpu(m->nr_segs),
					RDMALOG_MSG_RING);
	if (why)
		return why;
	ep->remote_notice.addr = le64_to_cpu(m->notice_addr);
	ep->remote_notice.rkey = le32_to_cpu(m->notice_rkey);
	if (!ep->remote_notice.rkey)
		return "RING with a zero notice key";
	if (le32_to_cpu(m->notice_len) < RDMALOG_NOTICE_LEN)
		return "RING with a notice block too short";
	if (ep->remote_notice.addr + le32_to_cpu(m->notice_len) <
	    ep->remote_notice.addr)
		return "RING with a notice block whose address range wraps";
	/*
	 * Read-back where both sides want it (else ACK mode, on iWARP):
	 * its sink registered before any READ on the send queue.
	 */
	ep->remote_notice.readable = false;
	if ((flags & RDMALOG_RING_F_NOTICE_READ) && ep->proof.mr &&
	    rdmalog_ring_read_back(ep)) {
		if (rdmalog_proof_register(ep))
			return "cannot register the read-back sink";
		ep->remote_notice.readable = true;
	}
	return rdmalog_ep_get_ops()->ring(ep, le64_to_cpu(m->head),
					  le64_to_cpu(m->next_lsn),
					  le64_to_cpu(m->tail),
					  (flags & RDMALOG_RING_F_EPOCH_START) ?
					  &ep->lead_es : NULL);
}
