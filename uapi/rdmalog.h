/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rdmalog - replicated append-only log over RDMA: the character-device ABI.
 *
 * /dev/rdmalog exposes one log. Each write() or writev() appends exactly
 * one record and returns once the record is durable per the configured
 * durability mode. Each read() returns exactly one whole record at the
 * descriptor's cursor. The cursor (the file position) is an LSN, not a byte
 * offset. Documentation/device.rst states every return value.
 *
 * All structures here are fixed-size. Each ioctl argument carries a
 * @version field that callers set to the version they were built against
 * (RDMALOG_IOC_VERSION); reserved fields must be zero on input and are
 * zeroed on output, so they can gain meaning later without a new ioctl.
 */
#ifndef _UAPI_RDMALOG_H
#define _UAPI_RDMALOG_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/const.h>

/** RDMALOG_DEV_NAME - name of the character device under /dev */
#define RDMALOG_DEV_NAME	"rdmalog"

/** RDMALOG_IOC_VERSION - version of the ioctl structures in this header */
#define RDMALOG_IOC_VERSION	1

/** RDMALOG_LSN_INVALID - "no record": LSNs are assigned from 1 upwards */
#define RDMALOG_LSN_INVALID	0ULL

/**
 * enum rdmalog_role - the part a node plays in its cluster
 * @RDMALOG_ROLE_NONE: no role; never reported: a node's role is
 *	%RDMALOG_ROLE_PRIMARY until it is set
 * @RDMALOG_ROLE_PRIMARY: orders and appends records; the only writer of
 *	the log; writes on other nodes are forwarded to it
 * @RDMALOG_ROLE_BACKUP: holds a copy of the primary's log
 */
enum rdmalog_role {
	RDMALOG_ROLE_NONE = 0,
	RDMALOG_ROLE_PRIMARY = 1,
	RDMALOG_ROLE_BACKUP = 2,
};

/**
 * enum rdmalog_durability - when an append counts as committed
 * @RDMALOG_DURABLE_ASYNC: once it is in the local ring
 * @RDMALOG_DURABLE_QUORUM: once a majority of the configured nodes (the
 *	primary counted) hold it
 * @RDMALOG_DURABLE_ALL: once every configured node holds it
 */
enum rdmalog_durability {
	RDMALOG_DURABLE_ASYNC = 0,
	RDMALOG_DURABLE_QUORUM = 1,
	RDMALOG_DURABLE_ALL = 2,
};

/**
 * struct rdmalog_record_header - a record's header as returned to users
 * @lsn: log sequence number: unique, monotonic, gapless, from 1
 * @epoch: epoch of the primary that appended the record
 * @timestamp_ns: CLOCK_REALTIME of the append on the primary, in ns
 * @len: payload length in bytes (1 .. max_record)
 * @crc32c: CRC32C (Castagnoli, seed ~0, final xor ~0) of the payload
 * @flags: %RDMALOG_RECORD_EPOCH_START, or 0 for an application's record
 * @reserved: zero
 *
 * The same fields are stored, little-endian, in front of every record in
 * the ring; Documentation/device.rst gives the exact byte layout.
 */
struct rdmalog_record_header {
	__u64 lsn;
	__u64 epoch;
	__u64 timestamp_ns;
	__u32 len;
	__u32 crc32c;
	__u32 flags;
	__u32 reserved;
};

/**
 * RDMALOG_RECORD_EPOCH_START - record flag: the first record of a primary
 * that won an election. Its payload is 8 bytes, the epoch it leads
 * (little-endian, the same as the header's); it is committed before any
 * application record of that epoch. read() returns it like any record;
 * %RDMALOG_IOC_READ_RECORD shows the flag, so readers that want only
 * their applications' records skip it there.
 */
#define RDMALOG_RECORD_EPOCH_START	0x1

/** RDMALOG_RECORD_MAGIC - first word of every record in the ring ("RDLG") */
#define RDMALOG_RECORD_MAGIC	0x474c4452U
/** RDMALOG_RECORD_VERSION - layout version of &struct rdmalog_ring_record */
#define RDMALOG_RECORD_VERSION	1
/** RDMALOG_RECORD_ALIGN - records start at multiples of this in the stream */
#define RDMALOG_RECORD_ALIGN	8

/**
 * struct rdmalog_ring_record - a record's header as stored in the ring and
 * sent to peers; all fields little-endian
 * @magic: %RDMALOG_RECORD_MAGIC
 * @version: %RDMALOG_RECORD_VERSION
 * @flags: %RDMALOG_RECORD_EPOCH_START or 0; a reader rejects any other
 * @len: payload length in bytes; the payload follows the header
 * @data_crc: CRC32C of the payload
 * @lsn: the record's LSN
 * @epoch: epoch of the primary that appended it
 * @timestamp_ns: CLOCK_REALTIME of the append on the primary
 * @gen: the primary's truncation generation when it appended the record:
 *	it grows each time the primary removes uncommitted records (a
 *	commit timeout), so along a log it never decreases, and a removed
 *	record left in a backup's ring after a rewritten one is told apart
 *	(0 until the first removal)
 * @hdr_crc: CRC32C of the 44 bytes before this field
 *
 * The ring is a byte stream: the record with LSN 1 starts at stream
 * position 0, each record occupies ALIGN(sizeof(header) + len,
 * %RDMALOG_RECORD_ALIGN) bytes, and the next one starts right after it.
 * Stream position P lives at byte P mod capacity of the ring, so a record
 * (header included) may wrap around the ring's end.
 */
struct rdmalog_ring_record {
	__le32 magic;
	__le16 version;
	__le16 flags;
	__le32 len;
	__le32 data_crc;
	__le64 lsn;
	__le64 epoch;
	__le64 timestamp_ns;
	__le32 gen;
	__le32 hdr_crc;
};

/**
 * struct rdmalog_read_record - argument of %RDMALOG_IOC_READ_RECORD
 * @version: in: %RDMALOG_IOC_VERSION
 * @flags: in: %RDMALOG_RR_AT_CURSOR or 0
 * @lsn: in: the LSN to read, ignored with %RDMALOG_RR_AT_CURSOR;
 *	out: the LSN read
 * @buf: in: user address of the payload buffer
 * @buf_len: in: size of @buf; out: unchanged
 * @reserved: zero
 * @hdr: out: the record's header; hdr.len is the payload length, also
 *	set when the call fails with -EMSGSIZE
 *
 * Without %RDMALOG_RR_AT_CURSOR the cursor is neither used nor moved and
 * the call never blocks: an LSN not yet committed gives -ENODATA. With it,
 * the call behaves as read() (blocking unless O_NONBLOCK) and advances the
 * cursor past the record on success.
 */
struct rdmalog_read_record {
	__u32 version;
	__u32 flags;
	__u64 lsn;
	__u64 buf;
	__u32 buf_len;
	__u32 reserved;
	struct rdmalog_record_header hdr;
};

/** RDMALOG_RR_AT_CURSOR - read at the descriptor's cursor and advance it */
#define RDMALOG_RR_AT_CURSOR	_BITUL(0)

/** RDMALOG_STATE_UP - the log is up (configured and serving) */
#define RDMALOG_STATE_UP	_BITUL(0)
/**
 * RDMALOG_STATE_DURABILITY_DEGRADED - fewer backups are in sync than the
 * durability mode asked for needs: appends wait for them, up to the commit
 * timeout, and then fail with ETIMEDOUT (never set on a backup or while
 * the log is down)
 */
#define RDMALOG_STATE_DURABILITY_DEGRADED	_BITUL(1)

/**
 * struct rdmalog_state - argument of %RDMALOG_IOC_GET_STATE
 * @version: in: %RDMALOG_IOC_VERSION; out: the kernel's version
 * @flags: out: %RDMALOG_STATE_UP, %RDMALOG_STATE_DURABILITY_DEGRADED
 * @first_lsn: out: LSN of the oldest retained record; equals @next_lsn
 *	when the log holds no record
 * @commit_lsn: out: every record with an LSN below it is committed; it is
 *	the next LSN to be committed (what lseek(SEEK_END) returns)
 * @next_lsn: out: the LSN the next append will get
 * @capacity: out: ring size in bytes
 * @used: out: bytes of the ring held by retained records
 * @max_record: out: largest payload accepted, in bytes
 * @epoch: out: the epoch of the log's records (a primary's: its own; a
 *	backup's: its primary's, 0 until it follows one); while down, the
 *	epoch of this node's last log as a primary
 * @node_id: out: this node's id (0 if not configured)
 * @role: out: &enum rdmalog_role
 * @durability: out: &enum rdmalog_durability configured
 * @reserved: zero
 */
struct rdmalog_state {
	__u32 version;
	__u32 flags;
	__u64 first_lsn;
	__u64 commit_lsn;
	__u64 next_lsn;
	__u64 capacity;
	__u64 used;
	__u64 max_record;
	__u64 epoch;
	__u32 node_id;
	__u32 role;
	__u32 durability;
	__u32 reserved[7];
};

/** RDMALOG_IOC_MAGIC - ioctl type byte of rdmalog */
#define RDMALOG_IOC_MAGIC	0xd7

/**
 * RDMALOG_IOC_GET_STATE - fill a &struct rdmalog_state. Any descriptor.
 */
#define RDMALOG_IOC_GET_STATE	_IOWR(RDMALOG_IOC_MAGIC, 1, struct rdmalog_state)

/**
 * RDMALOG_IOC_READ_RECORD - read one record with its header, see
 * &struct rdmalog_read_record. Needs a descriptor opened for reading.
 */
#define RDMALOG_IOC_READ_RECORD	_IOWR(RDMALOG_IOC_MAGIC, 2, struct rdmalog_read_record)

/**
 * RDMALOG_IOC_LAST_LSN - store in the __u64 argument the LSN of this
 * descriptor's last successful append, or %RDMALOG_LSN_INVALID if none.
 */
#define RDMALOG_IOC_LAST_LSN	_IOR(RDMALOG_IOC_MAGIC, 3, __u64)

/**
 * RDMALOG_IOC_TRIM - discard every record with an LSN below the __u64
 * argument, which becomes the oldest retained LSN. Needs CAP_NET_ADMIN.
 * An LSN at or below the oldest retained one is a no-op; one above the
 * commit LSN fails with -ERANGE.
 */
#define RDMALOG_IOC_TRIM	_IOW(RDMALOG_IOC_MAGIC, 4, __u64)

#endif /* _UAPI_RDMALOG_H */
