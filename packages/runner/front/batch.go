package main

import (
	"io"
	"sync"
)

// batchWriter writes what producers queue from a goroutine of its own, so that no producer
// ever waits for the reader. What is queued while a write is under way goes out in the next
// one: bytes that come together (a run's output, result and end) wake the reader once.
type batchWriter struct {
	mu        sync.Mutex
	wake      *sync.Cond
	queued    []byte
	spare     []byte
	highWater int
	closed    bool
	failed    bool
	waiters   []func()
	done      chan struct{}
}

// newBatchWriter starts the writer of w. Past highWater queued bytes, queue says the writer is
// full; end runs once the writer stops (closed, or w failed).
func newBatchWriter(w io.Writer, highWater int, end func()) *batchWriter {
	b := &batchWriter{highWater: highWater, done: make(chan struct{})}
	b.wake = sync.NewCond(&b.mu)
	go b.loop(w, end)
	return b
}

// queue appends parts as one piece; false means the writer is full: wait for onDrain before
// more. After close, or once w failed, what comes is dropped: nobody reads it any more.
func (b *batchWriter) queue(parts ...[]byte) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failed || b.closed {
		return true
	}
	for _, part := range parts {
		b.queued = append(b.queued, part...)
	}
	b.wake.Signal()
	return len(b.queued) < b.highWater
}

// onDrain calls resume once, when the writer has room again: never before it returns, so that
// a caller may hold its own lock, which resume takes.
func (b *batchWriter) onDrain(resume func()) {
	b.mu.Lock()
	if b.failed || len(b.queued) < b.highWater {
		b.mu.Unlock()
		go resume()
		return
	}
	b.waiters = append(b.waiters, resume)
	b.mu.Unlock()
}

// close makes the writer write what is queued, then stop; wait tells when it did.
func (b *batchWriter) close() {
	b.mu.Lock()
	b.closed = true
	b.wake.Signal()
	b.mu.Unlock()
}

func (b *batchWriter) wait() {
	<-b.done
}

func (b *batchWriter) loop(w io.Writer, end func()) {
	defer close(b.done)
	defer end()
	for {
		b.mu.Lock()
		for len(b.queued) == 0 && !b.closed {
			b.wake.Wait()
		}
		if len(b.queued) == 0 {
			b.mu.Unlock()
			return
		}
		batch := b.queued
		b.queued = b.spare[:0]
		b.mu.Unlock()
		_, err := w.Write(batch)
		b.mu.Lock()
		b.spare = batch
		if err != nil {
			b.failed = true
			b.queued = nil
		}
		var ready []func()
		if b.failed || len(b.queued) < b.highWater {
			ready, b.waiters = b.waiters, nil
		}
		b.mu.Unlock()
		for _, resume := range ready {
			resume()
		}
		if err != nil {
			return
		}
	}
}
