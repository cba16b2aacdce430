package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCommandRun(t *testing.T) {
	h := newHarness(t)
	id := h.exec(`echo out; echo err >&2; echo "$GREETING $SANDBOX_RUN_ID" > made.txt; pwd; exit 3`,
		map[string]any{"env": map[string]string{"GREETING": "hello"}, "cwd": "sub/dir"})
	events := h.until(id, "exec")
	if events[0]["ev"] != "started" || events[0]["pid"].(float64) <= 0 {
		t.Fatalf("the first event is not started: %v", events[0])
	}
	cwd := filepath.Join(h.root, "sub/dir")
	if got := output(events, "stdout"); got != "out\n"+cwd+"\n" {
		t.Errorf("stdout %q", got)
	}
	if got := output(events, "stderr"); got != "err\n" {
		t.Errorf("stderr %q", got)
	}
	result := named(events, "result")
	if result["exitCode"] != 3.0 || result["timedOut"] != false {
		t.Errorf("result %v", result)
	}
	if !reflect.DeepEqual(result["filesWritten"], []any{"sub/dir/made.txt"}) {
		t.Errorf("filesWritten %v", result["filesWritten"])
	}
	if result["memoryUsedBytes"].(float64) <= 0 || result["executionTimeMs"].(float64) < 0 {
		t.Errorf("usage %v", result)
	}
	made, _ := os.ReadFile(filepath.Join(cwd, "made.txt"))
	if !strings.HasPrefix(string(made), "hello ") || len(strings.TrimSpace(string(made))) != len("hello ")+16 {
		t.Errorf("the run's environment: %q", made)
	}
	if events[len(events)-1]["ev"] != "exec" || named(events, "result") == nil {
		t.Errorf("events end %v", events[len(events)-1])
	}
}

func TestExitBySignal(t *testing.T) {
	h := newHarness(t)
	id := h.exec(`kill -TERM $$`, nil)
	if got := named(h.until(id, "exec"), "result")["exitCode"]; got != 143.0 {
		t.Errorf("exit code %v; want 128 + SIGTERM", got)
	}
}

func TestBadRequests(t *testing.T) {
	h := newHarness(t)
	if err := os.WriteFile(filepath.Join(h.root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	id := h.exec("true", map[string]any{"cwd": "../out"})
	if event := h.until(id, "error")[0]; event["code"] != "invalid_path" {
		t.Errorf("a working directory out of the workspace: %v", event)
	}
	id = h.exec("true", map[string]any{"cwd": "file/x"})
	if event := h.until(id, "error")[0]; event["code"] != "invalid_path" {
		t.Errorf("a file on the way: %v", event)
	}
	id = h.exec("true", map[string]any{"env": map[string]string{"A": "x\x00y"}})
	if event := h.until(id, "error")[0]; event["code"] != "invalid_request" {
		t.Errorf("a NUL in the environment: %v", event)
	}
}

// Every request the front does not serve reaches the runner's Node as it came.
func TestForwardsTheRest(t *testing.T) {
	h := newHarness(t)
	lines := []string{
		`{"id":1,"op":"exec","code":"console.log(1)","env":{},"cwd":".","timeoutMs":1000}`,
		`{"id":2,"op":"ping"}`,
		`{"id":3,"op":"writeFiles","files":[{"path":"a","content":"eA=="}]}`,
		`{"id":4,"op":"cancel","target":1}`,
		`{"id":5,"op":"pause","target":99}`,
		`{"id":6,"op":"input","target":98,"data":"eA=="}`,
		`{"op":"statFile","id":7,"path":"a"}`,
		`{"op":"removeFile","id":8,"path":"a","recursive":true}`,
		`{"op":"renameFile","id":9,"from":"a","to":"b","overwrite":false}`,
		`{"op":"makeDirectory","id":10,"path":"d"}`,
		`not json`,
		`{"op":"ping"}`,
		// A shell context's command (ADR 59): the context's, not a run of the front's.
		`{"op":"exec","id":11,"command":"cd src","contextId":"ctx_0123456789abcdef01234567","env":{},"cwd":".","timeoutMs":1000}`,
	}
	for _, line := range lines {
		h.front.Handle([]byte(line))
	}
	for _, want := range lines {
		select {
		case got := <-h.forwarded:
			if got != want {
				t.Errorf("forwarded %q; want %q", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%q was not forwarded", want)
		}
	}
}

func TestTimeoutKillsTheRunAndWhatItLeft(t *testing.T) {
	h := newHarness(t)
	// A process that left the run's group and tree still carries its mark.
	id := h.exec(`setsid sleep 30 & echo $! > bg.pid; sleep 30`, map[string]any{"timeoutMs": 300})
	started := time.Now()
	result := named(h.until(id, "exec"), "result")
	if result["exitCode"] != 124.0 || result["timedOut"] != true {
		t.Errorf("result %v", result)
	}
	if took := time.Since(started); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	pidText, _ := os.ReadFile(filepath.Join(h.root, "bg.pid"))
	var pid int
	fmt.Sscan(string(pidText), &pid)
	if pid <= 0 {
		t.Fatalf("no background pid: %q", pidText)
	}
	deadline := time.Now().Add(3 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("the background process %d outlived the timeout", pid)
	}
}

func TestCancelHangsUp(t *testing.T) {
	h := newHarness(t)
	id := h.exec(`trap 'echo hung up; exit 7' HUP; echo ready; while :; do sleep 0.05; done`, nil)
	h.until(id, "stdout")
	cancel := h.send(map[string]any{"op": "cancel", "target": id})
	if killed := h.until(cancel, "killed")[0]; !reflect.DeepEqual(killed["pids"], []any{}) {
		t.Errorf("cancel answered %v", killed)
	}
	events := h.until(id, "exec")
	if got := output(events, "stdout"); got != "ready\nhung up\n" {
		t.Errorf("stdout %q", got)
	}
	if got := named(events, "result")["exitCode"]; got != 7.0 {
		t.Errorf("exit code %v", got)
	}
}

func TestStdin(t *testing.T) {
	h := newHarness(t)
	id := h.exec(`cat; echo " end"`, map[string]any{"stdin": true})
	h.until(id, "started")
	data := strings.Repeat("x", 40_000)
	input := h.send(map[string]any{"op": "input", "target": id,
		"data": base64.StdEncoding.EncodeToString([]byte(data)), "end": true})
	if taken := h.until(input, "taken")[0]; taken["bytes"] != 40_000.0 {
		t.Errorf("taken %v", taken)
	}
	events := h.until(id, "exec")
	if got := output(events, "stdout"); got != data+" end\n" {
		t.Errorf("stdout: %d bytes", len(got))
	}
	// The run is over: its stdin takes nothing more.
	late := h.send(map[string]any{"op": "input", "target": id, "data": "eA=="})
	select {
	case line := <-h.forwarded:
		if !strings.Contains(line, `"target":1`) {
			t.Errorf("forwarded %q", line)
		}
	case <-time.After(5 * time.Second):
		// Still the front's (its result went out, its pipes not yet closed): it answers.
		if event := h.until(late, "error")[0]; event["code"] != "stdin_closed" {
			t.Errorf("late input: %v", event)
		}
	}
}

// A held run's process blocks on its full pipe; released, it finishes.
func TestPauseHoldsTheProcess(t *testing.T) {
	h := newHarness(t)
	id := h.exec(`head -c 2000000 /dev/zero; echo done >&2`, nil)
	pause := h.send(map[string]any{"op": "pause", "target": id})
	h.until(pause, "flow")
	time.Sleep(500 * time.Millisecond)
	h.mu.Lock()
	finished := named(h.events[id], "result") != nil
	h.mu.Unlock()
	if finished {
		t.Fatal("the run finished while held")
	}
	resume := h.send(map[string]any{"op": "resume", "target": id})
	h.until(resume, "flow")
	events := h.until(id, "exec")
	if got := len(output(events, "stdout")); got != 2_000_000 {
		t.Errorf("stdout %d bytes", got)
	}
	if got := output(events, "stderr"); got != "done\n" {
		t.Errorf("stderr %q", got)
	}
}

// Output written by a background process after the run's exit follows its result, and the
// run ends (`exec`) only when the pipes close.
func TestLateOutput(t *testing.T) {
	h := newHarness(t)
	id := h.exec(`(sleep 0.4; echo late) &`, nil)
	events := h.until(id, "exec")
	var order []string
	for _, event := range events {
		order = append(order, event["ev"].(string))
	}
	if !reflect.DeepEqual(order, []string{"started", "result", "stdout", "exec"}) {
		t.Errorf("events %v", order)
	}
}

// A helper that dies fails the runs it had; the next run starts another.
func TestSpawnerLost(t *testing.T) {
	h := newHarness(t)
	id := h.exec(`sleep 30`, nil)
	h.until(id, "started")
	pid := h.front.spawner.Pid()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if event := named(h.until(id, "error"), "error"); event["code"] != "internal_error" ||
		event["message"] != errSpawnerGone.Error() {
		t.Errorf("lost run: %v", event)
	}
	next := h.exec("echo again", nil)
	if got := output(h.until(next, "exec"), "stdout"); got != "again\n" {
		t.Errorf("after a new helper: %q", got)
	}
}

func TestLeadingOp(t *testing.T) {
	for line, want := range map[string]string{
		`{"op":"writeFiles","files":[]}`: "writeFiles",
		`{"op":"exec","id":1}`:           "exec",
		`{"id":1,"op":"ping"}`:           "",
		`{"op":"ex\"ec","id":1}`:         "",
		`{"op":"unterminated`:            "",
	} {
		if got := leadingOp([]byte(line)); got != want {
			t.Errorf("leadingOp(%s) = %q; want %q", line, got, want)
		}
	}
}

// The Node's answer to the front's own ping says it is ready, and goes no further.
func TestRelayLinesTakesTheReadyPong(t *testing.T) {
	reader, writer := io.Pipe()
	var sink bytes.Buffer
	out := NewOutput(&sink)
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		relayLines(reader, out, ready)
		close(done)
	}()
	fmt.Fprint(writer, `{"id":3,"ev":"pong","pid":9}`+"\n")
	fmt.Fprint(writer, `{"id":-1,"ev":"pong","pid":9}`+"\n")
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
		t.Fatal("not ready")
	}
	fmt.Fprint(writer, `{"id":-1,"ev":"pong","pid":9}`+"\n") // only the first is the front's
	writer.Close()
	<-done
	out.Close()
	want := `{"id":3,"ev":"pong","pid":9}` + "\n" + `{"id":-1,"ev":"pong","pid":9}` + "\n"
	if sink.String() != want {
		t.Errorf("relayed %q", sink.String())
	}
}
