// Package sandbox runs untrusted work (scripts, parsers of uploaded files)
// in a child process under operating-system limits, so that one hostile
// input cannot hang or exhaust the server: a goroutine stuck in a parser or
// in one long built-in call cannot be cancelled, but a process can be
// killed.
//
// A job kind is a Handler registered under a name, usually from the
// package that owns the work (internal/jsrun, search/extract):
//
//	var jsJob = sandbox.Register("jsrun", runChild)
//	...
//	out, err := sandbox.Run(ctx, "jsrun", input, &sandbox.Limits{Timeout: 5 * time.Second})
//
// Run re-executes the current binary (os.Executable) with an environment
// that names the job; Main, called first thing in main and in the TestMain
// of every test package whose tests reach a sandboxed job, sees it, runs
// the handler on the input read from stdin, writes the result to stdout
// and exits. Main must run after every package's init, which registers
// the handlers: that is why it is an explicit call (as moby's reexec.Init)
// and not this package's own init. Run refuses to start a child when Main
// was not called, since the child would then run the whole program again.
//
// The child, before it reads the job, limits itself: address space
// (RLIMIT_AS: its size at start plus Limits.MaxMemory plus AddressSlack),
// Go heap and resident memory (checked every 5 ms: the heap catches an
// interpreter growing a little at a time inside one call, the resident
// set is the backstop under the race detector, which needs terabytes of
// address space), CPU time
// (RLIMIT_CPU), open files (RLIMIT_NOFILE), file size 0 (RLIMIT_FSIZE: it
// cannot write a file), no core dumps and no new privileges. It starts
// with an empty environment but for its own settings (GOMEMLIMIT,
// GOMAXPROCS), in "/", in its own process group and, where the kernel
// permits (root or CAP_SYS_ADMIN), in a new, empty network namespace: it
// cannot reach the network. Where it does not, the child still runs and
// Isolation reports the missing layer. The parent kills the group at the
// deadline or when ctx ends, and kills the child if the server dies
// (Pdeathsig).
//
// Errors: ErrTimeout (the deadline, or the CPU limit), ErrMemory (a memory
// limit), ctx's error, *JobError (the handler's own error) and plain
// errors for a child that crashed.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Handler does one job in the child: input is what Run was given, the
// returned bytes are what Run returns. ctx ends at the job's deadline. An
// error is returned to the parent as a *JobError with its text.
type Handler func(ctx context.Context, input []byte) ([]byte, error)

// Defaults of Limits.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultMaxMemory      = 256 << 20
	DefaultMaxOutputBytes = 64 << 20
	// AddressSlack is the address space the child may reserve beyond
	// its size at start (which already holds the runtime's first heap
	// arena and stacks) and MaxMemory. Measured with goja under a 64 MiB
	// cap: with no slack, scripts that fit still finish and the limit
	// fires only past the cap, but sometimes before the in-runtime heap
	// watch can give its cleaner error; one more heap arena (64 MiB)
	// lets the watch speak first.
	AddressSlack = 64 << 20
	// RSSSlack is the resident memory the child may hold beyond its
	// size when the job began and MaxMemory.
	RSSSlack = 64 << 20
	// HeapSlack is the Go heap the child may hold beyond MaxMemory:
	// the runtime's and the handler's own state.
	HeapSlack = 16 << 20
	// maxFiles is RLIMIT_NOFILE in the child: stdin, stdout, stderr, the
	// runtime's epoll and pipe, and a pipe set for a helper program the
	// job may start (tesseract).
	maxFiles = 32
)

// Sentinel errors; test for them with errors.Is.
var (
	// ErrTimeout: the job ran past its deadline or its CPU time.
	ErrTimeout = errors.New("sandbox: time limit exceeded")
	// ErrMemory: the job used more memory than its cap.
	ErrMemory = errors.New("sandbox: memory cap exceeded")
	// ErrNoMain: the program did not call Main.
	ErrNoMain = errors.New("sandbox: the program did not call sandbox.Main first in main (or in TestMain)")
)

// JobError is the error the handler returned in the child.
type JobError struct {
	Kind    string
	Message string
}

func (e *JobError) Error() string { return e.Kind + ": " + e.Message }

// Limits bound one job. The zero value means the defaults.
type Limits struct {
	// Timeout is the wall-clock deadline of the job, the child's start
	// included. Default DefaultTimeout. The CPU limit is the same number
	// of seconds, rounded up, plus one.
	Timeout time.Duration
	// MaxMemory is the memory the job may use beyond what the child holds
	// when it starts, in bytes. Default DefaultMaxMemory.
	MaxMemory int64
	// MaxOutputBytes bounds what the handler may return. Default
	// DefaultMaxOutputBytes.
	MaxOutputBytes int64
}

func orDefault[T int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// handlers holds the registered job kinds.
var (
	// handlersMu guards handlers.
	handlersMu sync.Mutex
	handlers   = map[string]Handler{}

	mainCalled atomic.Bool
)

// Register makes h the handler of kind and returns kind, so that a package
// can register from a variable's initializer. It panics when kind is taken:
// two packages claiming a kind is a programming error.
func Register(kind string, h Handler) string {
	handlersMu.Lock()
	defer handlersMu.Unlock()
	if _, ok := handlers[kind]; ok {
		panic("sandbox: job kind " + kind + " registered twice")
	}
	handlers[kind] = h
	return kind
}

func handler(kind string) Handler {
	handlersMu.Lock()
	defer handlersMu.Unlock()
	return handlers[kind]
}

// Environment of the child.
const (
	jobEnv    = "AGENTCRAFT_SANDBOX_JOB"    // the job kind
	limitsEnv = "AGENTCRAFT_SANDBOX_LIMITS" // child limits, see childLimits
)

// Main runs the job and exits when the process is a sandbox child; in any
// other process it returns at once. Call it first in main, and in the
// TestMain of test packages whose tests reach a sandboxed job.
func Main() {
	kind := os.Getenv(jobEnv)
	if kind == "" {
		mainCalled.Store(true)
		return
	}
	os.Exit(child(kind))
}

// Status bytes that open the child's stdout.
const (
	statusOK  = 'o'
	statusErr = 'e'
)

// Exit codes of the child besides 0 and the Go runtime's 2.
const (
	exitMemory = 107 // the resident-memory watch stopped the job
	exitSetup  = 108 // limits could not be applied or the input read
	exitCPU    = 109 // RLIMIT_CPU's SIGXCPU arrived
)

var (
	exeOnce sync.Once
	exePath string
	exeErr  error

	// netnsOK is 1 while new network namespaces work, 0 once the kernel
	// refused one.
	netnsOK atomic.Int32
	netnsMu sync.Once
)

func init() { netnsOK.Store(1) }

// Isolation describes the layers the sandbox uses on this machine: what an
// operator reads to know whether the network layer is active.
func Isolation() string {
	s := "child process; " + osLimits + "; Go heap and resident memory watched; empty environment"
	if !netnsSupported {
		return s + "; no network namespace on this system"
	}
	if netnsOK.Load() == 1 {
		return s + "; new network namespace (no network)"
	}
	return s + "; network namespace refused by the kernel (the child could reach the network if the job's code could open a socket)"
}

// Run runs input through the handler registered as kind in a child process
// under lim (nil means the defaults) and returns the handler's output.
func Run(ctx context.Context, kind string, input []byte, lim *Limits) ([]byte, error) {
	if !mainCalled.Load() {
		return nil, ErrNoMain
	}
	if handler(kind) == nil {
		return nil, fmt.Errorf("sandbox: no job kind %q is registered", kind)
	}
	var l Limits
	if lim != nil {
		l = *lim
	}
	timeout := orDefault(l.Timeout, DefaultTimeout)
	maxMem := orDefault(l.MaxMemory, DefaultMaxMemory)
	maxOut := orDefault(l.MaxOutputBytes, DefaultMaxOutputBytes)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	exeOnce.Do(func() { exePath, exeErr = os.Executable() })
	if exeErr != nil {
		return nil, fmt.Errorf("sandbox: find the program to re-execute: %w", exeErr)
	}

	deadline := time.Now().Add(timeout)
	cl := childLimits{
		Timeout:   timeout,
		MaxMemory: maxMem,
		CPU:       int64(timeout/time.Second) + 2,
		MaxInput:  int64(len(input)),
	}
	env := []string{
		jobEnv + "=" + kind,
		limitsEnv + "=" + cl.encode(),
		// The collector keeps the heap under the cap before the hard
		// limits fire, so a job that fits gets its result, not a kill.
		"GOMEMLIMIT=" + strconv.FormatInt(maxMem+32<<20, 10),
		"GOMAXPROCS=2",
		"GOTRACEBACK=single",
	}
	if raceEnabled {
		env = append(env, childGORACE())
	}

	stdout := &capWriter{max: maxOut + 1}
	stderr := &headWriter{max: 4 << 10}
	start := func(newnet bool) (*exec.Cmd, error) {
		cmd := exec.Command(exePath)
		cmd.Env = env
		cmd.Dir = "/"
		cmd.Stdin = bytes.NewReader(input)
		cmd.Stdout = stdout
		cmd.Stderr = stderr
		cmd.SysProcAttr = procAttr(newnet)
		return cmd, cmd.Start()
	}
	newnet := netnsSupported && netnsOK.Load() == 1
	cmd, err := start(newnet)
	if err != nil && newnet && netnsRefused(err) {
		netnsMu.Do(func() {
			netnsOK.Store(0)
			slog.Default().Warn("sandbox_no_network_namespace", "error", err.Error())
		})
		stdout.Reset()
		stderr.Reset()
		cmd, err = start(false)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: start %s child: %w", kind, err)
	}

	// Exactly one reason ends a child early; the first one wins.
	var reason atomic.Value // error
	kill := func(why error) {
		reason.CompareAndSwap(nil, why)
		killGroup(cmd)
	}
	timer := time.AfterFunc(time.Until(deadline), func() { kill(ErrTimeout) })
	stop := context.AfterFunc(ctx, func() { kill(ctx.Err()) })
	werr := cmd.Wait()
	timer.Stop()
	stop()
	// The group may hold helpers the job started (tesseract); they die
	// with it.
	killGroup(cmd)

	elapsed := timeout - time.Until(deadline)
	if why, _ := reason.Load().(error); why != nil {
		if errors.Is(why, ErrTimeout) {
			return nil, fmt.Errorf("sandbox: %s job ran longer than %v: %w", kind, timeout, ErrTimeout)
		}
		return nil, why
	}
	if werr != nil {
		return nil, childFailure(kind, werr, stderr.String(), maxMem, elapsed)
	}
	out := stdout.Bytes()
	if stdout.over {
		return nil, fmt.Errorf("sandbox: %s job returned more than %d bytes: %w", kind, maxOut, ErrMemory)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("sandbox: %s child exited without a result: %s", kind, firstLine(stderr.String()))
	}
	switch out[0] {
	case statusOK:
		return out[1:], nil
	case statusErr:
		return nil, &JobError{Kind: kind, Message: string(out[1:])}
	}
	return nil, fmt.Errorf("sandbox: %s child wrote a malformed result", kind)
}

// childFailure names why a child exited badly.
func childFailure(kind string, werr error, stderr string, maxMem int64, elapsed time.Duration) error {
	var ee *exec.ExitError
	if !errors.As(werr, &ee) {
		return fmt.Errorf("sandbox: %s child: %w", kind, werr)
	}
	ws, _ := ee.Sys().(syscall.WaitStatus)
	switch {
	case ws.Exited() && ws.ExitStatus() == exitCPU, cpuSignal(ws):
		return fmt.Errorf("sandbox: %s job used its CPU time limit after %v: %w", kind, elapsed.Round(time.Millisecond), ErrTimeout)
	case ws.Exited() && ws.ExitStatus() == exitMemory,
		strings.Contains(stderr, "out of memory"), strings.Contains(stderr, "cannot allocate memory"),
		// Under the address-space limit a new thread's stack is the
		// first thing that no longer fits: the runtime dies creating it.
		strings.Contains(stderr, "pthread_create failed"), strings.Contains(stderr, "failed to create new OS thread"):
		return fmt.Errorf("sandbox: %s job used more than its memory cap of %d MiB: %w", kind, maxMem>>20, ErrMemory)
	case ws.Signaled():
		return fmt.Errorf("sandbox: %s child killed by %v: %s", kind, ws.Signal(), firstLine(stderr))
	}
	return fmt.Errorf("sandbox: %s child exited with status %d: %s", kind, ws.ExitStatus(), firstLine(stderr))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if l, _, ok := strings.Cut(s, "\n"); ok {
		return l
	}
	if s == "" {
		return "no message"
	}
	return s
}

// capWriter keeps up to max bytes and notes whether more came.
type capWriter struct {
	buf  bytes.Buffer
	max  int64
	over bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - int64(w.buf.Len()); int64(len(p)) > room {
		// Keep reading and dropping: a child blocked on a full pipe
		// would only end at its deadline.
		w.over = true
		if room > 0 {
			w.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return w.buf.Write(p)
}

func (w *capWriter) Bytes() []byte { return w.buf.Bytes() }
func (w *capWriter) Reset()        { w.buf.Reset(); w.over = false }

// headWriter keeps the first max bytes written (the runtime's fatal error
// line comes first) and drops the rest.
type headWriter struct {
	buf bytes.Buffer
	max int
}

func (w *headWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (w *headWriter) String() string { return w.buf.String() }
func (w *headWriter) Reset()         { w.buf.Reset() }

var _ io.Writer = (*capWriter)(nil)

// Carried is an error that crossed the process boundary: the child's text,
// wrapping the sentinel the child's error wrapped, so that errors.Is
// matches in the parent as it did in the child.
func Carried(msg string, sentinel error) error { return &carried{msg: msg, err: sentinel} }

type carried struct {
	msg string
	err error
}

func (e *carried) Error() string { return e.msg }
func (e *carried) Unwrap() error { return e.err }
