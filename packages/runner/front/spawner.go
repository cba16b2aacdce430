package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// The front's side of native/spawner.c, the helper that starts runs by vfork + exec and relays
// their output, exit and usage (its frames are described there). The front starts its own
// helper, beside the one of the runner's Node.

const spawnHeaderBytes = 9 // u32 length, u8 type, u32 run id

// errSpawnerGone is why a run fails whose helper died (a kill from outside the sandbox user).
var errSpawnerGone = errors.New("The sandbox's process starter stopped during the run")

// SpawnHandler receives one run's events, in order, on the helper's reader goroutine: it must
// not block.
type SpawnHandler interface {
	// Output of the run: stream 0 is stdout, 1 stderr.
	Output(stream int, data []byte)
	// A pipe of the run closed.
	PipeClosed(stream int)
	// The run's process exited: its wait status, CPU time and peak memory.
	Exited(exit SpawnExit)
	// The helper died: nothing more comes for the run.
	Lost()
}

// SpawnExit is how a run's process ended and what it used (its own and its reaped children's).
type SpawnExit struct {
	Status      uint32
	CPUTimeUs   uint64
	MaxRssBytes uint64
}

// ExitCode is the run's exit code: 128 plus the signal's number for a signal.
func (e SpawnExit) ExitCode() int {
	signal := int(e.Status & 0x7f)
	if signal == 0 {
		return int(e.Status>>8) & 0xff
	}
	return 128 + signal
}

// SpawnOptions is how one run starts.
type SpawnOptions struct {
	Cwd           string
	Argv          []string
	Env           []string
	EnterCPUGroup bool
	Stdin         bool
	// An armed shell (shells.go): its command comes later, by Go, on its fd 3.
	Armed bool
}

type spawnedRun struct {
	handler SpawnHandler
	closed  int
	exited  bool
	// Input frames sent, each waiting for its 'a'.
	inputs []chan struct{}
}

type pendingStart struct {
	result chan int32
}

// Spawner is the helper, started on first use and again after it died.
type Spawner struct {
	binary   string
	cpuProcs string
	uidArg   string

	mu       sync.Mutex
	helper   *helperProcess
	nextID   uint32
	starting map[uint32]*pendingStart
	runs     map[uint32]*spawnedRun
	// Armed shells' messages sent, each waiting for its 'g'.
	going map[uint32]chan int32
}

type helperProcess struct {
	cmd    *exec.Cmd
	frames *frameWriter
}

// NewSpawner makes the helper's client; the helper starts on first use.
func NewSpawner(binary, cpuProcs, uidArg string) *Spawner {
	return &Spawner{
		binary:   binary,
		cpuProcs: cpuProcs,
		uidArg:   uidArg,
		nextID:   1,
		starting: map[uint32]*pendingStart{},
		runs:     map[uint32]*spawnedRun{},
		going:    map[uint32]chan int32{},
	}
}

// Available says whether the helper is installed here.
func (s *Spawner) Available() bool {
	_, err := os.Stat(s.binary)
	return err == nil
}

// Prepare starts the helper now, so that the first run does not wait for it.
func (s *Spawner) Prepare() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.ensureHelper()
	return err
}

// Spawn starts a run; it returns the run's id (for its flow and input) and its pid.
func (s *Spawner) Spawn(options SpawnOptions, handler SpawnHandler) (uint32, int, error) {
	request, err := startRequest(options)
	if err != nil {
		return 0, 0, err
	}
	s.mu.Lock()
	helper, err := s.ensureHelper()
	if err != nil {
		s.mu.Unlock()
		return 0, 0, err
	}
	id := s.nextID
	s.nextID++
	// Known before the start is sent: its output may come in the same read as its pid.
	run := &spawnedRun{handler: handler}
	start := &pendingStart{result: make(chan int32, 1)}
	s.starting[id] = start
	s.runs[id] = run
	helper.frames.send('S', id, request)
	s.mu.Unlock()
	result := <-start.result
	if result <= 0 {
		s.mu.Lock()
		delete(s.runs, id)
		s.mu.Unlock()
		if result == 0 {
			return 0, 0, errSpawnerGone
		}
		return 0, 0, fmt.Errorf("Could not start the process (errno %d)", -result)
	}
	return id, int(result), nil
}

// Go hands armed shell id its message; nil once written, else why it was not.
func (s *Spawner) Go(id uint32, message []byte) error {
	s.mu.Lock()
	if s.helper == nil || s.runs[id] == nil || s.going[id] != nil {
		s.mu.Unlock()
		return errSpawnerGone
	}
	result := make(chan int32, 1)
	s.going[id] = result
	s.helper.frames.send('G', id, message)
	s.mu.Unlock()
	if errno := <-result; errno != 0 {
		return fmt.Errorf("The armed shell could not take its command (errno %d)", -errno)
	}
	return nil
}

// Hold stops (true) or starts again (false) reading run id's pipes.
func (s *Spawner) Hold(id uint32, held bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.helper == nil || s.runs[id] == nil {
		return
	}
	if held {
		s.helper.frames.send('P', id, nil)
	} else {
		s.helper.frames.send('R', id, nil)
	}
}

// maxInputFrame is the largest input frame: a larger write goes as several, in order.
const maxInputFrame = 64 * 1024

// Input sends bytes for run id's stdin (none: closes it); the channel closes once the run
// took them (or can take no more).
func (s *Spawner) Input(id uint32, data []byte) <-chan struct{} {
	taken := make(chan struct{})
	s.mu.Lock()
	defer s.mu.Unlock()
	run := s.runs[id]
	if s.helper == nil || run == nil {
		close(taken)
		return taken
	}
	run.inputs = append(run.inputs, taken)
	s.helper.frames.send('I', id, data)
	return taken
}

// Close ends the helper: it hangs up the runs still under way.
func (s *Spawner) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.helper != nil {
		s.helper.frames.close()
		s.helper = nil
	}
}

// Pid is the helper's pid, if it runs.
func (s *Spawner) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.helper == nil {
		return 0
	}
	return s.helper.cmd.Process.Pid
}

func (s *Spawner) ensureHelper() (*helperProcess, error) {
	if s.helper != nil {
		return s.helper, nil
	}
	cmd := exec.Command(s.binary, s.cpuProcs, s.uidArg)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	helper := &helperProcess{cmd: cmd, frames: newFrameWriter(stdin)}
	s.helper = helper
	go s.read(helper, stdout)
	return helper, nil
}

// read relays the helper's events until it dies, then fails what it had under way.
func (s *Spawner) read(helper *helperProcess, stdout io.Reader) {
	reader := bufio.NewReaderSize(stdout, 256*1024)
	header := make([]byte, spawnHeaderBytes)
	for {
		if _, err := io.ReadFull(reader, header); err != nil {
			break
		}
		length := binary.LittleEndian.Uint32(header)
		if length < 5 {
			break
		}
		payload := make([]byte, length-5)
		if _, err := io.ReadFull(reader, payload); err != nil {
			break
		}
		s.handle(header[4], binary.LittleEndian.Uint32(header[5:]), payload)
	}
	helper.frames.close()
	_ = helper.cmd.Wait()
	s.gone(helper)
}

func (s *Spawner) handle(kind byte, id uint32, payload []byte) {
	s.mu.Lock()
	if kind == 's' {
		start := s.starting[id]
		delete(s.starting, id)
		s.mu.Unlock()
		if start != nil && len(payload) >= 4 {
			result := int32(binary.LittleEndian.Uint32(payload))
			if result == 0 {
				result = -1
			}
			start.result <- result
		}
		return
	}
	if kind == 'g' {
		result := s.going[id]
		delete(s.going, id)
		s.mu.Unlock()
		if result != nil && len(payload) >= 4 {
			result <- int32(binary.LittleEndian.Uint32(payload))
		}
		return
	}
	run := s.runs[id]
	if run == nil {
		s.mu.Unlock()
		return
	}
	var taken chan struct{}
	switch kind {
	case 'c':
		run.closed++
	case 'x':
		run.exited = true
	case 'a':
		if len(run.inputs) > 0 {
			taken, run.inputs = run.inputs[0], run.inputs[1:]
		}
	}
	// The helper forgets a run at the same point: its id is not reused anyway.
	var left []chan struct{}
	if run.exited && run.closed == 2 {
		delete(s.runs, id)
		left, run.inputs = run.inputs, nil
	}
	s.mu.Unlock()
	if taken != nil {
		close(taken)
	}
	for _, t := range left {
		close(t)
	}
	switch kind {
	case 'o', 'e':
		stream := 0
		if kind == 'e' {
			stream = 1
		}
		run.handler.Output(stream, payload)
	case 'c':
		stream := 0
		if len(payload) > 0 && payload[0] == 2 {
			stream = 1
		}
		run.handler.PipeClosed(stream)
	case 'x':
		if len(payload) >= 20 {
			run.handler.Exited(SpawnExit{
				Status:      binary.LittleEndian.Uint32(payload),
				CPUTimeUs:   binary.LittleEndian.Uint64(payload[4:]),
				MaxRssBytes: binary.LittleEndian.Uint64(payload[12:]) * 1024,
			})
		}
	}
}

// gone fails every start and run of a helper that died.
func (s *Spawner) gone(helper *helperProcess) {
	s.mu.Lock()
	if s.helper == helper {
		s.helper = nil
	}
	starting := s.starting
	runs := s.runs
	going := s.going
	s.starting = map[uint32]*pendingStart{}
	s.runs = map[uint32]*spawnedRun{}
	s.going = map[uint32]chan int32{}
	s.mu.Unlock()
	for _, start := range starting {
		start.result <- 0
	}
	for _, result := range going {
		result <- -int32(syscall.ESRCH)
	}
	for _, run := range runs {
		for _, taken := range run.inputs {
			close(taken)
		}
		run.handler.Lost()
	}
}
