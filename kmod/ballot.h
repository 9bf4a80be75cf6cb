/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - the ballot word: this node's vote in 8 bytes that, where the
 * device has atomics, only RDMA atomics change (ballot.c;
 * Documentation/leader-change.rst, "Compare-and-swap where the device
 * has atomics").
 */
#ifndef _RDMALOG_BALLOT_H
#define _RDMALOG_BALLOT_H

#include <linux/bits.h>
#include <linux/types.h>

#include "../uapi/rdmalog_genl.h"

struct ib_device;
struct sockaddr_storage;

/*
 * The word: the epoch of the vote (bits 63..32), the node voted for
 * (31..24; node ids are at most 255), the count of the owner's openings
 * and closings (23..1), and whether candidates may compare-and-swap it
 * (bit 0).
 */
#define RDMALOG_BALLOT_EPOCH_SHIFT	32
#define RDMALOG_BALLOT_FOR_SHIFT	24
#define RDMALOG_BALLOT_FOR_MASK		0xffULL
#define RDMALOG_BALLOT_SEQ_SHIFT	1
#define RDMALOG_BALLOT_SEQ_MASK		0x7fffffULL
#define RDMALOG_BALLOT_OPEN		BIT_ULL(0)
/* The highest epoch the word holds; a vote above it is not kept there. */
#define RDMALOG_BALLOT_MAX_EPOCH	0xffffffffULL

/**
 * struct rdmalog_ballot_info - a snapshot for status
 * @state: &enum rdmalog_ballot_state (uapi)
 * @word: the word's value after the owner's last atomic on it (what it
 *	read, or what its compare-and-swap put there); a vote recorded
 *	since may not be in it yet
 * @ops: atomics the owner posted on the loopback since the module loaded
 * @msg: why it is not READY ("" when it is)
 */
struct rdmalog_ballot_info {
	u32 state;
	u64 word;
	u64 ops;
	char msg[96];
};

int rdmalog_ballot_init(void);
void rdmalog_ballot_exit(void);
/* Tried again this long after a failure (uapi: RDMALOG_BALLOT_FAILED). */
#define RDMALOG_BALLOT_RETRY_MS		2000

/*
 * The up period on the device of @addr (the listen address; its port is
 * ignored): set up the loopback in the background. Process context.
 */
void rdmalog_ballot_start(const struct sockaddr_storage *addr);
/* End of the up period: tear the loopback down. Process context; sleeps. */
void rdmalog_ballot_stop(void);
/* @ibdev goes: tear down what uses it (the ib_client's .remove). */
void rdmalog_ballot_device_removed(struct ib_device *ibdev);
/* A device appeared: try again now. */
void rdmalog_ballot_device_added(void);
/*
 * This node's vote is now @node in @epoch: put it into the word (by the
 * loopback's compare-and-swap when READY, else at the next set-up).
 * Process context; sleeps; the election's vote_mutex held.
 */
void rdmalog_ballot_record(u64 epoch, u32 node);
/*
 * This node has learned (elect.c): its vote is now nobody in @epoch, the
 * highest election epoch it heard of. Recorded into the word by the work
 * (or the next set-up); an @epoch above what the word holds turns it OFF.
 * Any context; the election's lock may be held.
 */
void rdmalog_ballot_floor(u64 epoch);
void rdmalog_ballot_get_info(struct rdmalog_ballot_info *info);

#endif /* _RDMALOG_BALLOT_H */
