/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - tracepoints (trace system "rdmalog"), for ftrace and perf:
 * they follow one record from its append on the primary through its
 * replication and commit to its apply on each backup.
 *
 *   rdmalog_append      a record is about to be published (primary or a
 *                       node that appends locally)
 *   rdmalog_post        a batch of RDMA WRITEs and its notice was posted
 *                       to a backup (primary)
 *   rdmalog_completion  a notice completed (primary)
 *   rdmalog_commit      the commit LSN moved (primary)
 *   rdmalog_apply       a backup verified and published records
 *   rdmalog_fwd         a forwarded append finished (backup) or was
 *                       answered (primary)
 *
 * LSN ranges are half-open: a record with LSN n is covered by a post or a
 * completion whose end_lsn is above n, by a commit with old <= n < new and
 * by an apply with from_lsn <= n < to_lsn. A record's stream position
 * (rdmalog_append's pos) lies in [from, to) of the post that carried it.
 *
 * Every event may be emitted in any context, with spinlocks held (they
 * only copy their arguments); none of them takes a lock.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rdmalog

#if !defined(_RDMALOG_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RDMALOG_TRACE_H

#include <linux/tracepoint.h>
#include <linux/types.h>

/**
 * rdmalog_append - a record is filled in and about to be published
 * @lsn: its LSN
 * @len: its payload bytes
 * @pos: the stream position of its header
 */
TRACE_EVENT(rdmalog_append,
	    TP_PROTO(u64 lsn, u32 len, u64 pos),
	    TP_ARGS(lsn, len, pos),
	    TP_STRUCT__entry(__field(u64, lsn)
			     __field(u64, pos)
			     __field(u32, len)),
	    TP_fast_assign(__entry->lsn = lsn;
			   __entry->pos = pos;
			   __entry->len = len;),
	    TP_printk("lsn=%llu len=%u pos=%llu",
		      __entry->lsn, __entry->len, __entry->pos)
);

/**
 * rdmalog_post - WRITEs and the notice that closes them were posted
 * @peer: the backup's node id
 * @from: first stream position written
 * @to: stream position after the last one written (@from when the notice
 *	only carries a new commit LSN)
 * @bytes: bytes written (@to - @from)
 * @writes: RDMA WRITEs posted
 * @end_lsn: the notice's next LSN: the backup holds every record below it
 *	once the notice completes
 */
TRACE_EVENT(rdmalog_post,
	    TP_PROTO(u32 peer, u64 from, u64 to, u64 bytes, u32 writes,
		     u64 end_lsn),
	    TP_ARGS(peer, from, to, bytes, writes, end_lsn),
	    TP_STRUCT__entry(__field(u64, from)
			     __field(u64, to)
			     __field(u64, bytes)
			     __field(u64, end_lsn)
			     __field(u32, peer)
			     __field(u32, writes)),
	    TP_fast_assign(__entry->from = from;
			   __entry->to = to;
			   __entry->bytes = bytes;
			   __entry->end_lsn = end_lsn;
			   __entry->peer = peer;
			   __entry->writes = writes;),
	    TP_printk("peer=%u from=%llu to=%llu bytes=%llu writes=%u end_lsn=%llu",
		      __entry->peer, __entry->from, __entry->to, __entry->bytes,
		      __entry->writes, __entry->end_lsn)
);

/**
 * rdmalog_completion - a notice (and the WRITEs before it) completed
 * @peer: the backup's node id
 * @end_lsn: the notice's next LSN
 * @ok: the completion succeeded (false: flushed or failed)
 */
TRACE_EVENT(rdmalog_completion,
	    TP_PROTO(u32 peer, u64 end_lsn, bool ok),
	    TP_ARGS(peer, end_lsn, ok),
	    TP_STRUCT__entry(__field(u64, end_lsn)
			     __field(u32, peer)
			     __field(bool, ok)),
	    TP_fast_assign(__entry->end_lsn = end_lsn;
			   __entry->peer = peer;
			   __entry->ok = ok;),
	    TP_printk("peer=%u end_lsn=%llu ok=%d",
		      __entry->peer, __entry->end_lsn, __entry->ok)
);

/**
 * rdmalog_commit - the commit LSN moved
 * @old: the commit LSN before
 * @new: the commit LSN now: records [@old, @new) are committed
 */
TRACE_EVENT(rdmalog_commit,
	    TP_PROTO(u64 old, u64 new),
	    TP_ARGS(old, new),
	    TP_STRUCT__entry(__field(u64, old)
			     __field(u64, new)),
	    TP_fast_assign(__entry->old = old;
			   __entry->new = new;),
	    TP_printk("old=%llu new=%llu",
		      __entry->old, __entry->new)
);

/**
 * rdmalog_apply - a backup verified and published committed records
 * @from_lsn: the first of them
 * @to_lsn: the LSN after the last: its next and commit LSN now
 */
TRACE_EVENT(rdmalog_apply,
	    TP_PROTO(u64 from_lsn, u64 to_lsn),
	    TP_ARGS(from_lsn, to_lsn),
	    TP_STRUCT__entry(__field(u64, from_lsn)
			     __field(u64, to_lsn)),
	    TP_fast_assign(__entry->from_lsn = from_lsn;
			   __entry->to_lsn = to_lsn;),
	    TP_printk("from_lsn=%llu to_lsn=%llu",
		      __entry->from_lsn, __entry->to_lsn)
);

/**
 * rdmalog_fwd - a forwarded append finished (on the backup that forwarded
 * it) or was answered (on the primary)
 * @peer: the other node's id
 * @req_id: the request's id on the connection
 * @len: payload bytes (0 on the backup: the answer does not carry it)
 * @status: 0 or a negative errno
 */
TRACE_EVENT(rdmalog_fwd,
	    TP_PROTO(u32 peer, u64 req_id, u32 len, int status),
	    TP_ARGS(peer, req_id, len, status),
	    TP_STRUCT__entry(__field(u64, req_id)
			     __field(u32, peer)
			     __field(u32, len)
			     __field(int, status)),
	    TP_fast_assign(__entry->req_id = req_id;
			   __entry->peer = peer;
			   __entry->len = len;
			   __entry->status = status;),
	    TP_printk("peer=%u req_id=%llu len=%u status=%d",
		      __entry->peer, __entry->req_id, __entry->len,
		      __entry->status)
);

#endif /* _RDMALOG_TRACE_H */

/* define_trace.h includes this file again, from -I$(src)/kmod (Kbuild). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
