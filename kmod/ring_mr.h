/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - the ring's registrations on one connection (ring_mr.c): our
 * ring's FRWR MRs on the connection's PD (&rdmalog_ep.ring_regs, and the
 * primary's &rdmalog_ep.ring_wrap_mr and scratch &rdmalog_ep.ring_sg for a
 * catch-up's read grant), and the peer's ring segments
 * (&rdmalog_ep.remote_ring). The fields are the endpoint's (ep.h); only
 * this file allocates and frees them.
 */
#ifndef _RDMALOG_RING_MR_H
#define _RDMALOG_RING_MR_H

#include <linux/types.h>

struct rdmalog_ep;
struct rdmalog_log;
struct rdmalog_ring_seg;

/*
 * The ring's mapping for @ep's device (a reference in &rdmalog_ep.ring_map)
 * and an MR per part of it when it can be registered. Process context
 * (may sleep), the conn lock held. Return: 0 (not being registrable is no
 * error: &rdmalog_ep.ring_why says why), or a negative errno when the
 * ring cannot be mapped (@ring_why says why). Whatever was set up is for
 * rdmalog_ring_mr_release().
 */
int rdmalog_ring_mr_setup(struct rdmalog_ep *ep, struct rdmalog_log *log);
/*
 * What a primary's catch-up grant needs besides (&rdmalog_ep.ring_wrap_mr,
 * &rdmalog_ep.ring_sg), after rdmalog_ring_mr_setup(): on every endpoint
 * of a primary, set up with the endpoint or when the node starts to lead.
 * Nothing may use @ep's registrations meanwhile (no catch-up, no grant:
 * a primary grants no ring). Idempotent. Nothing to do on an endpoint
 * not set up yet (an attempt resolving its peer: rdmalog_ep_setup() then
 * sees the role and calls this) or whose resources are released.
 * Process context (may sleep), the conn lock held. Return: 0 (also when
 * the ring is not registrable),
 * or -ENOMEM: then none of @ep's registrations is left (&rdmalog_ep.
 * ring_why says why), as for a ring that cannot be registered.
 */
int rdmalog_ring_mr_setup_primary(struct rdmalog_ep *ep);
/*
 * Copy the first @len bytes of @ep's notice block (backup side: what the
 * primary RDMA-wrote there) to @buf. The device may write it meanwhile:
 * the caller checks what it read. Any context, while @ep's resources are
 * there (until the release); only on an endpoint with
 * %RDMALOG_EP_RING_REG set.
 */
void rdmalog_ring_notice_read(struct rdmalog_ep *ep, void *buf, size_t len);
/*
 * Whether a WRITE's completion on @ep does not prove placement, so that a
 * primary reads each notice back (and a backup grants that): an iWARP
 * device, or the force_read module parameter. Any context.
 */
bool rdmalog_ring_read_back(const struct rdmalog_ep *ep);
/*
 * Deregister the MRs and put the mapping; after the QP is destroyed, when
 * nothing can use the rkeys any more. Idempotent.
 */
void rdmalog_ring_mr_release(struct rdmalog_ep *ep);
/*
 * Check @nr ring segments a peer sent in a message of @type (RING: whole
 * MRs, multiples of 4 KiB; CATCHUP: any length) against our capacity and
 * keep them in &rdmalog_ep.remote_ring. CQ handler context.
 * Return: NULL, or why the connection must be dropped.
 */
const char *rdmalog_ring_mr_take_segs(struct rdmalog_ep *ep,
				      const struct rdmalog_ring_seg *segs,
				      u32 nr, u8 type);
/*
 * The peer's remote address and key for ring offset @off, and the bytes
 * left in that segment. Return: false when @off is outside its ring.
 */
bool rdmalog_ring_mr_remote(const struct rdmalog_ep *ep, u64 off, u64 *addr,
			    u32 *rkey, u64 *room);
/*
 * Our ring's local address and key (of &rdmalog_ep.ring_regs) for ring
 * offset @off, and the bytes left in that registration. Return: false
 * when @off is outside them.
 */
bool rdmalog_ring_mr_local(const struct rdmalog_ep *ep, u64 off, u64 *addr,
			   u32 *lkey, u64 *room);

#endif /* _RDMALOG_RING_MR_H */
