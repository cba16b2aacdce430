/*
 * The spawner's parts, sharing its run table: spawner.c (the protocol, the loop, the reaping),
 * spawner-events.c (events to the runner, output, input), spawner-start.c (identities, the
 * start of a run).
 */
#ifndef SPAWNER_H
#define SPAWNER_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
  int control;    /* an armed shell's command pipe (fd 3 in it), until its 'G'; -1 if none */
  unsigned char *pending; /* the 'I' being written, from pending_at */
  size_t pending_length, pending_at;
};

extern struct run *runs;
extern size_t run_count, run_capacity;
extern int cpu_procs;
extern int dev_null;
extern uid_t run_uid;
extern int exec_takes_root;

void die(const char *what);
void put_u32(unsigned char *p, uint32_t v);
void put_u64(unsigned char *p, uint64_t v);
uint32_t get_u32(const unsigned char *p);
uint64_t get_u64(const unsigned char *p);
void flush_events(void);
void send_event(char type, uint32_t id, const void *payload, size_t length);
struct run *find_run_by_id(uint32_t id);
struct run *find_run_by_pid(pid_t pid);
void forget_if_done(struct run *run);
void feed(struct run *run);
void take_input(uint32_t id, const unsigned char *data, size_t length);
void resize(uint32_t id, const unsigned char *size, size_t length);
void drain(struct run *run, int stream);
int raise_permitted(void);
void narrow_bounding_set(void);
void start_run(uint32_t id, unsigned char *payload, size_t length, const sigset_t *mask);
void go(uint32_t id, const unsigned char *payload, size_t length);

#endif
