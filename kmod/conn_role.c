// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the connections and roles: the peers' roles as the live
 * connections tell them, and our own role as the connections carry it.
 *
 * The peers' side: which live connection is to the primary that holds
 * our ring (rdmalog_conn_primary_ep(), _primary_id(), _has_primary():
 * forward.c sends to it, role.c watches for its loss, elect.c asks for
 * it before it answers a pre-vote), how many peers are connected
 * (role.c's majority) and what the connected peers' HELLOs said of their
 * roles and logs (rdmalog_conn_census(): role.c's watch, and its
 * judgement of a log to join). Our side: the role our HELLOs announce
 * (rdmalog_conn_set_role()), and a change of role that keeps the
 * connections (rdmalog_conn_role_begin() and _role_end(): no ring grant
 * meanwhile; at the end, per kept connection, the users' role_check and
 * a LEAD, or a close).
 *
 * The objects, their states and the locks are conn.c's (its top comment
 * states the rules and the lock order) and &struct rdmalog_conns_state's
 * (transport.h), which the two files share. Taken here, in that order:
 * &rdmalog_conns.mutex, then the lock of each conn on the list (the walks
 * of the list; the end of a change of role, which under a conn's lock
 * sets up the catch-up grant, sleeping, and posts a LEAD or a ring grant,
 * taking an endpoint's lock); &rdmalog_conns.ring_lock is a leaf, taken
 * alone, under &rdmalog_conns.mutex, and under a conn's lock (through
 * rdmalog_ring_is_holder() and the ring grant). Everything here is called
 * in process context.
 */
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "conn.h"
#include "ep.h"
#include "ring_mr.h"
#include "transport.h"

/* ------------------------------------------------------------------ */
/* The peers' roles, as the live connections tell them */

/**
 * rdmalog_conn_primary_ep() - the live connection to the primary
 *
 * Return: its endpoint with a reference (rdmalog_ep_put()), or NULL when
 * no connection to a peer that announced itself primary is established.
 */
struct rdmalog_ep *rdmalog_conn_primary_ep(void)
{
	struct rdmalog_ep *ep, *found = NULL;
	struct rdmalog_conn *conn;

	mutex_lock(&rdmalog_conns.mutex);
	list_for_each_entry(conn, &rdmalog_conns.list, list) {
		mutex_lock(&conn->lock);
		ep = conn->ep;
		if (ep && ep->established && !ep->closing &&
		    test_bit(RDMALOG_EP_PEER_PRIMARY, &ep->flags) &&
		    rdmalog_ring_is_holder(ep)) {
			rdmalog_ep_get(ep);
			found = ep;
		}
		mutex_unlock(&conn->lock);
		if (found)
			break;
	}
	mutex_unlock(&rdmalog_conns.mutex);
	return found;
}

/**
 * rdmalog_conn_primary_id() - the peer whose primary holds our ring on a
 * live connection (the node watches for its loss)
 *
 * Return: its node id, or 0 when rdmalog_conn_primary_ep() finds none.
 */
u32 rdmalog_conn_primary_id(void)
{
	struct rdmalog_ep *ep = rdmalog_conn_primary_ep();
	u32 id;

	if (!ep)
		return 0;
	id = ep->conn->peer_id;
	rdmalog_ep_put(ep);
	return id;
}

/**
 * rdmalog_conn_has_primary() - a primary holds our ring on a live
 * connection
 *
 * Return: true when rdmalog_conn_primary_id() finds one.
 */
bool rdmalog_conn_has_primary(void)
{
	return rdmalog_conn_primary_id() != 0;
}

/**
 * rdmalog_conn_nr_live() - how many peers are connected
 *
 * Return: the number of established connections not closing.
 */
u32 rdmalog_conn_nr_live(void)
{
	struct rdmalog_conn *conn;
	struct rdmalog_ep *ep;
	u32 n = 0;

	mutex_lock(&rdmalog_conns.mutex);
	list_for_each_entry(conn, &rdmalog_conns.list, list) {
		mutex_lock(&conn->lock);
		ep = conn->ep;
		if (ep && ep->established && !ep->closing)
			n++;
		mutex_unlock(&conn->lock);
	}
	mutex_unlock(&rdmalog_conns.mutex);
	return n;
}

/**
 * rdmalog_conn_census() - what the connected peers said of their logs
 * @c: filled in: @c->heard, connections whose peer's HELLO arrived;
 *	@c->primaries, of those whose peer said it is a primary;
 *	@c->with_log, of those whose peer serves or follows a log (a
 *	non-zero log id: it is a primary, or a backup that holds records or
 *	follows a primary)
 *
 * Only established connections not closing count. A node coming up
 * (role.c) judges by it whether a peer holds a log it should join.
 */
void rdmalog_conn_census(struct rdmalog_conn_census *c)
{
	struct rdmalog_conn *conn;
	struct rdmalog_ep *ep;

	memset(c, 0, sizeof(*c));
	mutex_lock(&rdmalog_conns.mutex);
	list_for_each_entry(conn, &rdmalog_conns.list, list) {
		mutex_lock(&conn->lock);
		ep = conn->ep;
		if (ep && ep->established && !ep->closing &&
		    test_bit(RDMALOG_EP_HELLO, &ep->flags)) {
			/* Pairs with the barrier before the HELLO bit is set. */
			smp_rmb();
			c->heard++;
			if (test_bit(RDMALOG_EP_PEER_PRIMARY, &ep->flags))
				c->primaries++;
			if (READ_ONCE(ep->peer_log_id))
				c->with_log++;
		}
		mutex_unlock(&conn->lock);
	}
	mutex_unlock(&rdmalog_conns.mutex);
}

/* ------------------------------------------------------------------ */
/* Our role, and a change of it that keeps the connections */

/**
 * rdmalog_conn_set_role() - the role announced in later HELLOs
 * @role: &enum rdmalog_role
 */
void rdmalog_conn_set_role(u32 role)
{
	WRITE_ONCE(rdmalog_conns.role, role);
}

/**
 * rdmalog_conn_role_begin() - a change of role that keeps the connections
 * starts: our ring is granted to nobody until rdmalog_conn_role_end()
 *
 * This is what keeps the premise of rdmalog_log_lead() and
 * rdmalog_log_step_down() (nothing writes the ring: no primary holds it)
 * while the connections stay: a grant that comes meanwhile (a peer's
 * HELLO or LEAD says primary) is deferred by rdmalog_ring_hold(), and
 * granted again by the end if we stay a backup. Process context.
 *
 * Return: 0; or -EBUSY, and nothing changed, when a primary holds our
 * ring (one of an epoch at or above our fence: it took our log).
 */
int rdmalog_conn_role_begin(void)
{
	int err = 0;

	spin_lock_bh(&rdmalog_conns.ring_lock);
	if (rdmalog_conns.ring_holder)
		err = -EBUSY;
	else
		rdmalog_conns.changing = true;
	spin_unlock_bh(&rdmalog_conns.ring_lock);
	return err;
}

/*
 * Whether @ep, established and told nothing of our new role yet, may be
 * told by LEAD that we lead @epoch; if not, it is closed (its peer
 * reconnects and reads our role in our HELLO). Conn lock held.
 */
static bool rdmalog_conn_may_lead(struct rdmalog_ep *ep, u64 epoch)
{
	const char *why;

	lockdep_assert_held(&ep->conn->lock);
	/* Told in another epoch: K2, a step-down closes the connection. */
	if (ep->lead_epoch) {
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "it knows this node as the primary of epoch %llu",
				 ep->lead_epoch);
		return false;
	}
	/* Our HELLO (backup) went out after the epoch changed. */
	if (ep->hello_tx_epoch >= epoch) {
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "our HELLO said backup in epoch %llu",
				 ep->hello_tx_epoch);
		return false;
	}
	/* K1: a grant ends only with its connection; none is left here. */
	if (WARN_ON_ONCE(test_bit(RDMALOG_EP_RING_REG, &ep->flags) ||
			 rdmalog_ring_is_holder(ep))) {
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "it was granted our ring");
		return false;
	}
	why = rdmalog_ep_get_ops()->role_check(ep);
	if (why) {
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "cannot be kept by the primary: %s", why);
		return false;
	}
	return true;
}

/*
 * Keep @ep for the primary of @epoch we now are, or close it. Conn lock
 * held; sleeps (the catch-up grant's MR). Return: 1, a LEAD was posted;
 * 0, kept without one (not established yet: our HELLO will say primary;
 * or it said so already); -1, closed.
 */
static int rdmalog_conn_lead_ep(struct rdmalog_ep *ep, u64 epoch)
{
	/* Its HELLO is sent with ESTABLISHED, under this lock. */
	bool lead = ep->established && ep->lead_epoch != epoch;
	int err;

	lockdep_assert_held(&ep->conn->lock);
	if (lead && !rdmalog_conn_may_lead(ep, epoch))
		return -1;
	/*
	 * Set up as a backup's (one not set up yet sets up as ours; one
	 * whose HELLO said primary did so before it). Nothing uses its
	 * registrations now: no catch-up (role_check), no grant.
	 */
	err = rdmalog_ring_mr_setup_primary(ep);
	if (err) {
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "cannot set up a catch-up grant: error %d",
				 err);
		return -1;
	}
	if (!lead)
		return 0;
	err = rdmalog_ep_send_lead(ep);
	if (err) {
		rdmalog_ep_close(ep, RDMALOG_PEER_DISCONNECTED,
				 "cannot send LEAD: error %d", err);
		return -1;
	}
	return 1;
}

/* We stay (or become) a backup: grant a primary deferred by the change. */
static void rdmalog_conn_regrant_ep(struct rdmalog_ep *ep)
{
	const char *why;

	lockdep_assert_held(&ep->conn->lock);
	if (!ep->established)
		return;
	local_bh_disable();
	why = rdmalog_ep_maybe_grant_ring(ep);
	local_bh_enable();
	if (why)
		rdmalog_ep_error(ep, "%s", why);
}

/**
 * rdmalog_conn_role_end() - the change of role is done: fit every kept
 * connection to it
 * @role: our role from now on (&enum rdmalog_role)
 * @epoch: our epoch from now on (a new primary's: the epoch it leads)
 * @leads: out: the LEADs posted
 * @closed: out: the endpoints closed because they could not be kept
 *
 * Ends rdmalog_conn_role_begin(): the epoch first, then, under
 * &rdmalog_conns.ring_lock, the role and the end of the change (a HELLO
 * that says primary is thus of @epoch, and a grant either was deferred
 * and is granted again below, or sees the new role). Then, under
 * &rdmalog_conns.mutex and each conn's lock, every current endpoint that
 * is not closing: a primary sets up its catch-up grant, checks that the
 * endpoint carries nothing of the old role (K1 here, the users'
 * &rdmalog_ep_ops.role_check) and sends a LEAD where its HELLO said
 * backup, once per endpoint; one that fails any of them is closed, and
 * its peer reconnects and reads the role in our HELLO (the fallback of
 * every failure). A backup grants a primary whose grant the change
 * deferred. Endpoints established after a conn was passed send a HELLO
 * in the new role. Process context, no conn lock held (the node's
 * config_mutex may be); sleeps.
 */
void rdmalog_conn_role_end(u32 role, u64 epoch, u32 *leads, u32 *closed)
{
	struct rdmalog_conn *conn;
	struct rdmalog_ep *ep;
	int kept;

	*leads = 0;
	*closed = 0;
	mutex_lock(&rdmalog_conns.mutex);
	atomic64_set(&rdmalog_conns.epoch, epoch);
	spin_lock_bh(&rdmalog_conns.ring_lock);
	/* After the epoch: pairs with rdmalog_ep_send_hello()'s acquire. */
	smp_store_release(&rdmalog_conns.role, role);
	rdmalog_conns.changing = false;
	spin_unlock_bh(&rdmalog_conns.ring_lock);
	list_for_each_entry(conn, &rdmalog_conns.list, list) {
		mutex_lock(&conn->lock);
		ep = conn->ep;
		if (ep && !ep->closing && role == RDMALOG_ROLE_PRIMARY) {
			kept = rdmalog_conn_lead_ep(ep, epoch);
			if (kept > 0)
				(*leads)++;
			else if (kept < 0)
				(*closed)++;
		} else if (ep && !ep->closing) {
			rdmalog_conn_regrant_ep(ep);
		}
		mutex_unlock(&conn->lock);
	}
	mutex_unlock(&rdmalog_conns.mutex);
}
