package main

import (
	"bytes"
	"encoding/json"
	"os"
	"sync"
	"time"
)

// Front answers the requests it serves itself (command runs, and the flow, input and cancel of
// those) and hands every other one to the runner's Node, as it came.
type Front struct {
	out      *Output
	spawner  *Spawner
	clock    *ChangeClock
	cpuSplit bool
	baseEnv  []string
	// The workspace (/workspace in a sandbox; tests give their own).
	workspace string
	// Where the requests the front does not serve go.
	forward func(line []byte)
	// The armed shells (nil: every run starts its own).
	shells *Shells
	// How long a run's `started` may wait for its output or its end (defaultStartHold).
	startHold time.Duration
	// The runner's Node (0: none), the front's child.
	nodePid int

	mu sync.Mutex
	// The front's requests under way, by id: command runs, input requests and watches.
	runs    map[float64]*commandRun
	inputs  map[float64]*inputRequest
	watches map[float64]*fileWatch
}

// request is what the front reads of every request.
type request struct {
	ID        *float64          `json:"id"`
	Op        string            `json:"op"`
	Target    *float64          `json:"target"`
	Command   *string           `json:"command"`
	Code      *string           `json:"code"`
	ContextID *string           `json:"contextId"`
	Env       map[string]string `json:"env"`
	Cwd       string            `json:"cwd"`
	TimeoutMs float64           `json:"timeoutMs"`
	Stdin     bool              `json:"stdin"`
	Data      string            `json:"data"`
	End       bool              `json:"end"`
	Path      string            `json:"path"`
	Recursive bool              `json:"recursive"`
}

// inputRequest is an input request to one of the front's runs.
type inputRequest struct {
	ID        float64
	Data      string
	End       bool
	cancelled chan struct{}
	once      sync.Once
}

func (f *Front) runEnv(overrides map[string]string, runID string) []string {
	return envList(f.baseEnv, overrides, runID)
}

// The ops the front may serve; every other request goes to the Node unread.
var servedOps = map[string]bool{
	"exec": true, "cancel": true, "pause": true, "resume": true, "input": true, "watch": true,
}

// opPrefix is how the agent's requests begin: their op first (`{"op":"writeFiles",...`).
var opPrefix = []byte(`{"op":"`)

// leadingOp is the op a request line names first, if it begins so; "" if it does not.
func leadingOp(line []byte) string {
	if !bytes.HasPrefix(line, opPrefix) {
		return ""
	}
	rest := line[len(opPrefix):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return ""
	}
	return string(rest[:end])
}

// Handle takes one request line: served here or handed on, in the order they came.
func (f *Front) Handle(line []byte) {
	// A request the front never serves (a file write of many megabytes) is not even parsed.
	if op := leadingOp(line); op != "" && !servedOps[op] {
		f.forward(f.withArmedShells(op, line))
		return
	}
	var req request
	if json.Unmarshal(line, &req) != nil || req.ID == nil {
		f.forward(line)
		return
	}
	id := *req.ID
	switch req.Op {
	case "exec":
		// Code, and a context's cells (commands of a shell context too), are the Node's.
		if req.Code != nil || req.ContextID != nil {
			break
		}
		command := ""
		if req.Command != nil {
			command = *req.Command
		}
		run := newCommandRun(f, runSpec{
			ID: id, Command: command, Env: req.Env, Cwd: req.Cwd,
			TimeoutMs: req.TimeoutMs, Stdin: req.Stdin,
		})
		f.mu.Lock()
		f.runs[id] = run
		f.mu.Unlock()
		go run.serve()
		return
	case "watch":
		f.startWatch(id, req.Path, req.Recursive)
		return
	case "cancel", "pause", "resume", "input":
		if req.Target != nil && f.targets(*req.Target, req) {
			return
		}
	}
	f.forward(line)
}

// withArmedShells adds the armed shells' pids to a request of the Node's that counts or
// kills the user's processes (stats, kill): they are no activity, and no process of the
// user's to kill.
func (f *Front) withArmedShells(op string, line []byte) []byte {
	if (op != "stats" && op != "kill") || f.shells == nil || !bytes.HasSuffix(line, []byte("}")) {
		return line
	}
	pids, _ := json.Marshal(f.shells.Pids())
	extended := append([]byte{}, line[:len(line)-1]...)
	extended = append(extended, `,"armedShells":`...)
	return append(append(extended, pids...), '}')
}

// targets serves a request aimed at one of the front's own requests; false if it is not one.
func (f *Front) targets(target float64, req request) bool {
	f.mu.Lock()
	run := f.runs[target]
	input := f.inputs[target]
	watch := f.watches[target]
	f.mu.Unlock()
	if watch != nil && req.Op == "cancel" {
		watch.close()
		f.out.Emit(map[string]any{"id": *req.ID, "ev": "killed", "pids": []int{}})
		return true
	}
	if run == nil && input == nil {
		return false
	}
	id := *req.ID
	switch req.Op {
	case "cancel":
		if run != nil {
			go run.cancel()
		} else {
			input.once.Do(func() { close(input.cancelled) })
		}
		f.out.Emit(map[string]any{"id": id, "ev": "killed", "pids": []int{}})
	case "pause", "resume":
		if run != nil {
			run.pause(req.Op == "pause")
		}
		f.out.Emit(map[string]any{"id": id, "ev": "flow"})
	case "input":
		if run == nil {
			// Input to an input request: it takes none.
			f.out.Emit(errorEvent(id, stdinClosed(), f.workspace))
			return true
		}
		in := &inputRequest{ID: id, Data: req.Data, End: req.End, cancelled: make(chan struct{})}
		f.mu.Lock()
		f.inputs[id] = in
		f.mu.Unlock()
		go func() {
			defer f.forget(id)
			run.input(in)
		}()
	}
	return true
}

// forget drops a request of the front's once it ended.
func (f *Front) forget(id float64) {
	f.mu.Lock()
	delete(f.runs, id)
	delete(f.inputs, id)
	f.mu.Unlock()
}

// CancelRuns stops the front's runs and watches: the agent went away (background processes
// live on).
func (f *Front) CancelRuns() {
	f.mu.Lock()
	runs := make([]*commandRun, 0, len(f.runs))
	for _, run := range f.runs {
		runs = append(runs, run)
	}
	watches := make([]*fileWatch, 0, len(f.watches))
	for _, watch := range f.watches {
		watches = append(watches, watch)
	}
	f.mu.Unlock()
	for _, run := range runs {
		run.cancel()
	}
	for _, watch := range watches {
		watch.close()
	}
}

// ownProcesses are the front's processes that no run's tree holds, and whose pids no run's
// process can have while the front lives: itself, its children (the Node, its spawner: a
// child's pid is not reused before its parent reaps it) and the armed shells waiting (its
// spawner's children; a taken one is the run's).
func (f *Front) ownProcesses() map[int]bool {
	own := map[int]bool{os.Getpid(): true}
	if f.nodePid != 0 {
		own[f.nodePid] = true
	}
	if pid := f.spawner.Pid(); pid != 0 {
		own[pid] = true
	}
	if f.shells != nil {
		for _, pid := range f.shells.Pids() {
			own[pid] = true
		}
	}
	return own
}
