package scriptrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/internal/sandbox"
)

// testLimits stands for an engine's limits type: it must reach the child.
type testLimits struct {
	Fail string `json:"fail"`
}

// testJob is an engine whose "script" names what to do.
var testJob = NewJob("scriptrun-test", func(ctx context.Context, source string, globals []byte, l testLimits) (string, error) {
	switch source {
	case "echo":
		return string(globals), nil
	case "none":
		return "", nil
	case "quotes":
		// 150 KiB of JSON that a JSON string would take 300 KiB to hold.
		return `"` + strings.Repeat(`\"<`, 50<<10) + `"`, nil
	case "limits":
		return fmt.Sprintf("%q", l.Fail), nil
	case "script":
		return "", &Error{Message: "line 1: boom"}
	case "timeout":
		return "", fmt.Errorf("ran 10 steps: %w", ErrTimeout)
	case "memory":
		return "", fmt.Errorf("grew: %w", ErrMemory)
	case "large":
		return "", fmt.Errorf("result is big: %w", ErrTooLarge)
	case "hang":
		<-ctx.Done()
		return "", ctx.Err()
	case "spin":
		for {
		}
	}
	return "", errors.New("unknown source " + source)
})

func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

// TestJobCarriesErrors: each kind of error the child's engine returns
// reaches the parent as the same kind, so callers test one set of
// sentinels whichever engine ran.
func TestJobCarriesErrors(t *testing.T) {
	ctx := context.Background()
	b := Bounds{Timeout: 2 * time.Second, MaxMemory: 32 << 20, MaxOutputBytes: 1 << 10}
	gjson, err := EncodeGlobals(map[string]any{"input": []any{1, "a"}}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := testJob.Run(ctx, "echo", gjson, testLimits{}, b)
	if diff := cmp.Diff(map[string]any{"input": []any{1.0, "a"}}, got); err != nil || diff != "" {
		t.Errorf("echo: %v (-want +got):\n%s", err, diff)
	}
	if got, err := testJob.Run(ctx, "none", gjson, testLimits{}, b); got != nil || err != nil {
		t.Errorf("no value: %v, %v; want nil, nil", got, err)
	}
	if got, err := testJob.Run(ctx, "limits", gjson, testLimits{Fail: "x"}, b); got != "x" || err != nil {
		t.Errorf("limits in the child: %v, %v; want x", got, err)
	}
	// A result inside its limit crosses whatever it holds: escaping it
	// on the way would double it past the child's output cap.
	got, err = testJob.Run(ctx, "quotes", gjson, testLimits{}, Bounds{Timeout: 2 * time.Second, MaxMemory: 32 << 20, MaxOutputBytes: 160 << 10})
	if s, _ := got.(string); err != nil || s != strings.Repeat(`"<`, 50<<10) {
		t.Errorf("a result of quotes: %d characters, %v; want %d", len(s), err, 100<<10)
	}

	var se *Error
	if _, err := testJob.Run(ctx, "script", gjson, testLimits{}, b); !errors.As(err, &se) || se.Message != "line 1: boom" || err.Error() != "script: line 1: boom" {
		t.Errorf("script error: %v, want *Error with line 1: boom", err)
	}
	for source, want := range map[string]error{"timeout": ErrTimeout, "memory": ErrMemory, "large": ErrTooLarge} {
		if _, err := testJob.Run(ctx, source, gjson, testLimits{}, b); !errors.Is(err, want) || strings.Contains(err.Error(), "script ran longer") {
			t.Errorf("%s: err = %v, want the child's error wrapping %v", source, err, want)
		}
	}
	// The child's own deadline is a time-out too.
	if _, err := testJob.Run(ctx, "hang", gjson, testLimits{}, Bounds{Timeout: 200 * time.Millisecond, MaxMemory: 32 << 20}); !errors.Is(err, ErrTimeout) {
		t.Errorf("hang: err = %v, want ErrTimeout", err)
	}
	if _, err := testJob.Run(ctx, "other", gjson, testLimits{}, b); err == nil || !strings.Contains(err.Error(), "unknown source other") {
		t.Errorf("other error: %v", err)
	}

	// A child that does not stop is killed StartGrace after its time limit.
	start := time.Now()
	_, err = testJob.Run(ctx, "spin", gjson, testLimits{}, Bounds{Timeout: 100 * time.Millisecond, MaxMemory: 32 << 20})
	if d := time.Since(start); !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "script ran longer than 100ms") || d > 2*time.Second {
		t.Errorf("spinning child: %v after %v, want ErrTimeout naming 100ms", err, d)
	}

	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := testJob.Run(cctx, "spin", gjson, testLimits{}, b); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled ctx: err = %v, want context.DeadlineExceeded", err)
	}
}

func TestEncodeGlobals(t *testing.T) {
	if b, err := EncodeGlobals(nil, 10, ""); err != nil || string(b) != "{}" {
		t.Errorf("nil globals: %s, %v; want {}", b, err)
	}
	_, err := EncodeGlobals(map[string]any{"input": strings.Repeat("x", 100)}, 50, "")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "the script's input is 112 bytes") {
		t.Errorf("large input: %v", err)
	}
	_, err = EncodeGlobals(map[string]any{"input": strings.Repeat("x", 100)}, 50, "input and vars")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "input and vars are 112 bytes") {
		t.Errorf("large input with a name: %v", err)
	}
	if _, err := EncodeGlobals(map[string]any{"f": func() {}}, 50, ""); err == nil || !strings.Contains(err.Error(), "not JSON data") {
		t.Errorf("a function: %v", err)
	}
}
