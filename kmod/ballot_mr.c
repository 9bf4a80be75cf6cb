// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the ballot grant on one connection (ballot_mr.h;
 * Documentation/protocol.rst, "Ballot grant"): this node's ballot word
 * and block registered for its peer, and the peer's, as its BALLOT said.
 *
 * A node whose word is READY on the connection's device grants a peer
 * whose HELLO said %RDMALOG_HELLO_F_ATOMICS two FRWR MRs on the
 * connection's PD: the word (8 bytes), REMOTE_ATOMIC only (with the
 * LOCAL_WRITE the verbs require), and the block (64 bytes), REMOTE_READ
 * only. Both map the ballot page's one mapping on the device
 * (rdmalog_ballot_map_get(): every atomic on the word goes to one
 * address), at I/O virtual addresses of their own, not DMA addresses. The
 * REG_MRs are posted behind the connection's registration fence, then the
 * BALLOT message on the same send queue: the peer learns the keys only
 * once they work. The keys are good on this queue pair only and die with
 * it (the MRs are deregistered after it is drained and destroyed).
 *
 * A word granted on connections is revoked when its loopback goes (the
 * owner can no longer close it, nor see what candidates cast into it):
 * ballot_loop.c calls the transport's revoke hook, which closes every
 * connection holding a registration of that mapping; the owner reads the
 * word again only once the last of them is released (the mapping's last
 * reference).
 *
 * Context: the MRs are allocated in process context at set-up
 * (rdmalog_ballot_mr_setup()), registered from the receive handler or
 * with BHs off (rdmalog_ep_maybe_grant_ballot()), and released after the
 * queue pair is destroyed (rdmalog_ballot_mr_release()). The peer's grant
 * is written once by the receive handler before RDMALOG_EP_BALLOT_RX is
 * set, and read only after testing it. The block its HEARTBEATs announce
 * (rdmalog_ep_ballot_announced()) is kept under &rdmalog_ep.lock: a
 * candidacy that has it reads the peer's word alone.
 */
#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>

#include "ballot.h"
#include "ballot_mr.h"
#include "ep.h"
#include "proto.h"
#include "rdma_dev.h"
#include "stats.h"
#include "transport.h"

/* Where the word and the block are in the ballot page (ballot_priv.h). */
#define RDMALOG_BALLOT_MR_WORD_OFF	0
#define RDMALOG_BALLOT_MR_BLOCK_OFF	64

/* Where a candidacy's results land in &rdmalog_ballot_ep.buf. */
#define RDMALOG_BALLOT_BUF_WORD		0
#define RDMALOG_BALLOT_BUF_CAS		8
#define RDMALOG_BALLOT_BUF_BLOCK	64
#define RDMALOG_BALLOT_BUF_LEN		128

static void rdmalog_ballot_read_done(struct ib_cq *cq, struct ib_wc *wc);
static void rdmalog_ballot_op_done(struct ib_cq *cq, struct ib_wc *wc);

int rdmalog_ballot_mr_setup(struct rdmalog_ep *ep)
{
	struct rdmalog_ballot_ep *be = &ep->ballot;

	if (!ep->rdev->atomics)
		return 0;
	be->word_mr = ib_alloc_mr(ep->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(be->word_mr)) {
		be->word_mr = NULL;
		return -ENOMEM;
	}
	rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, 1);
	be->block_mr = ib_alloc_mr(ep->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(be->block_mr)) {
		be->block_mr = NULL;
		return -ENOMEM;	/* the word's MR: released by the caller */
	}
	rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, 1);
	/* The candidate's side: where its reads and swaps land. */
	be->read_cqe.done = rdmalog_ballot_read_done;
	be->op_cqe.done = rdmalog_ballot_op_done;
	be->buf = kzalloc(RDMALOG_BALLOT_BUF_LEN, GFP_KERNEL);
	if (!be->buf)
		return -ENOMEM;
	be->buf_dma = ib_dma_map_single(ep->ibdev, be->buf,
					RDMALOG_BALLOT_BUF_LEN,
					DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ep->ibdev, be->buf_dma)) {
		kfree(be->buf);
		be->buf = NULL;
		return -ENOMEM;
	}
	return 0;
}

void rdmalog_ballot_mr_release(struct rdmalog_ep *ep)
{
	struct rdmalog_ballot_ep *be = &ep->ballot;

	if (be->buf) {
		ib_dma_unmap_single(ep->ibdev, be->buf_dma,
				    RDMALOG_BALLOT_BUF_LEN, DMA_FROM_DEVICE);
		kfree(be->buf);
		be->buf = NULL;
	}

	if (be->block_mr) {
		ib_dereg_mr(be->block_mr);
		rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, -1);
		be->block_mr = NULL;
	}
	if (be->word_mr) {
		ib_dereg_mr(be->word_mr);
		rdmalog_live_add(RDMALOG_STAT_LIVE_MRS, -1);
		be->word_mr = NULL;
	}
	/* The keys are dead: the owner may read its word once all are. */
	rdmalog_ballot_map_put(be->map);
	be->map = NULL;
}

static void rdmalog_ballot_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_ep *ep = container_of(wc->wr_cqe, struct rdmalog_ep,
					     ballot.reg_cqe);

	rdmalog_ep_wc_ok(ep, wc, "ballot registration");
}

/* Map @mr over @len bytes at @dma, at I/O virtual address @iova. */
static int rdmalog_ballot_mr_map(struct ib_mr *mr, u64 dma, u32 len, u64 iova)
{
	struct scatterlist sg;
	int n;

	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = dma;
	sg_dma_len(&sg) = len;
	/* A new key for every registration of this MR. */
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	n = ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		return n < 0 ? n : -EINVAL;
	mr->iova = iova;
	return 0;
}

/*
 * Grant @ep's peer our word and block: both HELLOs passed, the peer has
 * atomics, and our word is READY on this connection's device. Once per
 * connection. CQ handler context, or BHs off.
 */
void rdmalog_ep_maybe_grant_ballot(struct rdmalog_ep *ep)
{
	struct rdmalog_ballot_ep *be = &ep->ballot;
	struct rdmalog_msg_ballot m = {};
	struct rdmalog_ballot_map *map;
	struct ib_reg_wr reg[2] = {};
	struct ib_send_wr fence;
	u64 dma;
	int err;

	/* Our set_bit before the other side's test_bit, and vice versa. */
	smp_mb__after_atomic();
	if (!be->word_mr || !be->block_mr ||
	    !test_bit(RDMALOG_EP_HELLO_TX, &ep->flags) ||
	    !test_bit(RDMALOG_EP_HELLO, &ep->flags) ||
	    !test_bit(RDMALOG_EP_PEER_ATOMICS, &ep->flags) ||
	    test_bit(RDMALOG_EP_BALLOT_REG, &ep->flags))
		return;
	map = rdmalog_ballot_map_get(ep->ibdev, &dma);
	if (!map)
		return;		/* not READY there: its ready hook comes back */
	if (test_and_set_bit(RDMALOG_EP_BALLOT_REG, &ep->flags)) {
		rdmalog_ballot_map_put(map);
		return;
	}
	be->map = map;	/* released with the MRs */

	err = rdmalog_ballot_mr_map(be->word_mr,
				    dma + RDMALOG_BALLOT_MR_WORD_OFF,
				    sizeof(u64), RDMALOG_BALLOT_IOVA);
	if (!err)
		err = rdmalog_ballot_mr_map(be->block_mr,
					    dma + RDMALOG_BALLOT_MR_BLOCK_OFF,
					    sizeof(struct rdmalog_ballot_block),
					    RDMALOG_BALLOT_IOVA +
					    RDMALOG_BALLOT_MR_BLOCK_OFF);
	if (err) {
		rdmalog_ep_error(ep, "cannot map the ballot word: %d", err);
		return;
	}
	be->reg_cqe.done = rdmalog_ballot_reg_done;
	reg[0].wr.opcode = IB_WR_REG_MR;
	reg[0].wr.wr_cqe = &be->reg_cqe;
	reg[0].wr.send_flags = IB_SEND_SIGNALED;
	reg[0].wr.next = &reg[1].wr;
	reg[0].mr = be->word_mr;
	reg[0].key = be->word_mr->rkey;
	/* Compare-and-swap and fetch-and-add only: no READ, no WRITE. */
	reg[0].access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC;
	reg[1].wr.opcode = IB_WR_REG_MR;
	reg[1].wr.wr_cqe = &be->reg_cqe;
	reg[1].wr.send_flags = IB_SEND_SIGNALED;
	reg[1].mr = be->block_mr;
	reg[1].key = be->block_mr->rkey;
	reg[1].access = IB_ACCESS_REMOTE_READ;
	spin_lock(&ep->lock);
	err = ep->live ? ib_post_send(ep->qp,
				      rdmalog_ep_reg_fence(ep, &fence,
							   &reg[0].wr),
				      NULL) : -ENOTCONN;
	spin_unlock(&ep->lock);
	if (err) {
		if (err != -ENOTCONN)
			rdmalog_ep_error(ep, "cannot post the ballot registration: %d",
					 err);
		return;
	}
	m.word_addr = cpu_to_le64(be->word_mr->iova);
	m.word_rkey = cpu_to_le32(be->word_mr->rkey);
	m.block_addr = cpu_to_le64(be->block_mr->iova);
	m.block_rkey = cpu_to_le32(be->block_mr->rkey);
	err = rdmalog_ep_send(ep, &m, sizeof(m), RDMALOG_MSG_BALLOT, 2);
	if (err && err != -ENOTCONN)
		rdmalog_ep_error(ep, "cannot send BALLOT: %d", err);
	if (!err)
		rdmalog_stats_inc(RDMALOG_STAT_BALLOT_GRANTS);
}

/* Numbers the grants received (&rdmalog_ballot_ep.grant). */
static atomic64_t rdmalog_ballot_mr_grants = ATOMIC64_INIT(0);

u64 rdmalog_ballot_mr_grant(struct rdmalog_ep *ep)
{
	if (!test_bit(RDMALOG_EP_BALLOT_RX, &ep->flags))
		return 0;
	smp_rmb();	/* the grant after its bit */
	return ep->ballot.grant;
}

const char *rdmalog_ep_ballot_received(struct rdmalog_ep *ep,
				       const struct rdmalog_msg_ballot *m)
{
	struct rdmalog_ballot_ep *be = &ep->ballot;
	u64 word = le64_to_cpu(m->word_addr);

	/* Only to a node that said it has atomics (our HELLO). */
	if (!ep->rdev->atomics)
		return "BALLOT not asked for";
	if (test_bit(RDMALOG_EP_BALLOT_RX, &ep->flags))
		return "second BALLOT";
	if (m->reserved)
		return "BALLOT with reserved bits set";
	if (!m->word_rkey || !m->block_rkey)
		return "BALLOT with a zero key";
	if (word & (sizeof(u64) - 1))
		return "BALLOT with a misaligned ballot word";
	be->word_addr = word;
	be->word_rkey = le32_to_cpu(m->word_rkey);
	be->block_addr = le64_to_cpu(m->block_addr);
	be->block_rkey = le32_to_cpu(m->block_rkey);
	be->grant = atomic64_inc_return(&rdmalog_ballot_mr_grants);
	/* The grant, then the bit (rdmalog_ep_ballot_peer()). */
	smp_mb__before_atomic();
	set_bit(RDMALOG_EP_BALLOT_RX, &ep->flags);
	return NULL;
}

void rdmalog_ep_ballot_path(struct rdmalog_ep *ep, u32 *path, u32 *why,
			    bool *granted)
{
	*granted = test_bit(RDMALOG_EP_BALLOT_REG, &ep->flags);
	*path = RDMALOG_VOTE_PATH_MESSAGES;
	*why = RDMALOG_VOTE_WHY_NONE;
	if (!ep->rdev->atomics || !ep->ballot.buf)
		*why = RDMALOG_VOTE_WHY_NO_ATOMICS;
	else if (!test_bit(RDMALOG_EP_PEER_ATOMICS, &ep->flags))
		*why = RDMALOG_VOTE_WHY_PEER_NO_ATOMICS;
	else if (!test_bit(RDMALOG_EP_BALLOT_RX, &ep->flags))
		*why = RDMALOG_VOTE_WHY_NOT_GRANTED;
	else
		*path = RDMALOG_VOTE_PATH_CAS;
}

bool rdmalog_ep_ballot_granted(struct rdmalog_ep *ep,
			       const struct rdmalog_ballot_map *map)
{
	return test_bit(RDMALOG_EP_BALLOT_REG, &ep->flags) &&
	       (!map || READ_ONCE(ep->ballot.map) == map);
}

/* ------------------------------------------------------------------ */
/* The candidate's side: the peer's word, by its grant */

/* The operation of RDMALOG_EP_CAS_BUSY ended; @ok: it did. */
static void rdmalog_ballot_op_end(struct rdmalog_ep *ep, bool ok)
{
	struct rdmalog_ballot_ep *be = &ep->ballot;

	if (!ok)
		be->failed = true;
	/*
	 * @failed and the results before the bit (rdmalog_ballot_mr_result()
	 * tests it with acquire); the waiter rechecks under the queue's lock.
	 */
	clear_bit_unlock(RDMALOG_EP_CAS_BUSY, &ep->flags);
	if (be->wq)
		wake_up(be->wq);
}

static void rdmalog_ballot_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_ep *ep = container_of(wc->wr_cqe, struct rdmalog_ep,
					     ballot.read_cqe);

	/* Only a failure is signalled here: the block's READ ends it. */
	if (!rdmalog_ep_wc_ok(ep, wc, "ballot word read"))
		ep->ballot.failed = true;
}

/*
 * Copy what landed in @buf into the endpoint: @buf is released with the
 * connection's resources (after the drain), while a candidacy may look
 * at the results until it drops its reference. CQ handler context.
 */
static void rdmalog_ballot_take(struct rdmalog_ep *ep)
{
	struct rdmalog_ballot_ep *be = &ep->ballot;

	ib_dma_sync_single_for_cpu(ep->ibdev, be->buf_dma,
				   RDMALOG_BALLOT_BUF_LEN, DMA_FROM_DEVICE);
	be->res_word = READ_ONCE(*(u64 *)(be->buf + RDMALOG_BALLOT_BUF_WORD));
	be->res_cas = READ_ONCE(*(u64 *)(be->buf + RDMALOG_BALLOT_BUF_CAS));
	memcpy(&be->res_blk, be->buf + RDMALOG_BALLOT_BUF_BLOCK,
	       sizeof(be->res_blk));
}

/* The block's READ, or a compare-and-swap: the operation's last request. */
static void rdmalog_ballot_op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmalog_ep *ep = container_of(wc->wr_cqe, struct rdmalog_ep,
					     ballot.op_cqe);
	bool ok = rdmalog_ep_wc_ok(ep, wc, "ballot word read or swap");

	if (ok)
		rdmalog_ballot_take(ep);
	rdmalog_ballot_op_end(ep, ok);
}

/*
 * Post @wr on the live connection, @buf given to the device first: under
 * the endpoint's lock, which the release takes to end @live before it
 * frees @buf. On a failure the busy bit is cleared; one that left part
 * of the chain posted closes the connection (its completion would come
 * to a later operation).
 */
static int rdmalog_ballot_post(struct rdmalog_ep *ep, struct ib_send_wr *wr)
{
	struct rdmalog_ballot_ep *be = &ep->ballot;
	const struct ib_send_wr *bad = wr;
	int err = -ENOTCONN;

	spin_lock_bh(&ep->lock);
	if (ep->live) {
		ib_dma_sync_single_for_device(ep->ibdev, be->buf_dma,
					      RDMALOG_BALLOT_BUF_LEN,
					      DMA_FROM_DEVICE);
		err = ib_post_send(ep->qp, wr, &bad);
	}
	spin_unlock_bh(&ep->lock);
	if (err) {
		if (err != -ENOTCONN)
			rdmalog_ep_error(ep, "cannot post on the peer's ballot word: %d",
					 err);
		clear_bit_unlock(RDMALOG_EP_CAS_BUSY, &ep->flags);
	}
	return err;
}

bool rdmalog_ballot_mr_usable(struct rdmalog_ep *ep)
{
	/* The grant, then the bit (rdmalog_ep_ballot_received()). */
	return ep->ballot.buf && test_bit(RDMALOG_EP_BALLOT_RX, &ep->flags) &&
	       !test_bit(RDMALOG_EP_CAS_BUSY, &ep->flags);
}

const char *rdmalog_ep_ballot_announced(struct rdmalog_ep *ep,
					const struct rdmalog_ballot_block *blk)
{
	static const struct rdmalog_ballot_block none;

	if (memcmp(blk, &none, sizeof(none)) &&
	    (le32_to_cpu(blk->magic) != RDMALOG_BALLOT_MAGIC ||
	     le32_to_cpu(blk->node_id) != ep->conn->peer_id || blk->flags ||
	     blk->reserved || blk->pos.reserved))
		return "HEARTBEAT with a malformed ballot block";
	spin_lock_bh(&ep->lock);
	ep->ballot.ann = *blk;
	spin_unlock_bh(&ep->lock);
	return NULL;
}

bool rdmalog_ballot_mr_announced(struct rdmalog_ep *ep,
				 struct rdmalog_ballot_block *blk)
{
	spin_lock_bh(&ep->lock);
	*blk = ep->ballot.ann;
	spin_unlock_bh(&ep->lock);
	return !!blk->magic;
}

int rdmalog_ballot_mr_read(struct rdmalog_ep *ep, wait_queue_head_t *wq,
			   bool word_only)
{
	struct rdmalog_ballot_ep *be = &ep->ballot;
	struct ib_sge sge[2];
	struct ib_atomic_wr fa = {};
	struct ib_rdma_wr rd = {};

	if (!be->buf || !test_bit(RDMALOG_EP_BALLOT_RX, &ep->flags))
		return -EOPNOTSUPP;
	if (test_and_set_bit_lock(RDMALOG_EP_CAS_BUSY, &ep->flags))
		return -EBUSY;
	smp_rmb();	/* the grant after its bit */
	be->failed = false;
	be->wq = wq;
	/*
	 * The word by a fetch-and-add of 0 (its grant is atomics only, and
	 * the device says how it reads), then the block: one queue pair's
	 * requests are executed in order, so the block is read after the
	 * word (a block of the word's sequence is the one in force then).
	 * The word alone: its completion ends the operation.
	 */
	sge[0].addr = be->buf_dma + RDMALOG_BALLOT_BUF_WORD;
	sge[0].length = sizeof(u64);
	sge[0].lkey = ep->pd->local_dma_lkey;
	fa.wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
	fa.wr.wr_cqe = word_only ? &be->op_cqe : &be->read_cqe;
	fa.wr.send_flags = word_only ? IB_SEND_SIGNALED : 0;
	fa.wr.sg_list = &sge[0];
	fa.wr.num_sge = 1;
	fa.wr.next = word_only ? NULL : &rd.wr;
	fa.remote_addr = be->word_addr;
	fa.rkey = be->word_rkey;
	fa.compare_add = 0;
	sge[1].addr = be->buf_dma + RDMALOG_BALLOT_BUF_BLOCK;
	sge[1].length = sizeof(struct rdmalog_ballot_block);
	sge[1].lkey = ep->pd->local_dma_lkey;
	rd.wr.opcode = IB_WR_RDMA_READ;
	rd.wr.wr_cqe = &be->op_cqe;
	rd.wr.send_flags = IB_SEND_SIGNALED;
	rd.wr.sg_list = &sge[1];
	rd.wr.num_sge = 1;
	rd.remote_addr = be->block_addr;
	rd.rkey = be->block_rkey;
	return rdmalog_ballot_post(ep, &fa.wr);
}

int rdmalog_ballot_mr_cas(struct rdmalog_ep *ep, u64 cmp, u64 swap,
			  wait_queue_head_t *wq)
{
	struct rdmalog_ballot_ep *be = &ep->ballot;
	struct ib_atomic_wr cas = {};
	struct ib_sge sge;

	if (!be->buf || !test_bit(RDMALOG_EP_BALLOT_RX, &ep->flags))
		return -EOPNOTSUPP;
	if (test_and_set_bit_lock(RDMALOG_EP_CAS_BUSY, &ep->flags))
		return -EBUSY;
	smp_rmb();	/* the grant after its bit */
	be->failed = false;
	be->wq = wq;
	sge.addr = be->buf_dma + RDMALOG_BALLOT_BUF_CAS;
	sge.length = sizeof(u64);
	sge.lkey = ep->pd->local_dma_lkey;
	cas.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
	cas.wr.wr_cqe = &be->op_cqe;
	cas.wr.send_flags = IB_SEND_SIGNALED;
	cas.wr.sg_list = &sge;
	cas.wr.num_sge = 1;
	cas.remote_addr = be->word_addr;
	cas.rkey = be->word_rkey;
	cas.compare_add = cmp;
	cas.swap = swap;
	return rdmalog_ballot_post(ep, &cas.wr);
}

int rdmalog_ballot_mr_result(struct rdmalog_ep *ep, u64 *word, u64 *cas_old,
			     struct rdmalog_ballot_block *blk)
{
	struct rdmalog_ballot_ep *be = &ep->ballot;

	if (test_bit_acquire(RDMALOG_EP_CAS_BUSY, &ep->flags))
		return -EINPROGRESS;
	if (be->failed)
		return -EIO;
	/* The handler's copies: never @buf, which the release frees. */
	if (word)
		*word = be->res_word;
	if (cas_old)
		*cas_old = be->res_cas;
	if (blk)
		*blk = be->res_blk;
	return 0;
}
