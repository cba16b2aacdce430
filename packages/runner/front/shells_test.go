package main

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitArmed waits until n shells are armed and wait in their read.
func (h *harness) waitArmed(n int) []int {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		pids := h.front.shells.Pids()
		waiting := 0
		for _, pid := range pids {
			if state, ok := readProcStat(pid); ok && state.state == 'S' {
				waiting++
			}
		}
		if waiting >= n {
			return pids
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("%d shells armed; want %d", len(h.front.shells.Pids()), n)
	return nil
}

// runOnce runs a command and returns its stdout, stderr and exit code.
func (h *harness) runOnce(command string, extra map[string]any) (string, string, float64) {
	events := h.until(h.exec(command, extra), "exec")
	return output(events, "stdout"), output(events, "stderr"), named(events, "result")["exitCode"].(float64)
}

func TestArmedShellTakesTheRun(t *testing.T) {
	h := newHarness(t)
	armed := h.waitArmed(armedShellCount)
	id := h.exec(`echo "$$ $SANDBOX_RUN_ID"`, nil)
	events := h.until(id, "exec")
	pid := int(events[0]["pid"].(float64))
	if pid != armed[0] {
		t.Errorf("the run's pid %d is not the first armed shell's (%v)", pid, armed)
	}
	var printed int
	var mark string
	fmt.Sscan(output(events, "stdout"), &printed, &mark)
	if printed != pid || len(mark) != 16 {
		t.Errorf("the shell's own pid and mark: %q", output(events, "stdout"))
	}
	// Re-armed after the run: two again, neither of them the one taken.
	again := h.waitArmed(armedShellCount)
	for _, p := range again {
		if p == pid {
			t.Errorf("the taken shell %d is armed again", pid)
		}
	}
}

// runCold runs a command as if no shell were armed.
func (h *harness) runCold(command string, extra map[string]any) (string, string, float64) {
	shells := h.front.shells
	h.front.shells = nil
	defer func() { h.front.shells = shells }()
	return h.runOnce(command, extra)
}

// What a run sees and does is what `bash -c` gives: the same output, messages and exit code.
func TestArmedShellIsBashC(t *testing.T) {
	h := newHarness(t)
	commands := []string{
		`echo "[$0][$_][$SHLVL][$LINENO][$-][$#][$*][$BASH_EXECUTION_STRING][$BASH_SUBSHELL]"`,
		`declare -p | grep -v -E '^declare -[-a-zA-Z]* (BASHPID|PPID|RANDOM|SRANDOM|SECONDS|EPOCH[A-Z]*|_|PIPESTATUS|SANDBOX_RUN_ID)='; declare -f; shopt; set -o; trap -p; ulimit -a; umask`,
		`exit 7`,
		`nosuch-command`,
		`echo a; )`,
		`printenv SHLVL`,
		`ls /proc/self/fd`,
		`nosuch-file arg`,
		`./missing x`,
		`kill -SEGV $$`,
		`cat`,
		`readlink /proc/self/fd/0; ls /proc/self/fd`,
		"echo first\necho second; exit 3",
		"echo 'caf\xc3\xa9 \xff'",
		`tr '\0' ' ' < /proc/$$/cmdline; echo`,
		`if true; then echo unclosed`,
	}
	for _, command := range commands {
		h.waitArmed(armedShellCount)
		out, errOut, code := h.runOnce(command, nil)
		coldOut, coldErr, coldCode := h.runCold(command, nil)
		if out != coldOut || errOut != coldErr || code != coldCode {
			t.Errorf("%q\narmed: %q %q %v\ncold:  %q %q %v", command, out, errOut, code, coldOut, coldErr, coldCode)
		}
	}
}

// A lone external command replaces the shell, as `bash -c` execs it: the run's pid is its.
func TestArmedShellExecsALoneCommand(t *testing.T) {
	h := newHarness(t)
	h.waitArmed(armedShellCount)
	events := h.until(h.exec(`cat /proc/self/stat`, nil), "exec")
	var pid int
	fmt.Sscan(output(events, "stdout"), &pid)
	if started := int(events[0]["pid"].(float64)); pid != started {
		t.Errorf("cat ran as %d; the run's process is %d", pid, started)
	}
	if !execsDirectly("ls -la /tmp") || execsDirectly("echo x") || execsDirectly("A=1 env") ||
		execsDirectly("ls; ls") || execsDirectly("ls *") || execsDirectly(`ls "$HOME"`) {
		t.Error("execsDirectly misjudged a command")
	}
}

// Shells killed or stopped by the user (`kill -9 -1`, `kill -STOP -1`) do not fail the next
// runs: a dead one is replaced and the run starts its own bash.
func TestDeadOrStoppedShells(t *testing.T) {
	h := newHarness(t)
	armed := h.waitArmed(armedShellCount)
	// From a run of its own (with an environment: it takes no shell).
	h.runOnce(fmt.Sprintf(`kill -9 %d %d`, armed[0], armed[1]), map[string]any{"env": map[string]string{"A": "1"}})
	for i := 0; i < 3; i++ {
		if out, _, code := h.runOnce(`echo ok`, nil); out != "ok\n" || code != 0 {
			t.Errorf("after the shells were killed: %q %v", out, code)
		}
	}
	for _, pid := range h.waitArmed(armedShellCount) {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}
	if out, _, code := h.runOnce(`echo ok`, nil); out != "ok\n" || code != 0 {
		t.Errorf("with the shells stopped: %q %v", out, code)
	}
}

// A stopped shell is not taken (a signal may wait for its continue): the run starts its own
// bash, and a shell stopped with a signal pending costs the run nothing.
func TestStoppedShellIsNotTaken(t *testing.T) {
	h := newHarness(t)
	armed := h.waitArmed(armedShellCount)
	for _, pid := range armed {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
		// Stopped once it has taken its SIGSTOP.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			if state, ok := readProcStat(pid); ok && state.state == 'T' {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	// A signal for a stopped shell waits for its continue (a SIGUSR1 would end it).
	_ = syscall.Kill(armed[1], syscall.SIGUSR1)
	for i := 0; i < 2; i++ {
		events := h.until(h.exec(`echo ok`, nil), "exec")
		if pid := int(events[0]["pid"].(float64)); pid == armed[0] || pid == armed[1] {
			t.Errorf("run %d took the stopped shell %d", i, pid)
		}
		if out, code := output(events, "stdout"), named(events, "result")["exitCode"]; out != "ok\n" || code != 0.0 {
			t.Errorf("run %d: %q %v", i, out, code)
		}
	}
}

// A workspace made again after the shells started is where the next run works.
func TestWorkspaceMadeAgain(t *testing.T) {
	h := newHarness(t)
	armed := h.waitArmed(armedShellCount)
	if err := os.Rename(h.root, h.root+".old"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(h.root + ".old") })
	if err := os.Mkdir(h.root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.root+"/new.txt", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	events := h.until(h.exec(`ls`, nil), "exec")
	if pid := int(events[0]["pid"].(float64)); pid == armed[0] {
		t.Errorf("the run took shell %d, armed in the old workspace", pid)
	}
	if got := output(events, "stdout"); got != "new.txt\n" {
		t.Errorf("the run listed %q", got)
	}
}

// A run with its own environment, a command too long for a shell's pipe, or another working
// directory starts its own bash; the armed shells stay armed.
func TestRunsAShellCannotTake(t *testing.T) {
	h := newHarness(t)
	armed := h.waitArmed(armedShellCount)
	long := "echo " + strings.Repeat("y", maxShellMessage)
	if out, _, _ := h.runOnce(long, nil); out != strings.Repeat("y", maxShellMessage)+"\n" {
		t.Errorf("a long command: %d bytes", len(out))
	}
	if out, _, _ := h.runOnce(`echo $X`, map[string]any{"env": map[string]string{"X": "own"}}); out != "own\n" {
		t.Errorf("an environment: %q", out)
	}
	if err := os.Mkdir(h.root+"/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := h.runOnce(`pwd`, map[string]any{"cwd": "sub"}); out != h.root+"/sub\n" {
		t.Errorf("another directory: %q", out)
	}
	now := h.front.shells.Pids()
	sort.Ints(armed)
	sort.Ints(now)
	if !reflect.DeepEqual(now, armed) {
		t.Errorf("armed %v, then %v", armed, now)
	}
}

// The Node's process counts and kills leave the armed shells out.
func TestArmedShellsAreNoActivity(t *testing.T) {
	h := newHarness(t)
	armed := h.waitArmed(armedShellCount)
	h.front.Handle([]byte(`{"op":"stats","id":5}`))
	want := fmt.Sprintf(`{"op":"stats","id":5,"armedShells":[%d,%d]}`, armed[0], armed[1])
	if got := <-h.forwarded; got != want {
		t.Errorf("forwarded %s; want %s", got, want)
	}
	h.front.Handle([]byte(`{"op":"ping","id":6}`))
	if got := <-h.forwarded; got != `{"op":"ping","id":6}` {
		t.Errorf("forwarded %s", got)
	}
}

// The agent's kill-all knows a waiting shell by the start of its script (ARMED_SHELL_ARGS in
// services/agent/src/runtime/docker/kill-all.ts).
func TestShellScriptStartsAsTheAgentKnowsIt(t *testing.T) {
	if !strings.HasPrefix(NewShells(&Front{}).script, "IFS= read -r -u 3 -N 2 __sandbox_shell ") {
		t.Error("the script's start changed: change ARMED_SHELL_ARGS with it")
	}
}

// A waiting shell holds its stdio and its command pipe: nothing else (no saved copy of a
// descriptor either).
func TestArmedShellHoldsOnlyItsPipes(t *testing.T) {
	h := newHarness(t)
	for _, pid := range h.waitArmed(armedShellCount) {
		var fds []string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
			fds = fds[:0]
			for _, entry := range entries {
				fds = append(fds, entry.Name())
			}
			// Until bash is blocked in its read (its start-up opens files of its own).
			if wchan, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid)); strings.Contains(string(wchan), "pipe") {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		allowed := map[string]bool{"0": true, "1": true, "2": true, "3": true}
		for _, fd := range inheritedFds() {
			allowed[fd] = true
		}
		for _, fd := range fds {
			if !allowed[fd] {
				t.Errorf("shell %d holds fd %s (all: %v)", pid, fd, fds)
			}
		}

	}
}

// inheritedFds are the descriptors above 2 this test was given without close-on-exec: every
// process it starts has them (the environment's, not the front's).
func inheritedFds() []string {
	var fds []string
	entries, _ := os.ReadDir("/proc/self/fdinfo")
	for _, entry := range entries {
		info, _ := os.ReadFile("/proc/self/fdinfo/" + entry.Name())
		var flags int
		for _, line := range strings.Split(string(info), "\n") {
			if strings.HasPrefix(line, "flags:") {
				fmt.Sscanf(strings.TrimSpace(line[6:]), "%o", &flags)
			}
		}
		if n, _ := strconv.Atoi(entry.Name()); n > 3 && flags&syscall.O_CLOEXEC == 0 {
			fds = append(fds, entry.Name())
		}
	}
	return fds
}

// A run's filesWritten start at the run, not at its shell's arming: a file written in
// between is not the run's.
func TestArmedRunsFilesFromTheirStart(t *testing.T) {
	h := newHarness(t)
	h.waitArmed(armedShellCount)
	// Change times a clock tick (the kernel's coarse clock) after the arming, and before the run.
	time.Sleep(20 * time.Millisecond)
	if err := os.WriteFile(h.root+"/before.txt", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	events := h.until(h.exec(`echo y > during.txt`, nil), "exec")
	if got := named(events, "result")["filesWritten"]; !reflect.DeepEqual(got, []any{"during.txt"}) {
		t.Errorf("filesWritten %v", got)
	}
}

// The longest command a shell takes still fits its title (`ps` shows the run as `bash -c`
// would), and the room for it is an argument bash does not parse: its script is parsed at
// every start, a character at a time.
func TestArmedShellTitleRoomIsNotParsed(t *testing.T) {
	script := NewShells(&Front{}).script
	if strings.Contains(script, "    ") || len(script) > 1024 {
		t.Errorf("the script carries padding (%d bytes)", len(script))
	}
	h := newHarness(t)
	h.waitArmed(armedShellCount)
	command := `tr '\0' '|' < /proc/$$/cmdline; echo; : `
	command += strings.Repeat("y", maxShellMessage-2-len(command))
	events := h.until(h.exec(command, nil), "exec")
	// The kernel shows a title's first page only.
	if got, want := output(events, "stdout"), "/bin/bash -c "+command; got != want[:4096]+"\n" {
		t.Errorf("the title of a taken shell: %d bytes, want %d: %.80q", len(got), len(want), got)
	}
	if named(events, "result")["exitCode"] != 0.0 {
		t.Errorf("the run failed: %v", events)
	}
}
