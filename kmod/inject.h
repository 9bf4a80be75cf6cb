/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - test-only delay points. A few places where a race with a
 * completion handler or an endpoint's release is possible but rarely
 * hit can be made to sleep, so that a selftest forces the interleaving
 * (Documentation/testing.rst, "Delay points"). Each point is a module
 * parameter inject_<point>_ms (root only, 0600), 0 (off) by default; a
 * point sleeps only in process context with BH enabled and never holds
 * a lock of ours there. The parameter inject_sleeping (read only) counts
 * the passes sleeping at a point now, so that a test knows it is inside
 * one.
 */
#ifndef _RDMALOG_INJECT_H
#define _RDMALOG_INJECT_H

/**
 * enum rdmalog_inject_point - the delay points
 * @RDMALOG_INJ_CU_POST: (backup) catch-up READ posting from the work,
 *	between reserving a READ's range and posting it
 * @RDMALOG_INJ_CU_GRANT: (primary) mapping the read grant of a RESET
 *	round, between a registration's new key and its mapping
 * @RDMALOG_INJ_CU_RING: (primary) the catch-up work, before it judges a
 *	backup whose RING arrived (not one that joined in the completion
 *	handler after our epoch-start record)
 * @RDMALOG_INJ_CU_JOIN: (backup) the catch-up work, just after it sent
 *	its JOIN
 * @RDMALOG_INJ_LOG_TRUNCATE: a writer whose commit timed out, before it
 *	removes the uncommitted records (rdmalog_log_truncate())
 * @RDMALOG_INJ_LOG_FILL: an appender that reserved ring space, before it
 *	writes the record there
 * @RDMALOG_INJ_REPL_APPLY: (backup) the apply work, before it takes the
 *	primary's latest notice and applies it (also a reader's demand)
 * @RDMALOG_INJ_NOTICE_TAKE: (backup) taking a notice, between its look
 *	at the latest NOTIFY's number and its read of the notice block
 * @RDMALOG_INJ_FWD_ANSWER: (primary) a forwarded append served, before
 *	its FWD_DONE is sent
 * @RDMALOG_INJ_ELECT_LEAD: a node that won an election, before it takes
 *	the node's mutex to lead
 * @RDMALOG_INJ_ELECT_ANSWER: a voter's work answering a VOTE_REQ, before
 *	it judges it
 * @RDMALOG_INJ_ELECT_BEAT: the election's heartbeat work (which reads an
 *	open ballot word), before it takes the vote mutex
 * @RDMALOG_INJ_ELECT_CAS: a candidate that judged a peer's ballot word
 *	(from what it read) to grant its vote, before its compare-and-swap
 * @RDMALOG_INJ_EP_ADDR: an outgoing attempt whose peer's address resolved,
 *	before it takes its conn's lock (the endpoint has no device, PD or
 *	QP yet). This one sleeps in the rdma_cm's handler, holding the id's
 *	handler mutex and the rdma_cm's (ordered) address work: every other
 *	address resolution of the node waits behind it
 * @__RDMALOG_INJ_MAX: the number of points
 */
enum rdmalog_inject_point {
	RDMALOG_INJ_CU_POST,
	RDMALOG_INJ_CU_GRANT,
	RDMALOG_INJ_CU_RING,
	RDMALOG_INJ_CU_JOIN,
	RDMALOG_INJ_LOG_TRUNCATE,
	RDMALOG_INJ_LOG_FILL,
	RDMALOG_INJ_REPL_APPLY,
	RDMALOG_INJ_FWD_ANSWER,
	RDMALOG_INJ_ELECT_LEAD,
	RDMALOG_INJ_ELECT_ANSWER,
	RDMALOG_INJ_ELECT_BEAT,
	RDMALOG_INJ_ELECT_CAS,
	RDMALOG_INJ_NOTICE_TAKE,
	RDMALOG_INJ_EP_ADDR,
	__RDMALOG_INJ_MAX,
};

void rdmalog_inject_delay(enum rdmalog_inject_point point);

/**
 * enum rdmalog_inject_fail_point - test-only failures: parameter
 * inject_<point>_fail is how many of the next passes fail
 * @RDMALOG_INJ_FAIL_ACK: a backup's ACK is not sent, as when it has no
 *	send buffer or credit
 * @RDMALOG_INJ_FAIL_QP_ERROR: the heartbeat work moves the QP of its
 *	connection to the error state without closing it (as rxe does when
 *	a local operation fails)
 * @RDMALOG_INJ_FAIL_BALLOT_LOOPBACK: an atomic on the ballot word's
 *	loopback fails without being posted, as when the loopback is lost
 * @RDMALOG_INJ_FAIL_LEAD: a LEAD of a node that starts to lead is not
 *	posted, as when it has no send buffer or credit (its connection is
 *	closed, and the peer reconnects)
 * @RDMALOG_INJ_FAIL_BALLOT_ANNOUNCE: a HEARTBEAT announces the open
 *	ballot word's block with the sequence before the word's, as a block
 *	of its previous opening would be: a candidate's read of the word
 *	matches no block it was told, and it reads the block
 * @__RDMALOG_INJ_FAIL_MAX: the number of points
 */
enum rdmalog_inject_fail_point {
	RDMALOG_INJ_FAIL_ACK,
	RDMALOG_INJ_FAIL_QP_ERROR,
	RDMALOG_INJ_FAIL_BALLOT_LOOPBACK,
	RDMALOG_INJ_FAIL_LEAD,
	RDMALOG_INJ_FAIL_BALLOT_ANNOUNCE,
	__RDMALOG_INJ_FAIL_MAX,
};

/* True when this pass is to fail (and counts it). Any context. */
bool rdmalog_inject_fail(enum rdmalog_inject_fail_point point);

#endif /* _RDMALOG_INJECT_H */
