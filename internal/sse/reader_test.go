package sse_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/google/go-cmp/cmp"
)

// readAll reads events until the first error; it returns the events and
// that error, nil for io.EOF.
func readAll(r io.Reader, opts *sse.ReaderOptions) ([]sse.Event, error) {
	sr := sse.NewReader(r, opts)
	var out []sse.Event
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func ev(event, data, id string) sse.Event {
	return sse.Event{Event: event, Data: []byte(data), ID: id}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []sse.Event
	}{
		{"LF", "data: a\n\ndata: b\n\n", []sse.Event{ev("", "a", ""), ev("", "b", "")}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []sse.Event{ev("", "a", ""), ev("", "b", "")}},
		{"CR", "data: a\r\rdata: b\r\r", []sse.Event{ev("", "a", ""), ev("", "b", "")}},
		{"mixed endings", "data: a\r\ndata: b\rdata: c\n\r\n", []sse.Event{ev("", "a\nb\nc", "")}},
		{"multi-line data", "data: line one\ndata: line two\n\n", []sse.Event{ev("", "line one\nline two", "")}},
		{"no space after colon", "data:x\n\n", []sse.Event{ev("", "x", "")}},
		{"only one space is stripped", "data:  x\n\n", []sse.Event{ev("", " x", "")}},
		{"empty data line", "data\n\n", []sse.Event{ev("", "", "")}},
		{"empty data lines", "data:\ndata:\n\n", []sse.Event{ev("", "\n", "")}},
		{"comments", ": hello\ndata: a\n: between\n\n:ping\n\n", []sse.Event{ev("", "a", "")}},
		{"event name", "event: delta\ndata: a\n\ndata: b\n\n", []sse.Event{ev("delta", "a", ""), ev("", "b", "")}},
		{"event without data is not dispatched", "event: ping\n\ndata: a\n\n", []sse.Event{ev("", "a", "")}},
		{"id persists", "id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n", []sse.Event{ev("", "a", "1"), ev("", "b", "1"), ev("", "c", "2")}},
		{"empty id resets", "id: 1\ndata: a\n\nid\ndata: b\n\n", []sse.Event{ev("", "a", "1"), ev("", "b", "")}},
		{"id with NUL is ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []sse.Event{ev("", "a", "1"), ev("", "b", "1")}},
		{"unknown fields and retry are ignored", "retry: 1000\nfoo: bar\ndata: a\n\n", []sse.Event{ev("", "a", "")}},
		{"byte order mark", "\xEF\xBB\xBFdata: a\n\n", []sse.Event{ev("", "a", "")}},
		{"final event without blank line is dropped", "data: a\n\ndata: b\n", []sse.Event{ev("", "a", "")}},
		{"final line without terminator is dropped", "data: a\n\ndata: b", []sse.Event{ev("", "a", "")}},
		{"leading blank lines", "\n\n\r\ndata: a\n\n", []sse.Event{ev("", "a", "")}},
		{"empty stream", "", nil},
		{"lines longer than the buffer", "data: " + strings.Repeat("x", 100) + "\r\nid: " + strings.Repeat("7", 40) + "\r\n\r\n", []sse.Event{ev("", strings.Repeat("x", 100), strings.Repeat("7", 40))}},
		{"OpenAI done", "data: {\"x\":1}\n\ndata: [DONE]\n\n", []sse.Event{ev("", `{"x":1}`, ""), ev("", "[DONE]", "")}},
	}
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half":     func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	}
	// A 16-byte buffer (bufio's smallest) splits most lines across reads.
	for _, opts := range []*sse.ReaderOptions{nil, {BufferSize: 16}} {
		for _, tt := range tests {
			for rname, newReader := range readers {
				t.Run(fmt.Sprintf("%s/%s/buffer %d", tt.name, rname, bufferSize(opts)), func(t *testing.T) {
					got, err := readAll(newReader(tt.input), opts)
					if err != nil {
						t.Fatalf("read: %v", err)
					}
					if diff := cmp.Diff(tt.want, got); diff != "" {
						t.Errorf("events mismatch (-want +got):\n%s", diff)
					}
				})
			}
		}
	}
}

func bufferSize(o *sse.ReaderOptions) int {
	if o == nil {
		return 4096
	}
	return o.BufferSize
}

func TestReaderMaxEventSize(t *testing.T) {
	opts := &sse.ReaderOptions{MaxEventSize: 16}
	tests := []struct {
		name  string
		input string
		want  []sse.Event // events before the error
	}{
		{"one long data line", "data: ok\n\ndata: " + strings.Repeat("x", 17) + "\n\n", []sse.Event{ev("", "ok", "")}},
		{"many data lines", "data: 0123456789\ndata: 0123456789\n\n", nil},
		{"long line without terminator", "data: ok\n\n: " + strings.Repeat("x", 200), []sse.Event{ev("", "ok", "")}},
		{"long comment line", ": " + strings.Repeat("x", 100) + "\ndata: ok\n\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(strings.NewReader(tt.input), opts)
			if !errors.Is(err, sse.ErrEventTooLarge) {
				t.Fatalf("read error = %v, want ErrEventTooLarge", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events before the error mismatch (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("at the limit", func(t *testing.T) {
		data := strings.Repeat("x", 16)
		got, err := readAll(strings.NewReader("data: "+data+"\n\n"), opts)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if diff := cmp.Diff([]sse.Event{ev("", data, "")}, got); diff != "" {
			t.Errorf("events mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("error is sticky", func(t *testing.T) {
		r := sse.NewReader(strings.NewReader("data: "+strings.Repeat("x", 40)+"\n\ndata: ok\n\n"), opts)
		for range 2 {
			if _, err := r.Next(); !errors.Is(err, sse.ErrEventTooLarge) {
				t.Fatalf("Next = %v, want ErrEventTooLarge", err)
			}
		}
	})
}

func TestReaderReadError(t *testing.T) {
	broken := errors.New("connection reset")
	r := sse.NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(broken)), nil)
	if _, err := r.Next(); err != nil {
		t.Fatalf("first Next: %v", err)
	}
	if _, err := r.Next(); !errors.Is(err, broken) {
		t.Errorf("second Next = %v, want an error wrapping %v", err, broken)
	}
}

// TestReaderDispatchesAtOnce guards against a reader that waits for the
// byte after a CR (to see whether an LF follows) before dispatching: on a
// live stream that delays every event until the next one starts.
func TestReaderDispatchesAtOnce(t *testing.T) {
	for _, input := range []string{"data: a\r\r", "data: a\r\n\r\n", "data: a\n\n"} {
		pr, pw := io.Pipe()
		go func() { _, _ = pw.Write([]byte(input)) }() // then the stream stays open
		got := make(chan sse.Event, 1)
		go func() {
			ev, _ := sse.NewReader(pr, nil).Next()
			got <- ev
		}()
		select {
		case ev := <-got:
			if string(ev.Data) != "a" {
				t.Errorf("%q: data = %q, want %q", input, ev.Data, "a")
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%q: event not dispatched while the stream stays open", input)
		}
		pw.Close()
	}
}

func BenchmarkReader(b *testing.B) {
	var stream bytes.Buffer
	for range 100 {
		stream.WriteString("data: ")
		stream.Write(benchChunk)
		stream.WriteString("\n\n")
	}
	input := stream.Bytes()
	b.ReportAllocs()
	b.SetBytes(int64(len(input)))
	for b.Loop() {
		r := sse.NewReader(bytes.NewReader(input), nil)
		for {
			if _, err := r.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

func TestReaderReuseData(t *testing.T) {
	stream := "data: first\n\ndata: other\n\n"
	for _, reuse := range []bool{false, true} {
		r := sse.NewReader(strings.NewReader(stream), &sse.ReaderOptions{ReuseData: reuse})
		a, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		first := string(a.Data)
		b, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if string(b.Data) != "other" || first != "first" {
			t.Fatalf("reuse=%v: events %q, %q", reuse, first, b.Data)
		}
		// Without reuse the first event's data is the caller's and stays;
		// with reuse it shares the reader's buffer.
		if kept := string(a.Data) == "first"; kept != !reuse {
			t.Errorf("reuse=%v: first event's data is now %q", reuse, a.Data)
		}
	}
}

func BenchmarkReaderNext(b *testing.B) {
	event := "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hello\"}}]}\n\n"
	stream := strings.Repeat(event, 100)
	for _, reuse := range []bool{false, true} {
		b.Run(map[bool]string{false: "copy", true: "reuse"}[reuse], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := sse.NewReader(strings.NewReader(stream), &sse.ReaderOptions{ReuseData: reuse})
				for {
					if _, err := r.Next(); err != nil {
						break
					}
				}
			}
		})
	}
}
