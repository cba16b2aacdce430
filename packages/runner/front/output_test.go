package main

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockingWriter holds every write until released.
type blockingWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	writes  int
	release chan struct{}
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return w.buf.Write(p)
}

func TestOutputBatchesAndSaysFull(t *testing.T) {
	w := &blockingWriter{release: make(chan struct{})}
	out := NewOutput(w)
	if !out.Emit(map[string]any{"id": 1, "ev": "pong"}) {
		t.Fatal("the first event found the output full")
	}
	// The writer holds its first batch; what comes meanwhile waits, then goes in one write.
	time.Sleep(20 * time.Millisecond)
	big := strings.Repeat("x", outputHighWater)
	full := !out.EmitLine([]byte(`{"id":2,"ev":"stdout","data":"` + big + `"}`))
	if !full {
		t.Error("more than the high water queued, and the output did not say it is full")
	}
	drained := make(chan struct{})
	out.OnDrain(func() { close(drained) })
	close(w.release)
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		t.Fatal("no drain")
	}
	out.Close()
	if w.writes != 2 || strings.Count(w.buf.String(), "\n") != 2 {
		t.Errorf("%d writes, %q...", w.writes, w.buf.String()[:40])
	}
}

// A caller holds its own lock while it asks for the drain, and the callback takes that lock:
// with room already there, a callback made at once would deadlock.
func TestOnDrainNeverCallsBack(t *testing.T) {
	out := NewOutput(&bytes.Buffer{})
	defer out.Close()
	var mu sync.Mutex
	done := make(chan struct{})
	mu.Lock()
	out.OnDrain(func() {
		mu.Lock()
		defer mu.Unlock()
		close(done)
	})
	mu.Unlock()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the drain callback never came")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// Once the reader is gone, the writer stops: its end runs, a producer waiting for room is let
// go, and what comes after is dropped rather than queued without end.
func TestBatchWriterStopsWhenItsReaderIsGone(t *testing.T) {
	ended := make(chan struct{})
	writer := newBatchWriter(failingWriter{}, 16, func() { close(ended) })
	writer.queue([]byte(strings.Repeat("x", 32)))
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the writer did not stop")
	}
	released := make(chan struct{})
	writer.onDrain(func() { close(released) })
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("a producer still waits for room")
	}
	if !writer.queue([]byte(strings.Repeat("y", 32))) {
		t.Error("a write after the failure says the writer is full")
	}
	writer.wait()
}
