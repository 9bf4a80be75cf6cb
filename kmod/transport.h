/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - private to the transport's files: conn.c (the peers and
 * their state machine), conn_role.c (the peers' roles as the live
 * connections tell them, and a change of ours that keeps them), hello.c
 * (HELLO, HEARTBEAT, the checks of every received message), cm.c (the
 * rdma_cm side: handshake, listener, requests, an endpoint's CM events),
 * ep.c (an endpoint's resources, sending, completion errors) and
 * ring_mr.c (the ring's registrations and the ring grant). Nothing else
 * includes it; the transport's users see ep.h, conn.h and ring_mr.h.
 */
#ifndef _RDMALOG_TRANSPORT_H
#define _RDMALOG_TRANSPORT_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "conn.h"

struct crypto_shash;
struct rdmalog_addr;
struct sockaddr_storage;
struct ib_cq;
struct ib_wc;
struct rdma_cm_event;
struct rdma_cm_id;
struct rdmalog_conn;
struct rdmalog_ep;
struct rdmalog_ep_ops;
struct rdmalog_msg_ring;
union rdmalog_msg_any;

/**
 * struct rdmalog_conns_state - the connections of this node
 * @mutex: protects @running, @p, @list, @listener and @listen_msg
 * @running: between rdmalog_conn_start() and rdmalog_conn_stop()
 * @p: the parameters of the up period; @p.log is referenced while running
 * @list: activated &struct rdmalog_conn
 * @listener: the listening id, or NULL (not yet, retrying, or stopped)
 * @listen_work: (re)creates the listener
 * @listen_msg: why there is no listener; "" when listening
 * @heartbeat_ms: heartbeat interval (READ_ONCE/WRITE_ONCE)
 * @peer_timeout_ms: peer timeout (READ_ONCE/WRITE_ONCE)
 * @role: our role, for HELLO and LEAD and for the ring grant (a backup
 *	grants its ring, a primary takes RINGs): READ_ONCE; set by
 *	rdmalog_conn_start() before any endpoint exists, and by
 *	rdmalog_conn_role_end() under @ring_lock with a release, after
 *	@epoch (rdmalog_ep_send_hello() reads it with an acquire: a HELLO
 *	that says primary is of the epoch led); rdmalog_conn_set_role()
 *	writes the same value again
 * @standing: our candidacy for HEARTBEAT, &rdmalog_msg_heartbeat.standing
 *	(READ_ONCE/WRITE_ONCE)
 * @nr_eps: endpoints not yet released; rdmalog_conn_stop() waits for 0
 * @wq: waiters on @nr_eps
 * @epoch: our epoch (atomic): in the header of every message we send and
 *	in our handshake, and no primary's data (APPEND, CATCHUP) of an epoch
 *	below it is taken. Set by rdmalog_conn_start() to the up period's
 *	(&rdmalog_conn_params.epoch), not by a connection: every endpoint
 *	reads the current value when it sends
 * @epoch_seen: the highest epoch any peer sent a message in since the
 *	module loaded (atomic; only grows)
 * @vote_epoch: the election epoch our HELLOs and HEARTBEATs announce
 *	(atomic; set by the election, rdmalog_conn_set_vote_epoch())
 * @auth: the keyed HMAC transform of the up period (auth.c) when a shared
 *	secret is set (@p.local.auth), else NULL; set and freed under @mutex
 *	by start and stop, while no endpoint exists; read-only in between
 * @ring_lock: protects @ring_holder, @fence_epoch and @changing (any
 *	context, _bh); a leaf
 * @ring_holder: (backup) the endpoint our ring is granted to: the primary
 *	we take records from. At most one at a time: a second peer that says
 *	it is primary is refused while it holds, unless it is the same peer
 *	on a new connection. Cleared by the holder's close work after its QP
 *	is destroyed (the grant is dead then) and before that work drops its
 *	reference, so the endpoint is alive while it is set: under
 *	@ring_lock only its peer id and &rdmalog_ep.hello_epoch (set before
 *	the grant, then constant) are read, and rdmalog_conn_fence() takes a
 *	reference on it
 * @fence_epoch: (backup) no primary of an epoch below it is granted our
 *	ring: this node voted in it (rdmalog_conn_fence()), or a peer said
 *	by LEAD that it leads our log in it and the older holder was fenced
 *	for it (rdmalog_ep_grant_work()); only grows
 * @changing: a change of role is under way, from rdmalog_conn_role_begin()
 *	(which found no holder) to rdmalog_conn_role_end(): our ring is
 *	granted to nobody meanwhile (rdmalog_ring_hold() defers), so nothing
 *	writes it while the log changes role and the connections stay
 */
struct rdmalog_conns_state {
	struct mutex mutex; /* see above */
	bool running;
	struct rdmalog_conn_params p;
	struct list_head list;
	struct rdma_cm_id *listener;
	struct delayed_work listen_work;
	char listen_msg[128];
	u32 heartbeat_ms;
	u32 peer_timeout_ms;
	u32 role;
	u32 standing;
	atomic_t nr_eps;
	wait_queue_head_t wq;
	atomic64_t epoch;
	atomic64_t epoch_seen;
	atomic64_t vote_epoch;
	struct crypto_shash *auth;
	spinlock_t ring_lock; /* see above */
	struct rdmalog_ep *ring_holder;
	u64 fence_epoch;
	bool changing;
};

/* rdma_resolve_addr() and rdma_resolve_route() timeouts. */
#define RDMALOG_RESOLVE_TIMEOUT_MS	2000
/* From the start of an attempt (or an accept) to ESTABLISHED. */
#define RDMALOG_ATTEMPT_TIMEOUT_MS	10000
/* Retry of a listener that could not be set up. */
#define RDMALOG_LISTEN_RETRY_MS		1000
/* Reconnect backoff of the connecting side; doubles up to the cap. */
#define RDMALOG_BACKOFF_MIN_MS		100
/* rdmalog_ep_close() state argument: leave the displayed state alone. */
#define RDMALOG_STATE_KEEP		(-1)

/*
 * &rdmalog_conn.refusal values of refusals made after the handshake, by
 * this side only: never on the wire (above every RDMALOG_REJ_*).
 */
#define RDMALOG_REJ_LOCAL_AUTH_FAILED		0xf0
#define RDMALOG_REJ_LOCAL_SECOND_PRIMARY	0xf1

/* The connections of this node (conn.c). */
extern struct rdmalog_conns_state rdmalog_conns;
/* Every work item of the transport (conn.c creates it). */
extern struct workqueue_struct *rdmalog_conn_wq;

/* Our epoch now (&rdmalog_conns.epoch). Any context. */
static inline u64 rdmalog_conn_epoch(void)
{
	return atomic64_read(&rdmalog_conns.epoch);
}

/* conn.c */
/* Set the conn's message (status); conn lock held. */
__printf(2, 3)
void rdmalog_conn_set_msg(struct rdmalog_conn *conn, const char *fmt, ...);
/* The sockaddr of @a at @port (len 0: the IPv4 wildcard). */
void rdmalog_addr_to_sa(const struct rdmalog_addr *a, u16 port,
			struct sockaddr_storage *ss);
/*
 * Move the displayed state to @state: the only place that changes it after
 * creation, and that announces it (PEER_STATE) unless @quiet (the node's
 * own UP, PEER_ADDED or DOWN event says it). An illegal move (see
 * rdmalog_conn_move_ok()) warns and is not made. Under the conn's lock.
 */
void rdmalog_conn_change_state(struct rdmalog_conn *conn, u32 state,
			       bool quiet);
/* The first backoff of @conn's side (connecting or knocking). */
unsigned int rdmalog_conn_min_backoff(struct rdmalog_conn *conn);
/* Every close work queued so far has run. Process context, no locks. */
void rdmalog_conn_wait_closed(void);
/* A new endpoint of @conn (referenced by it), not yet set up. */
struct rdmalog_ep *rdmalog_ep_alloc(struct rdmalog_conn *conn,
				    bool passive, bool knock);
/* Close @ep once and decide what comes next (kernel-doc in conn.c). */
__printf(3, 4)
void rdmalog_ep_close(struct rdmalog_ep *ep, int state, const char *fmt,
		      ...);
/*
 * @ep is ESTABLISHED: it goes live, sends our HELLO (and a backup's ring
 * grant if the peer's HELLO came first), the conn shows CONNECTED and its
 * heartbeat starts. Conn lock held.
 */
void rdmalog_ep_established(struct rdmalog_ep *ep);
/* Release an endpoint that never got past the request handler. */
void rdmalog_ep_discard(struct rdmalog_ep *ep);
/* The protocol's ops (rdmalog_ep_set_ops()). */
const struct rdmalog_ep_ops *rdmalog_ep_get_ops(void);

/* hello.c */
/*
 * Send our HELLO, HEARTBEAT on @ep. Return: 0 or rdmalog_ep_send()'s.
 * HELLO: conn lock held, process context; one that says primary sets
 * @ep up as a primary's first (rdmalog_ring_mr_setup_primary(): -ENOMEM,
 * and no HELLO); it notes the epoch it was sent in
 * (&rdmalog_ep.hello_tx_epoch) and, when it says primary, that the peer
 * knows us as its primary (&rdmalog_ep.lead_epoch).
 */
int rdmalog_ep_send_hello(struct rdmalog_ep *ep);
int rdmalog_ep_send_heartbeat(struct rdmalog_ep *ep);
/*
 * Tell @ep's peer, to which our HELLO said backup, that we lead now in
 * our epoch (LEAD): once per endpoint, and only in an epoch above our
 * HELLO's (the caller, rdmalog_conn_role_end(), checks both). Conn lock
 * held; does not sleep. Return: 0 (&rdmalog_ep.lead_epoch is set, and
 * counted in leads_sent), or rdmalog_ep_send()'s error (-EAGAIN also
 * from the fail point inject_lead_fail): the caller closes @ep.
 */
int rdmalog_ep_send_lead(struct rdmalog_ep *ep);
/*
 * Validate and act on one received message (copied out of its buffer,
 * which is posted again; ep.c): its frame, then HELLO, HEARTBEAT and RING
 * in the transport and every other type through the protocol's ops. CQ
 * handler context. Return: NULL, or why the connection must be dropped.
 */
const char *rdmalog_conn_process(struct rdmalog_ep *ep,
				 const union rdmalog_msg_any *m, u32 len);

/* ep.c */
/*
 * Everything but the cm_id: device object, buffers, CQ, QP, and the whole
 * receive ring posted. Called by the handler (under the conn lock) for a
 * resolved route or an accepted request. On error, what was set up stays
 * for rdmalog_ep_release_resources(). Return: 0 or a negative errno, with
 * the conn's message saying why.
 */
int rdmalog_ep_setup(struct rdmalog_ep *ep);
/*
 * Release what rdmalog_ep_setup() set up, in the documented order; the
 * cm_id stays. Process context, without the conn lock or with it held by
 * the handler of this endpoint's own id (a refused accept).
 */
void rdmalog_ep_release_resources(struct rdmalog_ep *ep);
/* &rdmalog_ep.flush_work's function (rdmalog_ep_wc_ok()). */
void rdmalog_ep_flush_work(struct work_struct *work);

/* ring_mr.c: the ring grant */
/*
 * A backup grants the primary its ring once both our HELLO is posted and
 * the primary's arrived, in either order (REG_MRs, then RING). CQ handler
 * or BH-disabled context. Return: NULL, or why the connection must go.
 */
const char *rdmalog_ep_maybe_grant_ring(struct rdmalog_ep *ep);
/* &rdmalog_ep.grant_work: the grant, once the ballot word is closed. */
void rdmalog_ep_grant_work(struct work_struct *work);
/*
 * A backup's RING arrived (we are the primary): validate it and have the
 * backup judged (&rdmalog_ep_ops.ring: catchup.c). CQ handler context.
 * Return: NULL, or why the connection must go.
 */
const char *rdmalog_ep_ring_received(struct rdmalog_ep *ep,
				     const struct rdmalog_msg_ring *m);
/* @ep's grant is dead (its QP destroyed): the ring is free again. */
void rdmalog_ring_unhold(struct rdmalog_ep *ep);
/* @ep is the endpoint our ring is granted to. */
bool rdmalog_ring_is_holder(struct rdmalog_ep *ep);

/* cm.c */
/* The uapi refusal (enum rdmalog_refusal) of a wire reason. */
u32 rdmalog_rej_to_refusal(u8 reason);
/* The rdma_cm event handler of every id of ours (listener and endpoints). */
int rdmalog_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);
/* &rdmalog_conns.listen_work: (re)create the listener. */
void rdmalog_listen_work(struct work_struct *work);
/*
 * The transport's ib_client (registered by rdmalog_conn_init()): a device
 * that appears brings the listener and waiting connections back at once;
 * one that goes closes everything on it first.
 */
extern struct ib_client rdmalog_ib_client;

#endif /* _RDMALOG_TRANSPORT_H */
