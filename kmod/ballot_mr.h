/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - the ballot grant on one connection (ballot_mr.c): this node's
 * ballot word and block registered for its peer (&rdmalog_ep.ballot),
 * and the peer's as its BALLOT said. The fields are the endpoint's
 * (ep.h); only ballot_mr.c allocates and frees them.
 */
#ifndef _RDMALOG_BALLOT_MR_H
#define _RDMALOG_BALLOT_MR_H

#include <linux/types.h>
#include <linux/wait.h>

struct rdmalog_ep;
struct rdmalog_ballot_map;
struct rdmalog_msg_ballot;
struct rdmalog_ballot_block;

/*
 * The word's and the block's MRs, on a device with atomics. Process
 * context. Return: 0, or -ENOMEM (what was allocated is for
 * rdmalog_ballot_mr_release()).
 */
int rdmalog_ballot_mr_setup(struct rdmalog_ep *ep);
/*
 * Deregister the MRs (their keys die) and put the word's mapping; after
 * the QP is destroyed. Process context. Idempotent.
 */
void rdmalog_ballot_mr_release(struct rdmalog_ep *ep);
/*
 * Grant the peer our word and block once both HELLOs passed, the peer
 * said it has atomics and our word is READY on this device; once per
 * connection. CQ handler context, or BHs off.
 */
void rdmalog_ep_maybe_grant_ballot(struct rdmalog_ep *ep);
/*
 * The peer's BALLOT: keep its grant. CQ handler context. Return: NULL,
 * or why the connection must be dropped.
 */
const char *rdmalog_ep_ballot_received(struct rdmalog_ep *ep,
				       const struct rdmalog_msg_ballot *m);
/*
 * The block the peer's HEARTBEAT announces for its open ballot word
 * (all zero: none): keep it for our candidacies. CQ handler context.
 * Return: NULL, or why the connection must be dropped.
 */
const char *rdmalog_ep_ballot_announced(struct rdmalog_ep *ep,
					const struct rdmalog_ballot_block *blk);
/*
 * How a candidacy asks @ep's peer for its vote (*@path, &enum
 * rdmalog_vote_path; *@why, &enum rdmalog_vote_path_why), and whether we
 * granted it our word (*@granted). Any context.
 */
void rdmalog_ep_ballot_path(struct rdmalog_ep *ep, u32 *path, u32 *why,
			    bool *granted);
/* We granted @ep's peer our word (of @map, if not NULL). */
bool rdmalog_ep_ballot_granted(struct rdmalog_ep *ep,
			       const struct rdmalog_ballot_map *map);

/*
 * The candidate's side (Documentation/protocol.rst, "Votes"): one
 * operation at a time per connection on the word the peer granted us; its
 * completion wakes @wq. Any context but the first, process context.
 *
 * rdmalog_ballot_mr_usable(): the peer granted its word and no operation
 * of ours is posted on it.
 *
 * rdmalog_ballot_mr_grant(): which grant of the peer's word this
 * connection holds: a number unique since the module loaded (0: none). A
 * word read under one grant is the same word as under another only if
 * the peer's module did not reload in between, which a new connection
 * does not say.
 *
 * rdmalog_ballot_mr_read(): read the peer's word (a fetch-and-add of 0)
 * and then its block (@word_only: the word alone). Return: 0 (posted),
 * -EOPNOTSUPP (no grant), -EBUSY (one is posted), or the post's error.
 *
 * rdmalog_ballot_mr_announced(): the block the peer's HEARTBEAT last
 * announced for its open word, into @blk. Return: false when none.
 *
 * rdmalog_ballot_mr_cas(): compare-and-swap the peer's word from @cmp to
 * @swap; its completion wakes @wq. Return as the read.
 *
 * rdmalog_ballot_mr_result(): what the last operation returned: the word
 * read, the compare-and-swap's old value, the block (each if not NULL).
 * Return: 0; -EINPROGRESS (not completed yet); -EIO (it failed: the
 * connection is being closed).
 */
bool rdmalog_ballot_mr_usable(struct rdmalog_ep *ep);
u64 rdmalog_ballot_mr_grant(struct rdmalog_ep *ep);
int rdmalog_ballot_mr_read(struct rdmalog_ep *ep, wait_queue_head_t *wq,
			   bool word_only);
bool rdmalog_ballot_mr_announced(struct rdmalog_ep *ep,
				 struct rdmalog_ballot_block *blk);
int rdmalog_ballot_mr_cas(struct rdmalog_ep *ep, u64 cmp, u64 swap,
			  wait_queue_head_t *wq);
int rdmalog_ballot_mr_result(struct rdmalog_ep *ep, u64 *word, u64 *cas_old,
			     struct rdmalog_ballot_block *blk);

#endif /* _RDMALOG_BALLOT_MR_H */
