package main

import (
	"path"
	"strings"
	"syscall"
)

// How a batch of inotify events becomes the changes a watch reports (watch.go).

// under is a watched path (relative to the workspace) relative to the watched directory.
func (w *fileWatch) under(relative string) string {
	return strings.TrimPrefix(relative[len(w.root):], "/")
}

// changesOf turns a batch of events into changes: a move within the watch is one `rename`,
// writes to a file in a row within the batch are one `write`. It follows directories made,
// moved and removed (recursive watches), and says whether the queue overflowed and the
// directory itself went; an error when the watch would cover too many directories.
func (w *fileWatch) changesOf(batch []inotifyEvent) ([]fileChange, bool, bool, error) {
	var changes []fileChange
	overflow, rootGone := false, false
	for i := 0; i < len(batch); i++ {
		event := batch[i]
		dir, known := w.dirs[event.wd]
		switch {
		case event.mask&syscall.IN_Q_OVERFLOW != 0:
			overflow = true
			continue
		case event.mask&syscall.IN_IGNORED != 0:
			delete(w.dirs, event.wd)
			rootGone = rootGone || event.wd == w.rootWd
			continue
		case !known:
			continue
		case event.mask&(syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF) != 0:
			rootGone = rootGone || event.wd == w.rootWd
			continue
		}
		change := fileChange{Path: path.Join(dir, event.name), IsDirectory: event.mask&syscall.IN_ISDIR != 0}
		switch {
		case event.mask&syscall.IN_MOVED_FROM != 0:
			// The kernel queues a move's two halves together: a half without its other is a
			// move out of the watch (or, MOVED_TO alone, into it).
			if to, ok := w.movedTo(batch, i); ok {
				change.Type, change.OldPath, change.Path = "rename", change.Path, to
				i++
				if change.IsDirectory {
					w.moveDirs(change.OldPath, change.Path)
				}
			} else {
				change.Type = "remove"
				if change.IsDirectory {
					w.forgetDirs(change.Path)
				}
			}
		case event.mask&(syscall.IN_MOVED_TO|syscall.IN_CREATE) != 0:
			change.Type = "create"
		case event.mask&syscall.IN_DELETE != 0:
			change.Type = "remove"
		case event.mask&syscall.IN_MODIFY != 0:
			change.Type = "write"
			if last := len(changes) - 1; last >= 0 && changes[last] == change {
				continue
			}
		default:
			continue
		}
		changes = append(changes, change)
		if change.Type == "create" && change.IsDirectory && w.recursive {
			// What was made in it before its watch began had no event of its own.
			found, err := w.add(w.under(change.Path))
			if err != nil {
				return nil, false, false, err
			}
			changes = append(changes, found...)
		}
	}
	return changes, overflow, rootGone, nil
}

// movedTo is where the move whose first half is batch[i] went, if within the watch.
func (w *fileWatch) movedTo(batch []inotifyEvent, i int) (string, bool) {
	if i+1 >= len(batch) {
		return "", false
	}
	next := batch[i+1]
	dir, known := w.dirs[next.wd]
	if !known || next.mask&syscall.IN_MOVED_TO == 0 || next.cookie != batch[i].cookie {
		return "", false
	}
	return path.Join(dir, next.name), true
}

func within(dir, candidate string) bool {
	return candidate == dir || len(candidate) > len(dir) && candidate[:len(dir)+1] == dir+"/"
}

// moveDirs follows a directory moved within the watch: its watches report the new paths.
func (w *fileWatch) moveDirs(from, to string) {
	for wd, rel := range w.dirs {
		if within(from, rel) {
			w.dirs[wd] = to + rel[len(from):]
		}
	}
}

// forgetDirs ends the watches of a directory moved out of the watch, and of those under it.
func (w *fileWatch) forgetDirs(dir string) {
	for wd, rel := range w.dirs {
		if within(dir, rel) {
			w.rmWatch(wd)
			delete(w.dirs, wd)
		}
	}
}
