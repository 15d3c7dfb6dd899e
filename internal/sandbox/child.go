package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// childLimits travel from Run to the child in limitsEnv.
type childLimits struct {
	Timeout   time.Duration
	MaxMemory int64
	CPU       int64 // seconds
	MaxInput  int64
}

func (c childLimits) encode() string {
	return fmt.Sprintf("t=%d,m=%d,c=%d,i=%d", c.Timeout, c.MaxMemory, c.CPU, c.MaxInput)
}

func decodeLimits(s string) (childLimits, error) {
	var c childLimits
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return c, fmt.Errorf("sandbox: bad limit %q in %s", kv, limitsEnv)
		}
		switch k {
		case "t":
			c.Timeout = time.Duration(n)
		case "m":
			c.MaxMemory = n
		case "c":
			c.CPU = n
		case "i":
			c.MaxInput = n
		default:
			return c, fmt.Errorf("sandbox: unknown limit %q in %s", k, limitsEnv)
		}
	}
	if c.Timeout <= 0 || c.MaxMemory <= 0 || c.CPU <= 0 {
		return c, fmt.Errorf("sandbox: incomplete limits %q in %s", s, limitsEnv)
	}
	return c, nil
}

// child is the sandbox side of Run: it limits the process, reads the job
// from stdin, runs the handler and writes the status byte and the result to
// stdout. It returns the exit code.
func child(kind string) int {
	fail := func(code int, err error) int {
		fmt.Fprintln(os.Stderr, err)
		return code
	}
	h := handler(kind)
	if h == nil {
		return fail(exitSetup, fmt.Errorf("sandbox: no job kind %q is registered in this program", kind))
	}
	cl, err := decodeLimits(os.Getenv(limitsEnv))
	if err != nil {
		return fail(exitSetup, err)
	}
	// The runtime has read GOMEMLIMIT and GOMAXPROCS; helper programs the
	// job starts get nothing.
	os.Clearenv()

	// Limits come before the input is read: nothing the job holds runs
	// without them.
	vm, rss, err := memoryNow()
	if err != nil && runtime.GOOS == "linux" {
		return fail(exitSetup, err)
	}
	allowance := cl.MaxMemory + 2*cl.MaxInput
	if err := limitSelf(cl, vm+allowance+AddressSlack); err != nil {
		return fail(exitSetup, err)
	}
	watchMemory(rss+allowance+RSSSlack, allowance+HeapSlack, cl.MaxMemory)

	input, err := io.ReadAll(io.LimitReader(os.Stdin, cl.MaxInput+1))
	if err != nil {
		return fail(exitSetup, fmt.Errorf("sandbox: read the job: %w", err))
	}
	if int64(len(input)) > cl.MaxInput {
		return fail(exitSetup, errors.New("sandbox: the job is longer than announced"))
	}

	ctx, cancel := context.WithTimeout(context.Background(), cl.Timeout)
	defer cancel()
	out, err := h(ctx, input)
	status := byte(statusOK)
	if err != nil {
		status, out = statusErr, []byte(err.Error())
	}
	if _, err := os.Stdout.Write(append([]byte{status}, out...)); err != nil {
		return fail(exitSetup, fmt.Errorf("sandbox: write the result: %w", err))
	}
	return 0
}

// memoryNow returns the process's address space and resident set in bytes.
func memoryNow() (vm, rss int64, err error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, 0, fmt.Errorf("sandbox: read memory use: %w", err)
	}
	return parseStatm(b)
}

func parseStatm(b []byte) (vm, rss int64, err error) {
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0, fmt.Errorf("sandbox: malformed /proc/self/statm %q", b)
	}
	pages, err1 := strconv.ParseInt(f[0], 10, 64)
	res, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("sandbox: malformed /proc/self/statm %q", b)
	}
	ps := int64(os.Getpagesize())
	return pages * ps, res * ps, nil
}

// heapMetric is the runtime's count of bytes in heap objects, live or not
// yet swept: it grows as soon as a job allocates, before the pages are
// touched, and reading it does not stop the world.
const heapMetric = "/memory/classes/heap/objects:bytes"

// watchMemory ends the process with exitMemory once its resident set
// passes rssLimit or its heap objects pass heapLimit. It is the backstop
// for what the address-space limit does not see soon enough: an
// interpreter that grows its heap a little at a time inside one call (the
// heap limit), memory outside the Go heap, and, under the race detector,
// everything (the resident limit). A goroutine keeps running while the
// job's goroutine is inside one long call.
func watchMemory(rssLimit, heapLimit, jobCap int64) {
	// Without /proc (not Linux) only the heap is watched.
	f, _ := os.Open("/proc/self/statm")
	over := func(what string, n int64) {
		fmt.Fprintf(os.Stderr, "sandbox: %s of %d MiB is over the job's cap of %d MiB: out of memory\n", what, n>>20, jobCap>>20)
		os.Exit(exitMemory)
	}
	go func() {
		buf := make([]byte, 128)
		s := []metrics.Sample{{Name: heapMetric}}
		for {
			time.Sleep(5 * time.Millisecond)
			if f != nil {
				if n, _ := f.ReadAt(buf, 0); n > 0 {
					if _, rss, err := parseStatm(buf[:n]); err == nil && rss > rssLimit {
						over("resident memory", rss)
					}
				}
			}
			metrics.Read(s)
			if s[0].Value.Kind() == metrics.KindUint64 {
				if h := int64(s[0].Value.Uint64()); h > heapLimit {
					over("a heap", h)
				}
			}
		}
	}()
}
