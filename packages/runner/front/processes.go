package main

import (
	"bytes"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// The sandbox's processes as /proc shows them (processes.ts of the runner, in Go).

// ProcessInfo is one live process.
type ProcessInfo struct {
	Pid, Ppid, Pgid int
	// Resident memory, bytes.
	Rss uint64
	// CPU used by the process and its reaped children, ms.
	CPUMs float64
}

// Clock ticks per second of /proc times (USER_HZ) and the page size.
const (
	ticksPerSecond = 100
	pageSize       = 4096
)

// parseStat parses a process's line of /proc/<pid>/stat; false if it has exited.
func parseStat(pid int, stat string) (ProcessInfo, bool) {
	close := strings.LastIndexByte(stat, ')')
	if close < 0 || close+2 > len(stat) {
		return ProcessInfo{}, false
	}
	// Fields after the command name, which is in parentheses and may contain spaces.
	fields := strings.Split(stat[close+2:], " ")
	if len(fields) < 22 || fields[0] == "Z" || fields[0] == "X" {
		return ProcessInfo{}, false
	}
	number := func(i int) float64 {
		n, _ := strconv.ParseFloat(fields[i], 64)
		return n
	}
	ticks := number(11) + number(12) + number(13) + number(14)
	return ProcessInfo{
		Pid:   pid,
		Ppid:  int(number(1)),
		Pgid:  int(number(2)),
		Rss:   uint64(number(21)) * pageSize,
		CPUMs: ticks * 1000 / ticksPerSecond,
	}, true
}

// listProcesses lists every live process in procRoot.
func listProcesses(procRoot string) []ProcessInfo {
	return listProcessesBut(procRoot, nil)
}

// listProcessesBut lists every live process in procRoot but those in skip, whose stat is not
// read: the kernel makes each (a multithreaded process's most of all) for every read.
func listProcessesBut(procRoot string, skip map[int]bool) []ProcessInfo {
	dir, err := os.Open(procRoot)
	if err != nil {
		return nil
	}
	names, _ := dir.Readdirnames(-1)
	dir.Close()
	infos := make([]ProcessInfo, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || skip[pid] {
			continue
		}
		stat, err := os.ReadFile(procRoot + "/" + name + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		if info, ok := parseStat(pid, string(stat)); ok {
			infos = append(infos, info)
		}
	}
	return infos
}

// descendants is root and its descendants, from one listing.
func descendants(all []ProcessInfo, root int) []ProcessInfo {
	children := map[int][]ProcessInfo{}
	var queue []ProcessInfo
	for _, info := range all {
		children[info.Ppid] = append(children[info.Ppid], info)
		if info.Pid == root {
			queue = append(queue, info)
		}
	}
	var found []ProcessInfo
	for len(queue) > 0 {
		info := queue[0]
		queue = queue[1:]
		found = append(found, info)
		queue = append(queue, children[info.Pid]...)
	}
	return found
}

// runTree is a run's processes: its leader's descendants and every member of its group.
func runTree(all []ProcessInfo, leader int) []int {
	tree := map[int]bool{}
	for _, info := range descendants(all, leader) {
		tree[info.Pid] = true
	}
	for _, info := range all {
		if info.Pgid == leader {
			tree[info.Pid] = true
		}
	}
	return keys(tree)
}

// markedWith is the processes whose environment holds entry (NAME=value): what a run started,
// even detached from its tree. Best effort: a process can drop the variable.
func markedWith(all []ProcessInfo, entry string, procRoot string) []int {
	want := []byte(entry)
	var marked []int
	for _, info := range all {
		environ, err := os.ReadFile(procRoot + "/" + strconv.Itoa(info.Pid) + "/environ")
		if err != nil {
			continue
		}
		for _, e := range bytes.Split(environ, []byte{0}) {
			if bytes.Equal(e, want) {
				marked = append(marked, info.Pid)
				break
			}
		}
	}
	return marked
}

// treesOf is the trees under roots and under every stopped process.
func treesOf(all []ProcessInfo, roots []int, stopped map[int]bool) []int {
	found := map[int]bool{}
	for _, root := range append(append([]int{}, roots...), keys(stopped)...) {
		for _, info := range descendants(all, root) {
			found[info.Pid] = true
		}
	}
	return keys(found)
}

// killAll SIGKILLs each pid; it returns the ones signalled.
func killAll(pids []int) []int {
	var killed []int
	for _, pid := range pids {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	return killed
}

// stopThenKill kills a process tree that may be forking or detaching while it is killed: its
// members are first stopped (SIGSTOP), listing again until no new member appears (a stopped
// process cannot fork, and its children keep it as parent), then every member is killed.
// What slips through (the round limit reached) is then killed the plain way.
func stopThenKill(procRoot string, selectPids func(all []ProcessInfo, stopped map[int]bool) []int) []int {
	const rounds = 50
	stopped := map[int]bool{}
	for round := 0; round < rounds; round++ {
		fresh := 0
		for _, pid := range selectPids(listProcesses(procRoot), stopped) {
			if stopped[pid] {
				continue
			}
			fresh++
			if syscall.Kill(pid, syscall.SIGSTOP) == nil {
				stopped[pid] = true
			}
		}
		if fresh == 0 {
			break
		}
	}
	killed := map[int]bool{}
	for _, pid := range killAll(keys(stopped)) {
		killed[pid] = true
	}
	for round := 0; round < rounds; round++ {
		targets := selectPids(listProcesses(procRoot), map[int]bool{})
		if len(targets) == 0 {
			break
		}
		for _, pid := range killAll(targets) {
			killed[pid] = true
		}
	}
	return keys(killed)
}

func keys(set map[int]bool) []int {
	list := make([]int, 0, len(set))
	for k := range set {
		list = append(list, k)
	}
	sort.Ints(list)
	return list
}
