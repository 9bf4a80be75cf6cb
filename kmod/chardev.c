// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - /dev/rdmalog, see Documentation/device.rst.
 *
 * The file position is the cursor: the LSN the next read(2) returns. The
 * VFS would copy f_pos before calling ->read_iter() and write its copy
 * back after, outside any lock of ours, so two threads sharing a
 * descriptor could lose a cursor move. The file is therefore marked
 * FMODE_STREAM (the VFS then leaves f_pos alone on read and write) and
 * the cursor is read and moved only here, under the file's own mutex;
 * FMODE_LSEEK stays so that lseek(2) reaches rdmalog_chardev_llseek().
 * pread(2)/pwrite(2) have no meaning here and fail with -ESPIPE.
 */
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "chardev.h"
#include "log.h"
#include "node.h"

/**
 * struct rdmalog_file - what one open descriptor holds
 * @log: the log that was up at open; one reference, dropped on release
 * @cursor_lock: serializes every use of the cursor (file->f_pos): read,
 *	READ_RECORD with RDMALOG_RR_AT_CURSOR and lseek. Held across a
 *	blocking read, taken interruptibly
 * @last_lsn: LSN of this descriptor's latest successful append (the
 *	highest, when threads append concurrently); 0 if none. Atomic, so
 *	appenders never wait for @cursor_lock
 */
struct rdmalog_file {
	struct rdmalog_log *log;
	struct mutex cursor_lock;	/* guards file->f_pos */
	atomic64_t last_lsn;
};

/* Open descriptors, for STATUS_GET. */
static atomic_t rdmalog_chardev_nr_open = ATOMIC_INIT(0);

u32 rdmalog_chardev_openers(void)
{
	return atomic_read(&rdmalog_chardev_nr_open);
}

static bool rdmalog_chardev_nonblock(struct kiocb *iocb)
{
	return (iocb->ki_filp->f_flags & O_NONBLOCK) ||
	       (iocb->ki_flags & IOCB_NOWAIT);
}

static int rdmalog_chardev_open(struct inode *inode, struct file *file)
{
	struct rdmalog_log_state st;
	struct rdmalog_file *rf;
	struct rdmalog_log *log;

	rf = kzalloc(sizeof(*rf), GFP_KERNEL);
	if (!rf)
		return -ENOMEM;
	log = rdmalog_node_get_log();	/* reference owned by @rf */
	if (!log) {
		kfree(rf);
		return -ENETDOWN;
	}
	rf->log = log;
	mutex_init(&rf->cursor_lock);
	atomic64_set(&rf->last_lsn, RDMALOG_LSN_INVALID);

	rdmalog_log_get_state(log, &st);
	file->f_pos = st.first_lsn;
	file->f_mode |= FMODE_STREAM;
	file->f_mode &= ~(FMODE_PREAD | FMODE_PWRITE);
	file->private_data = rf;
	atomic_inc(&rdmalog_chardev_nr_open);
	return 0;
}

static int rdmalog_chardev_release(struct inode *inode, struct file *file)
{
	struct rdmalog_file *rf = file->private_data;

	atomic_dec(&rdmalog_chardev_nr_open);
	rdmalog_log_put(rf->log);
	mutex_destroy(&rf->cursor_lock);
	kfree(rf);
	return 0;
}

/*
 * Read the record at the cursor and advance the cursor past it. With
 * @arg (READ_RECORD), the header and LSN are stored in *@arg and copied
 * to @uarg before the cursor moves, so that an unwritable @uarg leaves
 * the cursor where it was.
 */
static ssize_t rdmalog_chardev_read_cursor(struct file *file,
					   struct iov_iter *to, bool nonblock,
					   struct rdmalog_read_record *arg,
					   void __user *uarg)
{
	struct rdmalog_file *rf = file->private_data;
	ssize_t ret;
	u64 lsn;

	if (mutex_lock_interruptible(&rf->cursor_lock))
		return -ERESTARTSYS;
	lsn = file->f_pos;
	ret = rdmalog_log_read(rf->log, lsn, to, nonblock, true,
			       arg ? &arg->hdr : NULL);
	if (arg && (ret >= 0 || ret == -EMSGSIZE)) {
		arg->lsn = lsn;
		if (copy_to_user(uarg, arg, sizeof(*arg)))
			ret = -EFAULT;
	}
	if (ret >= 0)
		file->f_pos = lsn + 1;
	mutex_unlock(&rf->cursor_lock);
	return ret;
}

static ssize_t rdmalog_chardev_read_iter(struct kiocb *iocb,
					 struct iov_iter *to)
{
	return rdmalog_chardev_read_cursor(iocb->ki_filp, to,
					   rdmalog_chardev_nonblock(iocb),
					   NULL, NULL);
}

static ssize_t rdmalog_chardev_write_iter(struct kiocb *iocb,
					  struct iov_iter *from)
{
	struct rdmalog_file *rf = iocb->ki_filp->private_data;
	size_t count = iov_iter_count(from);
	u64 lsn, last;
	int ret;

	ret = rdmalog_node_append(rf->log, from,
				  rdmalog_chardev_nonblock(iocb), &lsn);
	if (ret)
		return ret;

	/* Keep the highest LSN when threads append through one descriptor. */
	last = atomic64_read(&rf->last_lsn);
	while (last < lsn) {
		u64 old = atomic64_cmpxchg(&rf->last_lsn, last, lsn);

		if (old == last)
			break;
		last = old;
	}
	return count;
}

static loff_t rdmalog_chardev_llseek(struct file *file, loff_t offset,
				     int whence)
{
	struct rdmalog_file *rf = file->private_data;
	struct rdmalog_log_state st;
	loff_t pos;

	if (mutex_lock_interruptible(&rf->cursor_lock))
		return -ERESTARTSYS;
	if (rdmalog_log_is_dead(rf->log)) {
		pos = -ENETDOWN;
		goto out;
	}
	switch (whence) {
	case SEEK_SET:
		pos = offset;
		break;
	case SEEK_CUR:
		if (check_add_overflow(file->f_pos, offset, &pos))
			pos = -EINVAL;
		break;
	case SEEK_END:
		rdmalog_log_get_state(rf->log, &st);
		/* commit_lsn < 2^63: LSNs count records of >= 56 bytes. */
		if (check_add_overflow((loff_t)st.commit_lsn, offset, &pos))
			pos = -EINVAL;
		break;
	default:	/* SEEK_DATA, SEEK_HOLE and anything else */
		pos = -EINVAL;
		break;
	}
	if (pos < 0) {
		pos = -EINVAL;
		goto out;
	}
	file->f_pos = pos;
out:
	mutex_unlock(&rf->cursor_lock);
	return pos;
}

static __poll_t rdmalog_chardev_poll(struct file *file, poll_table *wait)
{
	struct rdmalog_file *rf = file->private_data;

	/* Unlocked: poll is a hint, the cursor may move right after. */
	return rdmalog_log_poll(rf->log, file, wait, READ_ONCE(file->f_pos));
}

static long rdmalog_chardev_get_state(struct file *file, void __user *uarg)
{
	struct rdmalog_file *rf = file->private_data;
	struct rdmalog_state st;

	if (copy_from_user(&st, uarg, sizeof(st)))
		return -EFAULT;
	if (st.version != RDMALOG_IOC_VERSION || memchr_inv(st.reserved, 0,
							    sizeof(st.reserved)))
		return -EINVAL;

	memset(&st, 0, sizeof(st));
	rdmalog_node_fill_state(&st);
	/*
	 * This descriptor stays bound to the log it was opened on: once
	 * that log is down, so is the log as this descriptor sees it, even
	 * if the node came up again with a new one.
	 */
	if (rdmalog_log_is_dead(rf->log)) {
		st.flags &= ~RDMALOG_STATE_UP;
		st.first_lsn = 0;
		st.commit_lsn = 0;
		st.next_lsn = 0;
		st.used = 0;
	}
	st.version = RDMALOG_IOC_VERSION;
	memset(st.reserved, 0, sizeof(st.reserved));
	if (copy_to_user(uarg, &st, sizeof(st)))
		return -EFAULT;
	return 0;
}

static long rdmalog_chardev_read_record(struct file *file, void __user *uarg)
{
	struct rdmalog_file *rf = file->private_data;
	struct rdmalog_read_record rr;
	struct iov_iter iter;
	void __user *buf;
	size_t len;
	ssize_t ret;

	if (!(file->f_mode & FMODE_READ))
		return -EBADF;
	if (copy_from_user(&rr, uarg, sizeof(rr)))
		return -EFAULT;
	if (rr.version != RDMALOG_IOC_VERSION ||
	    (rr.flags & ~RDMALOG_RR_AT_CURSOR) || rr.reserved)
		return -EINVAL;
	/* import_single_range() (6.1) and import_ubuf() (6.12) in one */
	buf = u64_to_user_ptr(rr.buf);
	len = min_t(size_t, rr.buf_len, MAX_RW_COUNT);
	if (!access_ok(buf, len))
		return -EFAULT;
	iov_iter_ubuf(&iter, ITER_DEST, buf, len);
	memset(&rr.hdr, 0, sizeof(rr.hdr));

	if (rr.flags & RDMALOG_RR_AT_CURSOR)
		return rdmalog_chardev_read_cursor(file, &iter,
						   file->f_flags & O_NONBLOCK,
						   &rr, uarg);

	/* By LSN: never blocks, the cursor is neither used nor moved. */
	ret = rdmalog_log_read(rf->log, rr.lsn, &iter, true, false, &rr.hdr);
	if ((ret >= 0 || ret == -EMSGSIZE) &&
	    copy_to_user(uarg, &rr, sizeof(rr)))
		ret = -EFAULT;
	return ret;
}

static long rdmalog_chardev_ioctl(struct file *file, unsigned int cmd,
				  unsigned long arg)
{
	struct rdmalog_file *rf = file->private_data;
	void __user *uarg = (void __user *)arg;
	u64 lsn;

	switch (cmd) {
	case RDMALOG_IOC_GET_STATE:
		return rdmalog_chardev_get_state(file, uarg);
	case RDMALOG_IOC_READ_RECORD:
		return rdmalog_chardev_read_record(file, uarg);
	case RDMALOG_IOC_LAST_LSN:
		if (rdmalog_log_is_dead(rf->log))
			return -ENETDOWN;
		lsn = atomic64_read(&rf->last_lsn);
		return put_user(lsn, (u64 __user *)uarg);
	case RDMALOG_IOC_TRIM:
		if (!capable(CAP_NET_ADMIN))
			return -EPERM;
		if (get_user(lsn, (u64 __user *)uarg))
			return -EFAULT;
		/*
		 * Through the node, so that a trim from here is announced
		 * like one from rdmalogctl. The node trims its current log,
		 * which is ours unless ours is down.
		 */
		if (rdmalog_log_is_dead(rf->log))
			return -ENETDOWN;
		return rdmalog_node_trim(lsn, NULL);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations rdmalog_chardev_fops = {
	.owner		= THIS_MODULE,
	.open		= rdmalog_chardev_open,
	.release	= rdmalog_chardev_release,
	.llseek		= rdmalog_chardev_llseek,
	.read_iter	= rdmalog_chardev_read_iter,
	.write_iter	= rdmalog_chardev_write_iter,
	.poll		= rdmalog_chardev_poll,
	.unlocked_ioctl	= rdmalog_chardev_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice rdmalog_chardev_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= RDMALOG_DEV_NAME,
	.fops	= &rdmalog_chardev_fops,
	.mode	= 0660,
};

int rdmalog_chardev_init(void)
{
	return misc_register(&rdmalog_chardev_misc);
}

void rdmalog_chardev_exit(void)
{
	misc_deregister(&rdmalog_chardev_misc);
}
