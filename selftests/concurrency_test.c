// SPDX-License-Identifier: GPL-2.0
/*
 * concurrency_test: many threads appending to /dev/rdmalog at once, with
 * and without readers tailing the log and a consumer trimming it.
 *
 * Every record is unique: writer thread T's record number S has a length
 * of 1..512 bytes and contents derived from (T, S); records of 16 bytes or
 * more start with T, S, the length and a CRC32C of the rest. Each writer
 * learns the LSN of each of its appends with RDMALOG_IOC_LAST_LSN on its
 * own descriptor. Afterwards the whole log is read back and checked:
 * exactly the records written, LSNs unique and gapless, every (T, S)
 * exactly once with intact contents, the header's CRC32C right, and per
 * thread the LSNs increasing with S.
 *
 * Runs as root in the test VM with rdmalog loaded and rdmalogctl in PATH.
 * The VM is slow (TCG), hence the long timeouts.
 */
#include <pthread.h>
#include <sys/uio.h>

#include "rdmalog_test.h"

#define MAX_THREADS	8
#define MAX_LEN		512
#define ID_BYTES	16
#define TEST_TIMEOUT	1800

/* ------------------------------------------------------------------ */
/* Records */

static uint32_t mix32(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

static size_t rec_len(unsigned int tid, unsigned int seq)
{
	return 1 + mix32(((uint64_t)tid << 32) | seq) % MAX_LEN;
}

/* Payload of record (tid, seq); returns its length. */
static size_t rec_gen(unsigned int tid, unsigned int seq, uint8_t *buf)
{
	size_t len = rec_len(tid, seq);
	uint32_t w[4];

	rl_pattern(buf, len, ((uint64_t)(tid + 1) << 32) | seq);
	if (len >= ID_BYTES) {
		w[0] = tid;
		w[1] = seq;
		w[2] = (uint32_t)len;
		w[3] = rl_crc32c(buf + ID_BYTES, len - ID_BYTES);
		memcpy(buf, w, sizeof(w));
	}
	return len;
}

/* ------------------------------------------------------------------ */
/* One run: writers, optional readers, optional consumer. */

struct run;

struct writer {
	struct run *run;
	pthread_t th;
	unsigned int tid;
	char err[256];
};

enum reader_kind {
	RD_READ_RECORD,		/* blocking READ_RECORD AT_CURSOR */
	RD_READ,		/* blocking read() */
	RD_POLL,		/* O_NONBLOCK read() + poll() */
	RD_CONSUMER,		/* READ_RECORD AT_CURSOR, trims behind itself */
};

struct reader {
	struct run *run;
	pthread_t th;
	enum reader_kind kind;
	volatile uint64_t seen;		/* records read so far */
	uint32_t *len;			/* [i]: length of the i-th record */
	uint32_t *crc;			/* [i]: CRC32C of its payload */
	char err[256];
	volatile int done;
};

struct run {
	unsigned int nthreads, per_thread;
	uint64_t total;
	uint64_t first_lsn;		/* LSN of the first record */
	uint64_t *lsn;			/* [tid * per_thread + seq] */
	volatile int go;
	volatile int writers_left;
	struct writer w[MAX_THREADS];
	struct reader r[4];
	unsigned int nreaders;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct run *run = w->run;
	uint8_t buf[MAX_LEN];
	uint64_t prev = 0, lsn;
	unsigned int seq;
	size_t len;
	ssize_t n;
	int fd;

	fd = open(RL_DEV, O_WRONLY);
	if (fd < 0) {
		snprintf(w->err, sizeof(w->err), "open: %s", strerror(errno));
		goto out;
	}
	while (!run->go)
		sched_yield();
	for (seq = 0; seq < run->per_thread; seq++) {
		len = rec_gen(w->tid, seq, buf);
		n = write(fd, buf, len);
		if (n != (ssize_t)len) {
			snprintf(w->err, sizeof(w->err),
				 "thread %u seq %u: write(%zu) = %zd (%s)",
				 w->tid, seq, len, n, strerror(errno));
			break;
		}
		lsn = rl_last_lsn(fd);
		if (lsn == ~0ULL || lsn <= prev) {
			snprintf(w->err, sizeof(w->err),
				 "thread %u seq %u: LAST_LSN %llu after %llu",
				 w->tid, seq, (unsigned long long)lsn,
				 (unsigned long long)prev);
			break;
		}
		run->lsn[(size_t)w->tid * run->per_thread + seq] = lsn;
		prev = lsn;
	}
	close(fd);
out:
	__sync_fetch_and_sub(&run->writers_left, 1);
	return NULL;
}

static int reader_note(struct reader *r, uint64_t lsn_seen,
		       const uint8_t *buf, long n)
{
	struct run *run = r->run;
	uint64_t i = r->seen;

	if (lsn_seen && lsn_seen != run->first_lsn + i) {
		snprintf(r->err, sizeof(r->err),
			 "reader %d: record %llu has LSN %llu, expected %llu",
			 r->kind, (unsigned long long)i,
			 (unsigned long long)lsn_seen,
			 (unsigned long long)(run->first_lsn + i));
		return -1;
	}
	r->len[i] = (uint32_t)n;
	r->crc[i] = rl_crc32c(buf, n);
	r->seen = i + 1;
	return 0;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct run *run = r->run;
	struct rdmalog_read_record rr;
	static __thread uint8_t buf[8192];
	struct pollfd pfd;
	long n;
	int fd;

	fd = open(RL_DEV, r->kind == RD_POLL ? O_RDONLY | O_NONBLOCK :
					       O_RDONLY);
	if (fd < 0) {
		snprintf(r->err, sizeof(r->err), "reader %d: open: %s",
			 r->kind, strerror(errno));
		goto out;
	}
	if (lseek(fd, run->first_lsn, SEEK_SET) != (off_t)run->first_lsn) {
		snprintf(r->err, sizeof(r->err), "reader %d: lseek: %s",
			 r->kind, strerror(errno));
		goto out_close;
	}
	while (r->seen < run->total) {
		switch (r->kind) {
		case RD_READ_RECORD:
		case RD_CONSUMER:
			n = rl_read_record(fd, 0, RDMALOG_RR_AT_CURSOR, buf,
					   sizeof(buf), &rr);
			if (n < 0)
				break;
			if (rr.hdr.len != n ||
			    rr.hdr.crc32c != rl_crc32c(buf, n)) {
				snprintf(r->err, sizeof(r->err),
					 "reader %d: LSN %llu: hdr len %u crc "
					 "0x%08x, payload %ld bytes crc 0x%08x",
					 r->kind,
					 (unsigned long long)rr.hdr.lsn,
					 rr.hdr.len, rr.hdr.crc32c, n,
					 rl_crc32c(buf, n));
				goto out_close;
			}
			if (reader_note(r, rr.hdr.lsn, buf, n))
				goto out_close;
			/* the consumer frees what it has read, in batches */
			if (r->kind == RD_CONSUMER &&
			    (r->seen % 16 == 0 || r->seen == run->total) &&
			    rl_trim(fd, rr.hdr.lsn + 1)) {
				snprintf(r->err, sizeof(r->err),
					 "consumer: trim %llu: %s",
					 (unsigned long long)rr.hdr.lsn + 1,
					 strerror(errno));
				goto out_close;
			}
			continue;
		case RD_READ:
			n = read(fd, buf, sizeof(buf));
			if (n < 0)
				break;
			if (reader_note(r, 0, buf, n))
				goto out_close;
			continue;
		case RD_POLL:
			n = read(fd, buf, sizeof(buf));
			if (n >= 0) {
				if (reader_note(r, 0, buf, n))
					goto out_close;
				continue;
			}
			if (errno != EAGAIN)
				break;
			pfd.fd = fd;
			pfd.events = POLLIN;
			pfd.revents = 0;
			/* a lost wakeup would show as a stall here */
			if (poll(&pfd, 1, 120000) != 1 ||
			    pfd.revents != POLLIN) {
				snprintf(r->err, sizeof(r->err),
					 "poller: no POLLIN within 120 s after "
					 "%llu records (revents 0x%x)",
					 (unsigned long long)r->seen,
					 pfd.revents);
				goto out_close;
			}
			continue;
		}
		snprintf(r->err, sizeof(r->err),
			 "reader %d: record %llu: %s", r->kind,
			 (unsigned long long)r->seen, strerror(errno));
		goto out_close;
	}
out_close:
	close(fd);
out:
	r->done = 1;
	return NULL;
}

/*
 * Check the log against what the writers recorded: first_lsn ..
 * first_lsn + total - 1 hold exactly every (tid, seq), once, intact; the
 * readers saw every record in LSN order.
 */
static void verify(struct __test_metadata *_metadata, struct run *run,
		   bool trimmed)
{
	uint64_t *owner, i, idx, l, end = run->first_lsn + run->total;
	struct rdmalog_read_record rr;
	struct rdmalog_state st;
	static uint8_t buf[8192], want[MAX_LEN];
	unsigned int t, s, k, bad = 0;
	uint32_t w[4];
	size_t len;
	long n;
	int fd;

	/* LSN -> (tid, seq): each LSN given to exactly one append */
	owner = calloc(run->total, sizeof(*owner));
	ASSERT_NE(NULL, owner);
	for (t = 0; t < run->nthreads; t++) {
		uint64_t prev = 0;

		for (s = 0; s < run->per_thread; s++) {
			l = run->lsn[(size_t)t * run->per_thread + s];
			ASSERT_LE(run->first_lsn, l);
			ASSERT_GT(end, l) TH_LOG("LSN %llu beyond the %llu "
						 "records appended",
						 (unsigned long long)l,
						 (unsigned long long)run->total);
			ASSERT_LT(prev, l) TH_LOG("thread %u: seq %u got LSN "
						  "%llu after %llu", t, s,
						  (unsigned long long)l,
						  (unsigned long long)prev);
			prev = l;
			idx = l - run->first_lsn;
			ASSERT_EQ(0, owner[idx]) {
				TH_LOG("LSN %llu given to (%llu,%llu) and "
				       "(%u,%u)", (unsigned long long)l,
				       (unsigned long long)(owner[idx] >> 32) - 1,
				       (unsigned long long)owner[idx] & 0xffffffff,
				       t, s);
			}
			owner[idx] = ((uint64_t)(t + 1) << 32) | s;
		}
	}
	/* total distinct LSNs in a range of total: gapless */

	fd = open(RL_DEV, O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rl_get_state(fd, &st));
	ASSERT_EQ(end, st.next_lsn);
	ASSERT_EQ(end, st.commit_lsn);
	if (!trimmed) {
		ASSERT_EQ(run->first_lsn, st.first_lsn);
		/* pass 1: READ_RECORD by LSN, header and payload */
		for (l = run->first_lsn; l < end; l++) {
			idx = l - run->first_lsn;
			t = (owner[idx] >> 32) - 1;
			s = owner[idx] & 0xffffffff;
			len = rec_gen(t, s, want);
			n = rl_read_record(fd, l, 0, buf, sizeof(buf), &rr);
			ASSERT_EQ((long)len, n) {
				TH_LOG("LSN %llu (%u,%u): %ld (%s), expected "
				       "%zu bytes", (unsigned long long)l, t,
				       s, n, strerror(errno), len);
			}
			ASSERT_EQ(l, rr.hdr.lsn);
			ASSERT_EQ(len, rr.hdr.len);
			ASSERT_EQ(0, memcmp(want, buf, len)) {
				TH_LOG("LSN %llu (%u,%u): payload differs",
				       (unsigned long long)l, t, s);
			}
			ASSERT_EQ(rl_crc32c(buf, len), rr.hdr.crc32c) {
				TH_LOG("LSN %llu: header CRC32C 0x%08x, "
				       "payload's 0x%08x",
				       (unsigned long long)l, rr.hdr.crc32c,
				       rl_crc32c(buf, len));
			}
			if (len >= ID_BYTES) {
				memcpy(w, buf, sizeof(w));
				ASSERT_EQ(t, w[0]);
				ASSERT_EQ(s, w[1]);
				ASSERT_EQ(len, w[2]);
				ASSERT_EQ(rl_crc32c(buf + ID_BYTES,
						    len - ID_BYTES), w[3]);
			}
		}
		/* nothing beyond */
		ASSERT_SYSERR(rl_read_record(fd, end, 0, buf, sizeof(buf),
					     &rr), ENODATA);
		/* pass 2: read() from the start, one record per call */
		ASSERT_EQ((off_t)run->first_lsn,
			  lseek(fd, run->first_lsn, SEEK_SET));
		for (i = 0; i < run->total; i++) {
			t = (owner[i] >> 32) - 1;
			s = owner[i] & 0xffffffff;
			len = rec_gen(t, s, want);
			n = read(fd, buf, sizeof(buf));
			ASSERT_EQ((long)len, n);
			ASSERT_EQ(0, memcmp(want, buf, len));
		}
		ASSERT_SYSERR(read(fd, buf, sizeof(buf)), EAGAIN);
	}
	close(fd);

	/* what every reader saw, in order */
	for (k = 0; k < run->nreaders; k++) {
		struct reader *r = &run->r[k];

		ASSERT_EQ(run->total, r->seen) TH_LOG("reader %d", r->kind);
		for (i = 0; i < run->total && bad < 5; i++) {
			t = (owner[i] >> 32) - 1;
			s = owner[i] & 0xffffffff;
			len = rec_gen(t, s, want);
			if (r->len[i] != len ||
			    r->crc[i] != rl_crc32c(want, len)) {
				TH_LOG("reader %d: record %llu (LSN %llu) is "
				       "%u bytes crc 0x%08x, expected (%u,%u) "
				       "%zu bytes", r->kind,
				       (unsigned long long)i,
				       (unsigned long long)(run->first_lsn + i),
				       r->len[i], r->crc[i], t, s, len);
				bad++;
			}
		}
		ASSERT_EQ(0, bad);
	}
	free(owner);
}

static void run_init(struct __test_metadata *_metadata, struct run *run,
		     unsigned int nthreads, unsigned int per_thread)
{
	unsigned int t;
	int fd;
	struct rdmalog_state st;

	memset(run, 0, sizeof(*run));
	run->nthreads = nthreads;
	run->per_thread = per_thread;
	run->total = (uint64_t)nthreads * per_thread;
	run->lsn = calloc(run->total, sizeof(*run->lsn));
	ASSERT_NE(NULL, run->lsn);
	fd = open(RL_DEV, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rl_get_state(fd, &st));
	close(fd);
	run->first_lsn = st.next_lsn;
	for (t = 0; t < nthreads; t++) {
		run->w[t].run = run;
		run->w[t].tid = t;
	}
}

static void add_reader(struct __test_metadata *_metadata, struct run *run,
		       enum reader_kind kind)
{
	struct reader *r = &run->r[run->nreaders++];

	r->run = run;
	r->kind = kind;
	r->len = calloc(run->total, sizeof(*r->len));
	r->crc = calloc(run->total, sizeof(*r->crc));
	ASSERT_NE(NULL, r->len);
	ASSERT_NE(NULL, r->crc);
}

/* Start readers, then writers; wait for all (readers: up to @grace_ms
 * after the writers finished).
 */
static void run_all(struct __test_metadata *_metadata, struct run *run,
		    unsigned int grace_ms)
{
	unsigned int t, k;
	uint64_t end;
	bool readers_done;

	for (k = 0; k < run->nreaders; k++)
		ASSERT_EQ(0, pthread_create(&run->r[k].th, NULL, reader_main,
					    &run->r[k]));
	run->writers_left = run->nthreads;
	for (t = 0; t < run->nthreads; t++)
		ASSERT_EQ(0, pthread_create(&run->w[t].th, NULL, writer_main,
					    &run->w[t]));
	run->go = 1;
	for (t = 0; t < run->nthreads; t++)
		pthread_join(run->w[t].th, NULL);
	for (t = 0; t < run->nthreads; t++)
		ASSERT_EQ(0, run->w[t].err[0]) TH_LOG("%s", run->w[t].err);

	end = rl_mono_ms() + grace_ms;
	do {
		readers_done = true;
		for (k = 0; k < run->nreaders; k++)
			readers_done &= run->r[k].done;
		if (readers_done)
			break;
		rl_msleep(50);
	} while (rl_mono_ms() < end);
	for (k = 0; k < run->nreaders; k++) {
		ASSERT_TRUE(run->r[k].done) {
			TH_LOG("reader %d stuck after %llu of %llu records",
			       run->r[k].kind,
			       (unsigned long long)run->r[k].seen,
			       (unsigned long long)run->total);
		}
		pthread_join(run->r[k].th, NULL);
		ASSERT_EQ(0, run->r[k].err[0]) TH_LOG("%s", run->r[k].err);
	}
}

static void run_free(struct run *run)
{
	unsigned int k;

	free(run->lsn);
	for (k = 0; k < run->nreaders; k++) {
		free(run->r[k].len);
		free(run->r[k].crc);
	}
}

/* ------------------------------------------------------------------ */

FIXTURE(conc) {
	struct run run;
};

FIXTURE_VARIANT(conc) {
	uint64_t capacity;
	uint32_t max_record;
};

/* room for everything: nothing waits for space */
FIXTURE_VARIANT_ADD(conc, big_ring) {
	.capacity = 64ULL << 20,
	.max_record = 4096,
};

FIXTURE_SETUP(conc)
{
	char err[2048];

	ASSERT_EQ(0, rl_crc32c_selfcheck());
	ASSERT_EQ(0, rl_log_reset(variant->capacity, variant->max_record,
				  "async", err, sizeof(err))) {
		TH_LOG("%s", err);
	}
}

FIXTURE_TEARDOWN(conc)
{
	run_free(&self->run);
}

/* 8 threads x 10000 appends, then read everything back. */
TEST_F_TIMEOUT(conc, writers_8x10000, TEST_TIMEOUT)
{
	struct rdmalog_state st;
	uint64_t used = 0, t0;
	unsigned int t, s;
	int fd;

	run_init(_metadata, &self->run, 8, 10000);
	ASSERT_EQ(1, self->run.first_lsn);
	t0 = rl_mono_ms();
	run_all(_metadata, &self->run, 0);
	TH_LOG("80000 appends from 8 threads in %llu ms",
	       (unsigned long long)(rl_mono_ms() - t0));
	verify(_metadata, &self->run, false);

	for (t = 0; t < 8; t++)
		for (s = 0; s < 10000; s++)
			used += rl_rec_bytes(rec_len(t, s));
	fd = open(RL_DEV, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rl_get_state(fd, &st));
	close(fd);
	ASSERT_EQ(1, st.first_lsn);
	ASSERT_EQ(80001, st.next_lsn);
	ASSERT_EQ(80001, st.commit_lsn);
	ASSERT_EQ(used, st.used);
}

/* Readers tail the log while 8 writers append: blocking READ_RECORD,
 * blocking read() and O_NONBLOCK + poll() readers each see every record,
 * in LSN order, no gaps.
 */
TEST_F_TIMEOUT(conc, tailing_readers, TEST_TIMEOUT)
{
	run_init(_metadata, &self->run, 8, 4000);
	add_reader(_metadata, &self->run, RD_READ_RECORD);
	add_reader(_metadata, &self->run, RD_READ);
	add_reader(_metadata, &self->run, RD_POLL);
	run_all(_metadata, &self->run, 300000);
	verify(_metadata, &self->run, false);
}

/* A ring far smaller than the data: writers block on the full ring and are
 * woken by a consumer that reads in order and trims behind itself.
 */
TEST_F_TIMEOUT(conc, consumer_trims_full_ring, TEST_TIMEOUT)
{
	struct rdmalog_state st;
	char err[2048];
	int fd;

	/* 64 KiB ring: ~200 records of these sizes at a time */
	ASSERT_EQ(0, rl_log_reset(64 << 10, 4096, "async", err,
				  sizeof(err))) {
		TH_LOG("%s", err);
	}
	run_init(_metadata, &self->run, 8, 2500);
	add_reader(_metadata, &self->run, RD_CONSUMER);
	run_all(_metadata, &self->run, 300000);
	verify(_metadata, &self->run, true);

	fd = open(RL_DEV, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rl_get_state(fd, &st));
	close(fd);
	ASSERT_EQ(20001, st.first_lsn);
	ASSERT_EQ(20001, st.next_lsn);
	ASSERT_EQ(0, st.used);
}

TEST_HARNESS_MAIN
