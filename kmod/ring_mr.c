// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the ring's registrations on one connection (ring_mr.h).
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
 * rdmalog_ring_mr_setup(), from rdmalog_ep_setup() (conn.c); the REG_MRs
 * and the RING message are posted from the receive handler once the
 * primary's HELLO arrives (softirq: ib_map_mr_sg() and ib_post_send() do
 * not sleep).
 */
#include <linux/errno.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "ep.h"
#include "log.h"
#include "proto.h"
#include "ring_map.h"
#include "ring_mr.h"
#include "stats.h"

static void rdmalog_ring_mr_free(struct rdmalog_ep *ep)
{
	unsigned int i;

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

int rdmalog_ring_mr_setup(struct rdmalog_ep *ep, struct rdmalog_log *log,
			  bool primary)
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
	if (!primary)
		return 0;
	/* What a catch-up grant needs besides (catchup.c). */
	ep->ring_sg = kcalloc(map->reg_pieces, sizeof(*ep->ring_sg),
			      GFP_KERNEL);
	mr = ib_alloc_mr(ep->pd, IB_MR_TYPE_MEM_REG, map->regs[0].pages);
	if (!ep->ring_sg || IS_ERR(mr)) {
		if (!IS_ERR(mr))
			ib_dereg_mr(mr);
		rdmalog_ring_mr_free(ep);
		ep->ring_why = "cannot allocate a memory region";
		return 0;
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
