package main

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
)

// RunnerError is a failure the front reports to the agent with a code of the service's table.
type RunnerError struct {
	Code    string
	Message string
	Details map[string]any
}

func (e *RunnerError) Error() string { return e.Message }

// errorEvent is a request's error event: a RunnerError as it is, a full disk or a failed call
// on a workspace path as the runner says them (files.ts, workspace-path.ts), anything else
// internal.
func errorEvent(id float64, err error, root string) map[string]any {
	event := map[string]any{"id": id, "ev": "error", "code": "internal_error", "message": err.Error()}
	var known *RunnerError
	if !errors.As(err, &known) {
		known = asDiskFull(err, root)
	}
	if known == nil {
		known = asPathError(err, root)
	}
	if known != nil {
		event["code"] = known.Code
		event["message"] = known.Message
		if known.Details != nil {
			event["details"] = known.Details
		}
	}
	return event
}

func asDiskFull(err error, root string) *RunnerError {
	if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EDQUOT) {
		return nil
	}
	var st syscall.Statfs_t
	details := map[string]any{}
	if syscall.Statfs(root, &st) == nil {
		details["used"] = (st.Blocks - st.Bfree) * uint64(st.Bsize)
		details["limit"] = st.Blocks * uint64(st.Bsize)
	}
	return &RunnerError{Code: "disk_full", Message: "The session disk is full", Details: details}
}

// What a failed file system call on a user's path means to the user.
var pathErrors = map[syscall.Errno]string{
	syscall.ENOENT:       "does not exist",
	syscall.ENOTDIR:      "a part of it is not a directory",
	syscall.EISDIR:       "is a directory",
	syscall.EEXIST:       "already exists",
	syscall.ELOOP:        "too many levels of symlinks",
	syscall.ENAMETOOLONG: "name too long",
	syscall.EACCES:       "permission denied",
	syscall.EPERM:        "permission denied",
}

// asPathError is a failed call on a workspace path as 400 invalid_path, its path relative to
// the workspace in details.path.
func asPathError(err error, root string) *RunnerError {
	var pathErr *fs.PathError
	var errno syscall.Errno
	if !errors.As(err, &pathErr) || !errors.As(err, &errno) {
		return nil
	}
	why, ok := pathErrors[errno]
	if !ok {
		return nil
	}
	if !inside(root, pathErr.Path) {
		return &RunnerError{Code: "invalid_path", Message: "Invalid path: " + why}
	}
	relative := strings.TrimPrefix(strings.TrimPrefix(pathErr.Path, root), "/")
	return &RunnerError{
		Code:    "invalid_path",
		Message: `Invalid path "` + relative + `": ` + why,
		Details: map[string]any{"path": relative},
	}
}
