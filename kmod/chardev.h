/* SPDX-License-Identifier: GPL-2.0 */
/* rdmalog - the /dev/rdmalog character device. */
#ifndef _RDMALOG_CHARDEV_H
#define _RDMALOG_CHARDEV_H

#include <linux/types.h>

int rdmalog_chardev_init(void);
void rdmalog_chardev_exit(void);
u32 rdmalog_chardev_openers(void);

#endif /* _RDMALOG_CHARDEV_H */
