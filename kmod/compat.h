/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - what differs between the kernels rdmalog builds against.
 *
 * One source tree builds for Linux 6.1 (Debian 12) and 6.12 (Debian 12's
 * security archive, Debian 13). Everything that differs between them is
 * here, keyed on what the headers provide; a version check only where the
 * headers offer nothing to test. The .c files use the rdmalog_ names
 * below and never test a kernel version themselves.
 */
#ifndef _RDMALOG_COMPAT_H
#define _RDMALOG_COMPAT_H

#include <linux/mmzone.h>
#include <linux/version.h>
#include <net/genetlink.h>

/*
 * RDMALOG_MAX_PAGE_ORDER: the largest order the page allocator hands out.
 * 6.8 renamed MAX_ORDER to MAX_PAGE_ORDER (inclusive); before, the orders
 * were 0 .. MAX_ORDER - 1. (6.4 to 6.7 already had an inclusive MAX_ORDER:
 * there this is one order lower than possible, which is still correct.)
 */
#ifdef MAX_PAGE_ORDER
#define RDMALOG_MAX_PAGE_ORDER	MAX_PAGE_ORDER
#else
#define RDMALOG_MAX_PAGE_ORDER	(MAX_ORDER - 1)
#endif

/*
 * rdmalog_genl_dump_attrs() - the attributes genetlink parsed for a dump,
 * in .start, .dumpit and .done. 6.2 (split ops) moved them from
 * genl_dumpit_info into its embedded struct genl_info; there is no macro
 * to test, so this is the one version check (checkpatch's
 * LINUX_VERSION_CODE warning is ignored for this file only: Makefile).
 */
static inline struct nlattr **
rdmalog_genl_dump_attrs(struct netlink_callback *cb)
{
#if KERNEL_VERSION(6, 2, 0) <= LINUX_VERSION_CODE
	return genl_dumpit_info(cb)->info.attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

#endif /* _RDMALOG_COMPAT_H */
