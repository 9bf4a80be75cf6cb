// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - a log's ring, DMA-mapped once per RDMA device.
 *
 * The ring is a run of physically contiguous chunks of equal size (log.c:
 * 4 MiB, fewer on fragmentation or for odd capacities). It is mapped in
 * pieces, one scatterlist entry each: a whole chunk, or (on devices with
 * short MR page lists, such as siw: 256 pages of 4 KiB) the largest power
 * of two of MR pages they take. The pieces are grouped into the parts one
 * FRWR MR covers: as many pieces as max_fast_reg_page_list_len allows
 * (and %RDMALOG_RING_SEG_MAX bytes at most), the MR page size being the
 * largest the device takes (page_size_cap) up to the chunk size: on rxe,
 * 512 chunks of 4 MiB, so the default 64 MiB ring is one MR and a 16 GiB
 * ring eight; on siw, 1 MiB per MR, so rings up to 10 MiB. A ring that
 * would need more than %RDMALOG_RING_MSG_SEGS MRs (only when the
 * allocation had to fall back to small chunks: with 4 KiB pages, 20 MiB
 * on rxe) cannot be registered (@reg_why says why); it is still mapped,
 * as the source of the replication WRITEs.
 *
 * The MRs themselves are per connection (ring_mr.c, catchup.c: their keys
 * are good on one queue pair only); they all map these scatterlists.
 *
 * Locking: rdmalog_ring_maps.mutex guards the list and the references'
 * last drop; a map's fields are read-only once it is on the list.
 * Lock order: a connection's lock, then this mutex (a leaf).
 */
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "ep.h"
#include "log.h"
#include "rdma_dev.h"
#include "ring_map.h"

static struct {
	struct mutex mutex;	/* the list, and the last put */
	struct list_head maps;
} rdmalog_ring_maps = {
	.mutex = __MUTEX_INITIALIZER(rdmalog_ring_maps.mutex),
	.maps = LIST_HEAD_INIT(rdmalog_ring_maps.maps),
};

/* Pieces per MR and MR page size, or why the ring cannot be registered. */
static const char *rdmalog_ring_map_geometry(const struct rdmalog_rdev *rdev,
					     const struct rdmalog_ring_mem *mem,
					     unsigned int *page_size,
					     u64 *piece, unsigned long *per_mr)
{
	u64 chunk = PAGE_SIZE << mem->chunk_order, sizes;
	unsigned long nr_pieces;

	if (!rdev->frwr)
		return "the RDMA device has no fast registration";
	/* MR page sizes from PAGE_SIZE up to the chunk size. */
	sizes = rdev->ibdev->attrs.page_size_cap &
		GENMASK_ULL(PAGE_SHIFT + mem->chunk_order, PAGE_SHIFT);
	if (!sizes)
		return "the RDMA device takes no MR page size of the ring's chunks";
	if (!rdev->max_fast_reg_pages)
		return "the RDMA device registers no pages";
	*page_size = 1U << (fls64(sizes) - 1);
	*piece = min_t(u64, chunk, (u64)*page_size <<
		       ilog2(rdev->max_fast_reg_pages));
	nr_pieces = DIV_ROUND_UP_ULL(mem->capacity, *piece);
	*per_mr = rdev->max_fast_reg_pages / (*piece / *page_size);
	*per_mr = min_t(unsigned long, *per_mr, RDMALOG_RING_SEG_MAX / *piece);
	/* What a RING describes (a read grant may split one MR in two). */
	if (DIV_ROUND_UP(nr_pieces, *per_mr) > RDMALOG_RING_MSG_SEGS)
		return "the ring needs more MRs than a RING describes: use a smaller ring";
	return NULL;
}

static void rdmalog_ring_map_free(struct rdmalog_ring_map *map)
{
	struct ib_device *ibdev = map->rdev->ibdev;
	unsigned int i;

	for (i = 0; i < map->nr_regs; i++) {
		struct rdmalog_ring_map_reg *r = &map->regs[i];

		if (r->nents)
			ib_dma_unmap_sg(ibdev, r->sgt.sgl, r->sgt.orig_nents,
					DMA_BIDIRECTIONAL);
		sg_free_table(&r->sgt);
	}
	kvfree(map->piece_dma);
	rdmalog_log_put(map->log);
	rdmalog_rdev_put(map->rdev);
	kfree(map);
}

/*
 * Map pieces @first .. @first + @cnt - 1 into @r and note their DMA
 * addresses. Return: NULL or why not.
 */
static const char *rdmalog_ring_map_reg(struct rdmalog_ring_map *map,
					struct rdmalog_ring_map_reg *r,
					const struct rdmalog_ring_mem *mem,
					unsigned long first, unsigned long cnt)
{
	unsigned int shift = PAGE_SHIFT + mem->chunk_order;
	struct ib_device *ibdev = map->rdev->ibdev;
	unsigned long k = first, i;
	struct scatterlist *sg;
	int nents;

	if (sg_alloc_table(&r->sgt, cnt, GFP_KERNEL))
		return "out of memory";
	for_each_sg(r->sgt.sgl, sg, cnt, i) {
		u64 off = (u64)(first + i) * map->piece;
		size_t len = min_t(u64, map->piece, mem->capacity - off);
		unsigned long c = off >> shift;

		sg_set_page(sg, mem->chunks[c] +
			    ((off - ((u64)c << shift)) >> PAGE_SHIFT), len, 0);
	}
	/* Bidirectional: the HCA writes and reads it, and so does the CPU. */
	nents = ib_dma_map_sg(ibdev, r->sgt.sgl, cnt, DMA_BIDIRECTIONAL);
	if (!nents)
		return "cannot DMA-map the ring";
	r->nents = nents;
	/*
	 * An IOMMU may merge entries; each covers whole pieces (only the
	 * ring's last piece is short), in order.
	 */
	for_each_sg(r->sgt.sgl, sg, nents, i) {
		u64 dma = sg_dma_address(sg), len = sg_dma_len(sg), at;

		for (at = 0; at < len && k < first + cnt; at += map->piece)
			map->piece_dma[k++] = dma + at;
		if (map->page_size &&
		    (!IS_ALIGNED(dma, map->page_size) ||
		     (i < nents - 1 && !IS_ALIGNED(len, map->page_size))))
			map->reg_why = "the ring's DMA addresses do not fit its MR page size";
	}
	if (k != first + cnt)
		return "the ring's DMA mapping does not cover it";
	r->start = (u64)first * map->piece;
	r->len = min_t(u64, (u64)cnt * map->piece, mem->capacity - r->start);
	r->pages = map->page_size ? cnt * (map->piece / map->page_size) : 0;
	return NULL;
}

/*
 * With virtual DMA the addresses are the ring's own: a check, on every
 * device the tests use, that rdmalog_ring_map_dma() finds each byte.
 */
static const char *rdmalog_ring_map_check_virt(struct rdmalog_ring_map *map,
					       const struct rdmalog_ring_mem *mem)
{
	unsigned int shift = PAGE_SHIFT + mem->chunk_order;
	unsigned long k;
	u64 room;

	for (k = 0; k < map->nr_pieces; k++) {
		u64 off = (u64)k * map->piece + map->piece / 2;
		unsigned long c;
		u64 want;

		off = min(off, mem->capacity - 1);
		c = off >> shift;
		want = (uintptr_t)page_address(mem->chunks[c]) +
		       (off - ((u64)c << shift));
		if (rdmalog_ring_map_dma(map, off, &room) != want || !room)
			return "the ring's DMA addresses do not follow the ring";
	}
	return NULL;
}

static struct rdmalog_ring_map *rdmalog_ring_map_create(struct rdmalog_rdev *rdev,
							struct rdmalog_log *log,
							const char **why)
{
	const struct rdmalog_ring_mem *mem = rdmalog_log_ring_mem(log);
	unsigned long per_mr, nr, i;
	struct rdmalog_ring_map *map;
	unsigned int page_size = 0;
	const char *reg_why;
	u64 piece;

	reg_why = rdmalog_ring_map_geometry(rdev, mem, &page_size, &piece,
					    &per_mr);
	if (reg_why) {
		/* Not registrable: one scatterlist of whole chunks. */
		page_size = 0;
		piece = PAGE_SIZE << mem->chunk_order;
		per_mr = DIV_ROUND_UP_ULL(mem->capacity, piece);
	}
	nr = DIV_ROUND_UP_ULL(DIV_ROUND_UP_ULL(mem->capacity, piece), per_mr);
	map = kzalloc(struct_size(map, regs, nr), GFP_KERNEL);
	if (!map) {
		*why = "out of memory";
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&map->ref);
	INIT_LIST_HEAD(&map->node);
	/* The caller holds @rdev: this is the same object, one more ref. */
	map->rdev = rdmalog_rdev_get(rdev->ibdev);
	if (IS_ERR(map->rdev)) {
		kfree(map);
		*why = "the RDMA device is going";
		return ERR_PTR(-ENODEV);
	}
	rdmalog_log_get(log);
	map->log = log;
	map->capacity = mem->capacity;
	map->piece = piece;
	map->nr_pieces = DIV_ROUND_UP_ULL(mem->capacity, piece);
	map->virt = ib_uses_virt_dma(rdev->ibdev);
	map->page_size = page_size;
	map->reg_why = reg_why;
	map->reg_pieces = per_mr;
	map->piece_dma = kvcalloc(map->nr_pieces, sizeof(u64), GFP_KERNEL);
	if (!map->piece_dma) {
		*why = "out of memory";
		goto err;
	}
	for (i = 0; i < nr; i++) {
		map->nr_regs = i + 1;
		*why = rdmalog_ring_map_reg(map, &map->regs[i], mem, i * per_mr,
					    min(per_mr, map->nr_pieces - i * per_mr));
		if (*why)
			goto err;
	}
	if (map->virt) {
		*why = rdmalog_ring_map_check_virt(map, mem);
		if (*why)
			goto err;
	}
	return map;
err:
	rdmalog_ring_map_free(map);
	return ERR_PTR(-EIO);
}

struct rdmalog_ring_map *rdmalog_ring_map_get(struct rdmalog_rdev *rdev,
					      struct rdmalog_log *log,
					      const char **why)
{
	struct rdmalog_ring_map *map;

	mutex_lock(&rdmalog_ring_maps.mutex);
	list_for_each_entry(map, &rdmalog_ring_maps.maps, node) {
		if (map->rdev == rdev && map->log == log) {
			kref_get(&map->ref);
			goto out;
		}
	}
	map = rdmalog_ring_map_create(rdev, log, why);
	if (!IS_ERR(map))
		list_add(&map->node, &rdmalog_ring_maps.maps);
out:
	mutex_unlock(&rdmalog_ring_maps.mutex);
	return map;
}

static void rdmalog_ring_map_release(struct kref *ref)
{
	struct rdmalog_ring_map *map = container_of(ref, struct rdmalog_ring_map,
						    ref);

	list_del(&map->node);
	rdmalog_ring_map_free(map);
}

void rdmalog_ring_map_put(struct rdmalog_ring_map *map)
{
	if (!map)
		return;
	mutex_lock(&rdmalog_ring_maps.mutex);
	kref_put(&map->ref, rdmalog_ring_map_release);
	mutex_unlock(&rdmalog_ring_maps.mutex);
}

u64 rdmalog_ring_map_dma(const struct rdmalog_ring_map *map, u64 off,
			 u64 *room)
{
	u64 in_piece;
	u64 k = div64_u64_rem(off, map->piece, &in_piece);

	*room = min(map->piece - in_piece, map->capacity - off);
	return map->piece_dma[k] + in_piece;
}

void rdmalog_ring_map_sync(const struct rdmalog_ring_map *map, u64 pos,
			   u64 len, bool for_cpu)
{
	struct ib_device *ibdev = map->rdev->ibdev;
	u64 off, room, n, dma;

	if (map->virt || !len)
		return;
	len = min(len, map->capacity);
	div64_u64_rem(pos, map->capacity, &off);
	while (len) {
		dma = rdmalog_ring_map_dma(map, off, &room);
		n = min(len, room);
		if (for_cpu)
			ib_dma_sync_single_for_cpu(ibdev, dma, n,
						   DMA_BIDIRECTIONAL);
		else
			ib_dma_sync_single_for_device(ibdev, dma, n,
						      DMA_BIDIRECTIONAL);
		len -= n;
		off += n;
		if (off == map->capacity)
			off = 0;
	}
}

unsigned int rdmalog_ring_map_fill_sg(const struct rdmalog_ring_map *map,
				      u64 lo, u64 hi, struct scatterlist *sg)
{
	unsigned int n = 0;
	u64 room, dma;

	sg_init_table(sg, map->reg_pieces);
	while (lo < hi) {
		dma = rdmalog_ring_map_dma(map, lo, &room);
		room = min(room, hi - lo);
		/* Never mapped itself: only the DMA fields are read. */
		sg[n].length = room;
		sg_dma_address(&sg[n]) = dma;
		sg_dma_len(&sg[n]) = room;
		lo += room;
		n++;
	}
	sg_mark_end(&sg[n - 1]);
	return n;
}

void rdmalog_ring_map_exit(void)
{
	/* Every endpoint is gone: a map left here is a leak. */
	WARN_ON(!list_empty(&rdmalog_ring_maps.maps));
}
