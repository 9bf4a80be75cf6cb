/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - test-only delay points. A few places where a race with a
 * completion handler or an endpoint's release is possible but rarely
 * hit can be made to sleep, so that a selftest forces the interleaving
 * (Documentation/testing.rst, "Delay points"). Each point is a module
 * parameter inject_<point>_ms (root only, 0600), 0 (off) by default; a
 * point sleeps only in process context and never holds a lock there.
 */
#ifndef _RDMALOG_INJECT_H
#define _RDMALOG_INJECT_H

/**
 * enum rdmalog_inject_point - the delay points
 * @RDMALOG_INJ_CU_POST: (backup) catch-up READ posting from the work,
 *	between reserving a READ's range and posting it
 * @RDMALOG_INJ_CU_GRANT: (primary) mapping a catch-up read grant, between
 *	a registration's new key and its mapping (in process context: a
 *	backup judged again after its JOIN, that must restart its log)
 * @RDMALOG_INJ_CU_JOIN: (backup) the catch-up work, just after it sent
 *	its JOIN
 * @__RDMALOG_INJ_MAX: the number of points
 */
enum rdmalog_inject_point {
	RDMALOG_INJ_CU_POST,
	RDMALOG_INJ_CU_GRANT,
	RDMALOG_INJ_CU_JOIN,
	__RDMALOG_INJ_MAX,
};

void rdmalog_inject_delay(enum rdmalog_inject_point point);

#endif /* _RDMALOG_INJECT_H */
