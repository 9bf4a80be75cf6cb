/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - a log's ring, DMA-mapped once per RDMA device (ring_map.c).
 *
 * Every endpoint on a device shares one mapping of the ring: the backup's
 * registrations for the primary's WRITEs and for its own catch-up READs,
 * the primary's read grants and the source of its replication WRITEs.
 * The mapping is DMA_BIDIRECTIONAL and long-lived, so whoever hands ring
 * bytes between the CPU and the device says so with
 * rdmalog_ring_map_sync() (Documentation/protocol.rst, "DMA").
 */
#ifndef _RDMALOG_RING_MAP_H
#define _RDMALOG_RING_MAP_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/scatterlist.h>
#include <linux/types.h>

struct rdmalog_log;
struct rdmalog_rdev;

/**
 * struct rdmalog_ring_map_reg - the part of the ring one MR covers
 * @sgt: its pieces, DMA-mapped (@nents entries)
 * @nents: mapped entries of @sgt (what ib_map_mr_sg() takes)
 * @pages: MR pages it needs (what ib_alloc_mr() takes)
 * @start: the ring offset of its first byte
 * @len: ring bytes it covers
 */
struct rdmalog_ring_map_reg {
	struct sg_table sgt;
	int nents;
	u32 pages;
	u64 start;
	u64 len;
};

/**
 * struct rdmalog_ring_map - a log's ring mapped for one RDMA device
 * @node: entry on the map list (ring_map.c), under its mutex
 * @ref: one per user (an endpoint); the last rdmalog_ring_map_put()
 *	unmaps and frees it, and drops @rdev and @log
 * @rdev: the device (a reference)
 * @log: the log (a reference: its ring's pages outlive the mapping)
 * @capacity: ring bytes
 * @piece: bytes per piece, a power of two that divides a chunk: what one
 *	scatterlist entry maps, so no piece straddles two chunks
 * @nr_pieces: pieces in the ring (the last may be short)
 * @piece_dma: the DMA address of each piece
 * @virt: the device uses virtual DMA (rxe, siw): addresses are kernel
 *	virtual addresses, and syncing does nothing
 * @page_size: MR page size of every registration
 * @reg_why: NULL when the ring can be registered (@regs, for MRs of
 *	@page_size pages), else why not (static text); the mapping itself
 *	still serves as the source of replication WRITEs
 * @reg_pieces: the most pieces one registration covers (the entries
 *	rdmalog_ring_map_fill_sg() may fill)
 * @nr_regs: entries of @regs, in ring order, at most
 *	%RDMALOG_RING_MAX_SEGS - 1 (a read grant may split one in two)
 * @regs: the registrations' scatterlists
 *
 * Everything but @node and @ref is written once at creation and
 * read-only afterwards: any context may read it while holding a
 * reference.
 */
struct rdmalog_ring_map {
	struct list_head node;
	struct kref ref;
	struct rdmalog_rdev *rdev;
	struct rdmalog_log *log;
	u64 capacity;
	u64 piece;
	unsigned long nr_pieces;
	u64 *piece_dma;
	bool virt;
	unsigned int page_size;
	const char *reg_why;
	unsigned int reg_pieces;
	unsigned int nr_regs;
	struct rdmalog_ring_map_reg regs[];
};

/*
 * The mapping of @log's ring for @rdev, with a reference the caller drops
 * with rdmalog_ring_map_put(); created (and mapped) on first use.
 * Process context. Return: the map, or ERR_PTR(-ENOMEM/-ENODEV/-EIO) with *@why
 * set (static text).
 */
struct rdmalog_ring_map *rdmalog_ring_map_get(struct rdmalog_rdev *rdev,
					      struct rdmalog_log *log,
					      const char **why);
/* Drop a reference; the last one unmaps. Process context. */
void rdmalog_ring_map_put(struct rdmalog_ring_map *map);

/*
 * The DMA address of ring offset @off (< capacity); *@room: the bytes
 * from there that are DMA-contiguous (to the end of its piece).
 */
u64 rdmalog_ring_map_dma(const struct rdmalog_ring_map *map, u64 off,
			 u64 *room);

/*
 * Hand the ring bytes of stream positions [@pos, @pos + @len) (@len at
 * most the capacity; they may wrap) to the CPU (@for_cpu: the device
 * wrote them: a peer's WRITE, our READ) or to the device (it reads them
 * next: a WRITE's source, a read grant). Any context; nothing on devices
 * with virtual DMA.
 */
void rdmalog_ring_map_sync(const struct rdmalog_ring_map *map, u64 pos,
			   u64 len, bool for_cpu);

/*
 * Describe ring offsets [@lo, @hi) (inside one registration, @lo < @hi) in
 * @sg, an array of at least @map->reg_pieces entries, for ib_map_mr_sg():
 * the DMA addresses and lengths of the pieces, byte-exact (the first may
 * start inside a piece, the last end inside one). Any context.
 * Return: the entries filled (@sg is terminated after them).
 */
unsigned int rdmalog_ring_map_fill_sg(const struct rdmalog_ring_map *map,
				      u64 lo, u64 hi, struct scatterlist *sg);

void rdmalog_ring_map_exit(void);

#endif /* _RDMALOG_RING_MAP_H */
