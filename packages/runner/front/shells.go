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
// takes /dev/null as stdin unless the run takes input, and runs the command as `bash -c`
// would, all on line 1 (LINENO). A command that does not parse as a
// function's body is handed to a real `bash -c` (exec: same process, same messages); a
// plain external command (mode x) is exec'd, as `bash -c` execs a lone simple command;
// anything else is eval'd, after `$_` is set back to its start-up value (%s).
const shellScript = `IFS= read -r -u 3 -N 2 __sandbox_shell || exit 0; ` +
	`IFS= read -r -u 3 -N 4096 BASH_EXECUTION_STRING; exec 3<&-; ` +
	`[ "${__sandbox_shell::1}" = i ] || exec 0</dev/null; ` +
	`if ! eval "__sandbox_shell() { $BASH_EXECUTION_STRING"$'\n}' 2>/dev/null; then ` +
	`unset -v __sandbox_shell; exec /bin/bash -c "$BASH_EXECUTION_STRING"; fi; ` +
	`unset -f __sandbox_shell; if [ "${__sandbox_shell:1}" = x ]; then ` +
	`__sandbox_word=${BASH_EXECUTION_STRING%%[ $'\t']*}; ` +
	`if [[ $__sandbox_word == */* ]]; then [[ -f $__sandbox_word && -x $__sandbox_word ]]; ` +
	`else hash -- "$__sandbox_word" 2>/dev/null && [[ -x ${BASH_CMDS[$__sandbox_word]} ]]; fi && ` +
	`{ unset -v __sandbox_shell __sandbox_word; exec $BASH_EXECUTION_STRING; }; fi; ` +
	`unset -v __sandbox_shell __sandbox_word; : %s; eval "$BASH_EXECUTION_STRING" #`

// titleRoom pads the script: the spawner shows a taken shell as `/bin/bash -c COMMAND` in
// the script's place (its argument area), which must hold the longest command.
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
	script := strings.Replace(shellScript, "%s", startValue(front.baseEnv), 1) + titleRoom
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
	runID, err := randomHex(8)
	if err == nil {
		shell.runID = runID
		shell.spawnID, shell.pid, err = s.front.spawner.Spawn(SpawnOptions{
			Cwd:           s.front.workspace,
			Argv:          []string{"/bin/bash", "-c", s.script},
			Env:           s.front.runEnv(nil, runID),
			EnterCPUGroup: s.front.cpuSplit,
			Stdin:         true,
			Armed:         true,
		}, shell)
	}
	if err == nil {
		shell.argStart, shell.argEnd = argumentArea(shell.pid)
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

// take is the oldest armed shell still alive, if any, still working in cwd (the workspace).
func (s *Shells) take(cwd string) *armedShell {
	s.mu.Lock()
	if len(s.ready) == 0 {
		s.mu.Unlock()
		return nil
	}
	shell := s.ready[0]
	s.ready = s.ready[1:]
	s.mu.Unlock()
	// A shell the user signalled (`kill -9 -1`, `pkill bash`) may not have died yet; the
	// workspace may have been made again.
	there, err1 := os.Stat("/proc/" + strconv.Itoa(shell.pid) + "/cwd")
	wanted, err2 := os.Stat(cwd)
	signalled, asleep := inspect(shell.pid)
	if err1 != nil || err2 != nil || !os.SameFile(there, wanted) || signalled {
		s.discard(shell)
		return nil
	}
	// Its title is written only once it waits in its read: bash reads its arguments as it
	// starts (a shell taken that early keeps the script as its title).
	if !asleep {
		shell.argStart, shell.argEnd = 0, 0
	} else if shell.argEnd == 0 {
		// Read as its spawn returned, before its exec had set it all up.
		shell.argStart, shell.argEnd = argumentArea(shell.pid)
	}
	return shell
}

// inspect reads pid's status: whether a signal waits for it (or it is gone: an armed shell
// takes none), and whether it sleeps (blocked in its read, past its start-up).
func inspect(pid int) (signalled, asleep bool) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true, false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "State:") {
			asleep = strings.HasPrefix(strings.TrimSpace(line[6:]), "S")
		}
		if strings.HasPrefix(line, "SigPnd:") || strings.HasPrefix(line, "ShdPnd:") {
			if strings.Trim(line[7:], "\t 0") != "" {
				signalled = true
			}
		}
	}
	return signalled, asleep
}

// argumentArea is where pid's arguments are in its memory (/proc/PID/stat's arg_start and
// arg_end); zeros if unknown (or not yet known: a vfork returns before the exec is done).
func argumentArea(pid int) (uint64, uint64) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	close := strings.LastIndexByte(string(stat), ')')
	if err != nil || close < 0 {
		return 0, 0
	}
	fields := strings.Fields(string(stat[close+1:]))
	if len(fields) < 47 {
		return 0, 0
	}
	start, _ := strconv.ParseUint(fields[45], 10, 64)
	end, _ := strconv.ParseUint(fields[46], 10, 64)
	if end == 0 {
		return 0, 0
	}
	return start, end
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
