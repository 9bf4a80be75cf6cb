// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the transport's own messages: HELLO and HEARTBEAT, and the
 * receive path's checks of every message.
 *
 * HELLO (once per connection) and HEARTBEAT (every interval) carry what
 * a peer is and reports: its id, role, log, positions, election epoch
 * and candidacy (Documentation/protocol.rst). conn.c sends them from its
 * state machine and heartbeat work. LEAD (at most once per connection)
 * says that a peer whose HELLO said backup leads now: conn_role.c sends
 * it when this node starts to lead and keeps its connections
 * (rdmalog_conn_role_end()).
 *
 * rdmalog_conn_process() is the one entry point of every received
 * control message (ep.c's receive completion calls it): it checks the
 * frame (magic, version, length, sequence, credits, epoch), acts on
 * HELLO, HEARTBEAT, LEAD, BALLOT and RING itself, and hands every other type to the
 * protocol's ops (msg.c dispatches on its message table). What a peer
 * reported is kept in &rdmalog_conn.remote under its info_lock, for
 * status and the election's census. Nothing here sleeps: CQ handler
 * context (softirq) for receiving; sending takes the endpoint's
 * spinlock only.
 */
#include <linux/atomic.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/spinlock.h>

#include "auth.h"
#include "ballot.h"
#include "ballot_mr.h"
#include "conn.h"
#include "ep.h"
#include "inject.h"
#include "log.h"
#include "node.h"
#include "proto.h"
#include "rdma_dev.h"
#include "ring_mr.h"
#include "stats.h"
#include "transport.h"

/* A peer's heartbeat interval is believed within these bounds. */
#define RDMALOG_PEER_HB_MAX_MS		RDMALOG_MAX_HEARTBEAT_MS

static void rdmalog_fill_positions(__le64 *first, __le64 *commit,
				   __le64 *next)
{
	struct rdmalog_log_state st = {};
	/* Referenced from conn_start to conn_stop, when no conn is active. */
	struct rdmalog_log *log = READ_ONCE(rdmalog_conns.p.log);

	if (log)
		rdmalog_log_get_state(log, &st);
	*first = cpu_to_le64(st.first_lsn);
	*commit = cpu_to_le64(st.commit_lsn);
	*next = cpu_to_le64(st.next_lsn);
}

int rdmalog_ep_send_hello(struct rdmalog_ep *ep)
{
	const struct rdmalog_conn_local *l = &ep->conn->local;
	/* Pairs with rdmalog_conn_role_end(): a primary's epoch is new. */
	u32 role = smp_load_acquire(&rdmalog_conns.role);
	struct rdmalog_msg_hello m = {};
	int err;

	lockdep_assert_held(&ep->conn->lock);
	/*
	 * A HELLO that says primary may bring a RING, and a catch-up, at
	 * once: set up as a primary's first (set up as a backup's, the role
	 * changing since; rdmalog_conn_role_end() may not have come to this
	 * conn yet).
	 */
	if (role == RDMALOG_ROLE_PRIMARY) {
		err = rdmalog_ring_mr_setup_primary(ep);
		if (err)
			return err;
	}
	m.node_id = cpu_to_le32(l->node_id);
	m.role = cpu_to_le32(role);
	m.interval_ms = cpu_to_le32(READ_ONCE(rdmalog_conns.heartbeat_ms));
	m.timeout_ms = cpu_to_le32(READ_ONCE(rdmalog_conns.peer_timeout_ms));
	m.capacity = cpu_to_le64(l->capacity);
	m.max_record = cpu_to_le32(l->max_record);
	m.flags = cpu_to_le32(RDMALOG_HELLO_F_LOG_UP |
			      (ep->rdev->atomics ? RDMALOG_HELLO_F_ATOMICS : 0));
	rdmalog_fill_positions(&m.first_lsn, &m.commit_lsn, &m.next_lsn);
	if (rdmalog_conns.p.log)
		m.log_id = cpu_to_le64(rdmalog_log_id(rdmalog_conns.p.log));
	m.vote_epoch = cpu_to_le64(atomic64_read(&rdmalog_conns.vote_epoch));
	if (l->auth) {
		err = rdmalog_auth_hello_mac(rdmalog_conns.auth,
					     ep->passive ?
					     RDMALOG_AUTH_ACCEPTING :
					     RDMALOG_AUTH_CONNECTING,
					     ep->nonce[0], ep->nonce[1],
					     &m, m.mac);
		if (err)
			return err;
	}
	err = rdmalog_ep_send(ep, &m, sizeof(m), RDMALOG_MSG_HELLO, 2);
	if (err)
		return err;
	/* The header's, filled in by the send. */
	ep->hello_tx_epoch = le64_to_cpu(m.hdr.epoch);
	if (role == RDMALOG_ROLE_PRIMARY)
		ep->lead_epoch = ep->hello_tx_epoch;
	return 0;
}

int rdmalog_ep_send_lead(struct rdmalog_ep *ep)
{
	struct rdmalog_msg_lead m = {};
	struct rdmalog_log_es *es;
	struct rdmalog_log *log;
	int err;

	lockdep_assert_held(&ep->conn->lock);
	if (rdmalog_inject_fail(RDMALOG_INJ_FAIL_LEAD))
		return -EAGAIN;
	/* Referenced while running; leading gave it an id. */
	log = rdmalog_conns.p.log;
	/*
	 * Its epoch-start record, appended before the LEAD (role.c), and
	 * then the positions, which count it.
	 */
	es = &ep->lead_es;
	if (log && rdmalog_log_epoch_start(log, es) &&
	    es->epoch == rdmalog_conn_epoch()) {
		m.flags = cpu_to_le32(RDMALOG_LEAD_F_EPOCH_START);
		m.es_pos = cpu_to_le64(es->pos);
		m.es_lsn = cpu_to_le64(es->lsn);
		m.es_timestamp_ns = cpu_to_le64(es->timestamp_ns);
		m.es_prev_epoch = cpu_to_le64(es->prev_epoch);
		m.es_gen = cpu_to_le32(es->gen);
		m.es_prev_gen = cpu_to_le32(es->prev_gen);
	}
	rdmalog_fill_positions(&m.first_lsn, &m.commit_lsn, &m.next_lsn);
	if (log)
		m.log_id = cpu_to_le64(rdmalog_log_id(log));
	m.vote_epoch = cpu_to_le64(atomic64_read(&rdmalog_conns.vote_epoch));
	/*
	 * Before the post: the backup's RING that answers may be handled
	 * before this thread runs again (the post's locks order the bit).
	 */
	if (m.flags)
		set_bit(RDMALOG_EP_LEAD_ES_TX, &ep->flags);
	err = rdmalog_ep_send(ep, &m, sizeof(m), RDMALOG_MSG_LEAD, 2);
	if (err) {
		clear_bit(RDMALOG_EP_LEAD_ES_TX, &ep->flags);
		return err;
	}
	ep->lead_epoch = le64_to_cpu(m.hdr.epoch);
	rdmalog_stats_inc(RDMALOG_STAT_LEADS_SENT);
	return 0;
}

int rdmalog_ep_send_heartbeat(struct rdmalog_ep *ep)
{
	struct rdmalog_msg_heartbeat m = {};

	rdmalog_fill_positions(&m.first_lsn, &m.commit_lsn, &m.next_lsn);
	m.interval_ms = cpu_to_le32(READ_ONCE(rdmalog_conns.heartbeat_ms));
	m.standing = cpu_to_le32(READ_ONCE(rdmalog_conns.standing));
	m.vote_epoch = cpu_to_le64(atomic64_read(&rdmalog_conns.vote_epoch));
	/* What a candidate would read in our open ballot word's block. */
	rdmalog_ballot_announce(&m.ballot);
	return rdmalog_ep_send(ep, &m, sizeof(m), RDMALOG_MSG_HEARTBEAT, 1);
}

/* ------------------------------------------------------------------ */
/* Receiving */

static void rdmalog_conn_epoch_seen_raise(u64 epoch)
{
	s64 old = atomic64_read(&rdmalog_conns.epoch_seen);

	while ((u64)old < epoch &&
	       !atomic64_try_cmpxchg(&rdmalog_conns.epoch_seen, &old, epoch))
		;
}

u64 rdmalog_conn_epoch_seen(void)
{
	return atomic64_read(&rdmalog_conns.epoch_seen);
}

/* What the peer reported; @role only from a HELLO (else NULL). */
static void rdmalog_conn_note_remote(struct rdmalog_conn *conn, u64 epoch,
				     __le64 first, __le64 commit, __le64 next,
				     const __le32 *role, const __le32 *standing)
{
	spin_lock(&conn->info_lock);
	if (role) {
		conn->remote.role = le32_to_cpu(*role);
		conn->remote.has_role = true;
	}
	if (standing) {
		conn->remote.standing = le32_to_cpu(*standing);
		conn->remote.has_standing = true;
	}
	conn->remote.valid = true;
	conn->remote.when = jiffies;
	conn->remote.epoch = epoch;
	conn->remote.first_lsn = le64_to_cpu(first);
	conn->remote.commit_lsn = le64_to_cpu(commit);
	conn->remote.next_lsn = le64_to_cpu(next);
	spin_unlock(&conn->info_lock);
}

static void rdmalog_note_peer_interval(struct rdmalog_ep *ep, __le32 ms)
{
	u32 v = le32_to_cpu(ms);

	WRITE_ONCE(ep->peer_hb_ms, clamp_t(u32, v, 1, RDMALOG_PEER_HB_MAX_MS));
}

/*
 * The epoch-start record a LEAD of @epoch names, if any, into @es (its
 * lsn 0: none), for the grant (ring_mr.c), which writes it into our ring
 * if that ends where it starts. Its fields are checked for what they
 * must be whoever holds what; a record at a position we do not hold
 * changes nothing. Return: NULL, or why the connection must be dropped.
 */
static const char *rdmalog_lead_es_check(struct rdmalog_log_es *es,
					 u64 epoch,
					 const struct rdmalog_msg_lead *m)
{
	memset(es, 0, sizeof(*es));
	if (!(le32_to_cpu(m->flags) & RDMALOG_LEAD_F_EPOCH_START)) {
		if (m->es_pos || m->es_lsn || m->es_timestamp_ns ||
		    m->es_prev_epoch || m->es_gen || m->es_prev_gen)
			return "LEAD naming no epoch-start record, with fields of one";
		return NULL;
	}
	es->pos = le64_to_cpu(m->es_pos);
	es->lsn = le64_to_cpu(m->es_lsn);
	es->epoch = epoch;
	es->timestamp_ns = le64_to_cpu(m->es_timestamp_ns);
	es->prev_epoch = le64_to_cpu(m->es_prev_epoch);
	es->gen = le32_to_cpu(m->es_gen);
	es->prev_gen = le32_to_cpu(m->es_prev_gen);
	if (!es->lsn || es->lsn >= le64_to_cpu(m->next_lsn) ||
	    es->pos % RDMALOG_RECORD_ALIGN ||
	    es->prev_epoch >= epoch ||
	    (es->lsn == 1 && (es->pos || es->prev_epoch || es->prev_gen)))
		return "LEAD naming an epoch-start record that cannot be";
	return NULL;
}

/*
 * A peer that was a backup when this connection was made leads now, in
 * @epoch (its header's): from here on it is our primary on this
 * connection as if its HELLO had said so (Documentation/protocol.rst,
 * "LEAD"), and a backup grants it the ring. CQ handler context. Return:
 * NULL, or why the connection must be dropped.
 */
static const char *rdmalog_lead_received(struct rdmalog_ep *ep, u64 epoch,
					 const struct rdmalog_msg_lead *m)
{
	static const __le32 primary = cpu_to_le32(RDMALOG_ROLE_PRIMARY);
	u64 log_id = le64_to_cpu(m->log_id);
	u64 was = READ_ONCE(ep->peer_log_id);
	struct rdmalog_log_es es;
	const char *why;

	/* K2: a peer stops being primary only by closing the connection. */
	if (test_bit(RDMALOG_EP_PEER_PRIMARY, &ep->flags))
		return "LEAD from a primary";
	if ((le32_to_cpu(m->flags) & ~RDMALOG_LEAD_F_EPOCH_START) ||
	    m->reserved)
		return "LEAD with unknown flags or reserved bits set";
	why = rdmalog_lead_es_check(&es, epoch, m);
	if (why)
		return why;
	if (!log_id)
		return "LEAD with log id 0";
	if (epoch <= ep->hello_epoch)
		return "LEAD of an epoch not above its HELLO's";
	/* A backup's HELLO may name none: leading gave its log an id. */
	if (was && was != log_id)
		return "LEAD of another log than its HELLO";
	/*
	 * We lead too (it is our backup here): the election judges which of
	 * us is deposed, and a primary that steps down closes every
	 * connection; nothing of ours changes on this one meanwhile.
	 */
	if (READ_ONCE(rdmalog_conns.role) == RDMALOG_ROLE_PRIMARY) {
		rdmalog_ep_get_ops()->heard(ep, epoch,
					    le64_to_cpu(m->vote_epoch));
		return NULL;
	}

	/* Read under it by the grant and fencing (ring_mr.c). */
	spin_lock_bh(&rdmalog_conns.ring_lock);
	ep->hello_epoch = epoch;
	spin_unlock_bh(&rdmalog_conns.ring_lock);
	WRITE_ONCE(ep->peer_log_id, log_id);
	if (es.lsn) {
		/* Read by the grant's work, queued after the bits below. */
		ep->lead_es = es;
		set_bit(RDMALOG_EP_LEAD_ES, &ep->flags);
	}
	set_bit(RDMALOG_EP_LEAD, &ep->flags);
	/* Pairs with rdmalog_conn_census()'s: fields, then the bit. */
	smp_mb__before_atomic();
	set_bit(RDMALOG_EP_PEER_PRIMARY, &ep->flags);
	rdmalog_conn_note_remote(ep->conn, epoch, m->first_lsn, m->commit_lsn,
				 m->next_lsn, &primary, NULL);
	rdmalog_stats_inc(RDMALOG_STAT_LEADS_RECEIVED);
	pr_info("node %u: node %u leads epoch %llu on our connection\n",
		ep->conn->local.node_id, ep->conn->peer_id, epoch);
	rdmalog_ep_get_ops()->heard(ep, epoch, le64_to_cpu(m->vote_epoch));
	return rdmalog_ep_maybe_grant_ring(ep);
}

/*
 * Validate and act on one received message (already copied out and its
 * buffer re-posted): its frame, then HELLO, HEARTBEAT and RING here and
 * every other type through the protocol's ops (msg.c). CQ handler
 * context. Return: NULL, or why the connection must be dropped.
 */
const char *rdmalog_conn_process(struct rdmalog_ep *ep,
				 const union rdmalog_msg_any *m, u32 len)
{
	const struct rdmalog_ep_ops *ops = rdmalog_ep_get_ops();
	struct rdmalog_conn *conn = ep->conn;
	const struct rdmalog_msg_hdr *hdr = &m->hdr;
	const char *why = NULL;
	bool data = false;
	u32 want, credits;
	u64 epoch;

	if (len < sizeof(*hdr))
		return "message shorter than a header";
	if (le32_to_cpu(hdr->magic) != RDMALOG_MSG_MAGIC)
		return "bad message magic";
	if (hdr->version != RDMALOG_PROTO_VERSION)
		return "unknown message version";
	if (le16_to_cpu(hdr->length) != len)
		return "message length differs from the bytes received";
	switch (hdr->type) {
	case RDMALOG_MSG_HELLO:
		want = sizeof(m->hello);
		break;
	case RDMALOG_MSG_HEARTBEAT:
		want = sizeof(m->heartbeat);
		break;
	case RDMALOG_MSG_BALLOT:
		want = sizeof(m->ballot);
		break;
	case RDMALOG_MSG_LEAD:
		want = sizeof(m->lead);
		break;
	case RDMALOG_MSG_RING:
		/* Variable length: the fixed part first, then the count. */
		if (len < RDMALOG_MSG_RING_LEN(0))
			return "message length wrong for its type";
		want = le32_to_cpu(m->ring.nr_segs);
		if (!want || want > RDMALOG_RING_MSG_SEGS)
			return "RING with a bad segment count";
		want = RDMALOG_MSG_RING_LEN(want);
		break;
	default:
		/* The protocol's messages: msg.c knows their lengths. */
		why = ops->check(m, len, &data);
		if (why)
			return why;
		want = len;
		break;
	}
	if (len != want)
		return "message length wrong for its type";
	if (le32_to_cpu(hdr->seq) != ep->rx_seq + 1)
		return "message out of sequence";
	ep->rx_seq++;

	credits = le16_to_cpu(hdr->credits);
	spin_lock(&ep->lock);
	if (ep->credits + credits > ep->peer_recv_depth) {
		spin_unlock(&ep->lock);
		return "peer handed back more credits than it has buffers";
	}
	ep->credits += credits;
	spin_unlock(&ep->lock);

	/*
	 * Epochs only grow: a message of an epoch below the one the peer
	 * already spoke in on this connection is stale, and so is a primary's
	 * data message (NOTIFY, CATCHUP) of an epoch below ours.
	 */
	epoch = le64_to_cpu(hdr->epoch);
	if (hdr->type != RDMALOG_MSG_HELLO && epoch < ep->peer_epoch)
		return "message of a stale epoch";
	ep->peer_epoch = epoch;
	rdmalog_conn_epoch_seen_raise(epoch);
	if (data && epoch < rdmalog_conn_epoch())
		return "data from a primary of an older epoch";
	if (data && test_bit(RDMALOG_EP_HELLO, &ep->flags) &&
	    epoch != ep->hello_epoch)
		return "data of another epoch than the primary's HELLO";
	/* Nothing counts before the peer's HELLO (and its proof). */
	if (hdr->type != RDMALOG_MSG_HELLO &&
	    !test_bit(RDMALOG_EP_HELLO, &ep->flags))
		return "message before HELLO";
	switch (hdr->type) {
	case RDMALOG_MSG_HELLO:
		if (conn->local.auth &&
		    !rdmalog_auth_hello_ok(rdmalog_conns.auth,
					   ep->passive ? RDMALOG_AUTH_CONNECTING :
							 RDMALOG_AUTH_ACCEPTING,
					   ep->nonce[0], ep->nonce[1],
					   &m->hello)) {
			ep->refusal = RDMALOG_REJ_LOCAL_AUTH_FAILED;
			return "its HELLO does not prove our shared secret";
		}
		if (le32_to_cpu(m->hello.node_id) != conn->peer_id)
			return "HELLO from another node id";
		if (le64_to_cpu(m->hello.capacity) != conn->local.capacity)
			return "HELLO with another ring capacity";
		if (test_bit(RDMALOG_EP_HELLO, &ep->flags))
			return "second HELLO";
		WRITE_ONCE(ep->peer_log_id, le64_to_cpu(m->hello.log_id));
		ep->hello_epoch = epoch;
		if (le32_to_cpu(m->hello.flags) & RDMALOG_HELLO_F_ATOMICS)
			set_bit(RDMALOG_EP_PEER_ATOMICS, &ep->flags);
		/* Pairs with rdmalog_conn_census()'s: fields, then the bit. */
		smp_mb__before_atomic();
		set_bit(RDMALOG_EP_HELLO, &ep->flags);
		rdmalog_note_peer_interval(ep, m->hello.interval_ms);
		rdmalog_conn_note_remote(conn, epoch, m->hello.first_lsn,
					 m->hello.commit_lsn,
					 m->hello.next_lsn, &m->hello.role, NULL);
		if (le32_to_cpu(m->hello.role) == RDMALOG_ROLE_PRIMARY)
			set_bit(RDMALOG_EP_PEER_PRIMARY, &ep->flags);
		ops->heard(ep, epoch,
				      le64_to_cpu(m->hello.vote_epoch));
		why = rdmalog_ep_maybe_grant_ring(ep);
		rdmalog_ep_maybe_grant_ballot(ep);
		break;
	case RDMALOG_MSG_BALLOT:
		why = rdmalog_ep_ballot_received(ep, &m->ballot);
		break;
	case RDMALOG_MSG_LEAD:
		why = rdmalog_lead_received(ep, epoch, &m->lead);
		break;
	case RDMALOG_MSG_RING:
		why = rdmalog_ep_ring_received(ep, &m->ring);
		break;
	case RDMALOG_MSG_HEARTBEAT:
		if (le32_to_cpu(m->heartbeat.standing) &
		    ~(RDMALOG_STANDING_PRIO | RDMALOG_STANDING_NO_LEAD))
			return "HEARTBEAT with unknown standing bits";
		why = rdmalog_ep_ballot_announced(ep, &m->heartbeat.ballot);
		if (why)
			return why;
		rdmalog_note_peer_interval(ep, m->heartbeat.interval_ms);
		rdmalog_conn_note_remote(conn, epoch, m->heartbeat.first_lsn,
					 m->heartbeat.commit_lsn,
					 m->heartbeat.next_lsn, NULL,
					 &m->heartbeat.standing);
		ops->heard(ep, epoch,
				      le64_to_cpu(m->heartbeat.vote_epoch));
		break;
	default:
		why = ops->rx(ep, m, len);
		break;
	}
	if (why)
		return why;
	WRITE_ONCE(conn->last_rx, jiffies);
	rdmalog_stats_inc(RDMALOG_STAT_MSGS_RECEIVED);
	return NULL;
}
