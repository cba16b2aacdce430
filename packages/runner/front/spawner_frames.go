package main

// The frames of the front's requests to its spawner (native/spawner.c describes them).

import (
	"encoding/binary"
	"io"
	"math"
	"strings"
)

// startRequest is a start's payload: flags, counts, then the NUL-terminated working
// directory, argv and env.
func startRequest(options SpawnOptions) ([]byte, error) {
	strs := append(append([]string{options.Cwd}, options.Argv...), options.Env...)
	size := 9
	for _, s := range strs {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, &RunnerError{Code: "invalid_request",
				Message: "The command, its environment and working directory cannot contain NUL bytes"}
		}
		size += len(s) + 1
	}
	payload := make([]byte, 9, size)
	var flags byte
	if options.EnterCPUGroup {
		flags |= 1
	}
	if options.Stdin {
		flags |= 2
	}
	if options.Armed {
		flags |= 16
	}
	payload[0] = flags
	binary.LittleEndian.PutUint32(payload[1:], uint32(len(options.Argv)))
	binary.LittleEndian.PutUint32(payload[5:], uint32(len(options.Env)))
	for _, s := range strs {
		payload = append(payload, s...)
		payload = append(payload, 0)
	}
	return payload, nil
}

// frameWriter sends frames to the helper, so that no caller (the reader above least of all)
// ever waits for the helper to read. Its stdin is closed once the last frame is out.
type frameWriter struct {
	writer *batchWriter
}

func newFrameWriter(w io.WriteCloser) *frameWriter {
	return &frameWriter{writer: newBatchWriter(w, math.MaxInt, func() { _ = w.Close() })}
}

func (f *frameWriter) send(kind byte, id uint32, payload []byte) {
	var header [spawnHeaderBytes]byte
	binary.LittleEndian.PutUint32(header[:], uint32(5+len(payload)))
	header[4] = kind
	binary.LittleEndian.PutUint32(header[5:], id)
	f.writer.queue(header[:], payload)
}

// close stops the writer once what is queued is out (the helper is gone, or asked to go: its
// reader fails what it ran).
func (f *frameWriter) close() {
	f.writer.close()
}
