/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - replication: the primary's RDMA WRITE data path into the
 * backups' rings, the commit rule, and the backups' side of it (verify and
 * expose what the primary committed).
 *
 * node_up.c starts it for an up period (rdmalog_repl_start()) before the
 * connections and stops it after them; conn.c hands it the endpoints that
 * join (a backup's RING was accepted) and leave (after their QP is
 * drained), the completions of its notices and the NOTIFY, WAIT and ACK
 * messages it receives; log.c calls it back through &struct
 * rdmalog_log_hooks.
 */
#ifndef _RDMALOG_REPL_H
#define _RDMALOG_REPL_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct rdmalog_ep;
struct rdmalog_log;
struct rdmalog_log_es;
struct rdmalog_log_plan;
struct rdmalog_sbuf;
struct rdmalog_msg_ack;
struct rdmalog_msg_notify;
struct rdmalog_msg_wait;

/**
 * struct rdmalog_repl_ep - replication state of one connection
 *
 * Primary side (a backup that joined), under rdmalog_repl.lock:
 * @node: entry on rdmalog_repl.eps while @joined (holds an ep reference)
 * @joined: the backup's RING was accepted and it is in sync
 * @ack_mode: held positions count only once the backup ACKs them (iWARP
 *	where the backup did not grant a read-back, or the force_ack module
 *	parameter)
 * @read_mode: each notice is read back, and the READ's completion moves
 *	the held position (iWARP, or the force_read module parameter, where
 *	the backup granted it: &rdmalog_ep.remote_notice)
 * @sent_pos: stream position up to which WRITEs are posted
 * @sent_bpos: the last record boundary at or below @sent_pos
 * @sent_lsn: LSN of the record that starts at @sent_bpos
 * @sent_commit: commit LSN carried by the last notice posted
 * @sent_first: first LSN carried by the last notice posted
 * @done_pos: @sent_pos of the last notice completed
 * @held_lsn: every record below it is held by the backup (WRITE
 *	completions, or ACKs in @ack_mode)
 * @acked_lsn: @held_lsn of the last ACK of the current generation
 * @r_tail: the backup's tail: we write no stream position at or above
 *	@r_tail + capacity
 * @writes: unsignalled WRITEs posted and not yet retired
 * @notices: notices posted and not yet completed
 * @bytes: bytes written to the backup
 * @records: records written to the backup
 * @batches: notices posted
 * @errors: posts that failed and completions in error
 * @joined_lsn: @sent_lsn when it joined
 * @hold_node: entry on rdmalog_repl.holds while @holding (holds an ep
 *	reference)
 * @holding: the backup is catching up (catchup.c): not joined, but the
 *	floor stays at or below @hold_floor
 * @hold_floor: the floor the catch-up needs
 * @notice_seq: number of the last notice written to the backup's notice
 *	block (0: none yet)
 * @notified_pos: @sent_bpos when the last NOTIFY was sent (or it joined)
 * @notified_first: @sent_first when the last NOTIFY was sent
 * @wait_lsn: the lowest LSN a WAIT of the backup named since the last
 *	NOTIFY (0: none)
 * @notify_due: a NOTIFY is owed (it could not be sent yet)
 *
 * Backup side (the primary's connection), under &rdmalog_ep.lock:
 * @nt_valid: @nt holds a notice not applied yet
 * @nt: the latest notice taken (host order)
 * @notify_seq: the highest notice number a NOTIFY named
 * @want_lsn: the lowest LSN a reader here waits for (0: none)
 * @armed: a WAIT was sent for it and no NOTIFY came since
 * @wait_retry: a WAIT could not be sent (no send buffer or credit): the
 *	next message we receive queues @apply_work to send it
 * @ack_due: an ACK is owed (asked for, or the tail moved)
 * @ack_retry: an ACK that was asked for could not be sent (no send buffer
 *	or credit): the next message we receive, which hands credits back,
 *	queues @apply_work to send it
 * @follows: (backup) a notice of this connection's primary was taken: our
 *	log follows its log (rdmalog_log_follow() is not asked again);
 *	under @apply_mutex
 * @apply_mutex: serializes taking a notice and applying it (the apply
 *	work, a reader's demand); also protects @taken_seq and @follows.
 *	Taken before &rdmalog_ep.lock and the log's locks
 * @taken_seq: number of the last notice taken (0: none)
 * @apply_work: takes the latest notice from the notice block, verifies
 *	and exposes what it says is committed, ACKs and WAITs as owed;
 *	queued with an endpoint reference, which it drops; cancelled (and
 *	waited for) by rdmalog_repl_ep_stop() before the endpoint's
 *	resources go
 * @last_tail: the tail sent in the last ACK, RING or JOIN (the latter two
 *	through rdmalog_repl_tail_sent()); READ_ONCE/WRITE_ONCE: the apply
 *	work compares it to send an ACK when the tail moved
 */
struct rdmalog_repl_ep {
	struct list_head node;
	bool joined;
	bool ack_mode;
	bool read_mode;
	u64 sent_pos;
	u64 sent_bpos;
	u64 sent_lsn;
	u64 sent_commit;
	u64 sent_first;
	u64 done_pos;
	u64 held_lsn;
	u64 acked_lsn;
	u64 r_tail;
	u32 writes;
	u32 notices;
	u64 bytes;
	u64 records;
	u64 batches;
	u64 errors;
	u64 joined_lsn;
	struct list_head hold_node;
	bool holding;
	u64 hold_floor;
	u32 notice_seq;
	u64 notified_pos;
	u64 notified_first;
	u64 wait_lsn;
	bool notify_due;

	bool nt_valid;
	struct {
		u64 head;
		u64 next_lsn;
		u64 commit_pos;
		u64 commit_lsn;
		u64 first_lsn;
		u64 epoch;
		u32 flags;
		u32 gen;
	} nt;
	bool ack_due;
	bool ack_retry;
	u32 notify_seq;
	u64 want_lsn;
	bool armed;
	bool wait_retry;
	bool follows;
	struct mutex apply_mutex; /* see @apply_mutex above */
	u32 taken_seq;
	struct work_struct apply_work;
	u64 last_tail;
};

/**
 * struct rdmalog_repl_params - what an up period replicates with
 * @log: the log (referenced by repl until rdmalog_repl_stop())
 * @role: &enum rdmalog_role of this node
 * @durability: &enum rdmalog_durability requested
 * @nr_nodes: nodes in the cluster, this one included (1 + peers)
 * @commit_timeout_ms: how long an append waits for its commit
 * @in_sync_changed: called when a backup joined or left replication (the
 *	set of backups in sync changed), from process or softirq context,
 *	with no lock of this file held; it must not sleep nor call back
 *	into repl.c synchronously (the node queues work). May be NULL
 */
struct rdmalog_repl_params {
	struct rdmalog_log *log;
	u32 role;
	u32 durability;
	u32 nr_nodes;
	u32 commit_timeout_ms;
	void (*in_sync_changed)(void);
};

int rdmalog_repl_init(void);
void rdmalog_repl_exit(void);
void rdmalog_repl_start(const struct rdmalog_repl_params *p);
void rdmalog_repl_stop(void);
/*
 * Queue @work on the replication workqueue, which rdmalog_repl_stop()
 * flushes before the log goes (catchup.c). Return: queue_work()'s.
 */
bool rdmalog_repl_queue(struct work_struct *work);
/*
 * The log of the up period, or NULL; valid in work queued with
 * rdmalog_repl_queue() and in completion handlers of live endpoints.
 */
struct rdmalog_log *rdmalog_repl_log(void);
/* Durability, cluster size or timeout changed while up. */
void rdmalog_repl_set_policy(u32 durability, u32 nr_nodes,
			     u32 commit_timeout_ms);
/*
 * The node's role changes while up, its connections kept (node_up.c, before
 * it appends in the new role). No backup is joined or held then (a
 * backup joins nobody; a primary's step-down closes every connection
 * first): it warns if one is. Process context.
 */
void rdmalog_repl_set_role(u32 role, u32 commit_timeout_ms);

/**
 * rdmalog_repl_effective() - the durability the joined backups give now
 * @requested: &enum rdmalog_durability asked for
 * @in_sync: out: backups joined and in sync
 * @needed: out: backups the requested mode needs
 *
 * Return: @requested when enough backups are in sync, else the strongest
 * mode they do give (async with none).
 */
u32 rdmalog_repl_effective(u32 requested, u32 *in_sync, u32 *needed);

/* From msg.c (the endpoint's set-up, through the ops). */
void rdmalog_repl_ep_init(struct rdmalog_ep *ep);
/*
 * A backup at @head / @next_lsn (tail @tail) offers its ring: judge it
 * (rdmalog_log_plan(), @pull, @es_only and @plan as there). JOIN: it
 * joined; if @es
 * (the epoch-start record our LEAD named, which its RING says it holds)
 * is still our log's, it counts as holding every record up to it, and
 * the commit rule runs. PULL and RESET: it must catch up first
 * (catchup.c); the floor is held for it until rdmalog_repl_ep_unhold() or
 * rdmalog_repl_ep_leave(). DIVERGED (also when we do not replicate, or it
 * already joined or holds): nothing. LATER (@es_only, anything but a
 * JOIN after @es): nothing. Any context. Return: &enum
 * rdmalog_log_plan_kind.
 */
int rdmalog_repl_ep_join(struct rdmalog_ep *ep, u64 head, u64 next_lsn,
			 u64 tail, bool pull, const struct rdmalog_log_es *es,
			 bool es_only, struct rdmalog_log_plan *plan);
/* Release the floor held for a catch-up. Any context. */
void rdmalog_repl_ep_unhold(struct rdmalog_ep *ep);
void rdmalog_repl_ep_leave(struct rdmalog_ep *ep);
/*
 * NULL when @ep carries no replication of the node's current role (no
 * backup joined or held; no notice noted, no ACK or WAIT owed), else why: it
 * cannot be kept across a change of role (&rdmalog_ep_ops.role_check).
 * Any context; does not sleep.
 */
const char *rdmalog_repl_ep_idle(struct rdmalog_ep *ep);
/*
 * Cancel @apply_work or wait for its run, wait for a reader's demand that
 * takes a notice of @ep, and stop taking them from it. Process context,
 * RDMALOG_EP_DEAD set, without the conn lock.
 */
void rdmalog_repl_ep_stop(struct rdmalog_ep *ep);
/* A NOTIFY arrived (backup side): take the notice. CQ handler context. */
const char *rdmalog_repl_notify_received(struct rdmalog_ep *ep,
					 const struct rdmalog_msg_notify *m);
/* A WAIT arrived (primary side). CQ handler context. */
const char *rdmalog_repl_wait_received(struct rdmalog_ep *ep,
				       const struct rdmalog_msg_wait *m);
const char *rdmalog_repl_ack_received(struct rdmalog_ep *ep,
				      const struct rdmalog_msg_ack *m);
/*
 * A backup sent its tail in a RING or a JOIN on @ep: an ACK need not send
 * it again. Any context.
 */
void rdmalog_repl_tail_sent(struct rdmalog_ep *ep, u64 tail);
/*
 * (backup) Our RING, with our @tail, is posted on @ep: its primary writes
 * our ring and notice block from now on (&rdmalog_ep_ops.ring_sent). CQ
 * handler or BH-disabled context.
 */
void rdmalog_repl_ring_sent(struct rdmalog_ep *ep, u64 tail);
/*
 * After every valid message received on @ep (CQ handler context): a backup
 * hands credits back with an ACK when they pile up; a primary resumes
 * WRITEs that waited for credits.
 */
void rdmalog_repl_after_rx(struct rdmalog_ep *ep);

/**
 * struct rdmalog_repl_peer_info - per-peer replication counters
 * @joined: replicating to this peer now
 * @bytes: bytes written
 * @records: records written
 * @held_lsn: every record below it is held by the peer
 * @lag: records appended that the peer does not hold yet
 * @errors: posts that failed and completions in error
 */
struct rdmalog_repl_peer_info {
	bool joined;
	u64 bytes;
	u64 records;
	u64 held_lsn;
	u64 lag;
	u64 errors;
};

void rdmalog_repl_ep_info(struct rdmalog_ep *ep,
			  struct rdmalog_repl_peer_info *info);

#endif /* _RDMALOG_REPL_H */
