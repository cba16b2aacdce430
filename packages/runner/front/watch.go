package main

import (
	"os"
	"path"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// A watch of a workspace directory (ADR 60): its changes as they happen, read from inotify and
// sent as `changes` events until the request is cancelled or the directory goes.

const (
	// How many watches a session holds at once, and how many directories one watch may cover.
	maxWatches   = 4
	maxWatchDirs = 10_000
	// Added through /proc/self/fd/N (watch_tree.go): that magic link is followed to the
	// directory, itself opened without following any link.
	watchMask = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MODIFY | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF | syscall.IN_ONLYDIR
	// After a read, how long more events are awaited to go in the same batch: a move's two
	// halves come in one read; a burst of writes is coalesced without delaying a lone change.
	watchBatchWindow = 2 * time.Millisecond
	// The most changes, and bytes of their paths, one `changes` event carries: a flood goes
	// out in events the agent can drop one by one when its client falls behind.
	maxChangesPerEvent   = 1000
	maxPathBytesPerEvent = 256 * 1024
	inotifyBufferSize    = 64 * 1024
)

// fileChange is one change as the API shows it: `create`, `write`, `remove` or `rename`
// (`oldPath` its source), every path relative to the workspace.
type fileChange struct {
	Type        string `json:"type"`
	Path        string `json:"path"`
	OldPath     string `json:"oldPath,omitempty"`
	IsDirectory bool   `json:"isDirectory"`
}

// inotifyEvent is one event read from the inotify descriptor.
type inotifyEvent struct {
	wd     int32
	mask   uint32
	cookie uint32
	name   string
}

// fileWatch is one watch request of the agent's.
type fileWatch struct {
	front *Front
	id    float64
	// The inotify descriptor; every call on it goes through its raw connection, so that a
	// close (a cancel) never leaves a number that another open may take.
	file      *os.File
	recursive bool
	// The watched directory: its path relative to the workspace, and its real path, from
	// which every directory under it is opened without following a symlink.
	root, realRoot string
	// The relative path (to the workspace) of each watched directory, by its descriptor.
	dirs      map[int32]string
	rootWd    int32
	stopped   chan struct{}
	closeOnce sync.Once
}

func watchLimit(message string, details map[string]any) *RunnerError {
	return &RunnerError{Code: "watch_limit_exceeded", Message: message, Details: details}
}

// startWatch takes one of the session's watches, then, apart from the requests' reader (the
// walk of a large tree takes time), adds the watches, answers `watching` and serves it.
func (f *Front) startWatch(id float64, relative string, recursive bool) {
	w, err := f.reserveWatch(id, recursive)
	if err != nil {
		f.out.Emit(errorEvent(id, err, f.workspace))
		return
	}
	go func() {
		err := w.begin(relative, f.workspace)
		switch {
		case w.isStopped():
			w.end(map[string]any{"id": id, "ev": "unwatched", "reason": "cancelled"})
		case err != nil:
			w.end(errorEvent(id, err, f.workspace))
		default:
			f.out.Emit(map[string]any{"id": id, "ev": "watching", "directories": len(w.dirs)})
			w.serve()
		}
	}()
}

// reserveWatch makes a watch's descriptor and takes its place among the session's (a cancel
// finds it there from now on).
func (f *Front) reserveWatch(id float64, recursive bool) (*fileWatch, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.watches) >= maxWatches {
		return nil, watchLimit("A session holds 4 watches at the most: end one first",
			map[string]any{"max": maxWatches})
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, watchLimit("The sandbox's file watches are used up: end some first",
			map[string]any{"reason": err.Error()})
	}
	w := &fileWatch{
		front: f, id: id, file: os.NewFile(uintptr(fd), "inotify"), recursive: recursive,
		rootWd: -1, dirs: map[int32]string{}, stopped: make(chan struct{}),
	}
	f.watches[id] = w
	return w, nil
}

// begin opens the watched directory and adds its watches.
func (w *fileWatch) begin(relative, workspace string) error {
	dir, err := watchedDirectory(relative, workspace)
	if err != nil {
		return err
	}
	w.root = path.Clean(relative)
	if w.root == "." {
		w.root = ""
	}
	w.realRoot = dir
	if _, err := w.add(""); err != nil {
		return err
	}
	if w.rootWd = w.wdOf(w.root); w.rootWd < 0 {
		return invalidPath(relative, "is not a directory")
	}
	return nil
}

// end sends a watch's last event, once it is no longer among the session's.
func (w *fileWatch) end(last map[string]any) {
	w.close()
	w.front.mu.Lock()
	delete(w.front.watches, w.id)
	w.front.mu.Unlock()
	w.front.out.Emit(last)
}

// serve reads the watch's events and sends them in batches, at the agent's pace, until it is
// cancelled, its directory goes or it would cover too many directories (an error, its last).
func (w *fileWatch) serve() {
	events := make(chan []inotifyEvent, 16)
	go w.read(events)
	reason := ""
	for reason == "" {
		batch, open := w.collect(events)
		if !open || w.isStopped() {
			break
		}
		changes, overflow, rootGone, err := w.changesOf(batch)
		if err == nil && overflow && w.recursive {
			// Directories made while events were lost have no watch yet.
			_, err = w.add("")
		}
		if err != nil {
			w.end(errorEvent(w.id, err, w.front.workspace))
			return
		}
		if overflow {
			w.emit(map[string]any{"id": w.id, "ev": "overflow"})
		}
		for _, part := range inParts(changes) {
			w.emit(map[string]any{"id": w.id, "ev": "changes", "changes": part})
		}
		if rootGone {
			reason = "removed"
		}
	}
	if reason == "" {
		// Cancelled, or the descriptor failed under it.
		reason = map[bool]string{true: "cancelled", false: "stopped"}[w.isStopped()]
	}
	w.end(map[string]any{"id": w.id, "ev": "unwatched", "reason": reason})
}

// collect waits for events, then takes what else comes within watchBatchWindow.
func (w *fileWatch) collect(events <-chan []inotifyEvent) ([]inotifyEvent, bool) {
	batch, open := <-events
	if !open {
		return nil, false
	}
	window := time.NewTimer(watchBatchWindow)
	defer window.Stop()
	for {
		select {
		case more, open := <-events:
			if !open {
				return batch, true
			}
			batch = append(batch, more...)
		case <-window.C:
			return batch, true
		}
	}
}

// emit sends one event, and holds the watch while the agent's side is full.
func (w *fileWatch) emit(event map[string]any) {
	if w.front.out.Emit(event) {
		return
	}
	room := make(chan struct{})
	w.front.out.OnDrain(func() { close(room) })
	select {
	case <-room:
	case <-w.stopped:
	}
}

// read passes the descriptor's events on until it is closed.
func (w *fileWatch) read(events chan<- []inotifyEvent) {
	defer close(events)
	buffer := make([]byte, inotifyBufferSize)
	for {
		n, err := w.file.Read(buffer)
		if err != nil || n <= 0 {
			return
		}
		events <- parseInotify(buffer[:n])
	}
}

// parseInotify splits what one read of an inotify descriptor returned into its events.
func parseInotify(buffer []byte) []inotifyEvent {
	var events []inotifyEvent
	for offset := 0; offset+syscall.SizeofInotifyEvent <= len(buffer); {
		raw := (*syscall.InotifyEvent)(unsafe.Pointer(&buffer[offset]))
		start := offset + syscall.SizeofInotifyEvent
		end := start + int(raw.Len)
		if end > len(buffer) {
			break
		}
		name := buffer[start:end]
		for len(name) > 0 && name[len(name)-1] == 0 {
			name = name[:len(name)-1]
		}
		events = append(events, inotifyEvent{
			wd: raw.Wd, mask: raw.Mask, cookie: raw.Cookie, name: string(name),
		})
		offset = end
	}
	return events
}

// inParts cuts changes into events of at most maxChangesPerEvent changes and about
// maxPathBytesPerEvent bytes of paths.
func inParts(changes []fileChange) [][]fileChange {
	var parts [][]fileChange
	start, bytes := 0, 0
	for i, change := range changes {
		size := len(change.Path) + len(change.OldPath)
		if i > start && (i-start == maxChangesPerEvent || bytes+size > maxPathBytesPerEvent) {
			parts = append(parts, changes[start:i])
			start, bytes = i, 0
		}
		bytes += size
	}
	if start < len(changes) {
		parts = append(parts, changes[start:])
	}
	return parts
}
