/* The spawner's events to the runner, its reads of runs' output, and runs' input. */
#include "spawner.h"

void die(const char *what) {
  fprintf(stderr, "spawner: %s: %s\n", what, strerror(errno));
  exit(1);
}

void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

uint32_t get_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t get_u64(const unsigned char *p) { return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32; }

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

void flush_events(void) {
  write_all(held, held_length);
  held_length = 0;
}

/* One event: its header, then `length` bytes of payload. */
void send_event(char type, uint32_t id, const void *payload, size_t length) {
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

struct run *find_run_by_id(uint32_t id) {
  for (size_t i = 0; i < run_count; i++)
    if (runs[i].id == id) return &runs[i];
  return NULL;
}

struct run *find_run_by_pid(pid_t pid) {
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

void forget_if_done(struct run *run) {
  if (run->pid != 0 || run->fds[0] >= 0 || run->fds[1] >= 0) return;
  close_input(run);
  if (run->control >= 0) close(run->control);
  *run = runs[--run_count];
}

/* Writes what it can of the pending input; once all of it is written, says so ('a'). */
void feed(struct run *run) {
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
void take_input(uint32_t id, const unsigned char *data, size_t length) {
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
void resize(uint32_t id, const unsigned char *size, size_t length) {
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
void drain(struct run *run, int stream) {
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
 * Shows the armed shell as `bash -c COMMAND` would show (its /proc/PID/cmdline, `ps`): the
 * title at the start of its argument area (one string, as setproctitle(3) leaves it), and
 * the area's last byte not NUL, which tells the kernel to show the title. The front pads the
 * shell's script so that the area holds any command a shell takes. Best effort.
 */
static void retitle(pid_t pid, uint64_t arg_start, uint64_t arg_end, const unsigned char *command,
                    size_t length) {
  static const char prefix[] = "/bin/bash -c ";
  size_t title_length = sizeof prefix - 1 + length + 1;
  if (arg_start == 0 || arg_end <= arg_start || title_length + 1 > arg_end - arg_start) return;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
  int mem = open(path, O_WRONLY | O_CLOEXEC);
  if (mem < 0) return;
  char title[sizeof prefix + PIPE_BUF];
  memcpy(title, prefix, sizeof prefix - 1);
  memcpy(title + sizeof prefix - 1, command, length);
  title[title_length - 1] = '\0';
  if (pwrite(mem, title, title_length, (off_t)arg_start) == (ssize_t)title_length)
    (void)!pwrite(mem, " ", 1, (off_t)(arg_end - 1));
  close(mem);
}

/*
 * A 'G' request: u64 start and end of the shell's argument area (0: leave it), then the
 * shell's message (two flag bytes, the command), written in one write (an empty pipe takes
 * PIPE_BUF bytes at once), then the end of its pipe.
 */
void go(uint32_t id, const unsigned char *payload, size_t length) {
  struct run *run = find_run_by_id(id);
  int32_t result = 0;
  const unsigned char *message = payload + 16;
  if (run == NULL || run->pid == 0 || run->control < 0) {
    result = -ESRCH;
  } else if (length < 18 || length - 16 > PIPE_BUF) {
    result = -E2BIG;
  } else {
    length -= 16;
    kill(run->pid, SIGCONT);
    retitle(run->pid, get_u64(payload), get_u64(payload + 8), message + 2, length - 2);
    ssize_t n;
    do n = write(run->control, message, length);
    while (n < 0 && errno == EINTR);
    if (n < 0) result = -errno;
    else if ((size_t)n != length) result = -EAGAIN;
    close(run->control);
    run->control = -1;
  }
  unsigned char answer[4];
  put_u32(answer, (uint32_t)result);
  send_event('g', id, answer, sizeof answer);
}
