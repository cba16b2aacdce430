package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestChangedSince(t *testing.T) {
	root := t.TempDir()
	write := func(name string) {
		t.Helper()
		full := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("old.txt")
	write("untouched/old.txt")
	clock := &ChangeClock{dir: t.TempDir()}
	// The kernel's change clock ticks coarsely: a file written before the reading, in the
	// same tick, would count as the run's. Wait a tick out.
	time.Sleep(20 * time.Millisecond)
	since, err := clock.Read()
	if err != nil {
		t.Fatal(err)
	}
	write("new.txt")
	write("dir/deeper/new.txt")
	write("node_modules/pkg/index.js")
	write(".sandbox-code-1234.mjs")
	// A file given an old mtime after the start still counts: its change time is now.
	write("backdated.txt")
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(root, "backdated.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	got := changedSince(root, since, root)
	want := []string{"backdated.txt", "dir/deeper/new.txt", "new.txt"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changed %v; want %v", got, want)
	}
	// Later readings never go back.
	later, err := clock.Read()
	if err != nil || later < since {
		t.Errorf("a later reading %d, %v; the first %d", later, err, since)
	}
}
