package main

import (
	"reflect"
	"testing"
	"time"
)

// A run's `started` waits for its first output or its end (the front's startHold), so that a
// short run's events reach the agent in one write; order and content are as ever.

func names(events []map[string]any) []string {
	out := []string{}
	for _, event := range events {
		out = append(out, event["ev"].(string))
	}
	return out
}

func TestRunThatEndsAtOnceSaysItAllInOneWrite(t *testing.T) {
	h := newHarness(t)
	h.front.startHold = time.Hour
	id := h.exec(`true`, nil)
	events := h.until(id, "exec")
	if got := names(events); !reflect.DeepEqual(got, []string{"started", "result", "exec"}) {
		t.Fatalf("events %v", got)
	}
	if events[0]["pid"].(float64) <= 0 || named(events, "result")["exitCode"] != 0.0 {
		t.Errorf("events %v", events)
	}
	got := h.writeWith(id, "result")
	if !reflect.DeepEqual(got, []string{"started", "result", "exec"}) {
		t.Errorf("the result's write held %v", got)
	}
}

func TestStartedLeavesWithTheFirstOutput(t *testing.T) {
	h := newHarness(t)
	h.front.startHold = time.Hour
	id := h.exec(`echo one; exec sleep 30`, nil)
	events := h.until(id, "stdout")
	if got := names(events); !reflect.DeepEqual(got, []string{"started", "stdout"}) {
		t.Fatalf("events %v", got)
	}
	if got := h.writeWith(id, "stdout"); !reflect.DeepEqual(got, []string{"started", "stdout"}) {
		t.Errorf("the output's write held %v", got)
	}
	h.send(map[string]any{"op": "cancel", "target": id})
	if got := named(h.until(id, "exec"), "result")["exitCode"]; got != 129.0 {
		t.Errorf("exit code %v; want 128 + SIGHUP", got)
	}
}

func TestSilentRunSaysStartedOnceTheHoldEnds(t *testing.T) {
	h := newHarness(t)
	h.front.startHold = time.Millisecond
	id := h.exec(`exec sleep 30`, nil)
	events := h.until(id, "started")
	if len(events) != 1 || !alive(int(events[0]["pid"].(float64))) {
		t.Fatalf("events %v", events)
	}
	h.send(map[string]any{"op": "cancel", "target": id})
	h.until(id, "exec")
}

func TestRunTakingInputSaysStartedAtOnce(t *testing.T) {
	h := newHarness(t)
	h.front.startHold = time.Hour
	id := h.exec(`cat`, map[string]any{"stdin": true})
	h.until(id, "started")
	h.send(map[string]any{"op": "input", "target": id, "data": "aGk=", "end": true})
	if got := output(h.until(id, "exec"), "stdout"); got != "hi" {
		t.Errorf("stdout %q", got)
	}
}
