package main

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// What a run changed in the workspace (file-snapshot.ts of the runner, in Go).

const (
	// Entries looked at, at the most, by one walk.
	maxScanned = 20_000
	// The runner's code files, never reported.
	codeFilePrefix = ".sandbox-code-"
)

// ChangeClock is the kernel's clock for inode changes: the change time (ctime) the kernel gives
// a file it changes now. The kernel stamps files from a coarse clock, so a file a run changes is
// stamped no earlier than a reading taken at its start. One marker file of a name no one can
// guess, opened once and kept open: each reading sets its times and reads its change time back.
type ChangeClock struct {
	dir    string
	mu     sync.Mutex
	marker *os.File
}

func (c *ChangeClock) Read() (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.marker == nil {
		// The runner's directory (the user may have removed it). Once the marker is open, it
		// serves through its descriptor wherever its name went: no run looks for it again.
		if err := os.MkdirAll(c.dir, 0o700); err != nil {
			return 0, err
		}
		name := make([]byte, 8)
		if _, err := rand.Read(name); err != nil {
			return 0, err
		}
		file, err := os.OpenFile(path.Join(c.dir, "change-clock-"+hex.EncodeToString(name)),
			os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return 0, err
		}
		c.marker = file
	}
	fd := int(c.marker.Fd())
	// UTIME_NOW for both times: the kernel stamps the change time from its own clock.
	now := []syscall.Timespec{{Nsec: utimeNow}, {Nsec: utimeNow}}
	if err := utimesNanoFd(fd, now); err != nil {
		return 0, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Ctim.Nano(), nil
}

// changedSince is the files under dir (node_modules and the runner's code files left out)
// whose inode changed at or after since (a ChangeClock reading), relative to the workspace,
// sorted: what a run created, wrote, renamed in or chmod'ed, including files given an old
// mtime, which no one can backdate the change time of.
func changedSince(dir string, since int64, workspace string) []string {
	paths := []string{}
	queue := []string{dir}
	scanned := 0
	for len(queue) > 0 && scanned < maxScanned {
		current := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(current)
		if err != nil {
			continue // gone or unreadable: nothing of it is reported
		}
		scanned += len(entries)
		for _, entry := range entries {
			full := path.Join(current, entry.Name())
			if entry.IsDir() {
				if entry.Name() != "node_modules" {
					queue = append(queue, full)
				}
				continue
			}
			if !entry.Type().IsRegular() || strings.HasPrefix(entry.Name(), codeFilePrefix) {
				continue
			}
			var st syscall.Stat_t
			if syscall.Lstat(full, &st) == nil && st.Ctim.Nano() >= since && inside(workspace, full) {
				paths = append(paths, strings.TrimPrefix(full, workspace+"/"))
			}
		}
	}
	sort.Strings(paths)
	return paths
}
