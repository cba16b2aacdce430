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
 *               4: a terminal, 8: a zygote, see Identities, 16: an armed shell, see
 *               below), u32 argc, u32 envc, for a terminal u16 cols and u16 rows,
 *               then NUL-terminated cwd, argv[argc], env[envc]
 *   'G' go:     u64 start and end of an armed shell's argument area (0: leave it), then its
 *               message (at most PIPE_BUF bytes: two flag bytes, the command), written at
 *               once to its command pipe, which is then closed; the shell is continued first
 *               (a user's `kill -STOP -1` stops it too) and shown as `/bin/bash -c COMMAND`
 *   'P' pause:  stop reading the run's pipes (its process blocks on a full pipe)
 *   'R' resume: read them again
 *   'I' input:  bytes for the run's stdin (or terminal); none: close its stdin. One at a
 *               time: the next comes after this one's 'a'
 *   'W' resize: u16 cols, u16 rows of the run's terminal
 * Events:
 *   's' started: i32 pid, or minus the errno of a failed start
 *   'g' gone:    i32 0 once a 'G' is written, or minus the errno of its failure
 *   'o' / 'e'   stdout / stderr bytes (a terminal's output is all 'o')
 *   'c' closed: u8 1 (stdout) or 2 (stderr), the pipe's end
 *   'a' input taken: the last 'I' is written (or its run can take no more input)
 *   'x' exited: i32 wait status, u64 CPU time in microseconds, u64 peak RSS in KiB
 *
 * An armed shell (ADR 48) is a run started ahead of its command: a pipe of this helper's is
 * its fd 3 (its read end, the only end it holds), from which it reads its command.
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
#include "spawner.h"

struct run *runs;
size_t run_count, run_capacity;
int cpu_procs = -1; /* the session's cgroup.procs, if given */
int dev_null = -1;
/* The uid every run becomes, when this helper runs for a root runner (see main); else 0. */
uid_t run_uid = 0;
/* Set when the runner named the user (gVisor): an exec there makes a root real uid the
   effective one too, with no effective capability, so a zygote could never become the user
   after its exec. Zygotes then start as the user in full, as runs do. */
int exec_takes_root = 0;

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
      case 'G':
        go(id, body + 5, frame - 5);
        break;
      default:
        fprintf(stderr, "spawner: unknown request %c\n", body[0]);
        exit(1);
    }
    used += 4 + frame;
  }
  return used;
}

/*
 * Started by a root runner with the user's effective uid (its exec made that its saved uid
 * too), the spawner takes root back as its saved uid, and keeps the user's as its effective
 * one, with which it can signal the runs (see Identities above): no run may signal it.
 */
static void take_identities(int argc, char **argv) {
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
}

/*
 * The descriptors to poll, into *polled (grown as needed): stdin, the signalfd `children`,
 * then three slots a run (stdout, stderr, input); returns how many.
 */
static size_t fill_polled(struct pollfd **polled, size_t *capacity, int children) {
  size_t wanted = 2 + 3 * run_count;
  if (wanted > *capacity) {
    *capacity = wanted * 2;
    *polled = realloc(*polled, *capacity * sizeof **polled);
    if (*polled == NULL) die("realloc");
  }
  struct pollfd *slots = *polled;
  slots[0] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
  slots[1] = (struct pollfd){.fd = children, .events = POLLIN};
  size_t count = 2;
  for (size_t i = 0; i < run_count; i++) {
    for (int stream = 0; stream < 2; stream++)
      slots[count++] =
          (struct pollfd){.fd = runs[i].paused ? -1 : runs[i].fds[stream], .events = POLLIN};
    slots[count++] =
        (struct pollfd){.fd = runs[i].pending != NULL ? runs[i].input : -1, .events = POLLOUT};
  }
  return count;
}

/*
 * Drains the runs' ready output pipes and feeds their ready input. Slots go by run, three
 * each (stdout, stderr, input), in the order of `runs` when polled; a run forgotten meanwhile
 * moves another into its place, so each slot is checked by fd.
 */
static void serve_pipes(const struct pollfd *polled, size_t count) {
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
}

/* A write to a pipe whose reader is gone (a run's stdin, an armed shell's command pipe) fails
   with EPIPE instead of ending this helper; runs start with the mask from before. */
static void block_sigpipe(void) {
  sigset_t pipe_mask;
  sigemptyset(&pipe_mask);
  sigaddset(&pipe_mask, SIGPIPE);
  if (sigprocmask(SIG_BLOCK, &pipe_mask, NULL) < 0) die("sigprocmask");
}

int main(int argc, char **argv) {
  /* Out of reach of the runs: none may trace it or read its /proc entries... */
  prctl(PR_SET_DUMPABLE, 0);
  /* ...nor signal it (take_identities). */
  take_identities(argc, argv);
  narrow_bounding_set();
  if (argc > 1 && argv[1][0] != '\0') cpu_procs = open(argv[1], O_WRONLY | O_CLOEXEC);
  dev_null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (dev_null < 0) die("/dev/null");

  sigset_t child_mask, original;
  sigemptyset(&child_mask);
  sigaddset(&child_mask, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &child_mask, &original) < 0) die("sigprocmask");
  int children = signalfd(-1, &child_mask, SFD_CLOEXEC | SFD_NONBLOCK);
  block_sigpipe();
  if (children < 0) die("signalfd");

  size_t capacity = 1 << 16, length = 0;
  unsigned char *requests = malloc(capacity);
  struct pollfd *polled = NULL;
  size_t polled_capacity = 0;
  if (requests == NULL) die("malloc");

  for (;;) {
    size_t count = fill_polled(&polled, &polled_capacity, children);
    flush_events();
    if (poll(polled, count, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    /* Pipes first: output written before an exit goes out before the exit. */
    serve_pipes(polled, count);
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
