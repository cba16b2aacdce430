package main

import (
	"os"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The CPU a command run costs the front and its spawner (with the shells it reaped), on the
// host, with the real spawner: `GOMAXPROCS=1 go test -run - -bench CommandRunCPU
// -benchtime 400x -count 3` (GOMAXPROCS as the front sets it in a sandbox). Measures only:
// no bound is asserted (docs/performance.md has the figures).

func BenchmarkCommandRunCPU(b *testing.B) {
	for name, command := range map[string]string{"true": "true", "echo": "echo x"} {
		b.Run(name, func(b *testing.B) { benchmarkRuns(b, command) })
	}
}

func benchmarkRuns(b *testing.B, command string) {
	h := newHarness(b)
	// The first run starts the shells' replacements' rhythm; not counted.
	h.until(h.exec(command, nil), "exec")
	h.waitArmed(armedShellCount)
	spawnerPid := h.front.spawner.Pid()
	selfBefore, childrenBefore := usage(syscall.RUSAGE_SELF), usage(syscall.RUSAGE_CHILDREN)
	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		begun := time.Now()
		events := h.until(h.exec(command, nil), "exec")
		latencies = append(latencies, time.Since(begun))
		if code := named(events, "result")["exitCode"]; code != 0.0 {
			b.Fatalf("exit code %v", code)
		}
	}
	b.StopTimer()
	self := usage(syscall.RUSAGE_SELF) - selfBefore
	// The spawner's CPU and its reaped shells' count once it is reaped itself.
	h.front.spawner.Close()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if _, err := os.Stat("/proc/" + strconv.Itoa(spawnerPid)); err != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	children := usage(syscall.RUSAGE_CHILDREN) - childrenBefore
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	b.ReportMetric(self.Seconds()*1000/float64(b.N), "front-ms/run")
	b.ReportMetric(children.Seconds()*1000/float64(b.N), "spawner-ms/run")
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
}

func usage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
