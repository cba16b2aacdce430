package main

// What a command run used, and the environment it starts with.

import (
	"sort"
	"sync"
	"time"
)

// usagePoller measures a run's tree from /proc while it runs (its peak memory: the sum over
// the tree, which wait4 does not give); the first poll comes memoryPoll after the start, and
// polls never take more than pollDuty of the front's time. Each poll reads every process of
// the sandbox but those outside (outside gives them, at each poll): the front's own, none of
// which is ever in a run's tree.
type usagePoller struct {
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

func startUsagePoller(leader int, runMu *sync.Mutex, peak *uint64,
	outside func() map[int]bool) *usagePoller {
	p := &usagePoller{}
	var poll func()
	poll = func() {
		begun := time.Now()
		var sum uint64
		for _, info := range descendants(listProcessesBut("/proc", outside()), leader) {
			sum += info.Rss
		}
		runMu.Lock()
		if sum > *peak {
			*peak = sum
		}
		runMu.Unlock()
		next := time.Duration(float64(time.Since(begun)) / pollDuty)
		if next < memoryPoll {
			next = memoryPoll
		}
		p.mu.Lock()
		if !p.stopped {
			p.timer = time.AfterFunc(next, poll)
		}
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.timer = time.AfterFunc(memoryPoll, poll)
	p.mu.Unlock()
	return p
}

func (p *usagePoller) stop() {
	p.mu.Lock()
	p.stopped = true
	p.timer.Stop()
	p.mu.Unlock()
}

// envList is the base environment with the request's over it (in place), then the mark.
func envList(base []string, overrides map[string]string, runID string) []string {
	env := make([]string, 0, len(base)+len(overrides)+1)
	seen := map[string]bool{}
	for _, entry := range base {
		key := entry
		for i := 0; i < len(entry); i++ {
			if entry[i] == '=' {
				key = entry[:i]
				break
			}
		}
		if key == runMark {
			continue
		}
		if value, ok := overrides[key]; ok {
			entry = key + "=" + value
			seen[key] = true
		}
		env = append(env, entry)
	}
	added := make([]string, 0, len(overrides))
	for key := range overrides {
		if !seen[key] && key != runMark {
			added = append(added, key)
		}
	}
	sort.Strings(added)
	for _, key := range added {
		env = append(env, key+"="+overrides[key])
	}
	return append(env, runMark+"="+runID)
}
