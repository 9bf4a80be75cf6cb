/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - catch-up: a backup that is behind the primary pulls the
 * committed records it lacks from the primary's ring with RDMA READ,
 * verifies them, and only then joins replication.
 *
 * The transport hands it a backup's RING (ring_mr.c, through the ops)
 * and msg.c its JOIN (primary side) and the primary's CATCHUP (backup
 * side), from the completion handler; the rest
 * happens in its work item (on the replication workqueue) and in its RDMA
 * READ completions. The protocol is in proto.h and protocol.rst.
 */
#ifndef _RDMALOG_CATCHUP_H
#define _RDMALOG_CATCHUP_H

#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

struct rdmalog_ep;
struct rdmalog_msg_catchup;
struct rdmalog_msg_join;
struct rdmalog_log_es;

/*
 * RDMA READs of one catch-up in flight at once, and the largest one.
 *
 * 64 KiB, not more: the primary answers a READ with one packet per
 * path MTU, all at once. On soft-RoCE in Linux 6.12 under TCG, 1 MiB
 * READs (1024 responses at MTU 1024) lose packets between the guests and
 * the backup's rxe does not retry them within the peer timeout; its
 * SENDs (heartbeats) wait behind the READ, so the primary declares it
 * dead, connection after connection. With 64 KiB READs, four in flight
 * (at most 256 responses outstanding), it pulls at the first try.
 * Documentation/testing.rst, Known rxe problems.
 */
#define RDMALOG_CU_MAX_READS		4
#define RDMALOG_CU_MAX_READ		SZ_64K
/* &rdmalog_catchup_ep.granted: the second MR of a grant that wraps. */
#define RDMALOG_CU_WRAP_BIT		RDMALOG_RING_MAX_SEGS
/* CATCHUP rounds one connection may need before its backup joins. */
#define RDMALOG_CU_MAX_ROUNDS		8

/**
 * struct rdmalog_cu_read - one RDMA READ of a catch-up
 * @cqe: its completion; .done = rdmalog_cu_read_done
 * @ep: the endpoint
 * @end: stream position where the bytes it reads end
 * @len: bytes it reads
 * @done: it completed, and a READ reserved before it has not
 */
struct rdmalog_cu_read {
	struct ib_cqe cqe;
	struct rdmalog_ep *ep;
	u64 end;
	u32 len;
	bool done;
};

/**
 * struct rdmalog_cu_pos - where a backup's log ends, per its RING or JOIN
 * @head: its head (stream position)
 * @next_lsn: its next LSN
 * @tail: its tail
 * @es: (RING) it holds our epoch-start record, the one our LEAD named
 *	(&rdmalog_ep.lead_es): it lacks no record up to it
 */
struct rdmalog_cu_pos {
	u64 head;
	u64 next_lsn;
	u64 tail;
	bool es;
};

/**
 * struct rdmalog_catchup_ep - catch-up state of one connection
 * @lock: protects every field below but @work and the constant parts of
 *	@reads; taken with _bh outside the completion handler; taken after
 *	&rdmalog_ep.lock is released, never together with it
 * @state: &enum rdmalog_catchup_state
 * @reset: (backup) the CATCHUP asked for a log restart
 * @started: (backup) the log is at the start of the range: READs may go
 * @join_sent: (backup) the JOIN for this round was sent
 * @epoch: (backup) the epoch every pulled record must carry
 * @start_pos: stream position where the range starts
 * @start_lsn: LSN of the record there
 * @target_pos: stream position where the range ends
 * @target_lsn: LSN of the record there
 * @posted: (backup) READs are posted up to this stream position
 * @pulled: (backup) every byte below it arrived: the end of the
 *	longest prefix of reserved READs that all completed (a READ can be
 *	posted after one reserved later, and then completes after it)
 * @inflight: (backup) READs reserved and not yet counted in @pulled
 * @since: jiffies when the current round started
 * @round_bytes: bytes pulled in the current round
 * @bytes: bytes pulled on this connection
 * @rounds: (primary) CATCHUPs sent on this connection
 * @ring_rx: (primary) the backup's RING arrived and waits for @work,
 *	which judges it (process context: the grant maps registrations)
 * @ring: (primary) its positions (host order)
 * @join_rx: (primary) a JOIN arrived and waits for @work
 * @join: (primary) its positions (host order)
 * @notify_joined: (primary) @work announces that the backup joined
 * @notify_diverged: (primary) @work announces that the backup was judged
 *	diverged
 * @diverged: (primary) the backup was judged diverged on this connection
 * @reads: the READ slots, used round-robin in the order their ranges
 *	were reserved (at most %RDMALOG_CU_MAX_READS in flight)
 * @next_read: the slot of the next READ
 * @oldest_read: the slot of the oldest READ not counted in @pulled
 * @granted: (primary) the MRs the current read grant registered: bit i
 *	for &rdmalog_ep.ring_regs[i], %RDMALOG_CU_WRAP_BIT for
 *	&rdmalog_ep.ring_wrap_mr
 * @inv_left: (primary) LOCAL_INVs of a revoked grant not yet completed
 * @revoked: (primary) the last of them completed: @work judges the JOIN
 * @reg_cqe: (primary) completions of the read grant's REG_MRs (.done only
 *	checks the status)
 * @inv_cqe: (primary) completions of its LOCAL_INVs
 * @work: backup: restarts the log, posts the first READs, verifies and
 *	exposes what arrived, sends JOIN; primary: revokes the read grant and
 *	joins the backup after its JOIN, and sends netlink events. Queued
 *	with an endpoint reference, which it drops; cancelled (and waited
 *	for) by rdmalog_catchup_ep_stop() before the endpoint's resources go
 */
struct rdmalog_catchup_ep {
	spinlock_t lock; /* see above */
	u32 state;
	bool reset;
	bool started;
	bool join_sent;
	u64 epoch;
	u64 start_pos;
	u64 start_lsn;
	u64 target_pos;
	u64 target_lsn;
	u64 posted;
	u64 pulled;
	u32 inflight;
	unsigned long since;
	u64 round_bytes;
	u64 bytes;
	u32 rounds;
	bool ring_rx;
	struct rdmalog_cu_pos ring;
	bool join_rx;
	struct rdmalog_cu_pos join;
	bool notify_joined;
	bool notify_diverged;
	bool diverged;
	struct rdmalog_cu_read reads[RDMALOG_CU_MAX_READS];
	unsigned int next_read;
	unsigned int oldest_read;
	unsigned long granted;
	u32 inv_left;
	bool revoked;
	struct ib_cqe reg_cqe;
	struct ib_cqe inv_cqe;
	struct work_struct work;
};

/**
 * struct rdmalog_catchup_info - catch-up on a connection, for status
 * @state: &enum rdmalog_catchup_state
 * @left: bytes not pulled yet (the serving side: the range granted)
 * @rate: bytes per second pulled in this round (0 on the serving side)
 * @bytes: bytes pulled on this connection
 * @diverged: (primary) the backup was judged diverged on this connection
 */
struct rdmalog_catchup_info {
	u32 state;
	u64 left;
	u64 rate;
	u64 bytes;
	bool diverged;
};

void rdmalog_catchup_ep_init(struct rdmalog_ep *ep);
/*
 * Primary: a backup's RING was validated; the work judges the backup
 * (joins it, or grants it its catch-up) and logs the judgement. @es: the
 * RING says the backup holds the epoch-start record our LEAD named (it
 * is &rdmalog_ep.lead_es), or NULL. CQ handler context. Return: NULL, or
 * why the connection must be dropped.
 */
const char *rdmalog_catchup_ring(struct rdmalog_ep *ep, u64 head,
				 u64 next_lsn, u64 tail,
				 const struct rdmalog_log_es *es);
/* Backup: the primary's CATCHUP. CQ handler context; NULL or why not. */
const char *rdmalog_catchup_received(struct rdmalog_ep *ep,
				     const struct rdmalog_msg_catchup *m);
/* Primary: the backup's JOIN. CQ handler context; NULL or why not. */
const char *rdmalog_catchup_join_received(struct rdmalog_ep *ep,
					  const struct rdmalog_msg_join *m);
/* Backup: pulling from this connection now (an APPEND would be wrong). */
/*
 * Cancel the work, or wait for the run in progress. Process context,
 * RDMALOG_EP_DEAD set, without the conn lock (the work takes it).
 */
void rdmalog_catchup_ep_stop(struct rdmalog_ep *ep);
bool rdmalog_catchup_pulling(struct rdmalog_ep *ep);
void rdmalog_catchup_ep_info(struct rdmalog_ep *ep,
			     struct rdmalog_catchup_info *info);
/*
 * NULL when no catch-up is under way or waits for its work on @ep (state
 * NONE, no RING or JOIN to judge), else why @ep cannot be kept across a
 * change of role (&rdmalog_ep_ops.role_check). Any context; no sleep.
 */
const char *rdmalog_catchup_ep_idle(struct rdmalog_ep *ep);
/* The last log restart of this up period ("" if none), for status. */
void rdmalog_catchup_status_msg(char *buf, size_t len);
/* A new up period: forget it. */
void rdmalog_catchup_clear_note(void);

#endif /* _RDMALOG_CATCHUP_H */
