package main

// Armed shells (ADR 48): bashes started ahead of their command, each blocked reading it from
// its fd 3, so that a command run takes one instead of waiting for a start-up. Each is
// started as a run is (the user's identity, the CPU group, the base environment with its own
// run mark, stdin a pipe, the workspace as its working directory); a run that takes one sends
// its command through the spawner ('G'), and the mark's id becomes the run's.

import (
	"encoding/binary"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

const (
	// Shells kept armed: one for the next run, and a spare for the one after, which may
	// come before the first is replaced.
	armedShellCount = 2
	// The largest message a shell takes (the spawner writes it at once: PIPE_BUF).
	maxShellMessage = 4096
)

// shellScript is what an armed shell runs: it reads its message (stdin flag, mode, command)
// with `read -u` (a redirection would keep a saved copy of stdin open), closes its fd 3,
// drops its one positional parameter (the title's room, see titleRoom), takes /dev/null as
// stdin unless the run takes input, and runs the command as `bash -c`
// would, all on line 1 (LINENO). A command that does not parse as a
// function's body is handed to a real `bash -c` (exec: same process, same messages); a
// plain external command (mode x) is exec'd, as `bash -c` execs a lone simple command;
// anything else is eval'd, after `$_` is set back to its start-up value (%s).
const shellScript = `IFS= read -r -u 3 -N 2 __sandbox_shell || exit 0; ` +
	`IFS= read -r -u 3 -N 4096 BASH_EXECUTION_STRING; exec 3<&-; shift; ` +
	`[ "${__sandbox_shell::1}" = i ] || exec 0</dev/null; ` +
	`if ! eval "__sandbox_shell() { $BASH_EXECUTION_STRING"$'\n}' 2>/dev/null; then ` +
	`unset -v __sandbox_shell; exec /bin/bash -c "$BASH_EXECUTION_STRING"; fi; ` +
	`unset -f __sandbox_shell; if [ "${__sandbox_shell:1}" = x ]; then ` +
	`__sandbox_word=${BASH_EXECUTION_STRING%%[ $'\t']*}; ` +
	`if [[ $__sandbox_word == */* ]]; then [[ -f $__sandbox_word && -x $__sandbox_word ]]; ` +
	`else hash -- "$__sandbox_word" 2>/dev/null && [[ -x ${BASH_CMDS[$__sandbox_word]} ]]; fi && ` +
	`{ unset -v __sandbox_shell __sandbox_word; exec $BASH_EXECUTION_STRING; }; fi; ` +
	`unset -v __sandbox_shell __sandbox_word; : %s; eval "$BASH_EXECUTION_STRING"`

// titleRoom is an armed shell's last argument, after the script and its `$0`: the spawner
// shows a taken shell as `/bin/bash -c COMMAND` in its argument area, which must hold the
// longest command. It is the shell's `$1` until the script shifts it away; in the script
// itself (a comment's padding) bash would read it at every start, a character at a time.
var titleRoom = strings.Repeat(" ", maxShellMessage+16)

// plainCommand is a lone simple command of plain words (no quoting, expansion, redirection,
// glob or operator), whose first word is no assignment, option, builtin or keyword.
var plainCommand = regexp.MustCompile(`^[A-Za-z0-9_./:@%+,=-]+([ \t]+[A-Za-z0-9_./:@%+,=-]+)*$`)

var shellWords = map[string]bool{}

func init() {
	for _, word := range strings.Fields(". : [ alias bg bind break builtin caller cd command " +
		"compgen complete compopt continue declare dirs disown echo enable eval exec exit " +
		"export false fc fg getopts hash help history jobs kill let local logout mapfile " +
		"popd printf pushd pwd read readarray readonly return set shift shopt source suspend " +
		"test times trap true type typeset ulimit umask unalias unset wait if then else elif " +
		"fi case esac for select while until do done in function time coproc") {
		shellWords[word] = true
	}
}

// execsDirectly says whether `bash -c command` execs the command in place of the shell.
func execsDirectly(command string) bool {
	if !plainCommand.MatchString(command) {
		return false
	}
	first := strings.FieldsFunc(command, func(r rune) bool { return r == ' ' || r == '\t' })[0]
	return !shellWords[first] && !strings.ContainsAny(first, "=%") && first[0] != '-'
}

// shellMessage is what an armed shell reads for a run; false if it cannot take the command.
func shellMessage(command string, stdin bool) ([]byte, bool) {
	if len(command)+2 > maxShellMessage || strings.IndexByte(command, 0) >= 0 {
		return nil, false
	}
	message := make([]byte, 2, len(command)+2)
	message[0], message[1] = 'n', 'e'
	if stdin {
		message[0] = 'i'
	}
	if execsDirectly(command) {
		message[1] = 'x'
	}
	return append(message, command...), true
}

// startValue is `$_` when a `bash -c` of the base environment starts: its `_`, or argv[0].
func startValue(env []string) string {
	value := "/bin/bash"
	for _, entry := range env {
		if strings.HasPrefix(entry, "_=") {
			value = entry[2:]
		}
	}
	return "'" + strings.ReplaceAll(value, "'", `'\''`) + "'"
}

// armedShell is one shell, armed or taken: its events wait for the run that takes it.
type armedShell struct {
	spawnID uint32
	pid     int
	runID   string
	pool    *Shells
	// Its working directory, as it was before the shell started in it.
	dir os.FileInfo
	// Its argument area (0 if unknown), where the spawner puts its title.
	argStart, argEnd uint64

	mu     sync.Mutex
	run    SpawnHandler
	early  []func(SpawnHandler)
	exited bool
}

func (a *armedShell) deliver(event func(SpawnHandler)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run == nil {
		a.early = append(a.early, event)
		return
	}
	event(a.run)
}

func (a *armedShell) Output(stream int, data []byte) {
	a.deliver(func(h SpawnHandler) { h.Output(stream, data) })
}

func (a *armedShell) PipeClosed(stream int) {
	a.deliver(func(h SpawnHandler) { h.PipeClosed(stream) })
}

func (a *armedShell) Exited(exit SpawnExit) {
	a.mu.Lock()
	a.exited = true
	a.mu.Unlock()
	a.pool.drop(a)
	a.deliver(func(h SpawnHandler) { h.Exited(exit) })
}

func (a *armedShell) Lost() {
	a.mu.Lock()
	a.exited = true
	a.mu.Unlock()
	a.pool.drop(a)
	a.deliver(func(h SpawnHandler) { h.Lost() })
}

// attach hands the shell's events to the run, those that came before it first.
func (a *armedShell) attach(run SpawnHandler) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.run = run
	for _, event := range a.early {
		event(run)
	}
	a.early = nil
}

// Shells keeps armedShellCount shells armed for the front's runs.
type Shells struct {
	front  *Front
	script string

	mu     sync.Mutex
	ready  []*armedShell
	arming int
	closed bool
}

func NewShells(front *Front) *Shells {
	script := strings.Replace(shellScript, "%s", startValue(front.baseEnv), 1)
	return &Shells{front: front, script: script}
}

// Fill arms shells until armedShellCount are armed or arming, each off the caller's path.
func (s *Shells) Fill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.closed && len(s.ready)+s.arming < armedShellCount {
		s.arming++
		go s.arm()
	}
}

func (s *Shells) arm() {
	shell := &armedShell{pool: s}
	// The directory it will start in, as it is now: a workspace made again after this is
	// another directory, and the shell is not taken (see take).
	shell.dir, _ = os.Stat(s.front.workspace)
	runID, err := randomHex(8)
	if err == nil {
		shell.runID = runID
		shell.spawnID, shell.pid, err = s.front.spawner.Spawn(SpawnOptions{
			Cwd:           s.front.workspace,
			Argv:          []string{"/bin/bash", "-c", s.script, "/bin/bash", titleRoom},
			Env:           s.front.runEnv(nil, runID),
			EnterCPUGroup: s.front.cpuSplit,
			Stdin:         true,
			Armed:         true,
		}, shell)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.arming--
	shell.mu.Lock()
	alive := err == nil && !shell.exited
	shell.mu.Unlock()
	// A failed start is not retried until the next run ends (the session may be out of pids).
	if alive && !s.closed {
		s.ready = append(s.ready, shell)
	}
}

// take is the oldest armed shell still alive, if any, whose working directory is dir (the
// workspace, as the run found it).
func (s *Shells) take(dir os.FileInfo) *armedShell {
	s.mu.Lock()
	if len(s.ready) == 0 {
		s.mu.Unlock()
		return nil
	}
	shell := s.ready[0]
	s.ready = s.ready[1:]
	s.mu.Unlock()
	// A shell the user signalled (`kill -9 -1`, `pkill bash`) may not have died yet: a fatal
	// signal shows as a SIGKILL pending for it. One the user stopped may hold a signal until
	// it is continued (a stopped process takes none): it is not taken. A signal for a shell
	// asleep in its read wakes it: one that is not asleep (still starting, or woken) is read
	// for its group's pending signals too. The workspace may have been made again since the
	// shell started in it.
	state, ok := readProcStat(shell.pid)
	if !ok || state.pending != 0 || strings.IndexByte("TtZXx", state.state) >= 0 ||
		(state.state != 'S' && signalPending(shell.pid)) ||
		shell.dir == nil || !os.SameFile(shell.dir, dir) {
		s.discard(shell)
		return nil
	}
	// Its title is written only once it waits in its read: bash reads its arguments as it
	// starts (a shell taken that early keeps the script as its title).
	if state.state == 'S' {
		shell.argStart, shell.argEnd = state.argStart, state.argEnd
	}
	return shell
}

// signalPending says whether a signal waits for pid or its group (or pid is gone).
func signalPending(pid int) bool {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "SigPnd:") || strings.HasPrefix(line, "ShdPnd:") {
			if strings.Trim(line[7:], "\t 0") != "" {
				return true
			}
		}
	}
	return false
}

// procStat is what the front reads of a process in its /proc/PID/stat.
type procStat struct {
	// Its state: R running, S asleep (an armed shell past its start-up, blocked in its read),
	// T stopped, Z a zombie...
	state byte
	// The signals pending for it alone (not its group's): a fatal one is a SIGKILL here.
	pending uint64
	// Where its arguments are in its memory (arg_start, arg_end).
	argStart, argEnd uint64
}

// readProcStat reads pid's /proc/PID/stat in one read, with no more system calls than an
// open, a read and a close; false if pid is gone.
func readProcStat(pid int) (procStat, bool) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return procStat{}, false
	}
	var buffer [2048]byte
	n, err := syscall.Read(fd, buffer[:])
	syscall.Close(fd)
	if err != nil || n <= 0 {
		return procStat{}, false
	}
	line := string(buffer[:n])
	close := strings.LastIndexByte(line, ')')
	if close < 0 {
		return procStat{}, false
	}
	// Fields from the state (the third) on: pending signals are the 31st, the arguments'
	// area the 48th and 49th.
	fields := strings.Fields(line[close+1:])
	if len(fields) < 47 || len(fields[0]) != 1 {
		return procStat{}, false
	}
	stat := procStat{state: fields[0][0]}
	stat.pending, _ = strconv.ParseUint(fields[28], 10, 64)
	stat.argStart, _ = strconv.ParseUint(fields[45], 10, 64)
	stat.argEnd, _ = strconv.ParseUint(fields[46], 10, 64)
	if stat.argEnd == 0 {
		stat.argStart = 0
	}
	return stat, true
}

// goMessage is a 'G' frame's payload: the shell's argument area, then its message.
func (a *armedShell) goMessage(message []byte) []byte {
	payload := make([]byte, 16, 16+len(message))
	binary.LittleEndian.PutUint64(payload, a.argStart)
	binary.LittleEndian.PutUint64(payload[8:], a.argEnd)
	return append(payload, message...)
}

// discard ends a shell no run takes.
func (s *Shells) discard(shell *armedShell) {
	shell.attach(discarded{})
	_ = s.front.spawner.Go(shell.spawnID, (&armedShell{}).goMessage([]byte("neexit 0")))
}

func (s *Shells) drop(shell *armedShell) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, ready := range s.ready {
		if ready == shell {
			s.ready = append(s.ready[:i:i], s.ready[i+1:]...)
			return
		}
	}
}

// Pids are the armed shells' processes (no run's: not the user's activity).
func (s *Shells) Pids() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	pids := make([]int, 0, len(s.ready))
	for _, shell := range s.ready {
		pids = append(pids, shell.pid)
	}
	return pids
}

// Close stops arming; the armed shells end with the spawner.
func (s *Shells) Close() {
	s.mu.Lock()
	s.closed = true
	s.ready = nil
	s.mu.Unlock()
}

// discarded takes the events of a shell no run took.
type discarded struct{}

func (discarded) Output(int, []byte) {}
func (discarded) PipeClosed(int)     {}
func (discarded) Exited(SpawnExit)   {}
func (discarded) Lost()              {}
