package main

import (
	"encoding/base64"
	"math"
	"os"
	"sync"
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
	// How long `started` waits for the run's first output or its end, to leave in the same
	// write: a run that ends at once (`true`) costs the agent one read of the link, not three.
	// A run that takes input says it at once (its caller waits to write).
	defaultStartHold = 2 * time.Millisecond
)

// runSpec is the part of an `exec` request (the runner's RunSpec) a command run reads.
type runSpec struct {
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
	request runSpec

	mu sync.Mutex
	// Set once the process runs.
	spawnID uint32
	pid     int
	running bool
	// Output that came before `started` went out, held until then (see defaultStartHold).
	announced bool
	early     [][]byte
	holdStart *time.Timer
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

func newCommandRun(front *Front, request runSpec) *commandRun {
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
	cwd, dir, err := workingDirectory(r.request.Cwd, r.front.workspace)
	if err != nil {
		return err
	}
	since, err := r.front.clock.Read()
	if err != nil {
		return err
	}
	started := time.Now()
	spawnID, pid, runID, err := r.start(cwd, dir)
	if err != nil {
		return err
	}
	r.spawned(spawnID, pid)

	timeout := time.AfterFunc(runTimeout(r.request.TimeoutMs), func() { r.timeOut(runID) })
	poller := startUsagePoller(pid, &r.mu, &r.peakRss, r.front.ownProcesses)
	var exit SpawnExit
	select {
	case exit = <-r.exit:
	case <-r.lost:
		timeout.Stop()
		poller.stop()
		r.mu.Lock()
		r.announce() // the process ran: `started` before the error, as ever
		r.mu.Unlock()
		return &RunnerError{Code: "internal_error", Message: errSpawnerGone.Error()}
	}
	timeout.Stop()
	poller.stop()
	executionTimeMs := time.Since(started).Milliseconds()
	// The shells are re-armed once the run's process is gone: the spawner that starts them
	// is the one that reports the run's end.
	if r.front.shells != nil {
		r.front.shells.Fill()
	}

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

	result := r.resultLine(changedSince(cwd, since, r.front.workspace), exit, executionTimeMs,
		timedOut, peakRss)
	if !r.emitResult(result) {
		select {
		case <-r.closed:
		case <-r.lost:
		}
		r.front.out.Emit(r.execEvent())
	}
	return nil
}

// spawned records the run's process: `started` now if the run takes input or printed already,
// else within the front's startHold (see emitResult). A cancel that came before is carried out.
func (r *commandRun) spawned(spawnID uint32, pid int) {
	r.mu.Lock()
	r.spawnID, r.pid, r.running = spawnID, pid, true
	r.takesInput = r.request.Stdin
	cancelledEarly := r.cancelled
	if r.request.Stdin || len(r.early) > 0 {
		r.announce()
	} else {
		r.holdStart = time.AfterFunc(r.front.startHold, r.announceLater)
	}
	r.applyFlow()
	r.mu.Unlock()
	if cancelledEarly {
		r.cancel()
	}
}

func (r *commandRun) execEvent() map[string]any {
	return map[string]any{"id": r.id(), "ev": "exec"}
}

// emitResult queues `started` (if it still waits), the result, and `exec` if the run's pipes
// are already closed, in one piece: one write. It says whether `exec` went with them.
func (r *commandRun) emitResult(result []byte) bool {
	lines := [][]byte{}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.announced {
		lines = r.startLines()
	}
	lines = append(lines, result)
	ended := false
	select {
	case <-r.closed:
		ended = true
	case <-r.lost:
		ended = true
	default:
	}
	if ended {
		lines = append(lines, eventLine(r.execEvent()))
	}
	r.front.out.EmitLines(lines)
	return ended
}

// startLines is `started` and the output held until it (its lines), now said; r.mu held.
func (r *commandRun) startLines() [][]byte {
	if r.holdStart != nil {
		r.holdStart.Stop()
	}
	lines := append([][]byte{eventLine(map[string]any{"id": r.id(), "ev": "started", "pid": r.pid})},
		r.early...)
	r.early = nil
	r.announced = true
	return lines
}

// announce says `started` and the output held until it; false if the output is full; r.mu
// held.
func (r *commandRun) announce() bool {
	if r.announced {
		return true
	}
	ok := r.front.out.EmitLines(r.startLines())
	r.applyFlow()
	return ok
}

// announceLater is the start hold's end: `started` goes, unless something said it first.
func (r *commandRun) announceLater() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.announce()
}

// resultLine is the run's result: its exit, usage and the files it wrote.
func (r *commandRun) resultLine(files []string, exit SpawnExit, executionTimeMs int64,
	timedOut bool, peakRss uint64) []byte {
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
	return eventLine(map[string]any{
		"id":              r.id(),
		"ev":              "result",
		"exitCode":        exitCode,
		"executionTimeMs": executionTimeMs,
		"memoryUsedBytes": peakRss,
		"cpuTimeMs":       int64(math.Round(float64(exit.CPUTimeUs) / 1000)),
		"timedOut":        timedOut,
		"filesWritten":    files,
	})
}

// start starts the run's process: an armed shell's if one takes it, else a new bash. It
// returns the process's spawner id, pid and the run's mark. dir is what cwd is.
func (r *commandRun) start(cwd string, dir os.FileInfo) (uint32, int, string, error) {
	if shell := r.takeShell(cwd, dir); shell != nil {
		return shell.spawnID, shell.pid, shell.runID, nil
	}
	runID, err := randomHex(8)
	if err != nil {
		return 0, 0, "", err
	}
	spawnID, pid, err := r.front.spawner.Spawn(SpawnOptions{
		Cwd:           cwd,
		Argv:          []string{"/bin/bash", "-c", r.request.Command},
		Env:           r.front.runEnv(r.request.Env, runID),
		EnterCPUGroup: r.front.cpuSplit,
		Stdin:         r.request.Stdin,
	}, r)
	if err != nil {
		if _, ok := err.(*RunnerError); ok {
			return 0, 0, "", err
		}
		return 0, 0, "", &RunnerError{Code: "internal_error", Message: err.Error()}
	}
	return spawnID, pid, runID, nil
}

// takeShell hands the command to an armed shell, if one is there and the run sets nothing
// it cannot take (an environment of its own, another working directory, a long command);
// nil if the run starts cold.
func (r *commandRun) takeShell(cwd string, dir os.FileInfo) *armedShell {
	shells := r.front.shells
	if shells == nil || len(r.request.Env) > 0 || cwd != r.front.workspace {
		return nil
	}
	message, ok := shellMessage(r.request.Command, r.request.Stdin)
	if !ok {
		return nil
	}
	shell := shells.take(dir)
	if shell == nil {
		return nil
	}
	if r.front.spawner.Go(shell.spawnID, shell.goMessage(message)) != nil {
		// Found dead (the user's `kill -9 -1`), or its pipe tampered with.
		shell.attach(discarded{})
		return nil
	}
	shell.attach(r)
	return shell
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
		// Before the process is known (an armed shell's first bytes), held until it is.
		if !r.running || r.announce() || r.sinkFull {
			return
		}
	} else if r.front.out.Emit(event) || r.sinkFull {
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
	if !r.running || held == r.held {
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
