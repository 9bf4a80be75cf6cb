// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog-agent: guest command agent for the rdmalog VM test harness.
 *
 * Runs inside each test VM (started by /init) on a virtio-serial port
 * named "rdmalog.agent".  The host (selftests/vm/cluster.py) sends
 * requests; for each EXEC request the agent forks a worker that runs
 * "/bin/sh -c CMD" in its own process group, streams its output back and
 * finally reports the exit status.  Many requests may run concurrently.
 *
 * Wire format (both directions), integers little-endian:
 *
 *   struct frame {
 *           char  magic[4];   "RLAG"
 *           u8    type;       see below
 *           u8    flags;      0
 *           u16   reserved;   0
 *           u32   id;         request id chosen by the host
 *           u32   len;        payload length, <= MAX_PAYLOAD
 *           u8    payload[len];
 *   };
 *
 * Host -> guest:
 *   'X' exec:  u32 timeout_ms (0 = none), u32 cmd_len, cmd[cmd_len],
 *              stdin bytes (rest of payload; empty -> /dev/null)
 *   'K' kill:  [u32 signo] (default SIGKILL) sent to the process group of
 *              request id (also reaches leftover background jobs of a
 *              finished request while the worker still drains them)
 *   'P' ping:  any payload, echoed back in a 'p' frame
 * Guest -> host:
 *   'O' output: a chunk of the command's stdout+stderr (one merged stream,
 *              ordering as written by the command)
 *   'R' result: i32 rc (exit code, or 128+signo), u32 flags
 *              (1 = timed out, 2 = killed on request), i32 raw wait status,
 *              u32 elapsed_ms.  Always the last frame for an id.
 *   'E' error: text; the request could not be started (also last frame)
 *   'p' pong
 *
 * A receiver that sees a bad magic or an oversized length drops one byte
 * and searches for the next magic, so a torn frame (e.g. a host that
 * reconnected mid-frame) cannot wedge the stream.
 *
 * Writes to the port from the main loop and from all workers are
 * serialised with a POSIX record lock (per-process, not inherited by
 * fork) on a lock file, so frames never interleave.
 *
 * On timeout the command's whole process group gets SIGKILL.  When the
 * command's main process has exited, output still arriving within a short
 * grace period is forwarded, then the result is sent; afterwards the worker
 * keeps draining (and discarding) the pipe until every writer closed it, so
 * a background job started with "cmd &" does not die of SIGPIPE.
 *
 * The agent is a child subreaper: orphaned background jobs are reparented
 * to it and reaped here.
 *
 * Build: gcc -static -O2 -Wall -o build/vm/agent selftests/vm/agent.c
 * Usage: rdmalog-agent [PORT_DEVICE]   (default: look up the port named
 *        "rdmalog.agent" in /sys/class/virtio-ports)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PORT_NAME	"rdmalog.agent"
#define LOCK_PATH	"/run/rdmalog-agent.lock"
#define MAX_PAYLOAD	(64u << 20)
#define HDR_LEN		16
#define MAX_JOBS	1024
#define CHUNK		(64 * 1024)
#define GRACE_MS	200	/* output still accepted after main exits */

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static int port_fd = -1;
static int lock_fd = -1;

static void logmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "rdmalog-agent[%d]: ", (int)getpid());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pfd = { .fd = fd, .events = POLLOUT };

				poll(&pfd, 1, 100);
				continue;
			}
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

static void port_lock(int how)
{
	struct flock fl = { .l_type = how, .l_whence = SEEK_SET };

	while (fcntl(lock_fd, F_SETLKW, &fl) < 0 && errno == EINTR)
		;
}

/* Send one frame; two parts so callers need not copy the payload. */
static int send_frame2(int type, uint32_t id, const void *a, size_t alen,
		       const void *b, size_t blen)
{
	uint8_t hdr[HDR_LEN] = { 'R', 'L', 'A', 'G', type, 0, 0, 0 };
	int ret;

	put32(hdr + 8, id);
	put32(hdr + 12, alen + blen);
	port_lock(F_WRLCK);
	ret = write_all(port_fd, hdr, HDR_LEN);
	if (!ret && alen)
		ret = write_all(port_fd, a, alen);
	if (!ret && blen)
		ret = write_all(port_fd, b, blen);
	port_lock(F_UNLCK);
	if (ret)
		logmsg("write to port failed: %s", strerror(errno));
	return ret;
}

static int send_frame(int type, uint32_t id, const void *p, size_t len)
{
	return send_frame2(type, id, p, len, NULL, 0);
}

static void send_error(uint32_t id, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	send_frame('E', id, buf, n);
}

/* ---------------------------------------------------------------- worker */

static volatile pid_t cmd_pgid;		/* 0 until the command is forked */
static volatile int pending_sig;	/* kill requested before fork */
static volatile sig_atomic_t killed;

/* SIGUSR1 from the main loop carries the signal to forward (sigqueue). */
static void on_kill_req(int sig, siginfo_t *si, void *uc)
{
	int signo = si->si_value.sival_int;

	(void)sig; (void)uc;
	if (signo <= 0 || signo >= 65)
		signo = SIGKILL;
	killed = 1;
	if (cmd_pgid > 0)
		kill(-cmd_pgid, signo);
	else
		pending_sig = signo;
}

static void child_exec(const char *cmd, int in_fd, int out_fd)
{
	sigset_t all;
	int i;

	setpgid(0, 0);
	for (i = 1; i < 65; i++)
		signal(i, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
		_exit(127);
	if (in_fd > 2)
		close(in_fd);
	if (out_fd > 2)
		close(out_fd);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(127);
}

static void run_worker(uint32_t id, uint32_t timeout_ms, char *cmd,
		       const uint8_t *in, size_t in_len)
{
	int out[2], inp[2] = { -1, -1 };
	uint64_t start = now_ms(), deadline = 0, exited_at = 0;
	size_t in_off = 0;
	int status = 0, timed_out = 0, main_done = 0, out_eof = 0;
	int pidfd;
	uint8_t res[16];
	char *buf;
	pid_t pid;
	struct sigaction sa = { 0 };
	int rc;

	sa.sa_sigaction = on_kill_req;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	/* start_exec() forked us with SIGUSR1 blocked: a kill request that
	 * came before the handler was there is delivered now */
	{
		sigset_t usr1;

		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_UNBLOCK, &usr1, NULL);
	}

	buf = malloc(CHUNK);
	if (!buf || pipe2(out, O_CLOEXEC)) {
		send_error(id, "worker setup failed: %s", strerror(errno));
		_exit(1);
	}
	if (in_len) {
		if (pipe2(inp, O_CLOEXEC)) {
			send_error(id, "pipe: %s", strerror(errno));
			_exit(1);
		}
	} else {
		inp[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}

	pid = fork();
	if (pid < 0) {
		send_error(id, "fork: %s", strerror(errno));
		_exit(1);
	}
	if (pid == 0)
		child_exec(cmd, inp[0], out[1]);

	setpgid(pid, pid);	/* also done by the child; avoids a race */
	cmd_pgid = pid;
	if (pending_sig)
		kill(-pid, pending_sig);
	close(out[1]);
	close(inp[0]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	if (inp[1] >= 0)
		fcntl(inp[1], F_SETFL, O_NONBLOCK);
	if (timeout_ms)
		deadline = start + timeout_ms;

	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		logmsg("pidfd_open: %s (falling back to polling)", strerror(errno));

	while (!(main_done && out_eof)) {
		struct pollfd pfd[3];
		int nfd = 0, wait = 1000, ipfd = -1, ppfd = -1;
		uint64_t t = now_ms();

		if (main_done) {
			/* grace period for output of the finished command */
			if (t >= exited_at + GRACE_MS)
				break;
			wait = exited_at + GRACE_MS - t;
		} else if (deadline) {
			if (t >= deadline) {
				kill(-pid, SIGKILL);
				timed_out = 1;
				deadline = 0;
			} else if (deadline - t < (uint64_t)wait) {
				wait = deadline - t;
			}
		}
		if (pidfd < 0 && !main_done && wait > 50)
			wait = 50;

		pfd[nfd].fd = out[0];
		pfd[nfd++].events = POLLIN;
		if (inp[1] >= 0) {
			ipfd = nfd;
			pfd[nfd].fd = inp[1];
			pfd[nfd++].events = POLLOUT;
		}
		if (pidfd >= 0 && !main_done) {
			ppfd = nfd;
			pfd[nfd].fd = pidfd;
			pfd[nfd++].events = POLLIN;
		}
		if (poll(pfd, nfd, wait) < 0 && errno != EINTR) {
			logmsg("poll: %s", strerror(errno));
			break;
		}

		if (!out_eof && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = read(out[0], buf, CHUNK);

			if (n > 0)
				send_frame('O', id, buf, n);
			else if (n == 0 || (errno != EAGAIN && errno != EINTR))
				out_eof = 1;
		}
		if (ipfd >= 0 && pfd[ipfd].revents) {
			ssize_t n = write(inp[1], in + in_off, in_len - in_off);

			if (n > 0)
				in_off += n;
			if ((n < 0 && errno != EAGAIN && errno != EINTR) ||
			    in_off == in_len) {
				close(inp[1]);	/* EOF (or EPIPE: drop rest) */
				inp[1] = -1;
			}
		}
		if (!main_done && (pidfd < 0 || (pfd[ppfd].revents & POLLIN))) {
			pid_t r = waitpid(pid, &status, WNOHANG);

			if (r == pid) {
				main_done = 1;
				exited_at = now_ms();
			}
		}
	}
	if (inp[1] >= 0)
		close(inp[1]);
	if (!main_done) {	/* only on a poll failure */
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
	}

	if (WIFEXITED(status))
		rc = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		rc = 128 + WTERMSIG(status);
	else
		rc = 255;
	put32(res, rc);
	put32(res + 4, (timed_out ? 1 : 0) | (killed ? 2 : 0));
	put32(res + 8, status);
	put32(res + 12, now_ms() - start);
	send_frame('R', id, res, sizeof(res));

	/* keep leftover background jobs from dying of SIGPIPE */
	if (!out_eof) {
		fcntl(out[0], F_SETFL, 0);
		for (;;) {
			ssize_t n = read(out[0], buf, CHUNK);

			if (n == 0 || (n < 0 && errno != EINTR))
				break;
		}
	}
	_exit(0);
}

/* ------------------------------------------------------------- main loop */

static struct job {
	uint32_t id;
	pid_t pid;
} jobs[MAX_JOBS];

static void reap(void)
{
	int status, i;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < MAX_JOBS; i++) {
			if (jobs[i].pid != pid)
				continue;
			jobs[i].pid = 0;
			/* a worker answers, then exits 0 or 1; killed, it
			 * could not: answer for it */
			if (WIFSIGNALED(status))
				send_error(jobs[i].id, "agent worker killed by signal %d",
					   WTERMSIG(status));
		}
	}
}

static void start_exec(uint32_t id, const uint8_t *p, uint32_t len)
{
	uint32_t timeout_ms, cmd_len;
	sigset_t usr1, old;
	char *cmd;
	pid_t pid;
	int i;

	if (len < 8 || (cmd_len = get32(p + 4)) > len - 8) {
		send_error(id, "malformed exec request");
		return;
	}
	timeout_ms = get32(p);
	for (i = 0; i < MAX_JOBS && jobs[i].pid; i++)
		;
	if (i == MAX_JOBS) {
		send_error(id, "too many concurrent requests");
		return;
	}
	cmd = strndup((const char *)p + 8, cmd_len);
	if (!cmd) {
		send_error(id, "out of memory");
		return;
	}
	/*
	 * The worker is listed (and can be sent a kill request) as soon as
	 * it exists, before it has set up its SIGUSR1 handler: fork it with
	 * SIGUSR1 blocked, else an early kill request would kill the worker
	 * itself, silently, and its request would never be answered.
	 */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	pid = fork();
	if (pid < 0) {
		send_error(id, "fork: %s", strerror(errno));
	} else if (pid == 0) {
		run_worker(id, timeout_ms, cmd, p + 8 + cmd_len,
			   len - 8 - cmd_len);
	} else {
		jobs[i].id = id;
		jobs[i].pid = pid;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(cmd);
}

static void kill_job(uint32_t id, const uint8_t *p, uint32_t len)
{
	union sigval v = { .sival_int = len >= 4 ? (int)get32(p) : SIGKILL };
	int i;

	for (i = 0; i < MAX_JOBS; i++)
		if (jobs[i].pid && jobs[i].id == id)
			sigqueue(jobs[i].pid, SIGUSR1, v);
}

static void handle_frame(int type, uint32_t id, const uint8_t *p, uint32_t len)
{
	switch (type) {
	case 'X':
		start_exec(id, p, len);
		break;
	case 'K':
		kill_job(id, p, len);
		break;
	case 'P':
		send_frame('p', id, p, len);
		break;
	default:
		send_error(id, "unknown request type 0x%02x", type);
	}
}

static char *find_port(void)
{
	static char path[300];
	struct dirent *de;
	DIR *d = opendir("/sys/class/virtio-ports");

	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		char name[256] = "", f[300];
		FILE *fp;

		if (de->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "/sys/class/virtio-ports/%s/name", de->d_name);
		fp = fopen(f, "r");
		if (!fp)
			continue;
		if (fgets(name, sizeof(name), fp))
			name[strcspn(name, "\n")] = 0;
		fclose(fp);
		if (!strcmp(name, PORT_NAME)) {
			snprintf(path, sizeof(path), "/dev/%s", de->d_name);
			closedir(d);
			return path;
		}
	}
	closedir(d);
	return NULL;
}

int main(int argc, char **argv)
{
	size_t cap = 1 << 20, have = 0;
	uint8_t *buf = malloc(cap);
	const char *port = argc > 1 ? argv[1] : NULL;
	int tries;

	if (!buf)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	for (tries = 0; !port && tries < 100; tries++) {
		port = find_port();
		if (!port)
			usleep(100 * 1000);
	}
	if (!port) {
		logmsg("no virtio port named %s", PORT_NAME);
		return 1;
	}
	port_fd = open(port, O_RDWR | O_CLOEXEC);
	if (port_fd < 0) {
		logmsg("open %s: %s", port, strerror(errno));
		return 1;
	}
	lock_fd = open(LOCK_PATH, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0) {
		logmsg("open %s: %s", LOCK_PATH, strerror(errno));
		return 1;
	}
	logmsg("listening on %s", port);

	for (;;) {
		struct pollfd pfd = { .fd = port_fd, .events = POLLIN };
		ssize_t n;
		size_t off = 0;

		reap();
		if (poll(&pfd, 1, 500) < 0) {
			if (errno != EINTR)
				logmsg("poll: %s", strerror(errno));
			continue;
		}
		if (!(pfd.revents & POLLIN)) {
			if (pfd.revents & POLLHUP) {
				/* host not connected: forget partial input */
				have = 0;
				usleep(100 * 1000);
			}
			continue;
		}
		if (cap - have < CHUNK) {
			uint8_t *nb = realloc(buf, cap * 2);

			if (!nb) {
				logmsg("out of memory, dropping input");
				have = 0;
				continue;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(port_fd, buf + have, cap - have);
		if (n <= 0) {
			if (n == 0)	/* host went away */
				have = 0;
			else if (errno != EINTR && errno != EAGAIN)
				logmsg("read: %s", strerror(errno));
			usleep(n == 0 ? 100 * 1000 : 0);
			continue;
		}
		have += n;

		/* parse as many complete frames as we have */
		while (have - off >= HDR_LEN) {
			uint8_t *h = buf + off;
			uint32_t len = get32(h + 12);

			if (memcmp(h, "RLAG", 4) || len > MAX_PAYLOAD) {
				off++;	/* resynchronise */
				continue;
			}
			if (have - off < HDR_LEN + (size_t)len)
				break;
			handle_frame(h[4], get32(h + 8), h + HDR_LEN, len);
			off += HDR_LEN + len;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
}
