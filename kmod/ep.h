/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - the objects of one connection, shared by the files that use
 * it: the transport, which owns them (conn.c: their lifecycle; cm.c: the
 * rdma_cm handshake; ep.c: an endpoint's resources and sending; hello.c:
 * the control messages and the receive entry point), repl.c (the
 * replication data path) and forward.c (forwarded appends).
 *
 * The lifetime and lock rules are at the top of conn.c and at each
 * structure below; repl.c and forward.c touch an endpoint only from its
 * completion handlers, from the transport's calls into them (through
 * &struct rdmalog_ep_ops), and through references they take (kref on
 * &rdmalog_ep.ref) while it is live.
 */
#ifndef _RDMALOG_EP_H
#define _RDMALOG_EP_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "conn.h"
#include "addr.h"
#include "cq.h"
#include "../uapi/rdmalog_genl.h"
#include "proto.h"
#include "repl.h"
#include "forward.h"
#include "catchup.h"
#include "elect.h"
#include "log.h"

/*
 * Inline data asked of a connection's QP: its control messages, its notices
 * (80 bytes) and small replication WRITEs go inline up to what the device
 * grants (&rdmalog_ep.max_inline; rxe 512, siw 80, some devices none).
 */
#define RDMALOG_INLINE_WANT		256

/* Receive buffers per connection: the peer's send credits. */
#define RDMALOG_RECV_DEPTH		64
/* Send buffers per connection: control messages in flight. */
#define RDMALOG_SEND_DEPTH		32
/* Largest receive depth a peer may announce. */
#define RDMALOG_MAX_RECV_DEPTH		1024
/*
 * Replication WRITEs (unsignalled) in flight on one connection, at most:
 * each batch is up to %RDMALOG_REPL_BATCH_WRITES of them followed by one
 * signalled notice WRITE, whose completion retires them all (repl.c).
 */
#define RDMALOG_REPL_MAX_WRITES		128
#define RDMALOG_REPL_BATCH_WRITES	16
/* RDMA READs of forwarded payloads in flight on one connection (forward.c). */
#define RDMALOG_FWD_MAX_READS		8
/* FRWR registrations of forwarded payloads and their LOCAL_INVs (forward.c). */
#define RDMALOG_FWD_MAX_REGS		8
/*
 * Queue sizes. Every control message is one signalled SEND and every
 * notice one signalled WRITE (%SEND_DEPTH buffers between them),
 * replication adds its unsignalled WRITEs, a backup posts one signalled
 * REG_MR per ring segment and one for its notice block (at most
 * %RDMALOG_RING_MSG_SEGS + 1) once per connection (no LOCAL_INV: the
 * MRs are deregistered after the QP is drained and destroyed, which
 * invalidates them), forwarding its READs (primary: per registration of
 * its pool a READ, REG_MR and LOCAL_INV on iWARP, up to three READs into
 * a local_dma_lkey sink on IB/RoCE) or per registration a fence, REG_MR
 * and LOCAL_INV (backup, which posts no READ of a forwarded payload: in
 * the same share), catch-up its READs (backup) or the REG_MR and
 * LOCAL_INV of each segment of its read grant (primary), the ring's and a
 * catch-up grant's REG_MRs a fence each (rdmalog_ep_reg_fence()), the
 * ballot grant's two REG_MRs and their fence, a candidacy's read of the
 * peer's ballot word and block (or its compare-and-swap after them: never
 * both at once), in read-back mode (repl.c) a READ after each notice
 * and the REG_MR of its sink, and ib_drain_qp() needs one more slot on
 * each queue.
 */
#define RDMALOG_SQ_SIZE			(RDMALOG_SEND_DEPTH + \
					 RDMALOG_REPL_MAX_WRITES + \
					 RDMALOG_RING_MAX_SEGS + \
					 RDMALOG_FWD_MAX_READS + \
					 2 * RDMALOG_FWD_MAX_REGS + \
					 RDMALOG_CU_MAX_READS + \
					 2 * RDMALOG_RING_MAX_SEGS + 2 + \
					 RDMALOG_SEND_DEPTH + 1 + \
					 3 + 2 + 1)
#define RDMALOG_RQ_SIZE			(RDMALOG_RECV_DEPTH + 1)
#define RDMALOG_CQ_SIZE			(RDMALOG_SQ_SIZE + RDMALOG_RQ_SIZE)

/* &rdmalog_ep.flags bits, set from completion handlers. */
enum {
	RDMALOG_EP_ERROR,	/* an error was reported; error work queued */
	RDMALOG_EP_DEAD,	/* resources being released: no re-posting */
	RDMALOG_EP_HELLO,	/* the peer's HELLO arrived */
	RDMALOG_EP_RING_REG,	/* we posted our ring's REG_MR */
	RDMALOG_EP_RING_RX,	/* the peer's RING arrived */
	RDMALOG_EP_HELLO_TX,	/* our HELLO was posted */
	RDMALOG_EP_PEER_PRIMARY,	/* the peer's HELLO or LEAD said primary;
					 * never cleared
					 */
	RDMALOG_EP_FLUSHED,	/* a flush we did not start; flush work queued */
	RDMALOG_EP_GRANT,	/* the ring grant started: it holds the ballot
				 * word closed until the endpoint is released
				 */
	RDMALOG_EP_PEER_ATOMICS,	/* the peer's HELLO said it has atomics */
	RDMALOG_EP_BALLOT_REG,	/* we posted our ballot's REG_MRs */
	RDMALOG_EP_BALLOT_RX,	/* the peer's BALLOT arrived */
	RDMALOG_EP_CAS_BUSY,	/* a read or compare-and-swap of the peer's
				 * ballot word is posted, not yet completed
				 */
	RDMALOG_EP_LEAD,	/* the peer's LEAD arrived (it was a backup) */
	RDMALOG_EP_LEAD_FENCE,	/* its grant waits for the fencing of an older
				 * primary of our log (ring_mr.c)
				 */
	RDMALOG_EP_LEAD_ES,	/* its LEAD named its epoch-start record
				 * (@lead_es; backup side)
				 */
	RDMALOG_EP_LEAD_ES_TX,	/* our LEAD named ours (@lead_es; primary
				 * side)
				 */
};

/*
 * The I/O virtual address of the ballot page in the ballot grant's MRs
 * (ballot_mr.c): the word at +0, the block at +64; no DMA address leaks.
 */
#define RDMALOG_BALLOT_IOVA		BIT_ULL(47)

/**
 * struct rdmalog_ballot_ep - the ballot grant on one connection
 * (ballot_mr.c)
 * @word_mr: our word's registration for the peer (REMOTE_ATOMIC), or NULL
 *	(no atomics)
 * @block_mr: our block's (REMOTE_READ)
 * @map: the ballot page's mapping the two map, referenced from the grant
 *	until the release
 * @reg_cqe: the REG_MRs' completion
 * @word_addr: the peer's word, as its BALLOT said (with
 *	RDMALOG_EP_BALLOT_RX)
 * @word_rkey: its key
 * @block_addr: the peer's block
 * @block_rkey: its key
 * @grant: a number no other grant received since the module loaded has
 *	(set with the above): what a candidacy read under one grant is not
 *	taken for the word of another (rdmalog_ballot_mr_grant())
 * @buf: where a candidacy's atomics and READ land (the candidate's side,
 *	ballot_mr.c: the word read at +0, a compare-and-swap's result at +8,
 *	the block at +64), mapped at @buf_dma; with @word_mr
 * @buf_dma: see @buf
 * @read_cqe: completion of the read of the word (a fetch-and-add of 0)
 * @op_cqe: of the READ of the block after it, of the read of the word
 *	alone, or of a compare-and-swap
 *	(one operation at a time: RDMALOG_EP_CAS_BUSY)
 * @failed: the operation of RDMALOG_EP_CAS_BUSY failed (read with the
 *	bit clear)
 * @wq: woken when it completes (the poster's)
 * @res_word: the word read, copied out of @buf by the completion handler
 *	(@buf goes with the connection's resources, the endpoint later)
 * @res_cas: a compare-and-swap's result, likewise
 * @res_blk: the block read, likewise
 * @ann: the block the peer's last HEARTBEAT announced for its open word
 *	(all zero: none); under &rdmalog_ep.lock, set in the CQ handler
 */
struct rdmalog_ballot_ep {
	struct ib_mr *word_mr;
	struct ib_mr *block_mr;
	struct rdmalog_ballot_map *map;
	struct ib_cqe reg_cqe;
	u64 word_addr;
	u32 word_rkey;
	u64 block_addr;
	u32 block_rkey;
	u64 grant;
	void *buf;
	u64 buf_dma;
	struct ib_cqe read_cqe;
	struct ib_cqe op_cqe;
	bool failed;
	wait_queue_head_t *wq;
	u64 res_word;
	u64 res_cas;
	struct rdmalog_ballot_block res_blk;
	struct rdmalog_ballot_block ann;
};

/*
 * How long a flushed completion on a live endpoint may wait for the
 * close that explains it (the peer's disconnect, which the rdma_cm
 * reports after it moved the QP to error) before it counts as an error.
 */
#define RDMALOG_EP_FLUSH_GRACE_MS	500

struct rdmalog_ep;
struct rdmalog_ring_map;

/*
 * Largest ring segment: its length travels in 32 bits. A multiple of every
 * chunk size (at most 4 MiB).
 */
#define RDMALOG_RING_SEG_MAX		SZ_2G

/*
 * The I/O virtual address of ring offset 0 in every registration we grant
 * (RING, CATCHUP): a peer sees ring offsets, never our DMA addresses, and
 * the address of ring offset x is RDMALOG_RING_IOVA + x in every MR. A
 * forwarded payload's registration starts there too (forward.c).
 * Page-aligned for every MR page size (an MR keeps its page offset).
 */
#define RDMALOG_RING_IOVA		BIT_ULL(48)

/*
 * The I/O virtual address of a backup's notice block in the registration
 * it grants with its RING (ring_mr.c); page-aligned.
 */
#define RDMALOG_NOTICE_IOVA		BIT_ULL(46)

/**
 * struct rdmalog_ring_reg - one FRWR registration of a part of our ring
 * @mr: FRWR MR over the part's scatterlist (&rdmalog_ring_map.regs), or
 *	NULL
 */
struct rdmalog_ring_reg {
	struct ib_mr *mr;
};

/**
 * struct rdmalog_rbuf - one receive buffer
 * @cqe: completion entry; .done = rdmalog_recv_done
 * @ep: owner
 * @sge: the buffer, in &rdmalog_ep.recv_mem
 * @wr: the receive work request, re-posted as is
 */
struct rdmalog_rbuf {
	struct ib_cqe cqe;
	struct rdmalog_ep *ep;
	struct ib_sge sge;
	struct ib_recv_wr wr;
};

/**
 * struct rdmalog_sbuf - one send buffer
 * @cqe: completion entry; .done = rdmalog_send_done
 * @ep: owner
 * @free: entry on &rdmalog_ep.send_free while not posted
 * @sge: the buffer, in &rdmalog_ep.send_mem
 * @buf: its kernel address
 * @type: the message type it carries while posted
 * @nr_writes: unsignalled WRITEs posted right before it (a notice's)
 * @done: NULL, or its owner's hook, called by the send completion (CQ
 *	context, @ok: it succeeded) before the buffer can be reused; set,
 *	with @priv, by the @sbuf_init of rdmalog_ep_send_chain()
 * @priv: the owner's data for @done (repl.c: a notice's positions)
 */
struct rdmalog_sbuf {
	struct ib_cqe cqe;
	struct rdmalog_ep *ep;
	struct list_head free;
	struct ib_sge sge;
	void *buf;
	u8 type;
	u32 nr_writes;
	void (*done)(struct rdmalog_ep *ep, struct rdmalog_sbuf *sb, bool ok);
	u64 priv[3];
};

/**
 * struct rdmalog_page_mr - one zeroed page of ours that a peer's RDMA
 * reaches: DMA-mapped FROM_DEVICE, with an MR of one page to register
 * it (ring_mr.c: a backup's notice block, a primary's read-back sink)
 * @page: the page, or NULL
 * @dma: its DMA address, valid while @mapped
 * @mapped: @page is DMA-mapped at @dma (any address, 0 included)
 * @mr: the MR, or NULL
 *
 * Set up in process context under the conn lock, freed by the release
 * after the QP is destroyed; registered (a new key each time) from the
 * CQ handler.
 */
struct rdmalog_page_mr {
	struct page *page;
	u64 dma;
	bool mapped;
	struct ib_mr *mr;
};

/**
 * struct rdmalog_ep - one rdma_cm connection or connection attempt
 * @ref: memory lifetime: the close work's reference plus one per queued
 *	error work; the last put frees this and puts @conn
 * @conn: the peer's object; referenced
 * @cm_id: the rdma_cm id; its context is this endpoint (set in the
 *	handler for accepted ids); destroyed by the close work
 * @passive: accepted from the listener
 * @knock: an attempt flagged %RDMALOG_CM_F_KNOCK
 * @ibdev: the device once the address is resolved (or of an accepted id);
 *	conn lock
 * @rdev: the device object, from rdmalog_ep_setup() to the release
 * @pd: this connection's own protection domain (QP, buffers, ring and
 *	forwarding registrations), so that a remote key works on this QP
 *	only; deallocated by the release after everything on it is gone
 * @rcq: completion queue (send and receive), reaped from softirq or by
 *	a committing writer (cq.c: rdmalog_ep_poll())
 * @qp: the QP of @cm_id once created
 * @max_inline: bytes a send work request may carry inline on @qp (what
 *	the device granted of %RDMALOG_INLINE_WANT; 0: none); set with @qp
 * @connect_sent: rdma_connect_locked() or rdma_accept() was called: the
 *	close work calls rdma_disconnect(); conn lock
 * @established: ESTABLISHED was handled; conn lock
 * @closing: rdmalog_ep_close() was called; conn lock
 * @backoff_reset: the conn's backoff was reset for this endpoint; conn lock
 * @deadline: jiffies by which it must be established; conn lock
 * @nonce: the handshake nonces of the connection, [0] the connecting
 *	side's and [1] the accepting side's (auth.c); written before it is
 *	established, read-only after
 * @refusal: a local refusal reason (conn.c) the error work closes the
 *	endpoint with (state REFUSED), or 0; set once, before
 *	rdmalog_ep_error()
 * @recv_mem: the receive buffers, %RDMALOG_RECV_DEPTH * %RDMALOG_MSG_SIZE
 * @recv_dma: its DMA address (DMA_FROM_DEVICE) when @recv_mapped
 * @recv_mapped: @recv_mem is DMA-mapped
 * @rbufs: %RDMALOG_RECV_DEPTH receive buffers
 * @send_mem: the send buffers, %RDMALOG_SEND_DEPTH * %RDMALOG_MSG_SIZE
 * @send_dma: its DMA address (DMA_TO_DEVICE) when @send_mapped
 * @send_mapped: @send_mem is DMA-mapped
 * @sbufs: %RDMALOG_SEND_DEPTH send buffers
 * @lock: protects @live, @send_free, @credits, @grant and @tx_seq, and
 *	orders posting with @tx_seq; taken with _bh outside the CQ handler
 * @live: sending is allowed (established, not closing)
 * @send_free: &struct rdmalog_sbuf not posted
 * @credits: messages we may still send before the peer re-posts buffers
 * @grant: buffers we re-posted and have not told the peer about yet
 * @tx_seq: sequence number of the last message sent
 * @rx_seq: sequence number of the last message received; CQ handler only
 *	(completions of one CQ are handled one at a time)
 * @peer_recv_depth: the peer's receive depth from the handshake (credits
 *	can never exceed it); set before the QP can receive anything
 * @peer_hb_ms: the peer's heartbeat interval (READ_ONCE/WRITE_ONCE)
 * @peer_epoch: the highest epoch the peer sent a message in; CQ handler
 *	only
 * @hello_epoch: the epoch of the peer's HELLO, or of its LEAD once that
 *	came: a primary's data (notices, NOTIFY, CATCHUP) must be of it (a primary's
 *	epoch changes only with a new connection), and the ring grant and
 *	fencing judge the primary by it. Written by the CQ handler: once
 *	before the HELLO flag is set, and once more, under
 *	&rdmalog_conns.ring_lock, by a LEAD, which comes only while the
 *	peer is not primary, so before any grant to it; constant once the
 *	peer is primary
 * @hello_tx_epoch: the epoch our HELLO was sent in; conn lock
 * @lead_epoch: the epoch in which the peer was told that we lead: by our
 *	HELLO (it said primary) or by our LEAD (after a HELLO that said
 *	backup, in an epoch above it); 0: not told. A peer knows us as its
 *	primary on a connection until it closes, so it is set once, and a
 *	change of role sends a LEAD only where it is 0
 *	(rdmalog_conn_role_end()). Conn lock
 * @lead_es: the epoch-start record a LEAD named: the peer's (backup
 *	side, %RDMALOG_EP_LEAD_ES: written by the CQ handler before the bit,
 *	read by the grant after it) or ours (primary side,
 *	%RDMALOG_EP_LEAD_ES_TX: written under the conn lock before the LEAD
 *	is posted and the bit set, read after the peer's RING, which
 *	follows it). Written once
 * @peer_log_id: the log the peer serves (a primary) or follows (a backup;
 *	0: none yet), from its HELLO or LEAD; written by the CQ handler before the
 *	RING or CATCHUP that queues the works that read it, and (primary
 *	side) by the catch-up work when it grants a catch-up: the backup
 *	follows our log from then on
 * @flags: RDMALOG_EP_* bits
 * @err: what went wrong, written once by whoever set %RDMALOG_EP_ERROR
 * @ring_regs: @ring_nr_regs registrations covering our ring in order, or
 *	NULL (no FRWR, ring not registrable, out of memory). A backup's, for
 *	the primary to write: registered once, by the REG_MRs posted when
 *	the primary's HELLO arrives (also the local keys of its catch-up
 *	READs); a primary's, for a backup to read while it catches up:
 *	registered REMOTE_READ for each CATCHUP and invalidated at its JOIN
 *	(catchup.c). Deregistered by the release, after the QP is destroyed
 * @ring_nr_regs: entries of @ring_regs (set up or partly set up)
 * @ring_wrap_mr: (primary) a second MR over the first registration's
 *	part: a catch-up range that wraps the ring may need two disjoint
 *	parts of it (catchup.c); NULL on a backup. Set up with the endpoint
 *	on a primary, or under the conn lock when the node starts to lead
 *	(rdmalog_ring_mr_setup_primary(): no catch-up runs then)
 * @ring_sg: (primary) scratch scatterlist of a catch-up grant's part of
 *	one registration (&rdmalog_ring_map.reg_pieces entries); only the
 *	catch-up work uses it; set up with @ring_wrap_mr
 * @ring_page_size: the MR page size of every registration (the map's)
 * @ring_cqe: completion of those REG_MRs (shared: .done only checks the
 *	status)
 * @ring_why: why @ring_regs is NULL (static text), for the log
 * @fence_mr: where the device needs it (&rdmalog_rdev.reg_fence), an MR
 *	that is never registered, only invalidated with its first key by
 *	the fences of rdmalog_ep_reg_fence(); else NULL. Allocated by
 *	rdmalog_ep_setup(), deregistered by the release after the QP is
 *	destroyed
 * @fence_cqe: the completion of a failed fence (they are unsignalled)
 * @notice: (backup) our notice block for this connection's primary
 *	(&struct rdmalog_notice at offset 0): mapped FROM_DEVICE,
 *	registered REMOTE_WRITE with the ring's REG_MRs and granted in the
 *	RING. Set up with @ring_regs (none without them), freed by the
 *	release after the QP is destroyed
 * @remote_notice: (primary) the backup's notice block, from its RING:
 *	valid once %RDMALOG_EP_RING_RX is set; @readable: the RING said
 *	%RDMALOG_RING_F_NOTICE_READ and @proof is registered: each notice
 *	is read back (repl.c's read-back mode)
 * @proof: (primary) where a notice read back lands: mapped FROM_DEVICE,
 *	registered LOCAL_WRITE and REMOTE_WRITE (an iWARP READ's sink is
 *	written by the response) when the RING grants the read. Set up with
 *	rdmalog_ring_mr_setup_primary() where the device needs a read-back
 *	(rdmalog_ring_read_back()), freed by the release after the QP is
 *	destroyed; nothing reads the page
 * @proof_cqe: the completion of @proof's REG_MR
 * @remote_ring: the peer's ring segments: a backup's (primary side), valid
 *	once %RDMALOG_EP_RING_RX is set; the primary's (backup side), valid
 *	while a catch-up pulls; CQ handler context (or its work, after)
 * @ring_map: our ring's DMA mapping for this device (ring_map.c; a
 *	reference), or NULL (no log); the scatterlists of @ring_regs and the
 *	source of the replication WRITEs (primary side). Dropped by the
 *	release after the QP is destroyed and @ring_regs deregistered
 * @repl: replication state of this connection (repl.c; its locking there)
 * @fwd: forwarded appends on this connection (forward.c, fwd_serve.c; its
 *	locking in forward.c)
 * @cu: catch-up on this connection (catchup.c; its locking in catchup.h)
 * @elect: a VOTE_REQ of the peer waiting for its answer (elect.c)
 * @ballot: the ballot grant both ways (ballot_mr.c)
 * @error_work: closes the endpoint after a completion or QP error
 * @flush_work: queued (with a reference) by the first flushed completion
 *	while the endpoint is not being released: the QP went to error
 *	without a close of ours; after %RDMALOG_EP_FLUSH_GRACE_MS it reports
 *	the error unless the release started. Cancelled (its reference
 *	dropped) by the release once the CQ is freed, so nothing queues it
 *	afterwards
 * @close_work: releases everything; runs once, after rdmalog_ep_close()
 * @grant_work: grants the ring once the ballot word is closed, when the
 *	primary's HELLO found it open (ring_mr.c); holds a reference while
 *	queued or running; cancelled by the close work before the release
 */
struct rdmalog_ep {
	struct kref ref;
	struct rdmalog_conn *conn;
	struct rdma_cm_id *cm_id;
	bool passive;
	bool knock;
	struct ib_device *ibdev;
	struct rdmalog_rdev *rdev;
	struct ib_pd *pd;
	struct rdmalog_cq rcq;
	struct ib_qp *qp;
	u32 max_inline;
	bool connect_sent;
	bool established;
	bool closing;
	bool backoff_reset;
	unsigned long deadline;
	u8 nonce[2][RDMALOG_NONCE_SIZE];
	u8 refusal;

	void *recv_mem;
	u64 recv_dma;
	bool recv_mapped;
	struct rdmalog_rbuf *rbufs;
	void *send_mem;
	u64 send_dma;
	bool send_mapped;
	struct rdmalog_sbuf *sbufs;

	spinlock_t lock; /* send side, see above */
	bool live;
	struct list_head send_free;
	u32 credits;
	u32 grant;
	u32 tx_seq;

	u32 rx_seq;
	u32 peer_recv_depth;
	u32 peer_hb_ms;
	u64 peer_epoch;
	u64 hello_epoch;
	u64 hello_tx_epoch;
	u64 lead_epoch;
	struct rdmalog_log_es lead_es;
	u64 peer_log_id;

	unsigned long flags;
	char err[96];

	struct rdmalog_ring_reg *ring_regs;
	unsigned int ring_nr_regs;
	struct ib_mr *ring_wrap_mr;
	struct scatterlist *ring_sg;
	unsigned int ring_page_size;
	struct ib_cqe ring_cqe;
	const char *ring_why;
	struct ib_mr *fence_mr;
	struct ib_cqe fence_cqe;
	struct rdmalog_page_mr notice;
	struct {
		u64 addr;
		u32 rkey;
		bool readable;
	} remote_notice;
	struct rdmalog_page_mr proof;
	struct ib_cqe proof_cqe;
	struct {
		u32 nr_segs;
		struct {
			u64 addr;
			u32 length;
			u32 rkey;
		} seg[RDMALOG_RING_MAX_SEGS];
	} remote_ring;

	struct rdmalog_ring_map *ring_map;
	struct rdmalog_repl_ep repl;
	struct rdmalog_fwd_ep fwd;
	struct rdmalog_catchup_ep cu;
	struct rdmalog_elect_ep elect;
	struct rdmalog_ballot_ep ballot;

	struct work_struct error_work;
	struct delayed_work flush_work;
	struct work_struct close_work;
	struct work_struct grant_work;
};

/**
 * struct rdmalog_conn - the connection to one configured peer
 * @ref: see the top of conn.c
 * @list: entry on &rdmalog_conns.list while @listed; rdmalog_conns.mutex
 * @listed: on the list (holds a reference); rdmalog_conns.mutex
 * @peer_id: the peer's node id (immutable)
 * @addr: its address and port (immutable)
 * @active: we connect (our id is smaller); else we accept and knock
 * @local: this node (immutable)
 * @lock: the state machine: every field below up to @info_lock
 * @activated: rdmalog_conn_activate() ran
 * @stopping: being removed: nothing new starts, works are not re-armed
 * @state: &enum rdmalog_peer_state shown to the operator
 * @msg: why the state is what it is (empty when connected)
 * @ep: the current endpoint, or NULL
 * @backoff_ms: next reconnect (or knock) delay, before jitter
 * @ever_connected: connected at least once in this up period
 * @reconnects: connections established after the first one
 * @refusals: handshakes refused, by us or by the peer
 * @last_reason: last refusal reason seen or sent, to log changes only
 * @refusal: reason (%RDMALOG_REJ_*) of the last refusal, either way, for
 *	status while the state is REFUSED
 * @connect_work: starts an attempt (connect or knock), or times out the
 *	current one
 * @hb_work: sends heartbeats and checks the peer timeout while connected
 * @info_lock: protects @remote, written by the CQ handler
 * @remote: what the peer reported in its last HELLO or HEARTBEAT, and when
 *	(its role: in its last HELLO; its standing: in its last HEARTBEAT)
 * @last_rx: jiffies of the last message or of ESTABLISHED: the reference
 *	of the peer timeout (READ_ONCE/WRITE_ONCE)
 */
struct rdmalog_conn {
	struct kref ref;
	struct list_head list;
	bool listed;
	u32 peer_id;
	struct rdmalog_addr addr;
	bool active;
	struct rdmalog_conn_local local;

	struct mutex lock; /* the state machine, see above */
	bool activated;
	bool stopping;
	u32 state;
	char msg[RDMALOG_PEER_MSG_LEN];
	struct rdmalog_ep *ep;
	unsigned int backoff_ms;
	bool ever_connected;
	u64 reconnects;
	u64 refusals;
	u8 last_reason;
	u8 refusal;
	struct delayed_work connect_work;
	struct delayed_work hb_work;

	spinlock_t info_lock; /* @remote */
	struct {
		bool valid;
		bool has_role;
		bool has_standing;
		unsigned long when;
		u32 role;
		u32 standing;
		u64 epoch;
		u64 first_lsn;
		u64 commit_lsn;
		u64 next_lsn;
	} remote;
	unsigned long last_rx;
};

/*
 * Post one control message of @len bytes at @msg (header included; the
 * header is filled in). @min_credits: 1 for messages that hand credits
 * back (HEARTBEAT, ACK), 2 for the others, so either side can always send
 * one. @pre: NULL, or a chain of work requests (@nr_pre of them,
 * unsignalled, the last one's next NULL) posted right before the message
 * in the same ib_post_send(); @sbuf_init: called on the send buffer before
 * posting, to set its completion hook (&rdmalog_sbuf.done), may be NULL. Process or softirq
 * context. Return: 0, -ENOTCONN (not live), -EAGAIN (no credit or buffer;
 * counted), or the error of ib_post_send().
 */
int rdmalog_ep_send_chain(struct rdmalog_ep *ep, void *msg, u16 len, u8 type,
			  u32 min_credits, struct ib_send_wr *pre, u32 nr_pre,
			  void (*sbuf_init)(struct rdmalog_sbuf *sb, void *arg),
			  void *arg);
int rdmalog_ep_send(struct rdmalog_ep *ep, void *msg, u16 len, u8 type,
		    u32 min_credits);
/*
 * RDMA WRITE the @len bytes at @buf, as they are, to @raddr / @rkey of the
 * peer with one signalled WRITE from a send buffer, after @pre (as for
 * rdmalog_ep_send_chain(), with @sbuf_init and @arg too). With
 * @read_back, the WRITE is unsignalled and followed by a signalled RDMA
 * READ of its first 8 bytes into &rdmalog_ep.proof, whose completion
 * is the send buffer's: it proves that everything before it was placed.
 * Takes no credit and no message sequence number: it is not a message.
 * Process or softirq context. Return: 0, -ENOTCONN, -EAGAIN (no send
 * buffer; counted), or the error of ib_post_send().
 */
int rdmalog_ep_write_chain(struct rdmalog_ep *ep, const void *buf, u16 len,
			   u64 raddr, u32 rkey, bool read_back,
			   struct ib_send_wr *pre, u32 nr_pre,
			   void (*sbuf_init)(struct rdmalog_sbuf *sb, void *arg),
			   void *arg);
/* Report a fatal error of @ep from any context; the connection is closed. */
__printf(2, 3)
void rdmalog_ep_error(struct rdmalog_ep *ep, const char *fmt, ...);
/*
 * Post the chain @wr on @ep's QP unless the endpoint is no longer live
 * (its release started: nothing may be posted on a QP being destroyed).
 * Process or softirq context. Return: 0; -ENOTCONN (nothing posted); or
 * ib_post_send()'s error. Unless @bad is NULL, *@bad is then the first
 * work request not posted (all of them for -ENOTCONN).
 */
int rdmalog_ep_post(struct rdmalog_ep *ep, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad);
/*
 * The head of a chain of REG_MRs (@regs) to post on @ep: where the device
 * runs a REG_MR again when it retransmits an earlier request of the send
 * queue (&rdmalog_rdev.reg_fence), @inv -- filled in as an unsignalled
 * LOCAL_INV of &rdmalog_ep.fence_mr, followed by @regs -- which rxe runs
 * only once every earlier request of the queue completed: nothing before
 * the REG_MRs can then be retransmitted. Elsewhere @regs, @inv untouched.
 * The caller keeps @inv until the chain is posted, and counts it in the
 * send queue's budget (%RDMALOG_SQ_SIZE). Any context.
 */
struct ib_send_wr *rdmalog_ep_reg_fence(struct rdmalog_ep *ep,
					struct ib_send_wr *inv,
					struct ib_send_wr *regs);
/*
 * A completion handler's first step: true when @wc succeeded; otherwise
 * count it and close the connection, naming @what, unless the endpoint
 * is being released; a flush before that closes it after a grace period
 * (%RDMALOG_EP_FLUSH_GRACE_MS) unless a close came meanwhile. Any context.
 */
bool rdmalog_ep_wc_ok(struct rdmalog_ep *ep, struct ib_wc *wc,
		      const char *what);
/*
 * Busy polling: a committing writer reaps @ep's completions itself, in
 * process context, from rdmalog_ep_poll_begin() (false: somebody else
 * reaps them, or the endpoint is going away) to rdmalog_ep_poll_end();
 * it holds a reference and does not sleep meanwhile. rdmalog_ep_poll()
 * returns how many it reaped, or a negative errno when it must stop.
 */
bool rdmalog_ep_poll_begin(struct rdmalog_ep *ep);
int rdmalog_ep_poll(struct rdmalog_ep *ep);
void rdmalog_ep_poll_end(struct rdmalog_ep *ep);
void rdmalog_ep_get(struct rdmalog_ep *ep);
void rdmalog_ep_put(struct rdmalog_ep *ep);
/**
 * struct rdmalog_ep_ops - what the transport asks of the protocol above it
 * (msg.c), for the messages it does not handle itself (HELLO, HEARTBEAT
 * and RING are the transport's)
 * @check: is @m (its header checked: magic, version, @len bytes) of a
 *	known type and the right length for it? NULL, with *@data true for
 *	a primary's data message (one of an epoch below ours is dropped),
 *	or why the connection must go. Called before the sequence number,
 *	credits and epoch are looked at; any context
 * @rx: act on @m, which passed every check; CQ handler context. NULL, or
 *	why the connection must go
 * @rx_done: after every valid message, whatever its type (credits may be
 *	handed back); CQ handler context
 * @init: a new endpoint, before anything else is done with it: the
 *	users' per-endpoint state, no resources. Process context
 * @setup: its QP, PD and CQ exist: the users' resources on them. Process
 *	context, the conn lock held; may sleep. 0, or a negative errno and
 *	*@what: the user that failed ("forwarding"), for the status message
 * @stop: the close work, before the release: the users' works finished
 *	and none queued again. Process context, no conn lock
 * @release: the QP drained and destroyed, the CQ freed: the users drop
 *	what they had on the endpoint (nothing of theirs is in flight).
 *	Process context
 * @info: the users' part of a peer's status (@repl, @cu), of an
 *	established endpoint. Process context, the conn lock held
 * @ring: (primary) a backup's RING was validated and its segments taken:
 *	judge the backup by its @head, @next_lsn and @tail, and @es, the
 *	epoch-start record our LEAD named if the RING says it holds it
 *	(else NULL). CQ handler context. NULL, or why the connection must go
 * @ring_sent: (backup) our RING, with our @tail, is posted. CQ handler or
 *	BH-disabled context
 * @heard: a HELLO (once proven) or HEARTBEAT of @ep's peer arrived, in
 *	@epoch, with its election epoch @vote_epoch (&rdmalog_msg_hello).
 *	CQ handler context
 * @role_check: this node changes its role and would keep @ep: NULL when
 *	@ep carries nothing of the users' state of the old role (no backup
 *	joined or held for a catch-up, no notice noted, ACK or WAIT owed, no
 *	catch-up, nothing forwarded either way), else why it must be closed
 *	(its peer reconnects). Any context, the conn lock held or not; does
 *	not sleep
 *
 * Set once by rdmalog_ep_set_ops() at module init, before any endpoint
 * exists; constant afterwards.
 */
struct rdmalog_ep_ops {
	const char *(*check)(const union rdmalog_msg_any *m, u32 len,
			     bool *data);
	const char *(*rx)(struct rdmalog_ep *ep,
			  const union rdmalog_msg_any *m, u32 len);
	void (*rx_done)(struct rdmalog_ep *ep);
	void (*init)(struct rdmalog_ep *ep);
	int (*setup)(struct rdmalog_ep *ep, const char **what);
	void (*stop)(struct rdmalog_ep *ep);
	void (*release)(struct rdmalog_ep *ep);
	void (*info)(struct rdmalog_ep *ep,
		     struct rdmalog_repl_peer_info *repl,
		     struct rdmalog_catchup_info *cu);
	const char *(*ring)(struct rdmalog_ep *ep, u64 head, u64 next_lsn,
			    u64 tail, const struct rdmalog_log_es *es);
	void (*ring_sent)(struct rdmalog_ep *ep, u64 tail);
	void (*heard)(struct rdmalog_ep *ep, u64 epoch, u64 vote_epoch);
	const char *(*role_check)(struct rdmalog_ep *ep);
};

/* Register the protocol's ops (module init, before rdmalog_conn_init()). */
void rdmalog_ep_set_ops(const struct rdmalog_ep_ops *ops);

/* The primary's live endpoint with a reference, or NULL (forward.c). */
struct rdmalog_ep *rdmalog_conn_primary_ep(void);
/* Every established endpoint, referenced; how many (elect.c, candidacy.c). */
u32 rdmalog_conn_live_eps(struct rdmalog_ep **eps, u32 max);
/*
 * Send every connection's HEARTBEAT now (elect.c: the ballot word just
 * opened, and its block is to be announced). Process context; takes the
 * connections' mutex.
 */
void rdmalog_conn_beat_now(void);
/*
 * Announce @event (PEER_JOINED, PEER_DIVERGED; LOG_RESET with @first_lsn)
 * about @ep's peer to the connections' owner (&struct
 * rdmalog_conn_events). Process context; takes the conn lock.
 */
void rdmalog_conn_notify_ep(struct rdmalog_ep *ep, enum rdmalog_event event,
			    u64 first_lsn);

#endif /* _RDMALOG_EP_H */
