package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The changes a watch sent so far, in order.
func (h *harness) changes(id float64) []fileChange {
	h.mu.Lock()
	defer h.mu.Unlock()
	var all []fileChange
	for _, event := range h.events[id] {
		if event["ev"] != "changes" {
			continue
		}
		for _, raw := range event["changes"].([]any) {
			c := raw.(map[string]any)
			change := fileChange{Type: c["type"].(string), Path: c["path"].(string),
				IsDirectory: c["isDirectory"].(bool)}
			if old, ok := c["oldPath"].(string); ok {
				change.OldPath = old
			}
			all = append(all, change)
		}
	}
	return all
}

// awaitChanges waits until the watch sent every one of want (in that order, others between).
func (h *harness) awaitChanges(id float64, want ...fileChange) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := h.changes(id)
		next := 0
		for _, change := range got {
			if next < len(want) && change == want[next] {
				next++
			}
		}
		if next == len(want) {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("watch %v: wanted %+v in order; got %+v", id, want, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *harness) watch(relative string, recursive bool) float64 {
	return h.send(map[string]any{"op": "watch", "path": relative, "recursive": recursive})
}

func mustDo(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestWatchReportsChangesUnderTheDirectory(t *testing.T) {
	h := newHarness(t)
	mustDo(t, os.MkdirAll(filepath.Join(h.root, "src/lib"), 0o755))
	id := h.watch("src", true)
	if ready := named(h.until(id, "watching"), "watching"); ready["directories"] != 2.0 {
		t.Fatalf("watching: %v", ready)
	}
	file := filepath.Join(h.root, "src/lib/a.txt")
	mustDo(t, os.WriteFile(file, []byte("one"), 0o644))
	mustDo(t, os.WriteFile(file, []byte("two"), 0o644))
	mustDo(t, os.Rename(file, filepath.Join(h.root, "src/b.txt")))
	mustDo(t, os.Remove(filepath.Join(h.root, "src/b.txt")))
	// A directory made with its contents at once: what it held before its watch was added
	// comes as creates too, and what comes after is followed.
	mustDo(t, os.MkdirAll(filepath.Join(h.root, "src/new/deep"), 0o755))
	mustDo(t, os.WriteFile(filepath.Join(h.root, "src/new/deep/c.txt"), nil, 0o644))
	h.awaitChanges(id,
		fileChange{Type: "create", Path: "src/lib/a.txt"},
		fileChange{Type: "write", Path: "src/lib/a.txt"},
		fileChange{Type: "rename", Path: "src/b.txt", OldPath: "src/lib/a.txt"},
		fileChange{Type: "remove", Path: "src/b.txt"},
		fileChange{Type: "create", Path: "src/new", IsDirectory: true},
		fileChange{Type: "create", Path: "src/new/deep/c.txt"},
	)
	// A directory moved within the watch reports its new paths; one moved out, nothing more.
	mustDo(t, os.Rename(filepath.Join(h.root, "src/new"), filepath.Join(h.root, "src/moved")))
	mustDo(t, os.WriteFile(filepath.Join(h.root, "src/moved/deep/d.txt"), nil, 0o644))
	mustDo(t, os.Rename(filepath.Join(h.root, "src/moved"), filepath.Join(h.root, "away")))
	mustDo(t, os.WriteFile(filepath.Join(h.root, "away/deep/e.txt"), nil, 0o644))
	mustDo(t, os.WriteFile(filepath.Join(h.root, "src/last.txt"), nil, 0o644))
	h.awaitChanges(id,
		fileChange{Type: "rename", Path: "src/moved", OldPath: "src/new", IsDirectory: true},
		fileChange{Type: "create", Path: "src/moved/deep/d.txt"},
		fileChange{Type: "remove", Path: "src/moved", IsDirectory: true},
		fileChange{Type: "create", Path: "src/last.txt"},
	)
	for _, change := range h.changes(id) {
		if change.Path == "away/deep/e.txt" || change.Path == "src/moved/deep/e.txt" {
			t.Fatalf("a change outside the watch: %+v", change)
		}
	}
	cancel := h.send(map[string]any{"op": "cancel", "target": id})
	h.until(cancel, "killed")
	if end := named(h.until(id, "unwatched"), "unwatched"); end["reason"] != "cancelled" {
		t.Fatalf("unwatched: %v", end)
	}
}

func TestWatchOfOneDirectoryLeavesItsSubdirectories(t *testing.T) {
	h := newHarness(t)
	mustDo(t, os.MkdirAll(filepath.Join(h.root, "sub"), 0o755))
	id := h.watch(".", false)
	h.until(id, "watching")
	mustDo(t, os.WriteFile(filepath.Join(h.root, "sub/inner.txt"), nil, 0o644))
	mustDo(t, os.Mkdir(filepath.Join(h.root, "made"), 0o755))
	mustDo(t, os.WriteFile(filepath.Join(h.root, "made/inner.txt"), nil, 0o644))
	mustDo(t, os.WriteFile(filepath.Join(h.root, "top.txt"), nil, 0o644))
	h.awaitChanges(id,
		fileChange{Type: "create", Path: "made", IsDirectory: true},
		fileChange{Type: "create", Path: "top.txt"},
	)
	for _, change := range h.changes(id) {
		if change.Path != "made" && change.Path != "top.txt" {
			t.Fatalf("a change in a subdirectory: %+v", change)
		}
	}
}

func TestWatchEndsWhenItsDirectoryGoes(t *testing.T) {
	h := newHarness(t)
	mustDo(t, os.MkdirAll(filepath.Join(h.root, "gone"), 0o755))
	id := h.watch("gone", true)
	h.until(id, "watching")
	mustDo(t, os.RemoveAll(filepath.Join(h.root, "gone")))
	if end := named(h.until(id, "unwatched"), "unwatched"); end["reason"] != "removed" {
		t.Fatalf("unwatched: %v", end)
	}
}

func TestWatchRefusesWhatItCannotWatch(t *testing.T) {
	h := newHarness(t)
	outside := t.TempDir()
	mustDo(t,
		os.WriteFile(filepath.Join(h.root, "file.txt"), nil, 0o644),
		os.Symlink(outside, filepath.Join(h.root, "out")),
	)
	cases := map[string]string{
		"missing":  "file_not_found",
		"file.txt": "invalid_path",
		"../x":     "invalid_path",
		"/etc":     "invalid_path",
		"out":      "invalid_path",
	}
	for relative, code := range cases {
		id := h.watch(relative, true)
		if failure := named(h.until(id, "error"), "error"); failure["code"] != code {
			t.Errorf("%q: %v", relative, failure)
		}
	}
}

func TestWatchesASessionHoldsAreBounded(t *testing.T) {
	h := newHarness(t)
	var ids []float64
	for i := 0; i < maxWatches; i++ {
		ids = append(ids, h.watch(".", false))
		h.until(ids[i], "watching")
	}
	over := h.watch(".", false)
	failure := named(h.until(over, "error"), "error")
	if failure["code"] != "watch_limit_exceeded" {
		t.Fatalf("the watch past the limit: %v", failure)
	}
	h.until(h.send(map[string]any{"op": "cancel", "target": ids[0]}), "killed")
	h.until(ids[0], "unwatched")
	h.until(h.watch(".", false), "watching")
}

func TestWatchCoversABoundedTree(t *testing.T) {
	h := newHarness(t)
	for i := 0; i < maxWatchDirs; i++ {
		mustDo(t, os.Mkdir(filepath.Join(h.root, fmt.Sprintf("d%d", i)), 0o755))
	}
	id := h.watch(".", true)
	failure := named(h.until(id, "error"), "error")
	if failure["code"] != "watch_limit_exceeded" || failure["details"] == nil {
		t.Fatalf("a tree past the bound: %v", failure)
	}
	h.until(h.watch("d1", true), "watching")
}

func TestWatchEventsAreBounded(t *testing.T) {
	long := strings.Repeat("x", 3000)
	var changes []fileChange
	for i := 0; i < 2500; i++ {
		path := fmt.Sprint(i)
		if i < 200 {
			path = long + path
		}
		changes = append(changes, fileChange{Type: "create", Path: path})
	}
	parts := inParts(changes)
	total := 0
	for _, part := range parts {
		bytes := 0
		for _, change := range part {
			bytes += len(change.Path)
		}
		if len(part) > maxChangesPerEvent || bytes > maxPathBytesPerEvent {
			t.Fatalf("a part of %d changes, %d bytes", len(part), bytes)
		}
		total += len(part)
	}
	if total != len(changes) || len(parts) != 5 {
		t.Fatalf("%d changes in %d parts", total, len(parts))
	}
}

func TestWatchNeverWatchesThroughALink(t *testing.T) {
	h := newHarness(t)
	outside := t.TempDir()
	mustDo(t,
		os.MkdirAll(filepath.Join(h.root, "tree"), 0o755),
		os.Symlink(outside, filepath.Join(h.root, "tree/out")),
	)
	id := h.watch("tree", true)
	if ready := named(h.until(id, "watching"), "watching"); ready["directories"] != 1.0 {
		t.Fatalf("a link counted as a directory: %v", ready)
	}
	mustDo(t, os.Symlink(outside, filepath.Join(h.root, "tree/later")))
	mustDo(t, os.WriteFile(filepath.Join(outside, "secret.txt"), nil, 0o644))
	mustDo(t, os.WriteFile(filepath.Join(h.root, "tree/last.txt"), nil, 0o644))
	h.awaitChanges(id, fileChange{Type: "create", Path: "tree/later"},
		fileChange{Type: "create", Path: "tree/last.txt"})
	for _, change := range h.changes(id) {
		if strings.Contains(change.Path, "secret") {
			t.Fatalf("a change seen through a link: %+v", change)
		}
	}
}

func TestWatchCancelledWhileItWalks(t *testing.T) {
	h := newHarness(t)
	for i := 0; i < 3000; i++ {
		mustDo(t, os.MkdirAll(filepath.Join(h.root, fmt.Sprintf("big/d%d", i)), 0o755))
	}
	id := h.watch("big", true)
	h.until(h.send(map[string]any{"op": "cancel", "target": id}), "killed")
	if end := named(h.until(id, "unwatched"), "unwatched"); end["reason"] != "cancelled" {
		t.Fatalf("unwatched: %v", end)
	}
	h.front.mu.Lock()
	held := len(h.front.watches)
	h.front.mu.Unlock()
	if held != 0 {
		t.Fatalf("%d watches held after the cancel", held)
	}
}

func TestWatchEndsWhenItsTreeGrowsPastTheBound(t *testing.T) {
	h := newHarness(t)
	for i := 0; i < maxWatchDirs-2; i++ {
		mustDo(t, os.MkdirAll(filepath.Join(h.root, fmt.Sprintf("grow/d%d", i)), 0o755))
	}
	id := h.watch("grow", true)
	h.until(id, "watching")
	mustDo(t, os.MkdirAll(filepath.Join(h.root, "grow/new/one/two"), 0o755))
	failure := named(h.until(id, "error"), "error")
	if failure["code"] != "watch_limit_exceeded" {
		t.Fatalf("a tree grown past the bound: %v", failure)
	}
}
