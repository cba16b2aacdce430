package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func pathError(t *testing.T, err error) *RunnerError {
	t.Helper()
	var known *RunnerError
	if !errors.As(err, &known) {
		t.Fatalf("want a RunnerError, got %v", err)
	}
	return known
}

func TestLexicalDir(t *testing.T) {
	root := "/workspace"
	for _, c := range []struct{ in, want string }{
		{"", "/workspace"},
		{".", "/workspace"},
		{"a/b/../c", "/workspace/a/c"},
		{"/workspace/x/", "/workspace/x"},
		{"/workspace", "/workspace"},
	} {
		got, err := lexicalDir(c.in, root)
		if err != nil || got != c.want {
			t.Errorf("lexicalDir(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, why string }{
		{"../etc", "leaves /workspace"},
		{"/etc", "must be inside /workspace"},
		{"/workspace2", "must be inside /workspace"},
		{"a\x00b", "contains a NUL byte"},
		{strings.Repeat("n", 256), "a name is longer than 255 bytes"},
		{strings.Repeat("n/", 2001), "longer than 4000 bytes"},
	} {
		_, err := lexicalDir(c.in, root)
		known := pathError(t, err)
		if known.Code != "invalid_path" || !strings.HasSuffix(known.Message, c.why) {
			t.Errorf("lexicalDir(%q): %s %q; want invalid_path ending %q", c.in, known.Code, known.Message, c.why)
		}
	}
}

func TestWorkingDirectory(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(root, "out")))
	must(os.Mkdir(filepath.Join(root, "real"), 0o755))
	must(os.Symlink("real", filepath.Join(root, "in")))
	must(os.Symlink(filepath.Join(root, "gone"), filepath.Join(root, "broken")))
	must(os.WriteFile(filepath.Join(root, "file"), nil, 0o644))

	got, _, err := workingDirectory("a/b/c", root)
	if err != nil || got != filepath.Join(root, "a/b/c") {
		t.Fatalf("made %q, %v", got, err)
	}
	if info, err := os.Stat(got); err != nil || !info.IsDir() {
		t.Fatalf("not made: %v", err)
	}
	// A link inside the workspace is followed, to its real path.
	got, _, err = workingDirectory("in/x", root)
	if err != nil || got != filepath.Join(root, "real/x") {
		t.Fatalf("through a link inside: %q, %v", got, err)
	}
	for _, c := range []struct{ in, why string }{
		{"out/x", "a symlink leads outside /workspace"},
		{"broken/x", "a symlink on the way is broken"},
		{"file/x", `"file" is not a directory`},
	} {
		_, _, err := workingDirectory(c.in, root)
		known := pathError(t, err)
		if known.Code != "invalid_path" || !strings.HasSuffix(known.Message, c.why) ||
			known.Details["path"] != c.in {
			t.Errorf("%q: %+v; want invalid_path ending %q", c.in, known, c.why)
		}
	}
	// Nothing was made outside.
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("made %d entries outside the workspace", len(entries))
	}
	// A link to a file: made no further, and refused.
	must(os.Symlink("file", filepath.Join(root, "to-file")))
	_, _, err = workingDirectory("to-file", root)
	known := pathError(t, err)
	if known.Message != "workingDir is not a directory: to-file" {
		t.Errorf("a file as the working directory: %q", known.Message)
	}
}

func TestPathErrors(t *testing.T) {
	root := t.TempDir()
	_, err := os.Open(filepath.Join(root, "missing/x"))
	event := errorEvent(7, err, root)
	if event["code"] != "invalid_path" || event["message"] != `Invalid path "missing/x": does not exist` {
		t.Errorf("a missing path: %v", event)
	}
	event = errorEvent(7, errors.New("boom"), root)
	if event["code"] != "internal_error" || event["message"] != "boom" {
		t.Errorf("another error: %v", event)
	}
}
