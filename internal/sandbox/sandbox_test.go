package sandbox

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Test job kinds, registered before TestMain runs Main.
var (
	echoJob = Register("test-echo", func(_ context.Context, in []byte) ([]byte, error) { return in, nil })
	failJob = Register("test-fail", func(_ context.Context, in []byte) ([]byte, error) {
		return nil, errors.New("bad input: " + string(in))
	})
	// spinJob loops without looking at ctx, as a parser stuck in a cycle.
	spinJob = Register("test-spin", func(context.Context, []byte) ([]byte, error) {
		for n := 0; ; n++ {
			_ = n
		}
	})
	// growJob touches memory page by page, as an interpreter building a
	// huge array.
	growJob = Register("test-grow", func(context.Context, []byte) ([]byte, error) {
		var keep [][]byte
		for {
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = 1
			}
			keep = append(keep, b)
		}
	})
	// hugeJob asks for 8 GiB in one allocation.
	hugeJob = Register("test-huge", func(context.Context, []byte) ([]byte, error) {
		b := make([]byte, 8<<30)
		b[len(b)-1] = 1
		return b[len(b)-1:], nil
	})
	envJob = Register("test-env", func(context.Context, []byte) ([]byte, error) {
		wd, _ := os.Getwd()
		return []byte(strings.Join(append(os.Environ(), "wd="+wd), "\n")), nil
	})
	writeJob = Register("test-write", func(_ context.Context, in []byte) ([]byte, error) {
		return nil, os.WriteFile(string(in), []byte("x"), 0o600)
	})
	dialJob = Register("test-dial", func(_ context.Context, in []byte) ([]byte, error) {
		c, err := net.DialTimeout("tcp", string(in), time.Second)
		if err != nil {
			return nil, err
		}
		c.Close()
		return []byte("connected"), nil
	})
)

func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}

func TestRunEcho(t *testing.T) {
	out, err := Run(context.Background(), echoJob, []byte("hello"), nil)
	if err != nil || string(out) != "hello" {
		t.Fatalf("Run(echo) = %q, %v; want hello", out, err)
	}
	_, err = Run(context.Background(), failJob, []byte("x"), nil)
	var je *JobError
	if !errors.As(err, &je) || je.Message != "bad input: x" {
		t.Errorf("Run(fail) error = %v, want JobError saying bad input: x", err)
	}
	if _, err := Run(context.Background(), "no-such-kind", nil, nil); err == nil || !strings.Contains(err.Error(), `no job kind "no-such-kind"`) {
		t.Errorf("unknown kind: err = %v", err)
	}
	if _, err := Run(context.Background(), echoJob, make([]byte, 100), &Limits{MaxOutputBytes: 10}); !errors.Is(err, ErrMemory) {
		t.Errorf("output over its cap: err = %v, want ErrMemory", err)
	}
}

func TestRunTimeout(t *testing.T) {
	start := time.Now()
	_, err := Run(context.Background(), spinJob, nil, &Limits{Timeout: 300 * time.Millisecond})
	if d := time.Since(start); !errors.Is(err, ErrTimeout) || d > 2*time.Second {
		t.Errorf("spinning job: err = %v after %v, want ErrTimeout after about 300ms", err, d)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := Run(ctx, spinJob, nil, nil); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("cancelled ctx: err = %v after %v, want context.DeadlineExceeded", err, time.Since(start))
	}
}

func TestRunMemory(t *testing.T) {
	kinds := []string{growJob, hugeJob}
	if raceEnabled {
		kinds = kinds[:1] // no address-space limit: untouched memory costs nothing
	}
	for _, kind := range kinds {
		start := time.Now()
		_, err := Run(context.Background(), kind, nil, &Limits{MaxMemory: 64 << 20, Timeout: 20 * time.Second})
		if d := time.Since(start); !errors.Is(err, ErrMemory) || d > 10*time.Second {
			t.Errorf("%s: err = %v after %v, want ErrMemory", kind, err, d)
		}
		t.Logf("%s: %v after %v", kind, err, time.Since(start).Round(time.Millisecond))
	}
}

func TestChildEnvironment(t *testing.T) {
	t.Setenv("AGENTCRAFT_MASTER_KEY", "secret")
	out, err := Run(context.Background(), envJob, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The server's environment never reaches the child, which cleared
	// even its own settings before the job ran.
	if got := string(out); got != "wd=/" {
		t.Errorf("child environment and directory = %q, want only wd=/", got)
	}

	path := filepath.Join(t.TempDir(), "f")
	_, err = Run(context.Background(), writeJob, []byte(path), nil)
	if err == nil {
		t.Errorf("the child wrote %s", path)
	}
	if st, serr := os.Stat(path); serr == nil && st.Size() > 0 {
		t.Errorf("the child wrote %d bytes to %s", st.Size(), path)
	}
}

func TestChildNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	out, err := Run(context.Background(), dialJob, []byte(ln.Addr().String()), nil)
	if !strings.Contains(Isolation(), "new network namespace") {
		t.Skipf("no network namespace on this machine: %s", Isolation())
	}
	if err == nil {
		t.Errorf("the child reached %s on the loopback: %s", ln.Addr(), out)
	}
}

func TestRunWithoutMain(t *testing.T) {
	mainCalled.Store(false)
	defer mainCalled.Store(true)
	if _, err := Run(context.Background(), echoJob, nil, nil); !errors.Is(err, ErrNoMain) {
		t.Errorf("err = %v, want ErrNoMain", err)
	}
}

func BenchmarkRun(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), echoJob, []byte("x"), nil); err != nil {
			b.Fatal(err)
		}
	}
}
