package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The harness of the front's tests: the spawner compiled once, a front started per test, and
// readers of its events.

// The spawner the tests start runs with: native/*.c, compiled here.
var spawnerBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "front-test-")
	if err != nil {
		panic(err)
	}
	spawnerBinary = filepath.Join(dir, "run-spawner")
	sources, err := filepath.Glob("../native/*.c")
	if err != nil || len(sources) == 0 {
		panic(fmt.Sprintf("the spawner's sources: %v", err))
	}
	build := exec.Command("gcc", append([]string{"-O2", "-Wall", "-Werror", "-o", spawnerBinary}, sources...)...)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic(fmt.Sprintf("compiling the spawner: %v", err))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// harness is a front whose output the test reads, event by event, with a workspace of its own.
type harness struct {
	t         testing.TB
	front     *Front
	root      string
	forwarded chan string
	mu        sync.Mutex
	events    map[float64][]map[string]any
	arrived   chan struct{}
	nextID    float64
	// Each write of the front's output, as the agent would read it at the most.
	writes [][]byte
}

// recorder keeps each write it passes on.
type recorder struct {
	h *harness
	w io.Writer
}

func (r recorder) Write(p []byte) (int, error) {
	r.h.mu.Lock()
	r.h.writes = append(r.h.writes, append([]byte(nil), p...))
	r.h.mu.Unlock()
	return r.w.Write(p)
}

// writeWith is the names of request id's events in the write that carried its event ev.
func (h *harness) writeWith(id float64, ev string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, batch := range h.writes {
		names := []string{}
		found := false
		for _, line := range bytes.Split(bytes.TrimSuffix(batch, []byte{'\n'}), []byte{'\n'}) {
			var event map[string]any
			if json.Unmarshal(line, &event) != nil || event["id"] != id {
				continue
			}
			names = append(names, event["ev"].(string))
			found = found || event["ev"] == ev
		}
		if found {
			return names
		}
	}
	return nil
}

func newHarness(t testing.TB) *harness {
	reader, writer := io.Pipe()
	h := &harness{
		t:         t,
		root:      t.TempDir(),
		forwarded: make(chan string, 100),
		events:    map[float64][]map[string]any{},
		arrived:   make(chan struct{}, 1),
		nextID:    1,
	}
	// A CPU group's file as in a sandbox (a plain file here: the runs' writes land in it), which
	// the spawner opens first, as its fd 3.
	cpuProcs := filepath.Join(t.TempDir(), "cpu.procs")
	if err := os.WriteFile(cpuProcs, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	spawner := NewSpawner(spawnerBinary, cpuProcs, "")
	out := NewOutput(recorder{h, writer})
	h.front = &Front{
		out:       out,
		spawner:   spawner,
		clock:     &ChangeClock{dir: t.TempDir()},
		cpuSplit:  true,
		baseEnv:   os.Environ(),
		workspace: h.root,
		runs:      map[float64]*commandRun{},
		inputs:    map[float64]*inputRequest{},
		watches:   map[float64]*fileWatch{},
		forward:   func(line []byte) { h.forwarded <- string(line) },
		startHold: defaultStartHold,
	}
	// Armed shells, as in a sandbox, ready before the test's first run.
	h.front.shells = NewShells(h.front)
	h.front.shells.Fill()
	h.waitArmed(armedShellCount)
	go func() {
		lines := bufio.NewScanner(reader)
		lines.Buffer(make([]byte, 1<<20), 1<<26)
		for lines.Scan() {
			var event map[string]any
			if err := json.Unmarshal(lines.Bytes(), &event); err != nil {
				panic(err)
			}
			h.mu.Lock()
			id := event["id"].(float64)
			h.events[id] = append(h.events[id], event)
			h.mu.Unlock()
			select {
			case h.arrived <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		h.front.CancelRuns()
		spawner.Close()
		writer.Close()
	})
	return h
}

// send hands the front one request (its id added) and returns the id.
func (h *harness) send(request map[string]any) float64 {
	id := h.nextID
	h.nextID++
	request["id"] = id
	line, _ := json.Marshal(request)
	h.front.Handle(line)
	return id
}

func (h *harness) exec(command string, extra map[string]any) float64 {
	request := map[string]any{"op": "exec", "command": command, "env": map[string]string{},
		"cwd": ".", "timeoutMs": 10_000}
	for k, v := range extra {
		request[k] = v
	}
	return h.send(request)
}

// until waits for request id's event named ev and returns id's events up to it.
func (h *harness) until(id float64, ev string) []map[string]any {
	h.t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		h.mu.Lock()
		for i, event := range h.events[id] {
			if event["ev"] == ev {
				events := h.events[id][:i+1]
				h.mu.Unlock()
				return events
			}
		}
		h.mu.Unlock()
		select {
		case <-h.arrived:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			h.mu.Lock()
			defer h.mu.Unlock()
			h.t.Fatalf("no %q for request %v; got %v", ev, id, h.events[id])
		}
	}
}

func named(events []map[string]any, ev string) map[string]any {
	for _, event := range events {
		if event["ev"] == ev {
			return event
		}
	}
	return nil
}

func output(events []map[string]any, ev string) string {
	var all []byte
	for _, event := range events {
		if event["ev"] == ev {
			data, _ := base64.StdEncoding.DecodeString(event["data"].(string))
			all = append(all, data...)
		}
	}
	return string(all)
}

// alive says whether pid runs (a zombie does not).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, ok := parseStat(pid, string(stat))
	return ok
}
