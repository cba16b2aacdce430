package main

// How a command run ends early (its client gone, its timeout) and takes its stdin.

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"syscall"
	"time"
)

// cancel stops the run because its client went away: a hangup (SIGHUP) to its process group,
// as a closing terminal would, so that `nohup`ed and `setsid` background processes live on;
// the run's own command, if still there after hangupGrace, is killed. A run still being
// prepared is stopped once it starts.
func (r *commandRun) cancel() {
	r.mu.Lock()
	pid := r.pid
	if pid == 0 {
		r.cancelled = true
	}
	r.mu.Unlock()
	if pid == 0 || syscall.Kill(-pid, syscall.SIGHUP) != nil {
		return
	}
	time.AfterFunc(hangupGrace, func() {
		r.mu.Lock()
		exited := r.exited
		r.mu.Unlock()
		// Not reaped yet (its exit would have come): the pid is still the run's.
		if !exited {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// timeOut kills the run's tree, what it stopped on the way, and every process carrying its
// mark (what the run started, even after it left the tree).
func (r *commandRun) timeOut(runID string) {
	r.mu.Lock()
	r.timedOut = true
	leader := r.pid
	r.mu.Unlock()
	mark := runMark + "=" + runID
	stopThenKill("/proc", func(all []ProcessInfo, stopped map[int]bool) []int {
		set := map[int]bool{}
		for _, pid := range runTree(all, leader) {
			set[pid] = true
		}
		for _, pid := range treesOf(all, nil, stopped) {
			set[pid] = true
		}
		for _, pid := range markedWith(all, mark, "/proc") {
			set[pid] = true
		}
		return keys(set)
	})
}

// input writes to the run's stdin for request id, then (end) closes it; it answers `taken`
// with the bytes the process took. A cancel answers at once with what was taken so far and
// closes nothing.
func (r *commandRun) input(request *inputRequest) {
	r.mu.Lock()
	open := r.takesInput
	spawnID := r.spawnID
	r.mu.Unlock()
	if !open {
		r.front.out.Emit(errorEvent(request.ID, stdinClosed(), r.front.workspace))
		return
	}
	data, err := base64.StdEncoding.DecodeString(request.Data)
	if err != nil {
		data = []byte{}
	}
	taken := 0
	complete := true
	for at := 0; at < len(data) && complete; at += inputStep {
		step := data[at:min(at+inputStep, len(data))]
		select {
		case <-r.front.spawner.Input(spawnID, step):
			taken += len(step)
		case <-request.cancelled:
			complete = false
		}
	}
	if complete && request.End {
		r.mu.Lock()
		r.takesInput = false
		r.mu.Unlock()
		select {
		case <-r.front.spawner.Input(spawnID, nil):
		case <-request.cancelled:
		}
	}
	r.front.out.Emit(map[string]any{"id": request.ID, "ev": "taken", "bytes": taken})
}

// Input goes to the process in steps of this size, so that a cancel stops it soon.
const inputStep = 16 * 1024

func stdinClosed() error {
	return &RunnerError{Code: "stdin_closed", Message: "The process takes no more input",
		Details: map[string]any{"reason": "closed"}}
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
