// SPDX-License-Identifier: GPL-2.0
/*
 * device_test: the semantics of /dev/rdmalog as Documentation/device.rst
 * states them - every return value of open, read(v), write(v), lseek,
 * poll/epoll and the ioctls, blocking and wake-ups, signals, the log going
 * down under a descriptor, bad user buffers, and a reader stalled in a
 * user page fault (userfaultfd) while its record is trimmed.
 *
 * Every test starts from a fresh, empty log at LSN 1 configured with
 * rdmalogctl (see rl_log_reset()): fixture "dev" has a 1 MiB ring with
 * max_record 64 KiB, fixture "small" a 64 KiB ring with max_record 4 KiB
 * (full after 15 maximal records).
 *
 * Runs as root in the test VM with rdmalog loaded and rdmalogctl in PATH.
 */
#include <pthread.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <linux/userfaultfd.h>

#include "rdmalog_test.h"

#define DEV_CAPACITY	(1ULL << 20)
#define DEV_MAX_RECORD	(64U << 10)
#define SMALL_CAPACITY	(64ULL << 10)
#define SMALL_MAX_RECORD	(4U << 10)

/* How long a child gets to block, or to return once woken (TCG is slow). */
#define BLOCK_MS	20000
#define WAKE_MS		20000

static uint8_t wbuf[(1 << 17) + 64];
static uint8_t rbuf[(1 << 17) + 64];

/* ------------------------------------------------------------------ */
/* A child process doing one (blocking) call, observed by the parent. */

enum child_op {
	OP_READ,		/* read() into sh->buf */
	OP_READ_RECORD,		/* READ_RECORD AT_CURSOR into sh->buf */
	OP_WRITE,		/* write() of a pattern(seed) record */
};

struct shared {
	volatile int ready;	/* about to make the call */
	volatile int done;	/* the call returned; fields below are set */
	volatile int open_err;	/* errno of open(), 0 if it worked */
	volatile int signals;	/* SIGUSR1 handler runs */
	volatile long ret;	/* the call's result */
	volatile int err;	/* its errno */
	volatile long long cursor;	/* lseek(fd, 0, SEEK_CUR) after it */
	volatile int cursor_err;
	volatile uint64_t last_lsn;
	volatile uint64_t rr_lsn;	/* READ_RECORD: hdr.lsn */
	/* after the call, when after_down is set: */
	volatile int write_err, read_err, lseek_err, ioctl_err;
	volatile int revents;
	uint8_t buf[(1 << 17) + 64];
};

struct child_args {
	enum child_op op;
	int open_flags;
	size_t len;		/* read buffer size or write length */
	uint64_t seed;		/* write: pattern seed */
	long long seek;		/* >= 0: lseek(SEEK_SET) there first */
	int sig_flags;		/* -1: no SIGUSR1 handler, else sa_flags */
	bool after_down;	/* probe the descriptor after the call */
};

static struct shared *g_sh;

static void on_sigusr1(int sig)
{
	(void)sig;
	g_sh->signals++;
}

static void child_main(struct shared *sh, const struct child_args *a)
{
	struct rdmalog_read_record rr;
	struct sigaction sa;
	struct pollfd pfd;
	uint64_t lsn;
	long r;
	int fd;

	g_sh = sh;
	fd = open(RL_DEV, a->open_flags);
	if (fd < 0) {
		sh->open_err = errno;
		sh->done = 1;
		_exit(2);
	}
	if (a->seek >= 0 && lseek(fd, a->seek, SEEK_SET) != a->seek)
		_exit(3);
	if (a->sig_flags >= 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sigusr1;
		sa.sa_flags = a->sig_flags;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGUSR1, &sa, NULL))
			_exit(4);
	}
	if (a->op == OP_WRITE)
		rl_pattern(sh->buf, a->len, a->seed);
	sh->ready = 1;
	errno = 0;
	switch (a->op) {
	case OP_READ:
		r = read(fd, sh->buf, a->len);
		break;
	case OP_READ_RECORD:
		r = rl_read_record(fd, 0, RDMALOG_RR_AT_CURSOR, sh->buf,
				   a->len, &rr);
		if (r >= 0)
			sh->rr_lsn = rr.hdr.lsn;
		break;
	case OP_WRITE:
		r = write(fd, sh->buf, a->len);
		break;
	default:
		_exit(5);
	}
	sh->err = errno;
	sh->ret = r;
	errno = 0;
	sh->cursor = lseek(fd, 0, SEEK_CUR);
	sh->cursor_err = errno;
	sh->last_lsn = rl_last_lsn(fd);
	if (a->after_down) {
		errno = 0;
		if (write(fd, "x", 1) < 0)
			sh->write_err = errno;
		errno = 0;
		if (read(fd, rbuf, sizeof(rbuf)) < 0)
			sh->read_err = errno;
		errno = 0;
		if (lseek(fd, 1, SEEK_SET) < 0)
			sh->lseek_err = errno;
		errno = 0;
		if (ioctl(fd, RDMALOG_IOC_LAST_LSN, &lsn) < 0)
			sh->ioctl_err = errno;
		pfd.fd = fd;
		pfd.events = POLLIN | POLLOUT;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) >= 0)
			sh->revents = pfd.revents;
	}
	sh->done = 1;
	_exit(0);
}

/* Fork a child doing @a; it has announced the call when this returns. */
static pid_t child_start(struct shared *sh, const struct child_args *a)
{
	uint64_t end;
	pid_t pid;

	memset(sh, 0, offsetof(struct shared, buf));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		child_main(sh, a);
	if (pid < 0)
		return -1;
	end = rl_mono_ms() + BLOCK_MS;
	while (!sh->ready && !sh->done && rl_mono_ms() < end)
		rl_msleep(5);
	return pid;
}

/*
 * The child is blocked in its call: it announced it, sleeps, and has not
 * returned.
 */
static bool child_blocked(struct shared *sh, pid_t pid)
{
	int st;

	if (!sh->ready || sh->done)
		return false;
	if (rl_wait_sleeping(pid, 0, BLOCK_MS))
		return false;
	return !sh->done && waitpid(pid, &st, WNOHANG) == 0;
}

/* Wait for the child to finish; true if it exited 0 within @ms. */
static bool child_finish(pid_t pid, unsigned int ms, int *status)
{
	pid_t r = rl_waitpid_ms(pid, status, ms);

	if (r != pid) {
		rl_reap(pid);
		*status = -1;
		return false;
	}
	return WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
}

/* ------------------------------------------------------------------ */

static int open_log(int flags)
{
	return open(RL_DEV, flags);
}

/* Append a record of @len pattern(@seed) bytes; its LSN or 0. */
static uint64_t append(int fd, size_t len, uint64_t seed)
{
	rl_pattern(wbuf, len, seed);
	if (write(fd, wbuf, len) != (ssize_t)len)
		return 0;
	return rl_last_lsn(fd);
}

/* Append max_record-sized records with O_NONBLOCK until -EAGAIN. */
static long fill_ring(uint32_t len, int *last_errno)
{
	long n = 0;
	int fd = open_log(O_WRONLY | O_NONBLOCK);

	*last_errno = 0;
	if (fd < 0) {
		*last_errno = errno;
		return -1;
	}
	rl_pattern(wbuf, len, 777);
	for (;;) {
		if (write(fd, wbuf, len) != (ssize_t)len) {
			*last_errno = errno;
			break;
		}
		n++;
		if (n > 100000)
			break;
	}
	close(fd);
	return n;
}

static short poll_now(int fd, short events)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	if (poll(&pfd, 1, 0) < 0)
		return -1;
	return pfd.revents;
}

/* the delay point log_fill, in ms (0: off) */
#define FILL_DELAY "/sys/module/rdmalog/parameters/inject_log_fill_ms"

FIXTURE(dev) {
	int fd;
	struct shared *sh;
	pid_t child;
	int fill_delay;		/* a test set FILL_DELAY: teardown resets it */
};

FIXTURE_SETUP(dev)
{
	char err[2048];

	self->fd = -1;
	self->child = -1;
	ASSERT_EQ(0, rl_crc32c_selfcheck());
	ASSERT_EQ(0, rl_log_reset(DEV_CAPACITY, DEV_MAX_RECORD, "async",
				  err, sizeof(err))) {
		TH_LOG("%s", err);
	}
	self->sh = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	self->fd = open_log(O_RDWR);
	ASSERT_LE(0, self->fd) {
		TH_LOG("open %s: %s", RL_DEV, strerror(errno));
	}
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fill_delay)
		rl_sh(NULL, 0, "echo 0 > " FILL_DELAY);
	rl_reap(self->child);
	if (self->fd >= 0)
		close(self->fd);
	if (self->sh && self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(struct shared));
}

FIXTURE(small) {
	int fd;
	struct shared *sh;
	pid_t child;
	int fill_delay;		/* a test set FILL_DELAY: teardown resets it */
	pid_t child2;
};

FIXTURE_SETUP(small)
{
	char err[2048];

	self->fd = -1;
	self->child = -1;
	self->child2 = -1;
	ASSERT_EQ(0, rl_log_reset(SMALL_CAPACITY, SMALL_MAX_RECORD, "async",
				  err, sizeof(err))) {
		TH_LOG("%s", err);
	}
	self->sh = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	self->fd = open_log(O_RDWR);
	ASSERT_LE(0, self->fd) {
		TH_LOG("open %s: %s", RL_DEV, strerror(errno));
	}
}

FIXTURE_TEARDOWN(small)
{
	if (self->fill_delay)
		rl_sh(NULL, 0, "echo 0 > " FILL_DELAY);
	rl_reap(self->child);
	rl_reap(self->child2);
	if (self->fd >= 0)
		close(self->fd);
	if (self->sh && self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(struct shared));
}

/* ------------------------------------------------------------------ */
/* write/read: one record per call. */

TEST_F_TIMEOUT(dev, one_record_per_write_and_per_read, RL_TIMEOUT)
{
	static const size_t lens[3] = { 1, 100, 4000 };
	struct rdmalog_state st;
	int i;

	ASSERT_EQ(0, rl_last_lsn(self->fd));
	ASSERT_EQ(1, rl_cursor(self->fd));
	for (i = 0; i < 3; i++) {
		rl_pattern(wbuf, lens[i], 100 + i);
		ASSERT_EQ((ssize_t)lens[i], write(self->fd, wbuf, lens[i]));
		ASSERT_EQ((uint64_t)i + 1, rl_last_lsn(self->fd));
		/* write does not move the cursor */
		ASSERT_EQ(1, rl_cursor(self->fd));
	}
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	EXPECT_EQ(1, st.first_lsn);
	EXPECT_EQ(4, st.commit_lsn);
	EXPECT_EQ(4, st.next_lsn);

	for (i = 0; i < 3; i++) {
		memset(rbuf, 0xee, sizeof(rbuf));
		rl_pattern(wbuf, lens[i], 100 + i);
		/* a buffer far bigger than the record gets exactly one */
		ASSERT_EQ((ssize_t)lens[i], read(self->fd, rbuf, sizeof(rbuf)));
		ASSERT_EQ(0, memcmp(wbuf, rbuf, lens[i])) {
			TH_LOG("record %d: payload differs", i + 1);
		}
		ASSERT_EQ(0xee, rbuf[lens[i]]);	/* nothing past the record */
		ASSERT_EQ(i + 2, rl_cursor(self->fd));
	}
}

TEST_F_TIMEOUT(dev, writev_appends_one_record, RL_TIMEOUT)
{
	struct iovec iov[64];
	struct rdmalog_state st;
	size_t off = 0;
	int i;

	rl_pattern(wbuf, 3000, 5);
	/* 3 segments of different sizes */
	iov[0] = (struct iovec){ wbuf, 7 };
	iov[1] = (struct iovec){ wbuf + 7, 1993 };
	iov[2] = (struct iovec){ wbuf + 2000, 1000 };
	ASSERT_EQ(3000, writev(self->fd, iov, 3));
	ASSERT_EQ(1, rl_last_lsn(self->fd));
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ(2, st.next_lsn) TH_LOG("writev made more than one record");
	ASSERT_EQ(rl_rec_bytes(3000), st.used);

	/* 64 one-byte segments (and some empty ones) make one record */
	for (i = 0; i < 64; i++) {
		iov[i].iov_base = wbuf + 3000 + off;
		iov[i].iov_len = (i % 4 == 3) ? 0 : 1;
		off += iov[i].iov_len;
	}
	rl_pattern(wbuf + 3000, off, 6);
	ASSERT_EQ((ssize_t)off, writev(self->fd, iov, 64));
	ASSERT_EQ(2, rl_last_lsn(self->fd));
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ(3, st.next_lsn);

	ASSERT_EQ(3000, read(self->fd, rbuf, sizeof(rbuf)));
	ASSERT_EQ(0, memcmp(wbuf, rbuf, 3000));
	ASSERT_EQ((ssize_t)off, read(self->fd, rbuf, sizeof(rbuf)));
	ASSERT_EQ(0, memcmp(wbuf + 3000, rbuf, off));
}

TEST_F_TIMEOUT(dev, readv_scatters_one_record, RL_TIMEOUT)
{
	uint8_t a[10], b[50], c[1000], small[100];
	struct iovec iov[3] = { { a, 10 }, { b, 50 }, { c, 1000 } };
	struct iovec tiny[2] = { { small, 100 }, { small, 100 } };

	ASSERT_NE(0, append(self->fd, 300, 9));
	ASSERT_NE(0, append(self->fd, 20, 10));
	rl_pattern(wbuf, 300, 9);

	/* iovecs totalling less than the record: -EMSGSIZE, cursor stays */
	ASSERT_SYSERR(readv(self->fd, tiny, 2), EMSGSIZE);
	ASSERT_EQ(1, rl_cursor(self->fd));

	memset(c, 0, sizeof(c));
	ASSERT_EQ(300, readv(self->fd, iov, 3));
	ASSERT_EQ(0, memcmp(a, wbuf, 10));
	ASSERT_EQ(0, memcmp(b, wbuf + 10, 50));
	ASSERT_EQ(0, memcmp(c, wbuf + 60, 240));
	ASSERT_EQ(2, rl_cursor(self->fd));

	/* the next readv gets the next record, not the rest of anything */
	rl_pattern(wbuf, 20, 10);
	ASSERT_EQ(20, readv(self->fd, iov, 3));
	ASSERT_EQ(0, memcmp(a, wbuf, 10));
	ASSERT_EQ(0, memcmp(b, wbuf + 10, 10));
	ASSERT_EQ(3, rl_cursor(self->fd));
}

TEST_F_TIMEOUT(dev, read_small_buffer_emsgsize, RL_TIMEOUT)
{
	ASSERT_NE(0, append(self->fd, 100, 11));
	ASSERT_SYSERR(read(self->fd, rbuf, 99), EMSGSIZE);
	ASSERT_EQ(1, rl_cursor(self->fd));
	ASSERT_SYSERR(read(self->fd, rbuf, 1), EMSGSIZE);
	ASSERT_EQ(1, rl_cursor(self->fd));
	/* exactly the record's size is enough */
	ASSERT_EQ(100, read(self->fd, rbuf, 100));
	ASSERT_EQ(0, memcmp(wbuf, rbuf, 100));
	ASSERT_EQ(2, rl_cursor(self->fd));
}

TEST_F_TIMEOUT(dev, write_zero_length_einval, RL_TIMEOUT)
{
	struct iovec iov[2] = { { wbuf, 0 }, { wbuf + 1, 0 } };
	struct rdmalog_state st;
	ssize_t r;

	ASSERT_SYSERR(write(self->fd, wbuf, 0), EINVAL);
	/*
	 * writev()/readv() with a total of 0 bytes never reach the driver:
	 * the VFS (do_iter_write) returns 0. Either way nothing is appended.
	 */
	errno = 0;
	r = writev(self->fd, iov, 2);
	ASSERT_TRUE(r == 0 || (r == -1 && errno == EINVAL)) {
		TH_LOG("writev of 0 bytes: %zd (%s)", r, strerror(errno));
	}
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ(1, st.next_lsn);
	ASSERT_EQ(0, st.used);
	ASSERT_EQ(0, rl_last_lsn(self->fd));
}

TEST_F_TIMEOUT(dev, write_size_limits, RL_TIMEOUT)
{
	struct rdmalog_state st;

	rl_pattern(wbuf, DEV_MAX_RECORD + 1, 12);
	ASSERT_SYSERR(write(self->fd, wbuf, DEV_MAX_RECORD + 1), EMSGSIZE);
	ASSERT_SYSERR(write(self->fd, wbuf, 2 * DEV_MAX_RECORD), EMSGSIZE);
	ASSERT_EQ(0, rl_last_lsn(self->fd));
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ(1, st.next_lsn);

	ASSERT_EQ(DEV_MAX_RECORD, write(self->fd, wbuf, DEV_MAX_RECORD));
	ASSERT_EQ(1, rl_last_lsn(self->fd));
	ASSERT_EQ(DEV_MAX_RECORD, read(self->fd, rbuf, sizeof(rbuf)));
	ASSERT_EQ(0, memcmp(wbuf, rbuf, DEV_MAX_RECORD));
}

/* ------------------------------------------------------------------ */
/* lseek */

TEST_F_TIMEOUT(dev, lseek_semantics, RL_TIMEOUT)
{
	struct rdmalog_state st;
	int fd2, i;

	for (i = 1; i <= 5; i++) {
		ASSERT_EQ((uint64_t)i, append(self->fd, 10 * i, 200 + i));
	}
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ(6, st.commit_lsn);

	ASSERT_EQ(3, lseek(self->fd, 3, SEEK_SET));
	ASSERT_EQ(30, read(self->fd, rbuf, sizeof(rbuf)));
	rl_pattern(wbuf, 30, 203);
	ASSERT_EQ(0, memcmp(wbuf, rbuf, 30));
	ASSERT_EQ(4, rl_cursor(self->fd));

	ASSERT_EQ(2, lseek(self->fd, -2, SEEK_CUR));
	ASSERT_EQ(20, read(self->fd, rbuf, sizeof(rbuf)));
	rl_pattern(wbuf, 20, 202);
	ASSERT_EQ(0, memcmp(wbuf, rbuf, 20));
	ASSERT_EQ(5, lseek(self->fd, 2, SEEK_CUR));

	/* SEEK_END is relative to commit_lsn */
	ASSERT_EQ((off_t)st.commit_lsn, lseek(self->fd, 0, SEEK_END));
	ASSERT_EQ(5, lseek(self->fd, -1, SEEK_END));
	ASSERT_EQ(50, read(self->fd, rbuf, sizeof(rbuf)));
	rl_pattern(wbuf, 50, 205);
	ASSERT_EQ(0, memcmp(wbuf, rbuf, 50));
	ASSERT_EQ(1, lseek(self->fd, -5, SEEK_END));

	/* negative results: -EINVAL, cursor unchanged */
	ASSERT_EQ(2, lseek(self->fd, 2, SEEK_SET));
	ASSERT_SYSERR(lseek(self->fd, -1, SEEK_SET), EINVAL);
	ASSERT_SYSERR(lseek(self->fd, -3, SEEK_CUR), EINVAL);
	ASSERT_SYSERR(lseek(self->fd, -7, SEEK_END), EINVAL);
	ASSERT_EQ(2, rl_cursor(self->fd));
	/* SEEK_DATA / SEEK_HOLE / unknown whence: -EINVAL */
	ASSERT_SYSERR(lseek(self->fd, 1, SEEK_DATA), EINVAL);
	ASSERT_SYSERR(lseek(self->fd, 1, SEEK_HOLE), EINVAL);
	ASSERT_SYSERR(lseek(self->fd, 1, 17), EINVAL);
	ASSERT_EQ(2, rl_cursor(self->fd));

	/* beyond commit_lsn is accepted; a non-blocking read there waits */
	ASSERT_EQ(100, lseek(self->fd, 100, SEEK_SET));
	ASSERT_EQ(106, lseek(self->fd, 100, SEEK_END));
	fd2 = open_log(O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(7, lseek(fd2, 1, SEEK_END));
	ASSERT_SYSERR(read(fd2, rbuf, sizeof(rbuf)), EAGAIN);
	ASSERT_EQ(6, lseek(fd2, 0, SEEK_END));
	ASSERT_SYSERR(read(fd2, rbuf, sizeof(rbuf)), EAGAIN);
	ASSERT_EQ(6, rl_cursor(fd2));
	/* each descriptor has its own cursor */
	ASSERT_EQ(106, rl_cursor(self->fd));
	close(fd2);
}

TEST_F_TIMEOUT(dev, cursor_below_first_erange, RL_TIMEOUT)
{
	short rev;

	ASSERT_NE(0, append(self->fd, 10, 1));
	ASSERT_NE(0, append(self->fd, 10, 2));
	/* 0 is a valid (non-negative) cursor, below first_lsn */
	ASSERT_EQ(0, lseek(self->fd, 0, SEEK_SET));
	rev = poll_now(self->fd, POLLIN);
	ASSERT_EQ(POLLIN | POLLERR, rev & (POLLIN | POLLERR)) {
		TH_LOG("revents 0x%x", rev);
	}
	ASSERT_SYSERR(read(self->fd, rbuf, sizeof(rbuf)), ERANGE);
	ASSERT_EQ(0, rl_cursor(self->fd));
	ASSERT_EQ(1, lseek(self->fd, 1, SEEK_SET));
	ASSERT_EQ(10, read(self->fd, rbuf, sizeof(rbuf)));
}

/* ------------------------------------------------------------------ */
/* ioctls */

TEST_F_TIMEOUT(dev, get_state_fields, RL_TIMEOUT)
{
	struct rdmalog_state st, st2;
	uint64_t used = 0;
	int i;

	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	EXPECT_EQ(RDMALOG_IOC_VERSION, st.version);
	EXPECT_EQ(RDMALOG_STATE_UP, st.flags) TH_LOG("flags 0x%x", st.flags);
	EXPECT_EQ(1, st.first_lsn);
	EXPECT_EQ(1, st.commit_lsn);
	EXPECT_EQ(1, st.next_lsn);
	EXPECT_EQ(DEV_CAPACITY, st.capacity);
	EXPECT_EQ(0, st.used);
	EXPECT_EQ(DEV_MAX_RECORD, st.max_record);
	EXPECT_LE(1, st.epoch);
	EXPECT_EQ(1, st.node_id);
	EXPECT_EQ(RDMALOG_ROLE_PRIMARY, st.role);
	EXPECT_EQ(RDMALOG_DURABLE_ASYNC, st.durability);
	for (i = 0; i < 7; i++) {
		EXPECT_EQ(0, st.reserved[i]);
	}

	for (i = 1; i <= 4; i++) {
		size_t len = 1 + 997 * (i - 1);

		ASSERT_NE(0, append(self->fd, len, i));
		used += rl_rec_bytes(len);
		ASSERT_EQ(0, rl_get_state(self->fd, &st2));
		EXPECT_EQ(1, st2.first_lsn);
		EXPECT_EQ((uint64_t)i + 1, st2.commit_lsn);
		EXPECT_EQ((uint64_t)i + 1, st2.next_lsn);
		EXPECT_EQ(used, st2.used) {
			TH_LOG("after %d records: used %llu, expected %llu "
			       "(ALIGN(48 + len, 8) each)", i,
			       (unsigned long long)st2.used,
			       (unsigned long long)used);
		}
		EXPECT_EQ(st.epoch, st2.epoch);
	}
}

TEST_F_TIMEOUT(dev, get_state_bad_version_or_reserved, RL_TIMEOUT)
{
	struct rdmalog_state st;

	memset(&st, 0, sizeof(st));
	st.version = 0;
	ASSERT_SYSERR(ioctl(self->fd, RDMALOG_IOC_GET_STATE, &st), EINVAL);
	st.version = RDMALOG_IOC_VERSION + 1;
	ASSERT_SYSERR(ioctl(self->fd, RDMALOG_IOC_GET_STATE, &st), EINVAL);
	memset(&st, 0, sizeof(st));
	st.version = RDMALOG_IOC_VERSION;
	st.reserved[0] = 1;
	ASSERT_SYSERR(ioctl(self->fd, RDMALOG_IOC_GET_STATE, &st), EINVAL);
	st.reserved[0] = 0;
	st.reserved[6] = 0x80000000U;
	ASSERT_SYSERR(ioctl(self->fd, RDMALOG_IOC_GET_STATE, &st), EINVAL);
	st.reserved[6] = 0;
	ASSERT_EQ(0, ioctl(self->fd, RDMALOG_IOC_GET_STATE, &st));
}

TEST_F_TIMEOUT(dev, durability_degraded_flag, RL_TIMEOUT)
{
	static const struct { const char *name; uint32_t val; } modes[] = {
		{ "quorum", RDMALOG_DURABLE_QUORUM },
		{ "all", RDMALOG_DURABLE_ALL },
		{ "async", RDMALOG_DURABLE_ASYNC },
	};
	struct rdmalog_state st, before;
	char out[1024];
	unsigned int i;

	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ(0, st.flags & RDMALOG_STATE_DURABILITY_DEGRADED);
	/* alone, the node is every mode's whole cluster */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, rl_ctl(out, sizeof(out), "log set durability %s",
				    modes[i].name)) {
			TH_LOG("rdmalogctl log set durability %s: %s",
			       modes[i].name, out);
		}
		ASSERT_EQ(0, rl_get_state(self->fd, &st));
		EXPECT_EQ(modes[i].val, st.durability);
		EXPECT_EQ(RDMALOG_STATE_UP, st.flags);
		ASSERT_EQ(i + 1, append(self->fd, 64, i));
		ASSERT_EQ(0, rl_get_state(self->fd, &st));
		EXPECT_EQ(i + 2, st.commit_lsn);
	}

	/* one peer that never answers: quorum and all need it */
	ASSERT_EQ(0, rl_ctl(out, sizeof(out),
			    "log set durability quorum commit-timeout 300")) {
		TH_LOG("%s", out);
	}
	ASSERT_EQ(0, rl_ctl(out, sizeof(out),
			    "peer add id 2 address 198.18.0.222")) {
		TH_LOG("%s", out);
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rl_ctl(out, sizeof(out), "log set durability %s",
				    modes[i].name));
		ASSERT_EQ(0, rl_get_state(self->fd, &before));
		EXPECT_EQ(RDMALOG_STATE_UP | RDMALOG_STATE_DURABILITY_DEGRADED,
			  before.flags);
		/* the append waits for the commit timeout, then is removed */
		rl_pattern(wbuf, 64, 100 + i);
		errno = 0;
		EXPECT_EQ(-1, write(self->fd, wbuf, 64));
		EXPECT_EQ(ETIMEDOUT, errno);
		ASSERT_EQ(0, rl_get_state(self->fd, &st));
		EXPECT_EQ(before.next_lsn, st.next_lsn);
		EXPECT_EQ(before.commit_lsn, st.commit_lsn);
	}
	/* async commits locally again, at the LSN the failed ones had */
	ASSERT_EQ(0, rl_ctl(out, sizeof(out), "log set durability async"));
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	EXPECT_EQ(RDMALOG_STATE_UP, st.flags);
	ASSERT_EQ(before.next_lsn, append(self->fd, 64, 7));
	ASSERT_EQ(0, rl_ctl(out, sizeof(out), "peer del id 2")) {
		TH_LOG("%s", out);
	}
}

TEST_F_TIMEOUT(dev, last_lsn_per_descriptor, RL_TIMEOUT)
{
	int fd2 = open_log(O_WRONLY);

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, rl_last_lsn(self->fd));
	ASSERT_EQ(0, rl_last_lsn(fd2));
	ASSERT_EQ(1, append(self->fd, 10, 1));
	ASSERT_EQ(2, append(self->fd, 10, 2));
	ASSERT_EQ(3, append(fd2, 10, 3));
	ASSERT_EQ(2, rl_last_lsn(self->fd));
	ASSERT_EQ(3, rl_last_lsn(fd2));
	/* a failed append leaves it alone */
	ASSERT_SYSERR(write(fd2, wbuf, DEV_MAX_RECORD + 1), EMSGSIZE);
	ASSERT_SYSERR(write(fd2, wbuf, 0), EINVAL);
	ASSERT_EQ(3, rl_last_lsn(fd2));
	ASSERT_EQ(4, append(self->fd, 10, 4));
	ASSERT_EQ(3, rl_last_lsn(fd2));
	close(fd2);
}

TEST_F_TIMEOUT(dev, read_record_by_lsn, RL_TIMEOUT)
{
	static const size_t lens[3] = { 5, 1500, 33333 };
	struct rdmalog_read_record rr;
	struct rdmalog_state st;
	uint64_t t0, t1, prev_ts = 0;
	int i;

	t0 = rl_now_ns(CLOCK_REALTIME);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ((uint64_t)i + 1, append(self->fd, lens[i], 50 + i));
	}
	t1 = rl_now_ns(CLOCK_REALTIME);
	ASSERT_EQ(0, rl_get_state(self->fd, &st));

	/* backwards, to show the LSN (not the cursor) picks the record */
	for (i = 2; i >= 0; i--) {
		memset(rbuf, 0, sizeof(rbuf));
		ASSERT_EQ((int)lens[i], rl_read_record(self->fd, i + 1, 0, rbuf,
						       sizeof(rbuf), &rr));
		rl_pattern(wbuf, lens[i], 50 + i);
		ASSERT_EQ(0, memcmp(wbuf, rbuf, lens[i]));
		EXPECT_EQ((uint64_t)i + 1, rr.lsn);
		EXPECT_EQ((uint64_t)i + 1, rr.hdr.lsn);
		EXPECT_EQ(lens[i], rr.hdr.len);
		EXPECT_EQ(rl_crc32c_bitwise(wbuf, lens[i]), rr.hdr.crc32c) {
			TH_LOG("LSN %d: header crc32c 0x%08x, computed 0x%08x",
			       i + 1, rr.hdr.crc32c,
			       rl_crc32c_bitwise(wbuf, lens[i]));
		}
		EXPECT_LE(1, rr.hdr.epoch);
		EXPECT_EQ(st.epoch, rr.hdr.epoch);
		/* CLOCK_REALTIME at the append, give or take a second */
		EXPECT_LE(t0 - 1000000000ULL, rr.hdr.timestamp_ns);
		EXPECT_GE(t1 + 1000000000ULL, rr.hdr.timestamp_ns);
		if (prev_ts) {
			EXPECT_GE(prev_ts, rr.hdr.timestamp_ns);
		}
		prev_ts = rr.hdr.timestamp_ns;
		EXPECT_EQ(0, rr.hdr.flags);
		EXPECT_EQ(0, rr.hdr.reserved);
		EXPECT_EQ(0, rr.reserved);
		EXPECT_EQ(RDMALOG_IOC_VERSION, rr.version);
		EXPECT_EQ(sizeof(rbuf), rr.buf_len);	/* unchanged */
	}
	/* the cursor was neither used nor moved */
	ASSERT_EQ(1, rl_cursor(self->fd));
}

TEST_F_TIMEOUT(dev, read_record_at_cursor, RL_TIMEOUT)
{
	struct rdmalog_read_record rr;
	int fd2;

	ASSERT_EQ(1, append(self->fd, 10, 1));
	ASSERT_EQ(2, append(self->fd, 20, 2));
	ASSERT_EQ(3, append(self->fd, 30, 3));

	/* lsn is ignored with AT_CURSOR */
	ASSERT_EQ(10, rl_read_record(self->fd, 3, RDMALOG_RR_AT_CURSOR, rbuf,
				     sizeof(rbuf), &rr));
	EXPECT_EQ(1, rr.hdr.lsn);
	EXPECT_EQ(1, rr.lsn);
	EXPECT_EQ(10, rr.hdr.len);
	ASSERT_EQ(2, rl_cursor(self->fd));
	ASSERT_EQ(20, rl_read_record(self->fd, 0, RDMALOG_RR_AT_CURSOR, rbuf,
				     sizeof(rbuf), &rr));
	EXPECT_EQ(2, rr.hdr.lsn);
	rl_pattern(wbuf, 20, 2);
	ASSERT_EQ(0, memcmp(wbuf, rbuf, 20));
	EXPECT_EQ(rl_crc32c_bitwise(wbuf, 20), rr.hdr.crc32c);
	ASSERT_EQ(3, rl_cursor(self->fd));

	/* same rules as read(): too small a buffer, cursor stays */
	ASSERT_SYSERR(rl_read_record(self->fd, 0, RDMALOG_RR_AT_CURSOR, rbuf,
				     29, &rr), EMSGSIZE);
	EXPECT_EQ(30, rr.hdr.len);
	ASSERT_EQ(3, rl_cursor(self->fd));
	/* mixing read() and READ_RECORD follows one cursor */
	ASSERT_EQ(30, read(self->fd, rbuf, sizeof(rbuf)));
	ASSERT_EQ(4, rl_cursor(self->fd));

	/* nothing at the cursor, O_NONBLOCK: -EAGAIN */
	fd2 = open_log(O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(4, lseek(fd2, 0, SEEK_END));
	ASSERT_SYSERR(rl_read_record(fd2, 0, RDMALOG_RR_AT_CURSOR, rbuf,
				     sizeof(rbuf), &rr), EAGAIN);
	ASSERT_EQ(4, rl_cursor(fd2));
	close(fd2);
}

TEST_F_TIMEOUT(dev, read_record_errors, RL_TIMEOUT)
{
	struct rdmalog_read_record rr;

	ASSERT_EQ(1, append(self->fd, 100, 1));
	ASSERT_EQ(2, append(self->fd, 200, 2));

	ASSERT_SYSERR(rl_read_record(self->fd, 0, 0, rbuf, sizeof(rbuf), &rr),
		      ERANGE);
	ASSERT_SYSERR(rl_read_record(self->fd, 3, 0, rbuf, sizeof(rbuf), &rr),
		      ENODATA);
	ASSERT_SYSERR(rl_read_record(self->fd, 1000, 0, rbuf, sizeof(rbuf),
				     &rr), ENODATA);
	ASSERT_SYSERR(rl_read_record(self->fd, ~0ULL, 0, rbuf, sizeof(rbuf),
				     &rr), ENODATA);

	/* too small: -EMSGSIZE with hdr.len = the size needed */
	ASSERT_SYSERR(rl_read_record(self->fd, 2, 0, rbuf, 199, &rr),
		      EMSGSIZE);
	EXPECT_EQ(200, rr.hdr.len);
	ASSERT_SYSERR(rl_read_record(self->fd, 1, 0, NULL, 0, &rr), EMSGSIZE);
	EXPECT_EQ(100, rr.hdr.len);
	ASSERT_EQ(200, rl_read_record(self->fd, 2, 0, rbuf, 200, &rr));

	/* unknown flags, bad version, reserved set: -EINVAL */
	ASSERT_SYSERR(rl_read_record(self->fd, 1, 1U << 7, rbuf,
				     sizeof(rbuf), &rr), EINVAL);
	memset(&rr, 0, sizeof(rr));
	rr.version = RDMALOG_IOC_VERSION + 1;
	rr.lsn = 1;
	rr.buf = (uintptr_t)rbuf;
	rr.buf_len = sizeof(rbuf);
	ASSERT_SYSERR(ioctl(self->fd, RDMALOG_IOC_READ_RECORD, &rr), EINVAL);
	rr.version = RDMALOG_IOC_VERSION;
	rr.reserved = 1;
	ASSERT_SYSERR(ioctl(self->fd, RDMALOG_IOC_READ_RECORD, &rr), EINVAL);
	rr.reserved = 0;
	ASSERT_EQ(100, ioctl(self->fd, RDMALOG_IOC_READ_RECORD, &rr));

	/* trimmed: -ERANGE */
	ASSERT_EQ(0, rl_trim(self->fd, 2));
	ASSERT_SYSERR(rl_read_record(self->fd, 1, 0, rbuf, sizeof(rbuf), &rr),
		      ERANGE);
	ASSERT_EQ(200, rl_read_record(self->fd, 2, 0, rbuf, sizeof(rbuf),
				      &rr));
	ASSERT_EQ(1, rl_cursor(self->fd));
}

TEST_F_TIMEOUT(dev, trim_semantics, RL_TIMEOUT)
{
	struct rdmalog_state st, st2;
	short rev;
	int fd2, i;

	for (i = 1; i <= 5; i++) {
		ASSERT_EQ((uint64_t)i, append(self->fd, 100 * i, i));
	}
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ(rl_rec_bytes(100) + rl_rec_bytes(200) + rl_rec_bytes(300) +
		  rl_rec_bytes(400) + rl_rec_bytes(500), st.used);

	/* at or below first_lsn: no-op */
	ASSERT_EQ(0, rl_trim(self->fd, 0));
	ASSERT_EQ(0, rl_trim(self->fd, 1));
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(1, st2.first_lsn);
	ASSERT_EQ(st.used, st2.used);
	/* above commit_lsn: -ERANGE, nothing changes */
	ASSERT_SYSERR(rl_trim(self->fd, 7), ERANGE);
	ASSERT_SYSERR(rl_trim(self->fd, ~0ULL), ERANGE);
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(1, st2.first_lsn);
	ASSERT_EQ(st.used, st2.used);

	ASSERT_EQ(0, rl_trim(self->fd, 3));
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(3, st2.first_lsn);
	ASSERT_EQ(6, st2.commit_lsn);
	ASSERT_EQ(6, st2.next_lsn);
	ASSERT_EQ(st.used - rl_rec_bytes(100) - rl_rec_bytes(200), st2.used);
	/* below the new first: no-op */
	ASSERT_EQ(0, rl_trim(self->fd, 2));
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(3, st2.first_lsn);

	/* our cursor (1) is now below first_lsn */
	rev = poll_now(self->fd, POLLIN);
	EXPECT_EQ(POLLIN | POLLERR, rev & (POLLIN | POLLERR)) {
		TH_LOG("revents 0x%x", rev);
	}
	ASSERT_SYSERR(read(self->fd, rbuf, sizeof(rbuf)), ERANGE);
	ASSERT_EQ(1, rl_cursor(self->fd));
	ASSERT_EQ(3, lseek(self->fd, 3, SEEK_SET));
	ASSERT_EQ(300, read(self->fd, rbuf, sizeof(rbuf)));
	rl_pattern(wbuf, 300, 3);
	ASSERT_EQ(0, memcmp(wbuf, rbuf, 300));

	/* a new descriptor starts at first_lsn */
	fd2 = open_log(O_RDONLY);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(3, rl_cursor(fd2));
	close(fd2);

	/* trimming to commit_lsn empties the log */
	ASSERT_EQ(0, rl_trim(self->fd, 6));
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(6, st2.first_lsn);
	ASSERT_EQ(6, st2.commit_lsn);
	ASSERT_EQ(6, st2.next_lsn);
	ASSERT_EQ(0, st2.used);
	ASSERT_EQ(6, append(self->fd, 10, 6));
}

TEST_F_TIMEOUT(dev, trim_needs_cap_net_admin, RL_TIMEOUT)
{
	struct rdmalog_state st;
	int mode, status;
	pid_t pid;

	ASSERT_EQ(1, append(self->fd, 10, 1));
	ASSERT_EQ(2, append(self->fd, 10, 2));
	/* mode 0: uid/gid 65534, no capabilities; mode 1: root minus
	 * CAP_NET_ADMIN
	 */
	for (mode = 0; mode < 2; mode++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			uint64_t lsn = 2;
			struct rdmalog_state cst;

			if (mode == 0 ? rl_drop_to_nobody() :
					rl_drop_net_admin())
				_exit(10);
			if (ioctl(self->fd, RDMALOG_IOC_TRIM, &lsn) != -1)
				_exit(11);
			if (errno != EPERM)
				_exit(12);
			/* reading state needs no privilege */
			if (rl_get_state(self->fd, &cst) || cst.first_lsn != 1)
				_exit(13);
			_exit(0);
		}
		ASSERT_TRUE(child_finish(pid, WAKE_MS, &status)) {
			TH_LOG("mode %d child %s (10: drop failed, 11: trim "
			       "worked, 12: wrong errno)", mode,
			       rl_status_str(status));
		}
		ASSERT_EQ(0, rl_get_state(self->fd, &st));
		ASSERT_EQ(1, st.first_lsn);
	}
	ASSERT_EQ(0, rl_trim(self->fd, 2));
}

TEST_F_TIMEOUT(dev, unknown_ioctl_enotty, RL_TIMEOUT)
{
	uint64_t v = 0;
	char big[64] = { 0 };

	ASSERT_SYSERR(ioctl(self->fd, _IO(RDMALOG_IOC_MAGIC, 0)), ENOTTY);
	ASSERT_SYSERR(ioctl(self->fd, _IOR(RDMALOG_IOC_MAGIC, 99, __u64), &v),
		      ENOTTY);
	ASSERT_SYSERR(ioctl(self->fd, _IOR('x', 3, __u64), &v), ENOTTY);
	/* a known number with the wrong size is another command */
	ASSERT_SYSERR(ioctl(self->fd, _IOWR(RDMALOG_IOC_MAGIC, 1, char[64]),
			    big), ENOTTY);
	ASSERT_SYSERR(ioctl(self->fd, _IOW(RDMALOG_IOC_MAGIC, 4, __u32), &v),
		      ENOTTY);
	ASSERT_SYSERR(ioctl(self->fd, TCGETS, big), ENOTTY);
}

/* ------------------------------------------------------------------ */
/* poll / epoll / blocking */

TEST_F_TIMEOUT(dev, poll_in_semantics, RL_TIMEOUT)
{
	short rev;

	rev = poll_now(self->fd, POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM);
	ASSERT_EQ(POLLOUT | POLLWRNORM, rev) TH_LOG("empty: 0x%x", rev);
	ASSERT_EQ(1, append(self->fd, 10, 1));
	rev = poll_now(self->fd, POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM);
	ASSERT_EQ(POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM, rev) {
		TH_LOG("one record: 0x%x", rev);
	}
	ASSERT_EQ(10, read(self->fd, rbuf, sizeof(rbuf)));
	rev = poll_now(self->fd, POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM);
	ASSERT_EQ(POLLOUT | POLLWRNORM, rev) TH_LOG("read all: 0x%x", rev);
	/* a cursor beyond commit_lsn has nothing to read either */
	ASSERT_EQ(50, lseek(self->fd, 50, SEEK_SET));
	ASSERT_EQ(2, append(self->fd, 10, 2));
	rev = poll_now(self->fd, POLLIN);
	ASSERT_EQ(0, rev) TH_LOG("cursor 50: 0x%x", rev);
}

TEST_F_TIMEOUT(dev, epoll_wakes_on_write_by_other_process, RL_TIMEOUT)
{
	struct epoll_event ev = { .events = EPOLLIN }, out[4];
	uint64_t t0;
	int ep, n, status;
	pid_t pid;

	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ev.data.u64 = 0x1234;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	ASSERT_EQ(0, epoll_wait(ep, out, 4, 0));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		/* wait for the parent to sleep in epoll_wait */
		if (rl_wait_sleeping(getppid(), 0, BLOCK_MS))
			_exit(10);
		fd = open_log(O_WRONLY);
		if (fd < 0)
			_exit(11);
		rl_pattern(wbuf, 77, 77);
		if (write(fd, wbuf, 77) != 77)
			_exit(12);
		_exit(0);
	}
	self->child = pid;
	t0 = rl_mono_ms();
	n = epoll_wait(ep, out, 4, 60000);
	ASSERT_EQ(1, n) TH_LOG("epoll_wait: %d after %llu ms", n,
			       (unsigned long long)(rl_mono_ms() - t0));
	ASSERT_EQ(0x1234, out[0].data.u64);
	ASSERT_TRUE(out[0].events & EPOLLIN);
	ASSERT_TRUE(child_finish(pid, WAKE_MS, &status)) {
		TH_LOG("writer %s", rl_status_str(status));
	}
	self->child = -1;
	ASSERT_EQ(77, read(self->fd, rbuf, sizeof(rbuf)));
	rl_pattern(wbuf, 77, 77);
	ASSERT_EQ(0, memcmp(wbuf, rbuf, 77));
	ASSERT_EQ(0, epoll_wait(ep, out, 4, 0));
	close(ep);
}

TEST_F_TIMEOUT(dev, nonblock_read_empty_eagain, RL_TIMEOUT)
{
	int fd2 = open_log(O_RDONLY | O_NONBLOCK);
	int fl;

	ASSERT_LE(0, fd2);
	ASSERT_SYSERR(read(fd2, rbuf, sizeof(rbuf)), EAGAIN);
	ASSERT_EQ(1, rl_cursor(fd2));
	ASSERT_EQ(1, append(self->fd, 5, 1));
	ASSERT_EQ(5, read(fd2, rbuf, sizeof(rbuf)));
	ASSERT_SYSERR(read(fd2, rbuf, sizeof(rbuf)), EAGAIN);
	close(fd2);

	/* O_NONBLOCK set later with fcntl() is honoured too */
	fl = fcntl(self->fd, F_GETFL);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, fl | O_NONBLOCK));
	ASSERT_EQ(5, read(self->fd, rbuf, sizeof(rbuf)));
	ASSERT_SYSERR(read(self->fd, rbuf, sizeof(rbuf)), EAGAIN);
	ASSERT_EQ(2, rl_cursor(self->fd));
}

TEST_F_TIMEOUT(dev, blocked_reader_woken_by_write, RL_TIMEOUT)
{
	struct child_args a = {
		.op = OP_READ, .open_flags = O_RDONLY, .len = sizeof(rbuf),
		.seek = -1, .sig_flags = -1,
	};
	int status;

	self->child = child_start(self->sh, &a);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(child_blocked(self->sh, self->child)) {
		TH_LOG("reader did not block on the empty log (ret %ld, %s)",
		       self->sh->ret, strerror(self->sh->err));
	}
	ASSERT_EQ(1, append(self->fd, 1234, 42));
	ASSERT_TRUE(child_finish(self->child, WAKE_MS, &status)) {
		TH_LOG("reader not woken by the write: %s",
		       rl_status_str(status));
	}
	self->child = -1;
	ASSERT_EQ(1234, self->sh->ret) TH_LOG("%s", strerror(self->sh->err));
	ASSERT_EQ(0, memcmp(wbuf, self->sh->buf, 1234));
	ASSERT_EQ(2, self->sh->cursor);
}

TEST_F_TIMEOUT(dev, blocked_read_record_woken_by_write, RL_TIMEOUT)
{
	struct child_args a = {
		.op = OP_READ_RECORD, .open_flags = O_RDONLY,
		.len = sizeof(rbuf), .seek = 3, .sig_flags = -1,
	};
	int status;

	/* waits for LSN 3 while 1 and 2 get appended */
	self->child = child_start(self->sh, &a);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(child_blocked(self->sh, self->child));
	ASSERT_EQ(1, append(self->fd, 10, 1));
	ASSERT_EQ(2, append(self->fd, 10, 2));
	rl_msleep(200);
	ASSERT_EQ(0, self->sh->done) TH_LOG("woke up before its LSN came");
	ASSERT_EQ(3, append(self->fd, 333, 3));
	ASSERT_TRUE(child_finish(self->child, WAKE_MS, &status)) {
		TH_LOG("reader %s", rl_status_str(status));
	}
	self->child = -1;
	ASSERT_EQ(333, self->sh->ret);
	ASSERT_EQ(3, self->sh->rr_lsn);
	ASSERT_EQ(0, memcmp(wbuf, self->sh->buf, 333));
	ASSERT_EQ(4, self->sh->cursor);
}

TEST_F_TIMEOUT(dev, signal_interrupts_blocked_read, RL_TIMEOUT)
{
	struct child_args a = {
		.op = OP_READ, .open_flags = O_RDONLY, .len = sizeof(rbuf),
		.seek = -1, .sig_flags = 0,	/* no SA_RESTART */
	};
	struct rdmalog_state st;
	int status;

	ASSERT_EQ(1, append(self->fd, 10, 1));
	a.seek = 2;
	self->child = child_start(self->sh, &a);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(child_blocked(self->sh, self->child));
	ASSERT_EQ(0, kill(self->child, SIGUSR1));
	ASSERT_TRUE(child_finish(self->child, WAKE_MS, &status)) {
		TH_LOG("reader %s", rl_status_str(status));
	}
	self->child = -1;
	ASSERT_EQ(1, self->sh->signals);
	ASSERT_EQ(-1, self->sh->ret);
	ASSERT_EQ(EINTR, self->sh->err) {
		TH_LOG("got %s", strerrorname_np(self->sh->err));
	}
	ASSERT_EQ(2, self->sh->cursor);
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ(2, st.next_lsn);
}

TEST_F_TIMEOUT(dev, sa_restart_read_restarts, RL_TIMEOUT)
{
	struct child_args a = {
		.op = OP_READ, .open_flags = O_RDONLY, .len = sizeof(rbuf),
		.seek = -1, .sig_flags = SA_RESTART,
	};
	int status;

	self->child = child_start(self->sh, &a);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(child_blocked(self->sh, self->child));
	ASSERT_EQ(0, kill(self->child, SIGUSR1));
	/* the handler runs, the read goes back to sleep */
	ASSERT_EQ(0, rl_wait_sleeping(self->child, 0, BLOCK_MS));
	ASSERT_EQ(0, self->sh->done) {
		TH_LOG("read returned %ld (%s) under SA_RESTART",
		       self->sh->ret, strerrorname_np(self->sh->err));
	}
	ASSERT_EQ(1, append(self->fd, 99, 99));
	ASSERT_TRUE(child_finish(self->child, WAKE_MS, &status));
	self->child = -1;
	ASSERT_EQ(1, self->sh->signals);
	ASSERT_EQ(99, self->sh->ret) {
		TH_LOG("read: %ld (%s)", self->sh->ret,
		       strerrorname_np(self->sh->err));
	}
	ASSERT_EQ(0, memcmp(wbuf, self->sh->buf, 99));
}

/* ------------------------------------------------------------------ */
/* down */

TEST_F_TIMEOUT(dev, open_while_down_enetdown, RL_TIMEOUT)
{
	struct rdmalog_read_record rr;
	struct rdmalog_state st;
	char out[1024];
	uint64_t v = 1;
	short rev;

	ASSERT_EQ(1, append(self->fd, 10, 1));
	ASSERT_EQ(0, rl_ctl(out, sizeof(out), "node down")) TH_LOG("%s", out);
	ASSERT_SYSERR(open_log(O_RDWR), ENETDOWN);
	ASSERT_SYSERR(open_log(O_RDONLY | O_NONBLOCK), ENETDOWN);

	/* the old descriptor: GET_STATE still works, everything else not */
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	EXPECT_EQ(0, st.flags & RDMALOG_STATE_UP);
	EXPECT_EQ(0, st.first_lsn);
	EXPECT_EQ(0, st.commit_lsn);
	EXPECT_EQ(0, st.next_lsn);
	ASSERT_SYSERR(write(self->fd, "abc", 3), ENETDOWN);
	ASSERT_SYSERR(read(self->fd, rbuf, sizeof(rbuf)), ENETDOWN);
	ASSERT_SYSERR(lseek(self->fd, 1, SEEK_SET), ENETDOWN);
	ASSERT_SYSERR(lseek(self->fd, 0, SEEK_CUR), ENETDOWN);
	ASSERT_SYSERR(ioctl(self->fd, RDMALOG_IOC_LAST_LSN, &v), ENETDOWN);
	ASSERT_SYSERR(ioctl(self->fd, RDMALOG_IOC_TRIM, &v), ENETDOWN);
	ASSERT_SYSERR(rl_read_record(self->fd, 1, 0, rbuf, sizeof(rbuf), &rr),
		      ENETDOWN);
	rev = poll_now(self->fd, POLLIN | POLLOUT);
	ASSERT_EQ(POLLERR | POLLHUP | POLLIN | POLLOUT,
		  rev & (POLLERR | POLLHUP | POLLIN | POLLOUT)) {
		TH_LOG("revents 0x%x", rev);
	}
}

TEST_F_TIMEOUT(dev, down_wakes_blocked_reader, RL_TIMEOUT)
{
	struct child_args a = {
		.op = OP_READ, .open_flags = O_RDWR, .len = sizeof(rbuf),
		.seek = -1, .sig_flags = -1, .after_down = true,
	};
	char out[1024];
	uint64_t t0;
	int status;

	self->child = child_start(self->sh, &a);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(child_blocked(self->sh, self->child));
	ASSERT_EQ(0, rl_ctl(out, sizeof(out), "node down")) TH_LOG("%s", out);
	t0 = rl_mono_ms();
	ASSERT_TRUE(child_finish(self->child, WAKE_MS, &status)) {
		TH_LOG("reader not woken by down: %s", rl_status_str(status));
	}
	self->child = -1;
	/* "at once": within a few seconds even under TCG */
	EXPECT_GT(10000, rl_mono_ms() - t0);
	ASSERT_EQ(-1, self->sh->ret);
	ASSERT_EQ(ENETDOWN, self->sh->err) {
		TH_LOG("got %s", strerrorname_np(self->sh->err));
	}
	/* later calls on that descriptor */
	EXPECT_EQ(ENETDOWN, self->sh->write_err);
	EXPECT_EQ(ENETDOWN, self->sh->read_err);
	EXPECT_EQ(ENETDOWN, self->sh->lseek_err);
	EXPECT_EQ(ENETDOWN, self->sh->ioctl_err);
	EXPECT_EQ(POLLERR | POLLHUP,
		  self->sh->revents & (POLLERR | POLLHUP)) {
		TH_LOG("revents 0x%x", self->sh->revents);
	}
}

TEST_F_TIMEOUT(dev, descriptor_bound_to_its_log, RL_TIMEOUT)
{
	struct rdmalog_state st;
	char out[1024];
	int fd2;

	ASSERT_EQ(1, append(self->fd, 10, 1));
	ASSERT_EQ(2, append(self->fd, 10, 2));
	ASSERT_EQ(0, rl_ctl(out, sizeof(out), "node down")) TH_LOG("%s", out);
	ASSERT_EQ(0, rl_ctl(out, sizeof(out), "node up")) TH_LOG("%s", out);
	/* the old descriptor belongs to the log that went down */
	ASSERT_SYSERR(write(self->fd, "abc", 3), ENETDOWN);
	ASSERT_SYSERR(read(self->fd, rbuf, sizeof(rbuf)), ENETDOWN);
	ASSERT_SYSERR(lseek(self->fd, 1, SEEK_SET), ENETDOWN);
	/* the new log is a new, empty log at LSN 1 */
	fd2 = open_log(O_RDWR);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, rl_get_state(fd2, &st));
	EXPECT_EQ(RDMALOG_STATE_UP, st.flags & RDMALOG_STATE_UP);
	EXPECT_EQ(1, st.first_lsn);
	EXPECT_EQ(1, st.next_lsn);
	EXPECT_EQ(0, st.used);
	ASSERT_EQ(1, append(fd2, 10, 3));
	close(fd2);
}

/* ------------------------------------------------------------------ */
/* bad buffers and modes */

/*
 * Two pages, the first readable (0x5a) and the second not: a buffer that
 * ends in it faults there. MAP_FAILED on error; munmap(m, 2 * pg).
 */
static uint8_t *faulting_pages(long pg)
{
	uint8_t *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return m;
	if (mprotect(m + pg, pg, PROT_NONE)) {
		munmap(m, 2 * pg);
		return MAP_FAILED;
	}
	memset(m, 0x5a, pg);
	return m;
}

TEST_F_TIMEOUT(dev, efault_write_appends_nothing, RL_TIMEOUT)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct rdmalog_state st;
	struct iovec iov[2];
	uint8_t *m;

	m = faulting_pages(pg);
	ASSERT_NE(MAP_FAILED, m);

	ASSERT_SYSERR(write(self->fd, m + pg, 100), EFAULT);
	/* only the tail of the buffer is bad: still all or nothing */
	ASSERT_SYSERR(write(self->fd, m + pg - 100, 200), EFAULT);
	iov[0] = (struct iovec){ m, 300 };
	iov[1] = (struct iovec){ m + pg, 10 };
	ASSERT_SYSERR(writev(self->fd, iov, 2), EFAULT);
	ASSERT_EQ(0, rl_last_lsn(self->fd));
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ(1, st.next_lsn);
	ASSERT_EQ(1, st.commit_lsn);
	ASSERT_EQ(0, st.used);
	/* and the log still works */
	ASSERT_EQ(100, write(self->fd, m + pg - 100, 100));
	ASSERT_EQ(1, rl_last_lsn(self->fd));
	ASSERT_EQ(100, read(self->fd, rbuf, sizeof(rbuf)));
	ASSERT_EQ(0x5a, rbuf[99]);
	munmap(m, 2 * pg);
}

/* A counter of `rdmalogctl -j stats`, or ~0 when it cannot be read. */
static uint64_t ctl_stat(const char *name)
{
	char out[16384], key[64], *p;

	if (rl_ctl(out, sizeof(out), "-j stats"))
		return ~0ULL;
	snprintf(key, sizeof(key), "\"%s\":", name);
	p = strstr(out, key);
	if (!p)
		return ~0ULL;
	return strtoull(p + strlen(key), NULL, 10);
}

/*
 * A child that appends 100 bytes of pattern @seed (or, @bad, 200 bytes
 * whose last 100 are unreadable) and exits 0 when the outcome is right.
 */
static pid_t fork_append(const uint8_t *bad, uint64_t seed)
{
	pid_t pid = fork();
	uint8_t buf[100];
	int fd;

	if (pid)
		return pid;
	fd = open_log(O_WRONLY);
	if (fd < 0)
		_exit(2);
	if (bad)
		_exit(write(fd, bad, 200) == -1 && errno == EFAULT ? 0 : 3);
	rl_pattern(buf, sizeof(buf), seed);
	_exit(write(fd, buf, sizeof(buf)) == sizeof(buf) ? 0 : 4);
}

/*
 * The append mutex covers only the reservation: appenders copy side by
 * side. Each append is held 5 s between its reservation and its copy
 * (delay point log_fill). A first appender reserves LSN 1 for a buffer
 * whose tail is unreadable; while it is held, two more reserve LSNs 2
 * and 3 (append_overlaps: 2). Its copy fails, and the two records
 * copied behind it cannot be published over the hole: they are given
 * back (append_retries: 2) and reserved again, side by side
 * (append_overlaps: 3), and copied again, as LSNs 1 and 2. The
 * failed append gets -EFAULT, the others their records, whole, with no
 * hole between.
 */
TEST_F_TIMEOUT(dev, efault_copy_behind_others_loses_no_record, RL_TIMEOUT)
{
	uint64_t ov0, rt0, ov1, rt1, seen = 0;
	long pg = sysconf(_SC_PAGESIZE);
	struct rdmalog_read_record rr;
	struct rdmalog_state st;
	pid_t pids[3];
	uint8_t *m, want[100];
	int i, j, status;

	m = faulting_pages(pg);
	ASSERT_NE(MAP_FAILED, m);
	ov0 = ctl_stat("append_overlaps");
	rt0 = ctl_stat("append_retries");
	ASSERT_NE(~0ULL, ov0);
	ASSERT_NE(~0ULL, rt0);

	self->fill_delay = 1;
	ASSERT_EQ(0, rl_sh(NULL, 0, "echo 5000 > " FILL_DELAY));
	pids[0] = fork_append(m + pg - 100, 0);
	ASSERT_LT(0, pids[0]);
	EXPECT_EQ(0, rl_wait_asleep(pids[0], 0, BLOCK_MS, 1));
	for (i = 1; i < 3; i++) {
		pids[i] = fork_append(NULL, 700 + i);
		ASSERT_LT(0, pids[i]);
	}
	/* both reserved while the first is held (5 s: room for a slow VM) */
	for (i = 0; i < 250 && ctl_stat("append_overlaps") < ov0 + 2; i++)
		rl_msleep(20);
	EXPECT_EQ(ov0 + 2, ctl_stat("append_overlaps"));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(pids[i], rl_waitpid_ms(pids[i], &status, BLOCK_MS));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
			TH_LOG("appender %d: %s", i, rl_status_str(status));
		}
	}
	ASSERT_EQ(0, rl_sh(NULL, 0, "echo 0 > " FILL_DELAY));
	self->fill_delay = 0;
	ov1 = ctl_stat("append_overlaps");
	rt1 = ctl_stat("append_retries");
	/* and once more when the two reserve again side by side */
	EXPECT_EQ(3, ov1 - ov0);
	EXPECT_EQ(2, rt1 - rt0);

	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	EXPECT_EQ(3, st.next_lsn);
	EXPECT_EQ(3, st.commit_lsn);
	for (i = 1; i <= 2; i++) {
		ASSERT_EQ(100, rl_read_record(self->fd, i, 0, rbuf,
					      sizeof(rbuf), &rr));
		ASSERT_EQ(100, rr.hdr.len);
		for (j = 1; j < 3; j++) {
			rl_pattern(want, sizeof(want), 700 + j);
			if (!memcmp(rbuf, want, sizeof(want)))
				seen |= 1 << j;
		}
	}
	EXPECT_EQ(6, seen);
	munmap(m, 2 * pg);
}

/*
 * A writer waiting for ring space that a failed copy gives back is woken.
 * The ring is filled to leave room for a 200-byte record and a 100-byte
 * one less 8 bytes. A first appender reserves 200 bytes for a buffer whose
 * tail is unreadable and is held there (delay point log_fill); a second,
 * 100 bytes, does not fit behind it and waits for space. The first copy
 * fails (-EFAULT) and its space is free again: the second appends (the
 * next LSN, whole), not held until something else trims.
 */
TEST_F_TIMEOUT(small, efault_copy_frees_space_for_a_waiting_writer,
	       RL_TIMEOUT)
{
	const uint64_t room = rl_rec_bytes(200) + rl_rec_bytes(100) - 8;
	long pg = sysconf(_SC_PAGESIZE);
	struct rdmalog_read_record rr;
	struct rdmalog_state st;
	uint64_t ww0, left, len;
	uint8_t *m, want[100];
	int e, i, status;
	long n;

	n = fill_ring(SMALL_MAX_RECORD, &e);
	ASSERT_EQ(EAGAIN, e);
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	left = st.capacity - st.used;
	ASSERT_LE(room + RL_HDR_BYTES, left);
	len = left - room - RL_HDR_BYTES;
	ASSERT_GE(SMALL_MAX_RECORD, len);
	ASSERT_EQ((ssize_t)len, write(self->fd, wbuf, len));
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ(room, st.capacity - st.used);

	m = faulting_pages(pg);
	ASSERT_NE(MAP_FAILED, m);
	ww0 = ctl_stat("writer_waits");
	ASSERT_NE(~0ULL, ww0);

	self->fill_delay = 1;
	ASSERT_EQ(0, rl_sh(NULL, 0, "echo 5000 > " FILL_DELAY));
	self->child = fork_append(m + pg - 100, 0);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, rl_wait_asleep(self->child, 0, BLOCK_MS, 1));
	self->child2 = fork_append(NULL, 701);
	ASSERT_LT(0, self->child2);
	/* waiting for space (interruptibly), not held at the delay point */
	for (i = 0; i < 250 && ctl_stat("writer_waits") < ww0 + 1; i++)
		rl_msleep(20);
	ASSERT_EQ(ww0 + 1, ctl_stat("writer_waits"));
	EXPECT_EQ(0, rl_wait_asleep(self->child2, 0, BLOCK_MS, 0));

	ASSERT_EQ(self->child, rl_waitpid_ms(self->child, &status, BLOCK_MS));
	self->child = -1;
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("failed appender: %s", rl_status_str(status));
	}
	/* its own 5 s at the delay point, once it has its space */
	ASSERT_EQ(self->child2, rl_waitpid_ms(self->child2, &status,
					      BLOCK_MS)) {
		TH_LOG("the waiting writer still waits for space");
	}
	self->child2 = -1;
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("waiting appender: %s", rl_status_str(status));
	}
	ASSERT_EQ(0, rl_sh(NULL, 0, "echo 0 > " FILL_DELAY));
	self->fill_delay = 0;

	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	EXPECT_EQ((uint64_t)n + 3, st.next_lsn);
	EXPECT_EQ(rl_rec_bytes(200) - 8, st.capacity - st.used);
	ASSERT_EQ(100, rl_read_record(self->fd, n + 2, 0, rbuf, sizeof(rbuf),
				      &rr));
	rl_pattern(want, sizeof(want), 701);
	EXPECT_EQ(0, memcmp(rbuf, want, sizeof(want)));
	munmap(m, 2 * pg);
}

TEST_F_TIMEOUT(dev, efault_read_keeps_cursor, RL_TIMEOUT)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct rdmalog_read_record rr;
	uint8_t *m;

	m = faulting_pages(pg);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(1, append(self->fd, 200, 1));

	ASSERT_SYSERR(read(self->fd, m + pg, 200), EFAULT);
	ASSERT_EQ(1, rl_cursor(self->fd));
	ASSERT_SYSERR(read(self->fd, m + pg - 100, 200), EFAULT);
	ASSERT_EQ(1, rl_cursor(self->fd));
	ASSERT_SYSERR(rl_read_record(self->fd, 0, RDMALOG_RR_AT_CURSOR,
				     m + pg - 100, 200, &rr), EFAULT);
	ASSERT_EQ(1, rl_cursor(self->fd));
	ASSERT_SYSERR(rl_read_record(self->fd, 1, 0, m + pg, 200, &rr),
		      EFAULT);
	ASSERT_EQ(200, read(self->fd, m + pg - 200, 200));
	ASSERT_EQ(0, memcmp(wbuf, m + pg - 200, 200));
	ASSERT_EQ(2, rl_cursor(self->fd));
	munmap(m, 2 * pg);
}

TEST_F_TIMEOUT(dev, efault_ioctl_args, RL_TIMEOUT)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct rdmalog_state st;
	uint8_t *m;

	m = mmap(NULL, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(1, append(self->fd, 10, 1));
	ASSERT_SYSERR(ioctl(self->fd, RDMALOG_IOC_GET_STATE, m), EFAULT);
	ASSERT_SYSERR(ioctl(self->fd, RDMALOG_IOC_READ_RECORD, m), EFAULT);
	ASSERT_SYSERR(ioctl(self->fd, RDMALOG_IOC_LAST_LSN, m), EFAULT);
	ASSERT_SYSERR(ioctl(self->fd, RDMALOG_IOC_TRIM, m), EFAULT);
	ASSERT_SYSERR(ioctl(self->fd, RDMALOG_IOC_GET_STATE, NULL), EFAULT);
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ(1, st.first_lsn);
	ASSERT_EQ(2, st.next_lsn);
	ASSERT_EQ(1, rl_cursor(self->fd));
	munmap(m, pg);
}

TEST_F_TIMEOUT(dev, access_modes_ebadf, RL_TIMEOUT)
{
	struct rdmalog_read_record rr;
	struct rdmalog_state st;
	int ro, wo;

	ro = open_log(O_RDONLY);
	ASSERT_LE(0, ro);
	wo = open_log(O_WRONLY);
	ASSERT_LE(0, wo);
	ASSERT_SYSERR(write(ro, "abc", 3), EBADF);
	ASSERT_EQ(3, write(wo, "abc", 3));
	ASSERT_SYSERR(read(wo, rbuf, sizeof(rbuf)), EBADF);
	ASSERT_SYSERR(rl_read_record(wo, 1, 0, rbuf, sizeof(rbuf), &rr),
		      EBADF);
	ASSERT_EQ(3, rl_read_record(ro, 1, 0, rbuf, sizeof(rbuf), &rr));
	ASSERT_EQ(3, read(ro, rbuf, sizeof(rbuf)));
	/* GET_STATE works on any descriptor */
	ASSERT_EQ(0, rl_get_state(wo, &st));
	ASSERT_EQ(2, st.next_lsn);
	close(ro);
	close(wo);
}

/* ------------------------------------------------------------------ */
/* A full ring (fixture small: 64 KiB, max_record 4 KiB). */

TEST_F_TIMEOUT(small, full_ring_exact_capacity_eagain, RL_TIMEOUT)
{
	const uint64_t rec = rl_rec_bytes(SMALL_MAX_RECORD);
	const long expect = SMALL_CAPACITY / rec;
	uint64_t room, fill;
	struct rdmalog_state st, st2;
	int fd, e;
	long n;

	n = fill_ring(SMALL_MAX_RECORD, &e);
	ASSERT_EQ(EAGAIN, e) TH_LOG("filling stopped with %s",
				    strerrorname_np(e));
	ASSERT_EQ(expect, n) TH_LOG("%ld records of %u bytes fit in %llu",
				    n, SMALL_MAX_RECORD, SMALL_CAPACITY);
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ((uint64_t)n * rec, st.used);
	ASSERT_EQ((uint64_t)n + 1, st.next_lsn);

	/* what is left takes exactly one more, smaller record */
	room = SMALL_CAPACITY - st.used;
	ASSERT_LT(room, rec);
	fill = room - RL_HDR_BYTES;
	fd = open_log(O_WRONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_SYSERR(write(fd, wbuf, fill + 1), EAGAIN);
	ASSERT_EQ((ssize_t)fill, write(fd, wbuf, fill));
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(SMALL_CAPACITY, st2.used);
	ASSERT_SYSERR(write(fd, wbuf, 1), EAGAIN);
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ((uint64_t)n + 2, st2.next_lsn);
	ASSERT_EQ(SMALL_CAPACITY, st2.used);
	/* a full ring was never overwritten: LSN 1 is still there */
	ASSERT_EQ(SMALL_MAX_RECORD, read(self->fd, rbuf, sizeof(rbuf)));
	rl_pattern(wbuf, SMALL_MAX_RECORD, 777);
	ASSERT_EQ(0, memcmp(wbuf, rbuf, SMALL_MAX_RECORD));
	close(fd);
}

TEST_F_TIMEOUT(small, poll_out_tracks_space, RL_TIMEOUT)
{
	struct rdmalog_state st;
	uint64_t free_b, len;
	short rev;
	int e;

	rev = poll_now(self->fd, POLLOUT | POLLWRNORM);
	ASSERT_EQ(POLLOUT | POLLWRNORM, rev);
	ASSERT_LT(0, fill_ring(SMALL_MAX_RECORD, &e));
	ASSERT_EQ(EAGAIN, e);
	rev = poll_now(self->fd, POLLIN | POLLOUT | POLLWRNORM);
	ASSERT_EQ(POLLIN, rev) TH_LOG("full ring: revents 0x%x", rev);
	/* one record of max_record bytes fits again after one trim */
	ASSERT_EQ(0, rl_trim(self->fd, 2));
	/* (our cursor, 1, is now below first_lsn: POLLERR) */
	rev = poll_now(self->fd, POLLOUT | POLLWRNORM);
	ASSERT_EQ(POLLOUT | POLLWRNORM | POLLERR, rev);
	ASSERT_EQ(2, lseek(self->fd, 2, SEEK_SET));
	rev = poll_now(self->fd, POLLOUT | POLLWRNORM);
	ASSERT_EQ(POLLOUT | POLLWRNORM, rev);
	/*
	 * Leave 8 bytes less than a max_record record needs: no POLLOUT,
	 * though a small record still fits.
	 */
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	free_b = st.capacity - st.used;
	len = free_b - (rl_rec_bytes(SMALL_MAX_RECORD) - 8) - RL_HDR_BYTES;
	ASSERT_EQ((ssize_t)len, write(self->fd, wbuf, len));
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ(rl_rec_bytes(SMALL_MAX_RECORD) - 8, st.capacity - st.used);
	rev = poll_now(self->fd, POLLOUT);
	ASSERT_EQ(0, rev) TH_LOG("less than max_record free: 0x%x", rev);
	ASSERT_EQ(1, write(self->fd, wbuf, 1));
}

TEST_F_TIMEOUT(small, epoll_out_wakes_on_trim_by_other_process, RL_TIMEOUT)
{
	struct epoll_event ev = { .events = EPOLLOUT }, out[2];
	int ep, e, n, status;
	pid_t pid;

	ASSERT_LT(0, fill_ring(SMALL_MAX_RECORD, &e));
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	ASSERT_EQ(0, epoll_wait(ep, out, 2, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		if (rl_wait_sleeping(getppid(), 0, BLOCK_MS))
			_exit(10);
		fd = open_log(O_RDONLY);
		if (fd < 0 || rl_trim(fd, 3))
			_exit(11);
		_exit(0);
	}
	self->child = pid;
	n = epoll_wait(ep, out, 2, 60000);
	ASSERT_EQ(1, n);
	ASSERT_TRUE(out[0].events & EPOLLOUT);
	ASSERT_TRUE(child_finish(pid, WAKE_MS, &status)) {
		TH_LOG("trimmer %s", rl_status_str(status));
	}
	self->child = -1;
	close(ep);
}

TEST_F_TIMEOUT(small, nonblock_write_full_eagain, RL_TIMEOUT)
{
	struct rdmalog_state st, st2;
	int e, fl;

	ASSERT_LT(0, fill_ring(SMALL_MAX_RECORD, &e));
	ASSERT_EQ(EAGAIN, e);
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	fl = fcntl(self->fd, F_GETFL);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, fl | O_NONBLOCK));
	ASSERT_SYSERR(write(self->fd, wbuf, SMALL_MAX_RECORD), EAGAIN);
	ASSERT_EQ(0, rl_last_lsn(self->fd));
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(st.next_lsn, st2.next_lsn);
	ASSERT_EQ(st.used, st2.used);
}

static void blocked_writer_then(struct __test_metadata *_metadata,
				FIXTURE_DATA(small) *self, bool via_ctl)
{
	struct child_args a = {
		.op = OP_WRITE, .open_flags = O_WRONLY,
		.len = SMALL_MAX_RECORD, .seed = 4242, .seek = -1,
		.sig_flags = -1,
	};
	struct rdmalog_read_record rr;
	struct rdmalog_state st, st2;
	char out[1024];
	int e, status;
	long n;

	n = fill_ring(SMALL_MAX_RECORD, &e);
	ASSERT_LT(0, n);
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	self->child = child_start(self->sh, &a);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(child_blocked(self->sh, self->child)) {
		TH_LOG("writer did not block on a full ring (ret %ld, %s)",
		       self->sh->ret, strerrorname_np(self->sh->err));
	}
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(st.next_lsn, st2.next_lsn);
	ASSERT_EQ(st.used, st2.used);

	if (via_ctl) {
		ASSERT_EQ(0, rl_ctl(out, sizeof(out), "log trim 3")) {
			TH_LOG("rdmalogctl log trim 3: %s", out);
		}
	} else {
		ASSERT_EQ(0, rl_trim(self->fd, 3));
	}
	ASSERT_TRUE(child_finish(self->child, WAKE_MS, &status)) {
		TH_LOG("writer not woken by the trim: %s",
		       rl_status_str(status));
	}
	self->child = -1;
	ASSERT_EQ(SMALL_MAX_RECORD, self->sh->ret) {
		TH_LOG("write: %s", strerrorname_np(self->sh->err));
	}
	ASSERT_EQ(st.next_lsn, self->sh->last_lsn);
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(3, st2.first_lsn);
	ASSERT_EQ(st.next_lsn + 1, st2.next_lsn);
	ASSERT_EQ((uint64_t)(n - 1) * rl_rec_bytes(SMALL_MAX_RECORD),
		  st2.used);
	ASSERT_EQ(SMALL_MAX_RECORD, rl_read_record(self->fd, st.next_lsn, 0,
						   rbuf, sizeof(rbuf), &rr));
	rl_pattern(wbuf, SMALL_MAX_RECORD, 4242);
	ASSERT_EQ(0, memcmp(wbuf, rbuf, SMALL_MAX_RECORD));
	ASSERT_EQ(rl_crc32c_bitwise(wbuf, SMALL_MAX_RECORD), rr.hdr.crc32c);
}

TEST_F_TIMEOUT(small, full_ring_blocks_writer_until_trim_ioctl, RL_TIMEOUT)
{
	blocked_writer_then(_metadata, self, false);
}

TEST_F_TIMEOUT(small, full_ring_blocks_writer_until_rdmalogctl_trim,
	       RL_TIMEOUT)
{
	blocked_writer_then(_metadata, self, true);
}

TEST_F_TIMEOUT(small, signal_interrupts_blocked_write, RL_TIMEOUT)
{
	struct child_args a = {
		.op = OP_WRITE, .open_flags = O_WRONLY, .len = 1000,
		.seed = 1, .seek = -1, .sig_flags = 0,
	};
	struct rdmalog_state st, st2;
	int e, status;

	ASSERT_LT(0, fill_ring(SMALL_MAX_RECORD, &e));
	/* fill the rest so not even the 1000-byte record fits */
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	ASSERT_EQ((ssize_t)(SMALL_CAPACITY - st.used - RL_HDR_BYTES),
		  write(self->fd, wbuf, SMALL_CAPACITY - st.used -
			RL_HDR_BYTES));
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	self->child = child_start(self->sh, &a);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(child_blocked(self->sh, self->child));
	ASSERT_EQ(0, kill(self->child, SIGUSR1));
	ASSERT_TRUE(child_finish(self->child, WAKE_MS, &status)) {
		TH_LOG("writer %s", rl_status_str(status));
	}
	self->child = -1;
	ASSERT_EQ(1, self->sh->signals);
	ASSERT_EQ(-1, self->sh->ret);
	ASSERT_EQ(EINTR, self->sh->err) {
		TH_LOG("got %s", strerrorname_np(self->sh->err));
	}
	ASSERT_EQ(0, self->sh->last_lsn);
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(st.next_lsn, st2.next_lsn);
	ASSERT_EQ(st.commit_lsn, st2.commit_lsn);
	ASSERT_EQ(st.used, st2.used);
	/* and after a trim the space is all there for a new record */
	ASSERT_EQ(0, rl_trim(self->fd, 2));
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(st.used - rl_rec_bytes(SMALL_MAX_RECORD), st2.used);
	ASSERT_EQ(SMALL_MAX_RECORD, write(self->fd, wbuf, SMALL_MAX_RECORD));
}

TEST_F_TIMEOUT(small, sa_restart_write_restarts, RL_TIMEOUT)
{
	struct child_args a = {
		.op = OP_WRITE, .open_flags = O_WRONLY,
		.len = SMALL_MAX_RECORD, .seed = 2, .seek = -1,
		.sig_flags = SA_RESTART,
	};
	struct rdmalog_state st, st2;
	int e, status;

	ASSERT_LT(0, fill_ring(SMALL_MAX_RECORD, &e));
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	self->child = child_start(self->sh, &a);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(child_blocked(self->sh, self->child));
	ASSERT_EQ(0, kill(self->child, SIGUSR1));
	ASSERT_EQ(0, rl_wait_sleeping(self->child, 0, BLOCK_MS));
	ASSERT_EQ(0, self->sh->done) {
		TH_LOG("write returned %ld (%s) under SA_RESTART",
		       self->sh->ret, strerrorname_np(self->sh->err));
	}
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(st.next_lsn, st2.next_lsn);
	ASSERT_EQ(0, rl_trim(self->fd, 2));
	ASSERT_TRUE(child_finish(self->child, WAKE_MS, &status));
	self->child = -1;
	ASSERT_EQ(1, self->sh->signals);
	ASSERT_EQ(SMALL_MAX_RECORD, self->sh->ret) {
		TH_LOG("write: %s", strerrorname_np(self->sh->err));
	}
	ASSERT_EQ(st.next_lsn, self->sh->last_lsn);
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(st.next_lsn + 1, st2.next_lsn);
}

TEST_F_TIMEOUT(small, sigkill_blocked_writer_appends_nothing, RL_TIMEOUT)
{
	struct child_args a = {
		.op = OP_WRITE, .open_flags = O_WRONLY,
		.len = SMALL_MAX_RECORD, .seed = 3, .seek = -1,
		.sig_flags = -1,
	};
	struct rdmalog_state st, st2;
	int e, status;

	ASSERT_LT(0, fill_ring(SMALL_MAX_RECORD, &e));
	ASSERT_EQ(0, rl_get_state(self->fd, &st));
	self->child = child_start(self->sh, &a);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(child_blocked(self->sh, self->child));
	ASSERT_EQ(0, kill(self->child, SIGKILL));
	ASSERT_EQ(self->child, rl_waitpid_ms(self->child, &status, WAKE_MS));
	self->child = -1;
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ASSERT_EQ(0, rl_get_state(self->fd, &st2));
	ASSERT_EQ(st.next_lsn, st2.next_lsn);
	ASSERT_EQ(st.used, st2.used);
	/* the freed space goes to the next writer */
	ASSERT_EQ(0, rl_trim(self->fd, 2));
	ASSERT_EQ(SMALL_MAX_RECORD, write(self->fd, wbuf, SMALL_MAX_RECORD));
	ASSERT_EQ(st.next_lsn, rl_last_lsn(self->fd));
}

TEST_F_TIMEOUT(small, down_wakes_blocked_writer, RL_TIMEOUT)
{
	struct child_args a = {
		.op = OP_WRITE, .open_flags = O_RDWR,
		.len = SMALL_MAX_RECORD, .seed = 4, .seek = -1,
		.sig_flags = -1, .after_down = true,
	};
	char out[1024];
	uint64_t t0;
	int e, status;

	ASSERT_LT(0, fill_ring(SMALL_MAX_RECORD, &e));
	self->child = child_start(self->sh, &a);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(child_blocked(self->sh, self->child));
	ASSERT_EQ(0, rl_ctl(out, sizeof(out), "node down")) TH_LOG("%s", out);
	t0 = rl_mono_ms();
	ASSERT_TRUE(child_finish(self->child, WAKE_MS, &status)) {
		TH_LOG("writer not woken by down: %s", rl_status_str(status));
	}
	self->child = -1;
	EXPECT_GT(10000, rl_mono_ms() - t0);
	ASSERT_EQ(-1, self->sh->ret);
	ASSERT_EQ(ENETDOWN, self->sh->err) {
		TH_LOG("got %s", strerrorname_np(self->sh->err));
	}
	EXPECT_EQ(ENETDOWN, self->sh->write_err);
	EXPECT_EQ(ENETDOWN, self->sh->read_err);
	EXPECT_EQ(ENETDOWN, self->sh->lseek_err);
	EXPECT_EQ(ENETDOWN, self->sh->ioctl_err);
	EXPECT_EQ(POLLERR | POLLHUP,
		  self->sh->revents & (POLLERR | POLLHUP));
}

/*
 * Many cycles around a small ring with records of many sizes, so records
 * (and their headers) wrap around the ring's end: every record reads back
 * intact, by read() and by READ_RECORD.
 */
TEST_F_TIMEOUT(small, wraparound_contents_intact, RL_TIMEOUT)
{
	struct rdmalog_read_record rr;
	struct rdmalog_state st;
	uint64_t lsn, total = 0, first = 1, expect_used = 0;
	static uint32_t lens[1000];
	int fd, rfd, i;
	size_t len;

	fd = open_log(O_WRONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	rfd = open_log(O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, rfd);
	for (i = 0; i < 600; i++) {
		/* sizes that walk every alignment and reach max_record */
		len = 1 + (i * 2654435761U) % SMALL_MAX_RECORD;
		if (i % 50 == 7)
			len = SMALL_MAX_RECORD;
		rl_pattern(wbuf, len, 10000 + i);
		while (write(fd, wbuf, len) != (ssize_t)len) {
			ASSERT_EQ(EAGAIN, errno);
			/* read the oldest, then trim it */
			ASSERT_EQ((int)lens[first],
				  rl_read_record(rfd, first, 0, rbuf,
						 sizeof(rbuf), &rr));
			rl_pattern(wbuf, lens[first], 10000 + first - 1);
			ASSERT_EQ(0, memcmp(wbuf, rbuf, lens[first])) {
				TH_LOG("LSN %llu differs",
				       (unsigned long long)first);
			}
			ASSERT_EQ(rl_crc32c(wbuf, lens[first]),
				  rr.hdr.crc32c);
			expect_used -= rl_rec_bytes(lens[first]);
			first++;
			ASSERT_EQ(0, rl_trim(rfd, first));
			rl_pattern(wbuf, len, 10000 + i);
		}
		lsn = rl_last_lsn(fd);
		ASSERT_EQ((uint64_t)i + 1, lsn);
		lens[lsn] = len;
		total += len;
		expect_used += rl_rec_bytes(len);
		ASSERT_EQ(0, rl_get_state(rfd, &st));
		ASSERT_EQ(expect_used, st.used);
		ASSERT_EQ(first, st.first_lsn);
	}
	/* went around the ring several times */
	ASSERT_LT(5 * SMALL_CAPACITY, total);
	/* the retained tail, in order, with read() */
	ASSERT_EQ((off_t)first, lseek(rfd, first, SEEK_SET));
	for (lsn = first; lsn <= 600; lsn++) {
		ASSERT_EQ((ssize_t)lens[lsn], read(rfd, rbuf, sizeof(rbuf)));
		rl_pattern(wbuf, lens[lsn], 10000 + lsn - 1);
		ASSERT_EQ(0, memcmp(wbuf, rbuf, lens[lsn]));
	}
	ASSERT_SYSERR(read(rfd, rbuf, sizeof(rbuf)), EAGAIN);
	close(fd);
	close(rfd);
}

/* ------------------------------------------------------------------ */
/*
 * A reader stalled in copy_to_user() (its buffer is a page that
 * userfaultfd leaves missing until the test resolves the fault) holds up
 * no trim, neither RDMALOG_IOC_TRIM nor "rdmalogctl log trim" (generic
 * netlink). Once the fault is resolved, the reader returns the record if
 * it is still retained, and -ERANGE with its cursor unchanged if it was
 * trimmed meanwhile, whether or not appenders have reused its ring space
 * (device.rst: -ERANGE, the record was trimmed).
 */

enum stall_mode {
	STALL_KEEP,		/* nothing happens to the record meanwhile */
	STALL_TRIM,		/* it is trimmed, its space not reused */
	STALL_OVERWRITE,	/* it is trimmed and its space rewritten */
};

struct stall_reader {
	int fd;
	bool read_record;	/* READ_RECORD AT_CURSOR instead of read() */
	void *buf;
	size_t len;
	int done;		/* __atomic */
	long ret;
	int err;
	off_t cursor;
	struct rdmalog_read_record rr;
};

static void *stall_reader_main(void *arg)
{
	struct stall_reader *r = arg;

	errno = 0;
	if (r->read_record)
		r->ret = rl_read_record(r->fd, 0, RDMALOG_RR_AT_CURSOR, r->buf,
					r->len, &r->rr);
	else
		r->ret = read(r->fd, r->buf, r->len);
	r->err = errno;
	r->cursor = rl_cursor(r->fd);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static bool stall_reader_done(struct stall_reader *r)
{
	return __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
}

/*
 * Trim to @lsn in a child process, with RDMALOG_IOC_TRIM on @fd or with
 * "rdmalogctl log trim", so that a trim that never returns shows as a
 * timeout here instead of hanging the test. The child exits 0 when the
 * trim returned 0. True when it finished within @ms, its exit status then
 * in *@status; otherwise *@pid is the child, still running (or -1).
 */
static bool trim_in_child(int fd, uint64_t lsn, bool via_ctl,
			  unsigned int ms, pid_t *pid, int *status)
{
	char out[1024];
	int rc;

	fflush(stdout);
	fflush(stderr);
	*pid = fork();
	if (*pid < 0)
		return false;
	if (*pid == 0) {
		if (via_ctl) {
			rc = rl_ctl(out, sizeof(out), "log trim %llu",
				    (unsigned long long)lsn);
			if (rc)
				fprintf(stderr, "# rdmalogctl log trim %llu: "
					"rc %d: %s\n",
					(unsigned long long)lsn, rc, out);
			_exit(rc ? 1 : 0);
		}
		if (rl_trim(fd, lsn)) {
			fprintf(stderr, "# RDMALOG_IOC_TRIM %llu: %s\n",
				(unsigned long long)lsn, strerror(errno));
			_exit(1);
		}
		_exit(0);
	}
	if (rl_waitpid_ms(*pid, status, ms) != *pid)
		return false;
	*pid = -1;
	return true;
}

static void stalled_reader_then(struct __test_metadata *_metadata,
				FIXTURE_DATA(small) *self,
				enum stall_mode mode, bool read_record)
{
	static const size_t lens[3] = { 1000, 2000, 3000 };
	long pg = sysconf(_SC_PAGESIZE);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffdio_copy copy;
	struct stall_reader r;
	struct rdmalog_state st;
	struct pollfd pfd;
	struct uffd_msg msg;
	uint64_t head = 0, until, f1 = rl_rec_bytes(lens[0]);
	uint8_t *page, *src;
	pthread_t thr;
	int uffd, status, i;

	ASSERT_LE((long)lens[2], pg);
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 && (errno == ENOSYS || errno == EPERM))
		SKIP(return, "userfaultfd unavailable in this kernel: %s",
		     strerrorname_np(errno));
	ASSERT_LE(0, uffd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api)) {
		TH_LOG("UFFDIO_API: %s", strerror(errno));
	}
	page = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	src = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, src);
	memset(src, 0xa5, pg);
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)page;
	reg.range.len = pg;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		TH_LOG("UFFDIO_REGISTER: %s", strerror(errno));
	}

	/* records 1..3; record 1 takes stream bytes [0, f1) */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ((uint64_t)i + 1, append(self->fd, lens[i], 50 + i));
		head += rl_rec_bytes(lens[i]);
	}

	/* a reader of record 1 faults on its buffer and stays there */
	memset(&r, 0, sizeof(r));
	r.fd = open_log(O_RDONLY);
	ASSERT_LE(0, r.fd);
	r.read_record = read_record;
	r.buf = page;
	r.len = pg;
	ASSERT_EQ(0, pthread_create(&thr, NULL, stall_reader_main, &r));
	memset(&pfd, 0, sizeof(pfd));
	pfd.fd = uffd;
	pfd.events = POLLIN;
	ASSERT_EQ(1, poll(&pfd, 1, BLOCK_MS)) {
		TH_LOG("no userfaultfd event: the reader did not fault on "
		       "its buffer (done %d, ret %ld, %s)",
		       stall_reader_done(&r), r.ret, strerrorname_np(r.err));
	}
	ASSERT_EQ((ssize_t)sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
	ASSERT_EQ((uintptr_t)page, msg.arg.pagefault.address & ~(pg - 1ULL));
	/* the kernel copies the record out: a write fault */
	ASSERT_NE(0, msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WRITE);
	ASSERT_FALSE(stall_reader_done(&r));

	if (mode != STALL_KEEP) {
		/* both trims return at once (20 s is only a hang bound) */
		ASSERT_TRUE(trim_in_child(self->fd, 2, false, WAKE_MS,
					  &self->child, &status)) {
			TH_LOG("RDMALOG_IOC_TRIM did not return within %u s "
			       "while a reader was stalled in copy_to_user",
			       WAKE_MS / 1000);
		}
		ASSERT_EQ(0, status) TH_LOG("trim: %s", rl_status_str(status));
		ASSERT_TRUE(trim_in_child(self->fd, 3, true, WAKE_MS,
					  &self->child, &status)) {
			TH_LOG("'rdmalogctl log trim 3' did not return within "
			       "%u s while a reader was stalled in "
			       "copy_to_user", WAKE_MS / 1000);
		}
		ASSERT_EQ(0, status) TH_LOG("rdmalogctl: %s",
					    rl_status_str(status));
		ASSERT_EQ(0, rl_get_state(self->fd, &st));
		ASSERT_EQ(3, st.first_lsn);
		ASSERT_EQ(rl_rec_bytes(lens[2]), st.used);
		ASSERT_FALSE(stall_reader_done(&r));
	}
	if (mode == STALL_OVERWRITE) {
		/*
		 * Go once around the ring, trimming all before each append,
		 * until stream bytes [capacity, capacity + f1), ring bytes
		 * [0, f1), have replaced record 1.
		 */
		until = SMALL_CAPACITY + f1;
		for (i = 0; head < until; i++) {
			ASSERT_EQ(0, rl_get_state(self->fd, &st));
			ASSERT_EQ(0, rl_trim(self->fd, st.commit_lsn));
			ASSERT_EQ(st.next_lsn, append(self->fd, SMALL_MAX_RECORD,
						      1000 + i));
			head += rl_rec_bytes(SMALL_MAX_RECORD);
		}
		ASSERT_FALSE(stall_reader_done(&r));
	}

	/* let the reader's copy go on */
	memset(&copy, 0, sizeof(copy));
	copy.dst = (uintptr_t)page;
	copy.src = (uintptr_t)src;
	copy.len = pg;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_COPY, &copy)) {
		TH_LOG("UFFDIO_COPY: %s", strerror(errno));
	}
	until = rl_mono_ms() + WAKE_MS;
	while (!stall_reader_done(&r) && rl_mono_ms() < until)
		rl_msleep(5);
	ASSERT_TRUE(stall_reader_done(&r)) {
		TH_LOG("the reader did not return once its fault was "
		       "resolved");
	}
	ASSERT_EQ(0, pthread_join(thr, NULL));

	if (mode == STALL_KEEP) {
		ASSERT_EQ((long)lens[0], r.ret) {
			TH_LOG("read: %s", strerrorname_np(r.err));
		}
		rl_pattern(wbuf, lens[0], 50);
		ASSERT_EQ(0, memcmp(wbuf, page, lens[0]));
		ASSERT_EQ(0xa5, page[lens[0]]);	/* nothing past the record */
		if (read_record) {
			ASSERT_EQ(1, r.rr.hdr.lsn);
			ASSERT_EQ(lens[0], r.rr.hdr.len);
			ASSERT_EQ(rl_crc32c(wbuf, lens[0]), r.rr.hdr.crc32c);
		}
		ASSERT_EQ(2, r.cursor);
	} else {
		/* trimmed while being read: -ERANGE, cursor unchanged */
		ASSERT_EQ(-1, r.ret) {
			TH_LOG("read of a trimmed record returned %ld", r.ret);
		}
		ASSERT_EQ(ERANGE, r.err) {
			TH_LOG("got %s", strerrorname_np(r.err));
		}
		ASSERT_EQ(1, r.cursor);
		if (mode == STALL_OVERWRITE) {
			/*
			 * The scenario is real: what the resumed copy took
			 * from the ring is not record 1 any more.
			 */
			rl_pattern(wbuf, lens[0], 50);
			ASSERT_NE(0, memcmp(wbuf, page, lens[0]));
		}
		/* and the descriptor goes on from first_lsn */
		ASSERT_EQ(0, rl_get_state(self->fd, &st));
		ASSERT_EQ((off_t)st.first_lsn,
			  lseek(r.fd, st.first_lsn, SEEK_SET));
		if (mode == STALL_TRIM) {
			ASSERT_EQ(3, st.first_lsn);
			ASSERT_EQ((ssize_t)lens[2],
				  read(r.fd, rbuf, sizeof(rbuf)));
			rl_pattern(wbuf, lens[2], 52);
			ASSERT_EQ(0, memcmp(wbuf, rbuf, lens[2]));
		} else {
			ASSERT_EQ(st.next_lsn - 1, st.first_lsn);
			ASSERT_EQ(SMALL_MAX_RECORD,
				  read(r.fd, rbuf, sizeof(rbuf)));
		}
	}
	close(r.fd);
	close(uffd);
	munmap(src, pg);
	munmap(page, pg);
}

TEST_F_TIMEOUT(small, trim_not_blocked_by_stalled_reader, RL_TIMEOUT)
{
	stalled_reader_then(_metadata, self, STALL_OVERWRITE, false);
}

TEST_F_TIMEOUT(small, stalled_read_record_of_trimmed_record_erange,
	       RL_TIMEOUT)
{
	stalled_reader_then(_metadata, self, STALL_TRIM, true);
}

TEST_F_TIMEOUT(small, stalled_reader_gets_record_once_resumed, RL_TIMEOUT)
{
	stalled_reader_then(_metadata, self, STALL_KEEP, false);
}

TEST_HARNESS_MAIN
