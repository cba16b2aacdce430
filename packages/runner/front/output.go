package main

import (
	"encoding/json"
	"io"
)

// outputHighWater is how many bytes of events may wait for the agent before producers are told
// to slow down (Node's default for a socket is 16 KiB; a few runs' chunks fit in this).
const outputHighWater = 64 * 1024

var newline = []byte{'\n'}

// Output is the front's side of the protocol's output: one JSON event per line.
type Output struct {
	writer *batchWriter
}

// NewOutput starts the writer of w.
func NewOutput(w io.Writer) *Output {
	return &Output{writer: newBatchWriter(w, outputHighWater, func() {})}
}

// Emit queues one event; false means the output is full: wait for OnDrain before more.
func (o *Output) Emit(event any) bool {
	return o.EmitLine(eventLine(event))
}

// EmitLine queues one line (without its newline), as it is.
func (o *Output) EmitLine(line []byte) bool {
	return o.writer.queue(line, newline)
}

// EmitLines queues lines (each without its newline) as one piece: they leave in one write.
func (o *Output) EmitLines(lines [][]byte) bool {
	parts := make([][]byte, 0, 2*len(lines))
	for _, line := range lines {
		parts = append(parts, line, newline)
	}
	return o.writer.queue(parts...)
}

// OnDrain calls resume once, when the output has room again: never before it returns, so that
// a caller may hold its own lock, which resume takes.
func (o *Output) OnDrain(resume func()) {
	o.writer.onDrain(resume)
}

// Close writes what is queued, then stops; it returns once that is done.
func (o *Output) Close() {
	o.writer.close()
	o.writer.wait()
}

// eventLine is an event's JSON line, without its newline.
func eventLine(event any) []byte {
	line, err := json.Marshal(event)
	if err != nil {
		// Every event is made of strings, numbers and lists of them.
		panic(err)
	}
	return line
}
