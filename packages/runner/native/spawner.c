/*
 * spawner: starts the runs of a sandbox's runner without forking the runner.
 *
 * The runner is a Node process of some 50 MB; each fork of it copies its page tables and then
 * pays copy-on-write faults for every page either side touches, which made the runner the
 * largest CPU cost of a short command. This helper is a few hundred kilobytes: it vforks
 * (no copy), enters the session's CPU group, becomes the run's process, and reports what GNU
 * time reported before (CPU time and peak memory, from wait4), so that neither `sh` nor
 * `time` is started per run either.
 *
 * It speaks frames over stdin (requests) and stdout (events), all integers little-endian:
 *   u32 length of what follows, u8 type, u32 run id, payload
 * Requests:
 *   'S' start:  u8 flags (1: enter the CPU group, 2: stdin is a pipe from this helper,
 *               4: a terminal, 8: a zygote, see Identities), u32 argc, u32 envc, for a
 *               terminal u16 cols and u16 rows,
 *               then NUL-terminated cwd, argv[argc], env[envc]
 *   'P' pause:  stop reading the run's pipes (its process blocks on a full pipe)
 *   'R' resume: read them again
 *   'I' input:  bytes for the run's stdin (or terminal); none: close its stdin. One at a
 *               time: the next comes after this one's 'a'
 *   'W' resize: u16 cols, u16 rows of the run's terminal
 * Events:
 *   's' started: i32 pid, or minus the errno of a failed start
 *   'o' / 'e'   stdout / stderr bytes (a terminal's output is all 'o')
 *   'c' closed: u8 1 (stdout) or 2 (stderr), the pipe's end
 *   'a' input taken: the last 'I' is written (or its run can take no more input)
 *   'x' exited: i32 wait status, u64 CPU time in microseconds, u64 peak RSS in KiB
 *
 * Each run is its own session and process group (as Node's `detached`), stdin /dev/null
 * (or a pipe from this helper), stdout and stderr pipes to this helper; or, for a terminal,
 * a pseudo-terminal that is its controlling terminal, its stdin, stdout and stderr. The helper is single-threaded; it ends when its
 * stdin closes (the runner is gone), after hanging up the runs still under way (see
 * hang_up_all). Built static by scripts/build-sandbox-image.
 *
 * Identities. In a sandbox the runner starts as root and keeps root as its real and saved uid
 * with the sandbox user's as its effective one, so that no run (the sandbox user's) can
 * signal, trace or read it; this helper, started by it, does the same (see main; its second
 * argument names the user, as gVisor's exec hands it root as its effective uid). Each run
 * then becomes the sandbox user in full before its exec: real, effective and saved uid, no
 * capability in any set, none in its bounding set. A zygote (flag 8: the runner's pre-started
 * Node, zygote.ts) keeps root as its real and saved uid while it waits, with CAP_SETUID
 * inheritable only, which its exec makes its one permitted capability: it uses it once, to
 * become the sandbox user in full when it is handed its run (on gVisor, whose exec leaves it
 * no effective capability, it starts as the user in full instead). Elsewhere (the helper
 * started by an ordinary user, as in its tests) runs keep the helper's identity.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CPU_GROUP_EXIT 125
#define CPU_GROUP_MESSAGE "sandbox: could not enter the session's CPU limit\n"
#define READ_CHUNK 65536
#define MAX_CHUNKS_PER_DRAIN 4
/* After the runner is gone, how long a hung-up run's command gets before it is killed. */
#define HANGUP_GRACE_MS 500

struct run {
  uint32_t id;
  pid_t pid;      /* 0 once reaped */
  int fds[2];     /* stdout (a terminal's master), stderr read ends; -1 once closed */
  int paused;
  int input;      /* stdin's write end (a terminal: its master, again); -1 if none */
  int terminal;
  unsigned char *pending; /* the 'I' being written, from pending_at */
  size_t pending_length, pending_at;
};

static struct run *runs;
static size_t run_count, run_capacity;
static int cpu_procs = -1; /* the session's cgroup.procs, if given */
static int dev_null = -1;
/* The uid every run becomes, when this helper runs for a root runner (see main); else 0. */
static uid_t run_uid = 0;
/* Set when the runner named the user (gVisor): an exec there makes a root real uid the
   effective one too, with no effective capability, so a zygote could never become the user
   after its exec. Zygotes then start as the user in full, as runs do. */
static int exec_takes_root = 0;

static void die(const char *what) {
  fprintf(stderr, "spawner: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void write_all(const unsigned char *data, size_t length) {
  while (length > 0) {
    ssize_t n = write(STDOUT_FILENO, data, length);
    if (n < 0) {
      if (errno == EINTR) continue;
      exit(0); /* the runner is gone */
    }
    data += n;
    length -= (size_t)n;
  }
}

/*
 * Events of one turn of the loop, held until its end (flush_events, before the next poll):
 * a run's start, or its output, pipes' ends and exit, reach the runner in one write and wake
 * it once, not two writes per event. An event that does not fit goes out at once, after
 * what was held.
 */
#define EVENTS_HELD_MAX 65536
static unsigned char held[EVENTS_HELD_MAX];
static size_t held_length;

static void flush_events(void) {
  write_all(held, held_length);
  held_length = 0;
}

/* One event: its header, then `length` bytes of payload. */
static void send_event(char type, uint32_t id, const void *payload, size_t length) {
  unsigned char header[9];
  put_u32(header, (uint32_t)(5 + length));
  header[4] = (unsigned char)type;
  put_u32(header + 5, id);
  if (held_length + sizeof header + length > sizeof held) flush_events();
  if (sizeof header + length > sizeof held) {
    write_all(header, sizeof header);
    write_all(payload, length);
    return;
  }
  memcpy(held + held_length, header, sizeof header);
  if (length > 0) memcpy(held + held_length + sizeof header, payload, length);
  held_length += sizeof header + length;
}

static struct run *find_run_by_id(uint32_t id) {
  for (size_t i = 0; i < run_count; i++)
    if (runs[i].id == id) return &runs[i];
  return NULL;
}

static struct run *find_run_by_pid(pid_t pid) {
  for (size_t i = 0; i < run_count; i++)
    if (runs[i].pid == pid) return &runs[i];
  return NULL;
}

static void close_input(struct run *run) {
  if (run->input >= 0) close(run->input);
  run->input = -1;
  free(run->pending);
  run->pending = NULL;
  run->pending_length = run->pending_at = 0;
}

static void forget_if_done(struct run *run) {
  if (run->pid != 0 || run->fds[0] >= 0 || run->fds[1] >= 0) return;
  close_input(run);
  *run = runs[--run_count];
}

/* Writes what it can of the pending input; once all of it is written, says so ('a'). */
static void feed(struct run *run) {
  while (run->pending_at < run->pending_length) {
    ssize_t n = write(run->input, run->pending + run->pending_at,
                      run->pending_length - run->pending_at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return; /* the poll loop waits until it can take more */
    if (n < 0) break; /* nobody reads it any more: the rest is dropped */
    run->pending_at += (size_t)n;
  }
  free(run->pending);
  run->pending = NULL;
  run->pending_length = run->pending_at = 0;
  send_event('a', run->id, NULL, 0);
}

/* An 'I' request: input for the run, or (empty) the end of its stdin. */
static void take_input(uint32_t id, const unsigned char *data, size_t length) {
  struct run *run = find_run_by_id(id);
  if (run == NULL || run->input < 0 || run->pending != NULL) {
    send_event('a', id, NULL, 0); /* nothing to write it to: taken, and dropped */
    return;
  }
  if (length == 0) {
    /* A terminal's input ends with ^D, typed by its user: its master stays open. */
    if (!run->terminal) close_input(run);
    send_event('a', id, NULL, 0);
    return;
  }
  run->pending = malloc(length);
  if (run->pending == NULL) die("malloc");
  memcpy(run->pending, data, length);
  run->pending_length = length;
  feed(run);
}

/* A 'W' request: the run's terminal has a new size (the kernel tells its programs). */
static void resize(uint32_t id, const unsigned char *size, size_t length) {
  struct run *run = find_run_by_id(id);
  if (run == NULL || !run->terminal || run->fds[0] < 0 || length < 4) return;
  struct winsize ws = {.ws_col = (unsigned short)(size[0] | size[1] << 8),
                       .ws_row = (unsigned short)(size[2] | size[3] << 8)};
  ioctl(run->fds[0], TIOCSWINSZ, &ws);
}

/*
 * Reads what one pipe holds now (at most MAX_CHUNKS_PER_DRAIN reads: a run that writes as fast
 * as it is read must not keep the loop from a pause request) and sends it; on its end, closes
 * it and says so.
 */
static void drain(struct run *run, int stream) {
  static unsigned char buffer[READ_CHUNK];
  int fd = run->fds[stream];
  if (fd < 0) return;
  for (int chunks = 0; chunks < MAX_CHUNKS_PER_DRAIN; chunks++) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n > 0) {
      send_event(stream == 0 ? 'o' : 'e', run->id, buffer, (size_t)n);
      if ((size_t)n < sizeof buffer) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    close(fd);
    run->fds[stream] = -1;
    unsigned char which = (unsigned char)(stream + 1);
    send_event('c', run->id, &which, 1);
    return;
  }
}

/*
 * The child's side of becoming the sandbox user (see Identities above): root for a moment, so
 * that its capabilities are effective, to empty its bounding set (a zygote: with CAP_SETUID
 * inheritable first), then the user's uid. Raw system calls: the child shares the helper's
 * memory until its exec. 0, or -1 with errno set.
 */
/* Makes every permitted capability effective. 0, or -1 with errno set. */
static int raise_permitted(void) {
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  if (syscall(SYS_capget, &header, data) < 0) return -1;
  data[0].effective = data[0].permitted;
  data[1].effective = data[1].permitted;
  return (int)syscall(SYS_capset, &header, data);
}

static int become_user(int zygote) {
  if (run_uid == 0) return 0;
  if (exec_takes_root) zygote = 0;
  if (syscall(SYS_setresuid, -1, 0, -1) < 0) return -1;
  if (zygote) {
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &header, data) < 0) return -1;
    data[0].inheritable = 1u << CAP_SETUID;
    data[1].inheritable = 0;
    if (syscall(SYS_capset, &header, data) < 0) return -1;
  }
  for (long cap = 0; cap < 64; cap++)
    if (syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
      if (errno == EINVAL) break; /* past the kernel's last capability */
      return -1;
    }
  if (zygote) return (int)syscall(SYS_setresuid, 0, run_uid, 0);
  return (int)syscall(SYS_setresuid, run_uid, run_uid, run_uid);
}

/*
 * Makes the run (and what it starts: the value is inherited) the OOM killer's first choice, in
 * the session's memory limit as on the host: while a run is left, the runner beside it is not
 * taken (a memory bomb's second kill, as its first victim's memory was being freed, took the
 * runner on 2026-11-28). Raising the value needs no privilege; it is written while the child
 * is still root, as /proc/self is root's in an undumpable process. Best effort: a kernel
 * without it leaves the default. (Lowering the runner's own is not open to it: the engine
 * refuses a negative OomScoreAdj under its user-namespace remapping.)
 */
static void first_to_die(void) {
  int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  (void)!write(fd, "1000", 4);
  close(fd);
}

/*
 * The child's side of a start, between vfork and exec: system calls only (it shares the
 * helper's memory). A failure is left in *failure for the parent.
 */
static void become_run(const char *cwd, char *const argv[], char *const envp[], int in, int out,
                       int err, int terminal, int enter_group, int zygote, const sigset_t *mask,
                       volatile int *failure) {
  sigprocmask(SIG_SETMASK, mask, NULL);
  first_to_die();
  if (become_user(zygote) < 0 || setsid() < 0 || (terminal && ioctl(out, TIOCSCTTY, 0) < 0) ||
      dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || chdir(cwd) < 0) {
    *failure = errno;
    _exit(127);
  }
  if (enter_group && (cpu_procs < 0 || write(cpu_procs, "0", 1) != 1)) {
    (void)!write(2, CPU_GROUP_MESSAGE, sizeof CPU_GROUP_MESSAGE - 1);
    _exit(CPU_GROUP_EXIT);
  }
  execve(argv[0], argv, envp);
  *failure = errno;
  _exit(127);
}

/* vforks the run's process; its failure to start, if any, is left in *failure. */
static __attribute__((noinline)) pid_t spawn_child(const char *cwd, char *const argv[],
                                                   char *const envp[], int in, int out, int err,
                                                   int terminal, int enter_group, int zygote,
                                                   const sigset_t *mask, int *failure) {
  volatile int child_failure = 0;
  pid_t pid = vfork();
  if (pid == 0)
    become_run(cwd, argv, envp, in, out, err, terminal, enter_group, zygote, mask,
               &child_failure);
  *failure = child_failure;
  return pid;
}

/* Splits `count` NUL-terminated strings off [*at, end) into a NULL-ended array. */
static char **strings(char **at, const char *end, uint32_t count) {
  char **list = calloc((size_t)count + 1, sizeof *list);
  if (list == NULL) die("calloc");
  for (uint32_t i = 0; i < count; i++) {
    char *nul = memchr(*at, '\0', (size_t)(end - *at));
    if (nul == NULL) {
      free(list);
      return NULL;
    }
    list[i] = *at;
    *at = nul + 1;
  }
  return list;
}

static void start_run(uint32_t id, unsigned char *payload, size_t length, const sigset_t *mask) {
  int32_t result = -EINVAL;
  char **argv = NULL, **envp = NULL;
  /* Ends for the child ([1]: stdin's read end, stdout's and stderr's write ends) and ours. */
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  if (length < 9 || find_run_by_id(id) != NULL) goto answer;
  int enter_group = payload[0] & 1, piped_input = payload[0] & 2, terminal = payload[0] & 4,
      zygote = payload[0] & 8;
  uint32_t argc = get_u32(payload + 1), envc = get_u32(payload + 5);
  size_t header = terminal ? 13 : 9;
  if (length < header) goto answer;
  struct winsize size = {.ws_col = 80, .ws_row = 24};
  if (terminal) {
    size.ws_col = (unsigned short)(payload[9] | payload[10] << 8);
    size.ws_row = (unsigned short)(payload[11] | payload[12] << 8);
  }
  char *at = (char *)payload + header, *end = (char *)payload + length;
  char *cwd = at;
  char *nul = memchr(at, '\0', (size_t)(end - at));
  if (nul == NULL || argc == 0 || argc > length || envc > length) goto answer;
  at = nul + 1;
  if ((argv = strings(&at, end, argc)) == NULL || (envp = strings(&at, end, envc)) == NULL)
    goto answer;
  if (terminal) {
    /* One pseudo-terminal: the child's side is its stdin, stdout and stderr. */
    int master, slave;
    if (openpty(&master, &slave, NULL, NULL, &size) < 0) {
      result = -errno;
      goto answer;
    }
    fcntl(master, F_SETFD, FD_CLOEXEC);
    fcntl(slave, F_SETFD, FD_CLOEXEC);
    out[0] = master;
    out[1] = slave;
    err[1] = dup(slave);
    in[1] = dup(slave);
    in[0] = dup(master);
    if (err[1] < 0 || in[1] < 0 || in[0] < 0) {
      result = -errno;
      goto answer;
    }
    fcntl(err[1], F_SETFD, FD_CLOEXEC);
    fcntl(in[1], F_SETFD, FD_CLOEXEC);
    fcntl(in[0], F_SETFD, FD_CLOEXEC);
  } else {
    if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
        (piped_input && pipe2(in, O_CLOEXEC) < 0)) {
      result = -errno;
      goto answer;
    }
    if (piped_input) {
      /* pipe2 gives [0] read, [1] write: the child reads, this helper writes. */
      int read_end = in[0];
      in[0] = in[1];
      in[1] = read_end;
    }
  }
  int failure = 0;
  pid_t pid = spawn_child(cwd, argv, envp, in[1] >= 0 ? in[1] : dev_null, out[1], err[1],
                          terminal, enter_group, zygote, mask, &failure);
  if (pid < 0) {
    result = -errno;
    goto answer;
  }
  if (failure != 0) {
    waitpid(pid, NULL, 0);
    result = -failure;
    goto answer;
  }
  if (run_count == run_capacity) {
    run_capacity = run_capacity == 0 ? 16 : run_capacity * 2;
    runs = realloc(runs, run_capacity * sizeof *runs);
    if (runs == NULL) die("realloc");
  }
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  if (err[0] >= 0) fcntl(err[0], F_SETFL, O_NONBLOCK);
  if (in[0] >= 0) fcntl(in[0], F_SETFL, O_NONBLOCK);
  /* A terminal has no stderr of its own: its slot is closed from the start. */
  runs[run_count++] = (struct run){.id = id,
                                   .pid = pid,
                                   .fds = {out[0], err[0]},
                                   .paused = 0,
                                   .input = in[0],
                                   .terminal = terminal != 0};
  out[0] = err[0] = in[0] = -1;
  result = pid;
answer:
  for (int i = 0; i < 2; i++) {
    if (in[i] >= 0) close(in[i]);
    if (out[i] >= 0) close(out[i]);
    if (err[i] >= 0) close(err[i]);
  }
  free(argv);
  free(envp);
  unsigned char pid_bytes[4];
  put_u32(pid_bytes, (uint32_t)result);
  send_event('s', id, pid_bytes, sizeof pid_bytes);
}

/* Reaps every ended run: its last buffered output first, then its exit and usage. */
static void reap(void) {
  for (;;) {
    int status;
    struct rusage usage;
    pid_t pid = wait4(-1, &status, WNOHANG, &usage);
    if (pid <= 0) return;
    struct run *run = find_run_by_pid(pid);
    if (run == NULL) continue;
    /* Even when paused: what the run wrote before its end (at most a pipe's worth, left
       unread) is its output, and goes out before its exit. */
    drain(run, 0);
    drain(run, 1);
    uint64_t cpu_us = (uint64_t)usage.ru_utime.tv_sec * 1000000 + (uint64_t)usage.ru_utime.tv_usec +
                      (uint64_t)usage.ru_stime.tv_sec * 1000000 + (uint64_t)usage.ru_stime.tv_usec;
    unsigned char payload[20];
    put_u32(payload, (uint32_t)status);
    put_u64(payload + 4, cpu_us);
    put_u64(payload + 12, (uint64_t)usage.ru_maxrss);
    send_event('x', run->id, payload, sizeof payload);
    run->pid = 0;
    forget_if_done(run);
  }
}

/* Reaps ended runs without a word: nobody is left to tell. */
static int reap_quietly(void) {
  pid_t pid;
  while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
    struct run *run = find_run_by_pid(pid);
    if (run != NULL) run->pid = 0;
  }
  int alive = 0;
  for (size_t i = 0; i < run_count; i++) alive += runs[i].pid != 0;
  return alive;
}

/*
 * The runner is gone (its stdin closed: it exited or was killed). Its runs are hung up as by
 * a closing terminal, so that `nohup`ed and `setsid` background processes live on, and what
 * is left of each run's own command is killed after HANGUP_GRACE_MS: as the runner does for
 * a run whose client went away.
 */
static void hang_up_all(void) {
  for (size_t i = 0; i < run_count; i++)
    if (runs[i].pid != 0) kill(-runs[i].pid, SIGHUP);
  for (int waited = 0; waited < HANGUP_GRACE_MS && reap_quietly() > 0; waited += 10)
    poll(NULL, 0, 10);
  for (size_t i = 0; i < run_count; i++)
    if (runs[i].pid != 0) kill(runs[i].pid, SIGKILL);
}

/* Handles the complete requests at the front of the buffer; returns how many bytes they took. */
static size_t handle_requests(unsigned char *buffer, size_t length, const sigset_t *mask) {
  size_t used = 0;
  while (length - used >= 4) {
    uint32_t frame = get_u32(buffer + used);
    if (frame < 5) {
      fprintf(stderr, "spawner: malformed request\n");
      exit(1);
    }
    if (length - used - 4 < frame) break;
    unsigned char *body = buffer + used + 4;
    uint32_t id = get_u32(body + 1);
    struct run *run;
    switch (body[0]) {
      case 'S':
        start_run(id, body + 5, frame - 5, mask);
        break;
      case 'P':
      case 'R':
        if ((run = find_run_by_id(id)) != NULL) run->paused = body[0] == 'P';
        break;
      case 'I':
        take_input(id, body + 5, frame - 5);
        break;
      case 'W':
        resize(id, body + 5, frame - 5);
        break;
      default:
        fprintf(stderr, "spawner: unknown request %c\n", body[0]);
        exit(1);
    }
    used += 4 + frame;
  }
  return used;
}

int main(int argc, char **argv) {
  /* Out of reach of the runs: none may trace it or read its /proc entries... */
  prctl(PR_SET_DUMPABLE, 0);
  /* ...nor signal it. Started by a root runner with the user's effective uid (its exec made
     that its saved uid too), it takes root back as its saved uid, and keeps the user's as its
     effective one, with which it can signal the runs (see Identities above). */
  if (getuid() == 0 && geteuid() != 0) {
    run_uid = geteuid();
  } else if (getuid() == 0 && argc > 2 && argv[2][0] != '\0') {
    /* gVisor's exec makes a root real uid the effective one too, with no effective
       capability: the runner names the user, and CAP_SETUID is made effective to take it. */
    run_uid = (uid_t)strtoul(argv[2], NULL, 10);
    exec_takes_root = 1;
    if (raise_permitted() < 0) die("capset");
  }
  if (run_uid != 0 && setresuid((uid_t)-1, run_uid, 0) < 0) die("setresuid");
  if (argc > 1 && argv[1][0] != '\0') cpu_procs = open(argv[1], O_WRONLY | O_CLOEXEC);
  dev_null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (dev_null < 0) die("/dev/null");

  sigset_t child_mask, original;
  sigemptyset(&child_mask);
  sigaddset(&child_mask, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &child_mask, &original) < 0) die("sigprocmask");
  int children = signalfd(-1, &child_mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (children < 0) die("signalfd");

  size_t capacity = 1 << 16, length = 0;
  unsigned char *requests = malloc(capacity);
  struct pollfd *polled = NULL;
  size_t polled_capacity = 0;
  if (requests == NULL) die("malloc");

  for (;;) {
    size_t wanted = 2 + 3 * run_count;
    if (wanted > polled_capacity) {
      polled_capacity = wanted * 2;
      polled = realloc(polled, polled_capacity * sizeof *polled);
      if (polled == NULL) die("realloc");
    }
    polled[0] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
    polled[1] = (struct pollfd){.fd = children, .events = POLLIN};
    size_t count = 2;
    for (size_t i = 0; i < run_count; i++) {
      for (int stream = 0; stream < 2; stream++)
        polled[count++] = (struct pollfd){
            .fd = runs[i].paused ? -1 : runs[i].fds[stream], .events = POLLIN};
      polled[count++] = (struct pollfd){
          .fd = runs[i].pending != NULL ? runs[i].input : -1, .events = POLLOUT};
    }
    flush_events();
    if (poll(polled, count, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    /* Pipes first: output written before an exit goes out before the exit. Slots go by
       run, three each (stdout, stderr, input), in the order of `runs` when polled; a run
       forgotten meanwhile moves another into its place, so each slot is checked by fd. */
    for (size_t slot = 2; slot < count; slot++) {
      if (polled[slot].revents == 0 || polled[slot].fd < 0) continue;
      struct run *run = NULL;
      int stream = 0;
      for (size_t i = 0; i < run_count && run == NULL; i++) {
        if ((slot - 2) % 3 == 2) {
          if (runs[i].input == polled[slot].fd && runs[i].pending != NULL) run = &runs[i];
          stream = 2;
        } else {
          for (int s = 0; s < 2; s++)
            if (runs[i].fds[s] == polled[slot].fd) {
              run = &runs[i];
              stream = s;
            }
        }
      }
      if (run == NULL) continue;
      if (stream == 2)
        feed(run);
      else
        drain(run, stream);
      forget_if_done(run);
    }
    if (polled[1].revents != 0) {
      struct signalfd_siginfo info;
      while (read(children, &info, sizeof info) == sizeof info) {
      }
      reap();
    }
    if (polled[0].revents != 0) {
      if (length == capacity) {
        capacity *= 2;
        requests = realloc(requests, capacity);
        if (requests == NULL) die("realloc");
      }
      ssize_t n = read(STDIN_FILENO, requests + length, capacity - length);
      if (n == 0) {
        hang_up_all();
        return 0;
      }
      if (n < 0) {
        if (errno == EINTR) continue;
        die("read");
      }
      length += (size_t)n;
      size_t used = handle_requests(requests, length, &original);
      memmove(requests, requests + used, length - used);
      length -= used;
    }
  }
}
