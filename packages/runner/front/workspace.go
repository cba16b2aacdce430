package main

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The workspace's paths (workspace-path.ts of the runner, in Go): what a run's working
// directory may be, and how it is made without following a link out of the workspace.

const (
	// The sandbox's workspace; and the runner's own files there, private to its user.
	defaultWorkspace = "/workspace"
	defaultRunnerDir = "/tmp/.sandbox-runner"
	// Linux's NAME_MAX and (less the workspace prefix) PATH_MAX.
	maxNameBytes = 255
	maxPathBytes = 4000
)

func invalidPath(p, why string) *RunnerError {
	return &RunnerError{
		Code:    "invalid_path",
		Message: `Invalid path "` + p + `": ` + why,
		Details: map[string]any{"path": p},
	}
}

func inside(root, candidate string) bool {
	return candidate == root || strings.HasPrefix(candidate, root+"/")
}

// lexicalPath is the absolute path of p (relative to root), refusing absolute paths, NUL
// bytes and `..` that leaves root.
func lexicalPath(p, root string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", invalidPath(p, "contains a NUL byte")
	}
	if path.IsAbs(p) {
		return "", invalidPath(p, "must be relative to /workspace")
	}
	for _, part := range strings.Split(p, "/") {
		if len(part) > maxNameBytes {
			return "", invalidPath(p, "a name is longer than 255 bytes")
		}
	}
	if len(p) > maxPathBytes {
		return "", invalidPath(p, "longer than 4000 bytes")
	}
	resolved := path.Join(root, p)
	if !inside(root, resolved) {
		return "", invalidPath(p, "leaves /workspace")
	}
	return resolved, nil
}

// lexicalDir is like lexicalPath but accepts `/workspace/...` too (for working directories).
func lexicalDir(p, root string) (string, error) {
	if !path.IsAbs(p) {
		return lexicalPath(p, root)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", invalidPath(p, "contains a NUL byte")
	}
	resolved := path.Clean(p)
	if !inside(root, resolved) {
		return "", invalidPath(p, "must be inside /workspace")
	}
	return resolved, nil
}

// makeDirectories creates the directories down to dir (absolute, lexically inside root) one by
// one, never following a symlink out of the workspace, and returns the real path of dir. p is
// what the user asked for, for the errors.
func makeDirectories(p, dir, root string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	current := realRoot
	for _, part := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(dir, root), "/"), "/") {
		if part == "" {
			continue
		}
		next := path.Join(current, part)
		info, err := os.Lstat(next)
		switch {
		case err != nil:
			// Made next (mkdir tells why it cannot be).
			if err := os.Mkdir(next, 0o777); err != nil {
				return "", err
			}
			current = next
		case info.Mode()&os.ModeSymlink != 0:
			real, err := filepath.EvalSymlinks(next)
			if err != nil {
				return "", invalidPath(p, "a symlink on the way is broken")
			}
			if !inside(realRoot, real) {
				return "", invalidPath(p, "a symlink leads outside /workspace")
			}
			current = real
		case info.IsDir():
			current = next
		default:
			return "", invalidPath(p, `"`+part+`" is not a directory`)
		}
	}
	return current, nil
}

// workingDirectory is the run's working directory, and what it is: created if missing (never
// through a symlink that leads out), refused if it is not a directory.
func workingDirectory(cwd, root string) (string, os.FileInfo, error) {
	lexical, err := lexicalDir(cwd, root)
	if err != nil {
		return "", nil, err
	}
	real, err := makeDirectories(cwd, lexical, root)
	if err != nil {
		return "", nil, err
	}
	info, err := os.Lstat(real)
	if err != nil {
		return "", nil, err
	}
	if !info.IsDir() {
		return "", nil, &RunnerError{
			Code:    "invalid_path",
			Message: "workingDir is not a directory: " + cwd,
			Details: map[string]any{"path": cwd},
		}
	}
	return real, info, nil
}
