package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// The directories a watch covers (watch.go): found and opened one component at a time, never
// through a symlink, and watched through their open descriptors (/proc/self/fd/N), so that a
// directory swapped for a link while the watch walks is skipped, not followed out.

const openDirFlags = syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC

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

// openNoFollow opens the directory at an absolute path without symlinks, refusing one met on
// the way (ELOOP, ENOTDIR).
func openNoFollow(real string) (int, error) {
	fd, err := syscall.Open("/", openDirFlags, 0)
	if err != nil {
		return -1, err
	}
	for _, part := range strings.Split(real, "/") {
		if part == "" {
			continue
		}
		next, err := syscall.Openat(fd, part, openDirFlags, 0)
		_ = syscall.Close(fd)
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: real, Err: err}
		}
		fd = next
	}
	return fd, nil
}

// add watches the directory at sub (relative to the watched one) and, in a recursive watch,
// those under it; it returns what it found under it as creates (for a directory that came
// after the watch began: made before its own watch, they had no event). The real path has
// no symlink: one met on the way is a swap, and the directory is not watched.
func (w *fileWatch) add(sub string) ([]fileChange, error) {
	fd, err := openNoFollow(path.Join(w.realRoot, sub))
	if err != nil {
		if sub == "" {
			return nil, err
		}
		return nil, nil // gone meanwhile, or swapped for a link
	}
	var found []fileChange
	err = w.walk(fd, sub, &found)
	return found, err
}

// walk watches the open directory fd (sub, relative to the watched one), then the directories
// in it (recursive watches); it closes fd.
func (w *fileWatch) walk(fd int, sub string, found *[]fileChange) error {
	dir := os.NewFile(uintptr(fd), sub)
	defer dir.Close()
	if len(w.dirs) >= maxWatchDirs {
		return watchLimit("A watch covers 10000 directories at the most: watch a smaller tree",
			map[string]any{"maxDirectories": maxWatchDirs})
	}
	wd, err := w.addWatch(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		return err
	}
	w.dirs[int32(wd)] = path.Join(w.root, sub)
	if !w.recursive {
		return nil
	}
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return nil // watched, but not readable further
	}
	for _, entry := range entries {
		child := path.Join(sub, entry.Name())
		*found = append(*found, fileChange{
			Type: "create", Path: path.Join(w.root, child), IsDirectory: entry.IsDir(),
		})
		if !entry.IsDir() {
			continue
		}
		next, err := syscall.Openat(fd, entry.Name(), openDirFlags, 0)
		if err != nil {
			continue // gone meanwhile, or swapped for a link
		}
		if err := w.walk(next, child, found); err != nil {
			return err
		}
	}
	return nil
}

func (w *fileWatch) wdOf(relative string) int32 {
	for wd, rel := range w.dirs {
		if rel == relative {
			return wd
		}
	}
	return -1
}

// addWatch and rmWatch use the inotify descriptor while holding it: a concurrent close waits
// for them, and after it they fail rather than reach whatever took its number.
func (w *fileWatch) addWatch(name string) (int, error) {
	raw, err := w.file.SyscallConn()
	if err != nil {
		return -1, err
	}
	wd, added := -1, error(nil)
	if err := raw.Control(func(fd uintptr) {
		wd, added = syscall.InotifyAddWatch(int(fd), name, watchMask)
	}); err != nil {
		return -1, err
	}
	return wd, added
}

func (w *fileWatch) rmWatch(wd int32) {
	if raw, err := w.file.SyscallConn(); err == nil {
		_ = raw.Control(func(fd uintptr) { _, _ = syscall.InotifyRmWatch(int(fd), uint32(wd)) })
	}
}

// close ends the watch (a cancel, or the directory gone): its reader stops.
func (w *fileWatch) close() {
	w.closeOnce.Do(func() {
		close(w.stopped)
		_ = w.file.Close()
	})
}

func (w *fileWatch) isStopped() bool {
	select {
	case <-w.stopped:
		return true
	default:
		return false
	}
}
