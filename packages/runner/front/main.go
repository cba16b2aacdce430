// The runner's front (ADR 34): the process the agent starts in a sandbox. It serves command
// runs itself, compiled, and hands every other request to the runner's Node (its child, over
// stdio), whose answers it passes back: a short command then costs no work of Node's.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
)

const (
	// The sandbox user's ids (packages/contract/src/run.ts).
	sandboxUID = 1000
	sandboxGID = 1000
	// Where the agent's socket is and what this launch says first (ADR 33).
	linkSocketEnv = "SANDBOX_AGENT_SOCKET"
	linkTokenEnv  = "SANDBOX_AGENT_TOKEN"
	// The session's CPU group, as the agent mounts it (absent where the node does not split).
	userCPUProcs  = "/run/sandbox/cpu.procs"
	prSetDumpable = 4
)

func main() {
	// One thread runs the front's goroutines (others only for blocking calls): its work is a
	// little per request, and a wake-up of one thread costs less than handing work between
	// several (measured: about a quarter less CPU per command run).
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	dir := executableDir()
	link, err := agentLink()
	if err != nil {
		fmt.Fprintf(os.Stderr, "runner front: the agent's socket is out of reach (%v): on stdio\n", err)
	}
	// The runner's Node starts with the identity the agent gave: it takes its own.
	// No memory reducer: its timer runs out while a sandbox is frozen (a pool member, an idle
	// session), and its full collection then takes the session's CPU right after the thaw
	// (60 ms on the dev machine). The heap still shrinks at ordinary collections, and a pool
	// member collects once before it is frozen (the settled ping).
	node := exec.Command("node", "--no-memory-reducer", filepath.Join(dir, "main.js"))
	// It knows the front by its parent's command line (front-parent.ts: frontParent).
	node.Env = os.Environ()
	node.Stderr = os.Stderr
	toNode, err := node.StdinPipe()
	must(err)
	fromNode, err := node.StdoutPipe()
	must(err)
	must(node.Start())
	becomeRunner()

	var input io.Reader = os.Stdin
	var output io.Writer = os.Stdout
	if link != nil {
		input, output = link, link
		// The agent ends the exec stream and the socket together: either ends the front.
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			link.Close()
		}()
	}
	out := NewOutput(output)
	front, serving := newFront(out, dir, forwardTo(toNode))
	front.nodePid = node.Process.Pid
	// The Node's first answer, to the front's own ping: it has started its helpers (its
	// spawner, esbuild, the zygote) and taken its identity.
	nodeReady := make(chan struct{})
	forwardTo(toNode)(readyPing)
	nodeDone := make(chan struct{})
	go func() {
		relayLines(fromNode, out, nodeReady)
		close(nodeDone)
	}()
	go func() {
		// Requests wait for the Node: a sandbox whose first run the front served at once would
		// differ, while its Node starts, from one whose runner the agent warmed up.
		select {
		case <-nodeReady:
		case <-nodeDone:
		}
		readRequests(input, front, serving)
		// The agent went away: foreground runs stop; background processes live on.
		front.CancelRuns()
		toNode.Close()
		front.stop()
	}()
	<-nodeDone
	_ = node.Wait()
	out.Close()
	code := 0
	if node.ProcessState != nil && !node.ProcessState.Success() {
		code = 1
	}
	os.Exit(code)
}

// newFront makes the front, its spawner and (where the spawner is installed) its armed
// shells; serving is false without the spawner (not a sandbox image): every request is then
// the runner's Node's, which refuses command runs (ADR 47), and no run starts.
func newFront(out *Output, dir string, forward func(line []byte)) (*Front, bool) {
	_, splits := os.Stat(userCPUProcs)
	cpuSplit := splits == nil
	cpuProcs := ""
	if cpuSplit {
		cpuProcs = userCPUProcs
	}
	spawner := NewSpawner(filepath.Join(dir, "run-spawner"), cpuProcs, runUIDArgument())
	front := &Front{
		out:       out,
		spawner:   spawner,
		clock:     &ChangeClock{dir: defaultRunnerDir},
		workspace: defaultWorkspace,
		cpuSplit:  cpuSplit,
		baseEnv:   os.Environ(),
		runs:      map[float64]*commandRun{},
		inputs:    map[float64]*inputRequest{},
		watches:   map[float64]*fileWatch{},
		forward:   forward,
		startHold: defaultStartHold,
	}
	serving := spawner.Available()
	if serving {
		_ = spawner.Prepare()
		front.shells = NewShells(front)
		front.shells.Fill()
	}
	return front, serving
}

// stop ends the armed shells and the spawner (which hangs up the runs still under way).
func (f *Front) stop() {
	if f.shells != nil {
		f.shells.Close()
	}
	f.spawner.Close()
}

// readRequests hands each request line to the front (or, without the helper, to Node).
func readRequests(input io.Reader, front *Front, serving bool) {
	reader := bufio.NewReaderSize(input, 64*1024)
	for {
		line, err := reader.ReadBytes('\n')
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			if serving {
				front.Handle(trimmed)
			} else {
				front.forward(trimmed)
			}
		}
		if err != nil {
			return
		}
	}
}

// The front's own ping to the Node (no request of the agent's has a negative id) and the
// beginning of its answer.
var (
	readyPing = []byte(`{"id":-1,"op":"ping"}`)
	readyPong = []byte(`{"id":-1,"ev":"pong"`)
)

// relayLines passes Node's events on, at the pace the agent reads them; the answer to the
// front's own ping closes ready instead.
func relayLines(from io.Reader, out *Output, ready chan struct{}) {
	reader := bufio.NewReaderSize(from, 64*1024)
	for {
		line, err := reader.ReadBytes('\n')
		if ready != nil && bytes.HasPrefix(line, readyPong) {
			close(ready)
			ready = nil
			continue
		}
		if len(line) > 1 {
			if !out.EmitLine(bytes.TrimRight(line, "\n")) {
				room := make(chan struct{})
				out.OnDrain(func() { close(room) })
				<-room
			}
		}
		if err != nil {
			return
		}
	}
}

func forwardTo(w io.Writer) func(line []byte) {
	return func(line []byte) {
		// Node reads its requests as they come; a failed write means it is gone, which ends
		// the front.
		_, _ = w.Write(append(line, '\n'))
	}
}

// agentLink connects to the agent's socket when the agent asked for it, and says the token
// first; both variables leave the environment (no run inherits them). Nil without a link.
func agentLink() (net.Conn, error) {
	path, token := os.Getenv(linkSocketEnv), os.Getenv(linkTokenEnv)
	os.Unsetenv(linkSocketEnv)
	os.Unsetenv(linkTokenEnv)
	if path == "" || token == "" {
		return nil, nil
	}
	conn, err := net.Dial("unix", path)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Write([]byte(token + "\n")); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// becomeRunner takes the runner's identity (identity.ts): root as the real and saved uid, so
// that no process of the user's can signal, trace or read it, and the user's as the effective
// one, so that the files it makes are the user's and the runs it signals within its reach.
func becomeRunner() {
	if syscall.Getuid() != 0 || syscall.Getgid() != sandboxGID {
		return // not started as a sandbox's runner (a test's process)
	}
	must(syscall.Setgroups([]int{sandboxGID}))
	must(syscall.Setresuid(-1, sandboxUID, -1))
	// Its effective uid changed: out of the user's reach again (dumpable is reset).
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0)
}

// runUIDArgument is the uid runs take, as the helper's argument: the user's under a root front.
func runUIDArgument() string {
	if syscall.Getuid() == 0 && syscall.Geteuid() == sandboxUID {
		return fmt.Sprint(sandboxUID)
	}
	return ""
}

func executableDir() string {
	self, err := os.Executable()
	must(err)
	return filepath.Dir(self)
}

func must(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "runner front failed: %v\n", err)
		os.Exit(1)
	}
}
