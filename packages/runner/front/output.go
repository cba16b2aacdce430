package main

import (
	"encoding/json"
	"io"
	"sync"
)

// outputHighWater is how many bytes of events may wait for the agent before producers are told
// to slow down (Node's default for a socket is 16 KiB; a few runs' chunks fit in this).
const outputHighWater = 64 * 1024

// Output is the front's side of the protocol's output: one JSON event per line, written by one
// goroutine. What producers queue while it writes goes out in its next write, so that events
// that come together (a run's output, result and end) wake the agent once.
type Output struct {
	mu      sync.Mutex
	wake    *sync.Cond
	queued  []byte
	spare   []byte
	closed  bool
	failed  bool
	waiters []func()
	w       io.Writer
	done    chan struct{}
}

// NewOutput starts the writer of w.
func NewOutput(w io.Writer) *Output {
	o := &Output{w: w, done: make(chan struct{})}
	o.wake = sync.NewCond(&o.mu)
	go o.loop()
	return o
}

// Emit queues one event; false means the output is full: wait for OnDrain before more.
func (o *Output) Emit(event any) bool {
	line, err := json.Marshal(event)
	if err != nil {
		// Every event is made of strings, numbers and lists of them.
		panic(err)
	}
	return o.EmitLine(line)
}

// EmitLine queues one line (without its newline), as it is.
func (o *Output) EmitLine(line []byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.failed {
		return true // nobody reads any more: nothing to wait for
	}
	o.queued = append(o.queued, line...)
	o.queued = append(o.queued, '\n')
	o.wake.Signal()
	return len(o.queued) < outputHighWater
}

// OnDrain calls resume once, when the output has room again: never before it returns, so that
// a caller may hold its own lock, which resume takes.
func (o *Output) OnDrain(resume func()) {
	o.mu.Lock()
	if o.failed || len(o.queued) < outputHighWater {
		o.mu.Unlock()
		go resume()
		return
	}
	o.waiters = append(o.waiters, resume)
	o.mu.Unlock()
}

// Close writes what is queued, then stops; it returns once that is done.
func (o *Output) Close() {
	o.mu.Lock()
	o.closed = true
	o.wake.Signal()
	o.mu.Unlock()
	<-o.done
}

func (o *Output) loop() {
	defer close(o.done)
	for {
		o.mu.Lock()
		for len(o.queued) == 0 && !o.closed {
			o.wake.Wait()
		}
		if len(o.queued) == 0 {
			o.mu.Unlock()
			return
		}
		batch := o.queued
		o.queued = o.spare[:0]
		o.mu.Unlock()
		_, err := o.w.Write(batch)
		o.mu.Lock()
		o.spare = batch
		if err != nil {
			o.failed = true
			o.queued = nil
		}
		var ready []func()
		if len(o.queued) < outputHighWater {
			ready, o.waiters = o.waiters, nil
		}
		o.mu.Unlock()
		for _, resume := range ready {
			resume()
		}
		if err != nil {
			return
		}
	}
}
