package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"math"
	"os"
	"sort"
	"sync"
	"syscall"
	"time"
)

// A command run (exec.ts and run-ops.ts of the runner, in Go): `started` with its pid once its
// process runs, its output, `result` once its process exited, then whatever processes it left
// holding its pipes write, and `exec` once they let go of them.

const (
	// After the main process exits, how long its last output may take to arrive.
	outputGrace = 150 * time.Millisecond
	// After a hangup, how long the command gets before it is killed.
	hangupGrace = 500 * time.Millisecond
	// The environment variable that marks every process of a run (and what they start).
	runMark = "SANDBOX_RUN_ID"
	// Exit code of a run ended by its timeout (as coreutils `timeout`).
	timeoutExitCode = 124
	// Paths reported in filesWritten at the most.
	maxFilesWritten = 1000
	// How often a run's tree is measured, at the most, and the share of the front's time a
	// poll may take.
	memoryPoll = 50 * time.Millisecond
	pollDuty   = 0.02
)

// execRequest is the part of an `exec` request a command run reads.
type execRequest struct {
	ID        float64
	Command   string
	Env       map[string]string
	Cwd       string
	TimeoutMs float64
	Stdin     bool
}

// commandRun is one command run, from its request to its `exec` event.
type commandRun struct {
	front   *Front
	request execRequest

	mu sync.Mutex
	// Set once the process runs.
	spawnID uint32
	pid     int
	// Output that came before `started` went out, held until then.
	announced bool
	early     [][]byte
	// A cancel that came while the run was being prepared.
	cancelled bool
	// Output flow: held by the agent, or while the output is full; after the result, late
	// output is held only while the output is full.
	agentPaused, sinkFull, finished, held bool
	// Whether input requests may still write to the run's stdin.
	takesInput bool
	exited     bool
	pipesOpen  int
	timedOut   bool
	peakRss    uint64

	exit   chan SpawnExit
	lost   chan struct{}
	closed chan struct{}
}

func newCommandRun(front *Front, request execRequest) *commandRun {
	return &commandRun{
		front:     front,
		request:   request,
		pipesOpen: 2,
		exit:      make(chan SpawnExit, 1),
		lost:      make(chan struct{}),
		closed:    make(chan struct{}),
	}
}

func (r *commandRun) id() float64 { return r.request.ID }

// serve runs the command and answers its request; whatever fails becomes its error event.
func (r *commandRun) serve() {
	defer r.front.forget(r.id())
	if err := r.run(); err != nil {
		r.front.out.Emit(errorEvent(r.id(), err, r.front.workspace))
	}
}

func (r *commandRun) run() error {
	cwd, err := workingDirectory(r.request.Cwd, r.front.workspace)
	if err != nil {
		return err
	}
	// The runner's directory is made for every run: the user may have removed it.
	if err := os.MkdirAll(r.front.clock.dir, 0o700); err != nil {
		return err
	}
	runID, err := randomHex(8)
	if err != nil {
		return err
	}
	since, err := r.front.clock.Read()
	if err != nil {
		return err
	}
	started := time.Now()
	spawnID, pid, err := r.front.spawner.Spawn(SpawnOptions{
		Cwd:           cwd,
		Argv:          []string{"/bin/bash", "-c", r.request.Command},
		Env:           r.front.runEnv(r.request.Env, runID),
		EnterCPUGroup: r.front.cpuSplit,
		Stdin:         r.request.Stdin,
	}, r)
	if err != nil {
		if _, ok := err.(*RunnerError); ok {
			return err
		}
		return &RunnerError{Code: "internal_error", Message: err.Error()}
	}
	r.mu.Lock()
	r.spawnID, r.pid = spawnID, pid
	r.takesInput = r.request.Stdin
	cancelledEarly := r.cancelled
	r.front.out.Emit(map[string]any{"id": r.id(), "ev": "started", "pid": pid})
	for _, event := range r.early {
		r.front.out.EmitLine(event)
	}
	r.early = nil
	r.announced = true
	r.applyFlow()
	r.mu.Unlock()
	if cancelledEarly {
		r.cancel()
	}

	timeout := time.AfterFunc(runTimeout(r.request.TimeoutMs), func() { r.timeOut(runID) })
	poller := startUsagePoller(pid, &r.mu, &r.peakRss)
	var exit SpawnExit
	select {
	case exit = <-r.exit:
	case <-r.lost:
		timeout.Stop()
		poller.stop()
		return &RunnerError{Code: "internal_error", Message: errSpawnerGone.Error()}
	}
	timeout.Stop()
	poller.stop()
	executionTimeMs := time.Since(started).Milliseconds()

	// The last output, for OUTPUT_GRACE at most; then what background processes write is late
	// output, forwarded at the agent's pace.
	grace := time.NewTimer(outputGrace)
	select {
	case <-r.closed:
	case <-r.lost:
	case <-grace.C:
	}
	grace.Stop()
	r.mu.Lock()
	r.finished = true
	r.takesInput = false
	r.applyFlow()
	timedOut := r.timedOut
	peakRss := r.peakRss
	r.mu.Unlock()

	files := changedSince(cwd, since, r.front.workspace)
	if len(files) > maxFilesWritten {
		files = files[:maxFilesWritten]
	}
	exitCode := exit.ExitCode()
	if timedOut {
		exitCode = timeoutExitCode
	}
	if exit.MaxRssBytes > peakRss {
		peakRss = exit.MaxRssBytes
	}
	r.front.out.Emit(map[string]any{
		"id":              r.id(),
		"ev":              "result",
		"exitCode":        exitCode,
		"executionTimeMs": executionTimeMs,
		"memoryUsedBytes": peakRss,
		"cpuTimeMs":       int64(math.Round(float64(exit.CPUTimeUs) / 1000)),
		"timedOut":        timedOut,
		"filesWritten":    files,
	})
	select {
	case <-r.closed:
	case <-r.lost:
	}
	r.front.out.Emit(map[string]any{"id": r.id(), "ev": "exec"})
	return nil
}

// runTimeout is a run's timeout as a timer takes it (Node's setTimeout: 1 ms at the least).
func runTimeout(ms float64) time.Duration {
	if math.IsNaN(ms) || ms < 1 {
		ms = 1
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// Output is a SpawnHandler event: an event of the run's output, held until `started` went out.
func (r *commandRun) Output(stream int, data []byte) {
	name := "stdout"
	if stream == 1 {
		name = "stderr"
	}
	event := map[string]any{"id": r.id(), "ev": name, "data": base64.StdEncoding.EncodeToString(data)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.announced {
		r.early = append(r.early, eventLine(event))
		return
	}
	if r.front.out.Emit(event) || r.sinkFull {
		return
	}
	r.sinkFull = true
	r.applyFlow()
	r.front.out.OnDrain(func() {
		r.mu.Lock()
		r.sinkFull = false
		r.applyFlow()
		r.mu.Unlock()
	})
}

func (r *commandRun) PipeClosed(int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pipesOpen--
	if r.pipesOpen == 0 {
		close(r.closed)
	}
}

func (r *commandRun) Exited(exit SpawnExit) {
	r.mu.Lock()
	r.exited = true
	r.takesInput = false
	r.mu.Unlock()
	r.exit <- exit
}

func (r *commandRun) Lost() {
	close(r.lost)
}

// applyFlow holds or releases the run's pipes as the agent and the output want; r.mu held.
func (r *commandRun) applyFlow() {
	held := r.sinkFull || (r.agentPaused && !r.finished)
	if !r.announced || held == r.held {
		return
	}
	r.held = held
	r.front.spawner.Hold(r.spawnID, held)
}

// pause holds (true) or releases the run's output, for the agent.
func (r *commandRun) pause(paused bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.agentPaused = paused
	r.applyFlow()
}

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

// usagePoller measures a run's tree from /proc while it runs (its peak memory: the sum over
// the tree, which wait4 does not give); the first poll comes memoryPoll after the start, and
// polls never take more than pollDuty of the front's time.
type usagePoller struct {
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

func startUsagePoller(leader int, runMu *sync.Mutex, peak *uint64) *usagePoller {
	p := &usagePoller{}
	var poll func()
	poll = func() {
		begun := time.Now()
		var sum uint64
		for _, info := range descendants(listProcesses("/proc"), leader) {
			sum += info.Rss
		}
		runMu.Lock()
		if sum > *peak {
			*peak = sum
		}
		runMu.Unlock()
		next := time.Duration(float64(time.Since(begun)) / pollDuty)
		if next < memoryPoll {
			next = memoryPoll
		}
		p.mu.Lock()
		if !p.stopped {
			p.timer = time.AfterFunc(next, poll)
		}
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.timer = time.AfterFunc(memoryPoll, poll)
	p.mu.Unlock()
	return p
}

func (p *usagePoller) stop() {
	p.mu.Lock()
	p.stopped = true
	p.timer.Stop()
	p.mu.Unlock()
}

// envList is the base environment with the request's over it (in place), then the mark.
func envList(base []string, overrides map[string]string, runID string) []string {
	env := make([]string, 0, len(base)+len(overrides)+1)
	seen := map[string]bool{}
	for _, entry := range base {
		key := entry
		for i := 0; i < len(entry); i++ {
			if entry[i] == '=' {
				key = entry[:i]
				break
			}
		}
		if key == runMark {
			continue
		}
		if value, ok := overrides[key]; ok {
			entry = key + "=" + value
			seen[key] = true
		}
		env = append(env, entry)
	}
	added := make([]string, 0, len(overrides))
	for key := range overrides {
		if !seen[key] && key != runMark {
			added = append(added, key)
		}
	}
	sort.Strings(added)
	for _, key := range added {
		env = append(env, key+"="+overrides[key])
	}
	return append(env, runMark+"="+runID)
}
