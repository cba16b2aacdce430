package main

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// A watch of a workspace directory (ADR 60): its changes as they happen, read from inotify and
// sent as `changes` events until the request is cancelled or the directory goes.

const (
	// How many watches a session holds at once, and how many directories one watch may cover.
	maxWatches       = 4
	maxWatchDirs     = 10_000
	watchMask        = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MODIFY | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF
	watchAddFlags    = syscall.IN_ONLYDIR | syscall.IN_DONT_FOLLOW
	watchBatchWindow = 20 * time.Millisecond
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
	front     *Front
	id        float64
	fd        int
	file      *os.File
	recursive bool
	// The watched directory: its path relative to the workspace, and its real path.
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

// startWatch checks the request, adds the watches and answers `watching`; then serves it.
func (f *Front) startWatch(id float64, relative string, recursive bool) {
	w, err := f.openWatch(id, relative, recursive)
	if err != nil {
		f.out.Emit(errorEvent(id, err, f.workspace))
		return
	}
	f.out.Emit(map[string]any{"id": id, "ev": "watching", "directories": len(w.dirs)})
	go w.serve()
}

func (f *Front) openWatch(id float64, relative string, recursive bool) (*fileWatch, error) {
	dir, err := watchedDirectory(relative, f.workspace)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.watches) >= maxWatches {
		return nil, watchLimit("A session holds 4 watches at the most: end one first",
			map[string]any{"max": maxWatches})
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, watchLimit("The node's file watches are used up: try again later",
			map[string]any{"reason": err.Error()})
	}
	w := &fileWatch{
		front: f, id: id, fd: fd, file: os.NewFile(uintptr(fd), "inotify"), recursive: recursive,
		dirs: map[int32]string{}, stopped: make(chan struct{}),
	}
	w.root = path.Clean(relative)
	if w.root == "." {
		w.root = ""
	}
	w.realRoot = dir
	if _, err := w.add(dir, w.root); err != nil {
		w.close()
		return nil, err
	}
	w.rootWd = w.wdOf(w.root)
	f.watches[id] = w
	return w, nil
}

// watchedDirectory is the real path of the directory to watch: an existing directory of the
// workspace, reached by no symlink that leads out of it.
func watchedDirectory(relative, root string) (string, error) {
	lexical := root
	if relative != "" && relative != "." {
		var err error
		if lexical, err = lexicalPath(relative, root); err != nil {
			return "", err
		}
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(lexical)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &RunnerError{Code: "file_not_found", Message: "No such directory: " + relative,
			Details: map[string]any{"path": relative}}
	}
	if err != nil {
		return "", err
	}
	if !inside(realRoot, real) {
		return "", invalidPath(relative, "a symlink leads outside /workspace")
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", invalidPath(relative, "is not a directory")
	}
	return real, nil
}

// add watches dir (relative: its path to report) and, in a recursive watch, the directories
// under it; it returns the entries it found under dir (for a directory that came after the
// watch began: made before its own watch, they had no event).
func (w *fileWatch) add(dir, relative string) ([]fileChange, error) {
	var found []fileChange
	err := filepath.WalkDir(dir, func(name string, entry fs.DirEntry, err error) error {
		if err != nil {
			if name == dir {
				return err
			}
			return nil // gone meanwhile, or not readable: not watched
		}
		rel := path.Join(relative, strings.TrimPrefix(name[len(dir):], "/"))
		if rel != relative {
			found = append(found, fileChange{Type: "create", Path: rel, IsDirectory: entry.IsDir()})
		}
		if !entry.IsDir() {
			return nil
		}
		if len(w.dirs) >= maxWatchDirs {
			return watchLimit("A watch covers 10000 directories at the most: watch a smaller tree",
				map[string]any{"maxDirectories": maxWatchDirs})
		}
		wd, err := syscall.InotifyAddWatch(w.fd, name, watchMask|watchAddFlags)
		if err != nil {
			if name == dir {
				return err
			}
			return nil
		}
		w.dirs[int32(wd)] = rel
		if !w.recursive {
			return fs.SkipDir
		}
		return nil
	})
	if !w.recursive {
		found = nil
	}
	return found, err
}

func (w *fileWatch) wdOf(relative string) int32 {
	for wd, rel := range w.dirs {
		if rel == relative {
			return wd
		}
	}
	return -1
}

// stop ends the watch (a cancel, or the directory gone); the reading loop answers `unwatched`.
func (w *fileWatch) close() {
	w.closeOnce.Do(func() {
		close(w.stopped)
		_ = w.file.Close()
	})
}

// serve reads the watch's events and sends them in batches, at the agent's pace.
func (w *fileWatch) serve() {
	events := make(chan []inotifyEvent, 16)
	go w.read(events)
	reason := "cancelled"
	for {
		batch, open := w.collect(events)
		if !open {
			break
		}
		changes, overflow, rootGone := w.changesOf(batch)
		if overflow {
			w.emit(map[string]any{"id": w.id, "ev": "overflow"})
		}
		for _, part := range inParts(changes) {
			w.emit(map[string]any{"id": w.id, "ev": "changes", "changes": part})
		}
		if rootGone {
			reason = "removed"
			w.close()
		}
	}
	w.front.mu.Lock()
	delete(w.front.watches, w.id)
	w.front.mu.Unlock()
	w.front.out.Emit(map[string]any{"id": w.id, "ev": "unwatched", "reason": reason})
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
