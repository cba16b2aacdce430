package main

import (
	"os"
	"reflect"
	"testing"
)

func TestParseStat(t *testing.T) {
	stat := "42 (a (weird) name) S 7 40 40 0 -1 4194560 100 0 0 0 150 50 3 2 20 0 1 0 100 1000 25 18446744073709551615"
	info, ok := parseStat(42, stat)
	if !ok {
		t.Fatal("not parsed")
	}
	want := ProcessInfo{Pid: 42, Ppid: 7, Pgid: 40, Rss: 25 * 4096, CPUMs: 2050}
	if info != want {
		t.Errorf("parsed %+v; want %+v", info, want)
	}
	if _, ok := parseStat(43, "43 (zombie) Z 7 40 40 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0 0"); ok {
		t.Error("a zombie is not a live process")
	}
}

func TestRunTree(t *testing.T) {
	all := []ProcessInfo{
		{Pid: 1, Ppid: 0, Pgid: 1},
		{Pid: 10, Ppid: 5, Pgid: 10}, // the leader
		{Pid: 11, Ppid: 10, Pgid: 10},
		{Pid: 12, Ppid: 11, Pgid: 12}, // its own group, still a descendant
		{Pid: 13, Ppid: 1, Pgid: 10},  // left the tree, still in the group
		{Pid: 14, Ppid: 1, Pgid: 14},  // another's
	}
	if got := runTree(all, 10); !reflect.DeepEqual(got, []int{10, 11, 12, 13}) {
		t.Errorf("runTree = %v", got)
	}
	if got := treesOf(all, nil, map[int]bool{11: true}); !reflect.DeepEqual(got, []int{11, 12}) {
		t.Errorf("treesOf = %v", got)
	}
}

// A memory poll reads every process's stat but the front's own (the kernel makes each one it
// reads): the front, its Node, its spawner, the armed shells waiting; a taken shell is the
// run's, and read.
func TestMemoryPollSkipsTheFrontsOwn(t *testing.T) {
	root := t.TempDir()
	for pid, name := range map[string]string{"7": "bash", "8": "node"} {
		if err := os.Mkdir(root+"/"+pid, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := pid + " (" + name + ") S 1 7 7 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 100 1000 3 0"
		if err := os.WriteFile(root+"/"+pid+"/stat", []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := listProcessesBut(root, map[int]bool{8: true}); len(got) != 1 || got[0].Pid != 7 {
		t.Errorf("listed %+v", got)
	}
	h := newHarness(t)
	h.front.nodePid = 12345
	armed := h.waitArmed(armedShellCount)
	own := h.front.ownProcesses()
	for _, pid := range append(armed, os.Getpid(), h.front.spawner.Pid(), 12345) {
		if !own[pid] {
			t.Errorf("%d is the front's own; skipped %v", pid, own)
		}
	}
	id := h.exec(`sleep 0.2`, nil)
	started := h.until(id, "started")
	if pid := int(started[0]["pid"].(float64)); h.front.ownProcesses()[pid] {
		t.Errorf("the run's shell %d is skipped", pid)
	}
	if result := named(h.until(id, "exec"), "result"); result["memoryUsedBytes"].(float64) <= 0 {
		t.Errorf("no memory measured: %v", result)
	}
}
