/* The start of a run: the identity it takes (spawner.c, "Identities") and its vfork. */
#include "spawner.h"

/*
 * The child's side of becoming the sandbox user (see Identities above): root for a moment, so
 * that its capabilities are effective, to empty its bounding set (a zygote: with CAP_SETUID
 * inheritable first), then the user's uid. Raw system calls: the child shares the helper's
 * memory until its exec. 0, or -1 with errno set.
 */
/* Makes every permitted capability effective. 0, or -1 with errno set. */
int raise_permitted(void) {
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  if (syscall(SYS_capget, &header, data) < 0) return -1;
  data[0].effective = data[0].permitted;
  data[1].effective = data[1].permitted;
  return (int)syscall(SYS_capset, &header, data);
}

/*
 * Empties the bounding set, but for `keep` (-1: none); needs CAP_SETPCAP effective. 0, or -1
 * with errno set. Raw system calls (a run's child calls it between vfork and exec).
 */
static int drop_bounding_set(long keep) {
  for (long cap = 0; cap < 64; cap++)
    if (cap != keep && syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
      if (errno == EINVAL) return 0; /* past the kernel's last capability */
      return -1;
    }
  return 0;
}

/* Whether this helper's own bounding set holds nothing but CAP_SETUID (see narrow_bounding_set). */
static int bounding_set_narrowed = 0;

/*
 * Once, at the helper's start: its bounding set (what a run's exec could ever grant) emptied
 * but for CAP_SETUID, which a zygote's inheritable set needs (a capset may only add to it what
 * the bounding set holds). Each run's child then drops that one capability instead of
 * walking every one (41 system calls, a seccomp filter each, per start). The helper itself
 * never execs. Left as it was if it fails: each child then drops them all, as before.
 */
void narrow_bounding_set(void) {
  if (run_uid == 0 || setresuid((uid_t)-1, 0, (uid_t)-1) < 0) return;
  bounding_set_narrowed = drop_bounding_set(CAP_SETUID) == 0;
  if (setresuid((uid_t)-1, run_uid, 0) < 0) die("setresuid");
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
  if (bounding_set_narrowed) {
    if (syscall(SYS_prctl, PR_CAPBSET_DROP, CAP_SETUID, 0, 0, 0) < 0) return -1;
  } else if (drop_bounding_set(-1) < 0) {
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
                       int err, int control, int terminal, int enter_group, int zygote,
                       const sigset_t *mask, volatile int *failure) {
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
  /* Last: fd 3 may be one of this helper's own (the CPU group's file). */
  if (control >= 0 && dup2(control, 3) < 0) {
    *failure = errno;
    _exit(127);
  }
  execve(argv[0], argv, envp);
  *failure = errno;
  _exit(127);
}

/* vforks the run's process; its failure to start, if any, is left in *failure. */
static __attribute__((noinline)) pid_t spawn_child(const char *cwd, char *const argv[],
                                                   char *const envp[], const int fds[4],
                                                   int terminal, int enter_group, int zygote,
                                                   const sigset_t *mask, int *failure) {
  volatile int child_failure = 0;
  pid_t pid = vfork();
  if (pid == 0)
    become_run(cwd, argv, envp, fds[0], fds[1], fds[2], fds[3], terminal, enter_group, zygote,
               mask, &child_failure);
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

/*
 * One pseudo-terminal: the child's side is its stdin, stdout and stderr. Fills the ends as
 * start_run names them; 0, or -errno (the ends made so far are left for the caller to close).
 */
static int open_terminal(int in[2], int out[2], int err[2], struct winsize *size) {
  int master, slave;
  if (openpty(&master, &slave, NULL, NULL, size) < 0) return -errno;
  fcntl(master, F_SETFD, FD_CLOEXEC);
  fcntl(slave, F_SETFD, FD_CLOEXEC);
  out[0] = master;
  out[1] = slave;
  err[1] = dup(slave);
  in[1] = dup(slave);
  in[0] = dup(master);
  if (err[1] < 0 || in[1] < 0 || in[0] < 0) return -errno;
  fcntl(err[1], F_SETFD, FD_CLOEXEC);
  fcntl(in[1], F_SETFD, FD_CLOEXEC);
  fcntl(in[0], F_SETFD, FD_CLOEXEC);
  return 0;
}

/* Pipes for stdout, stderr and, if asked, stdin; 0, or -errno (as open_terminal). */
static int open_pipes(int in[2], int out[2], int err[2], int piped_input) {
  if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
      (piped_input && pipe2(in, O_CLOEXEC) < 0))
    return -errno;
  if (piped_input) {
    /* pipe2 gives [0] read, [1] write: the child reads, this helper writes. */
    int read_end = in[0];
    in[0] = in[1];
    in[1] = read_end;
  }
  return 0;
}

/* Keeps the started run with our ends of its streams, which it then owns (set to -1 here). */
static void add_run(uint32_t id, pid_t pid, int in[2], int out[2], int err[2], int terminal,
                    int *control) {
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
                                   .terminal = terminal != 0,
                                   .control = *control};
  out[0] = err[0] = in[0] = *control = -1;
}

void start_run(uint32_t id, unsigned char *payload, size_t length, const sigset_t *mask) {
  int32_t result = -EINVAL;
  char **argv = NULL, **envp = NULL;
  /* Ends for the child ([1]: stdin's read end, stdout's and stderr's write ends) and ours. */
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, control[2] = {-1, -1};
  if (length < 9 || find_run_by_id(id) != NULL) goto answer;
  int enter_group = payload[0] & 1, piped_input = payload[0] & 2, terminal = payload[0] & 4,
      zygote = payload[0] & 8, armed = payload[0] & 16;
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
  result = terminal ? open_terminal(in, out, err, &size) : open_pipes(in, out, err, piped_input);
  /* An armed shell's command pipe: its end blocks, this helper's does not. */
  if (result == 0 && armed && !terminal) {
    if (pipe2(control, O_CLOEXEC | O_NONBLOCK) < 0) result = -errno;
    else fcntl(control[0], F_SETFL, 0);
  }
  if (result < 0) goto answer;
  int failure = 0;
  int fds[4] = {in[1] >= 0 ? in[1] : dev_null, out[1], err[1], control[0]};
  pid_t pid = spawn_child(cwd, argv, envp, fds, terminal, enter_group, zygote, mask, &failure);
  if (pid < 0) {
    result = -errno;
    goto answer;
  }
  if (failure != 0) {
    waitpid(pid, NULL, 0);
    result = -failure;
    goto answer;
  }
  add_run(id, pid, in, out, err, terminal, &control[1]);
  result = pid;
answer:
  for (int i = 0; i < 2; i++) {
    if (in[i] >= 0) close(in[i]);
    if (out[i] >= 0) close(out[i]);
    if (err[i] >= 0) close(err[i]);
    if (control[i] >= 0) close(control[i]);
  }
  free(argv);
  free(envp);
  unsigned char pid_bytes[4];
  put_u32(pid_bytes, (uint32_t)result);
  send_event('s', id, pid_bytes, sizeof pid_bytes);
}

