package main

import (
	"syscall"
	"unsafe"
)

// UTIME_NOW: "set this time to the kernel's current time" (utimensat(2)).
const utimeNow = (1 << 30) - 1

// utimesNanoFd sets an open file's access and modification times (utimensat on the fd itself).
func utimesNanoFd(fd int, times []syscall.Timespec) error {
	_, _, errno := syscall.Syscall6(syscall.SYS_UTIMENSAT, uintptr(fd), 0,
		uintptr(unsafe.Pointer(&times[0])), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
