package sse_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/google/go-cmp/cmp"
)

func TestWriterWriteData(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string
	}{
		{"plain", "hello", "data: hello\n\n"},
		{"json", `{"a":1}`, "data: {\"a\":1}\n\n"},
		{"empty", "", "data: \n\n"},
		{"LF", "a\nb", "data: a\ndata: b\n\n"},
		{"CRLF and CR", "a\r\nb\rc", "data: a\ndata: b\ndata: c\n\n"},
		{"trailing LF", "a\n", "data: a\ndata: \n\n"},
		{"field injection stays data", "x\n\nevent: evil\ndata: y", "data: x\ndata: \ndata: event: evil\ndata: data: y\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			w := sse.NewWriter(rec)
			if err := w.WriteData([]byte(tt.data)); err != nil {
				t.Fatalf("WriteData: %v", err)
			}
			if diff := cmp.Diff(tt.want, rec.Body.String()); diff != "" {
				t.Errorf("body mismatch (-want +got):\n%s", diff)
			}
			if !rec.Flushed {
				t.Error("event was not flushed")
			}
		})
	}
}

func TestWriterHeaders(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w := sse.NewWriter(rec)
	if err := w.WriteData([]byte("x")); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{
		"Content-Type":      rec.Result().Header.Get("Content-Type"),
		"Cache-Control":     rec.Result().Header.Get("Cache-Control"),
		"X-Accel-Buffering": rec.Result().Header.Get("X-Accel-Buffering"),
	}
	want := map[string]string{
		"Content-Type":      "text/event-stream; charset=utf-8", // the handler's choice is kept
		"Cache-Control":     "no-cache",
		"X-Accel-Buffering": "no",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers mismatch (-want +got):\n%s", diff)
	}
}

func TestWriterWriteEvent(t *testing.T) {
	rec := httptest.NewRecorder()
	w := sse.NewWriter(rec)
	events := []sse.Event{
		{Event: "start", Data: []byte("1"), ID: "a"},
		{Data: []byte("2"), ID: "a"}, // same id: no id line
		{Event: "delta", Data: []byte("3"), ID: "b"},
		{Data: []byte("4")}, // reset to no id
	}
	for _, ev := range events {
		if err := w.WriteEvent(ev); err != nil {
			t.Fatalf("WriteEvent(%+v): %v", ev, err)
		}
	}
	if err := w.WriteComment("keep-alive"); err != nil {
		t.Fatal(err)
	}
	want := "event: start\nid: a\ndata: 1\n\n" +
		"data: 2\n\n" +
		"event: delta\nid: b\ndata: 3\n\n" +
		"id: \ndata: 4\n\n" +
		": keep-alive\n\n"
	if diff := cmp.Diff(want, rec.Body.String()); diff != "" {
		t.Errorf("body mismatch (-want +got):\n%s", diff)
	}
}

func TestWriterRefusesLineBreaks(t *testing.T) {
	tests := []struct {
		name  string
		write func(w *sse.Writer) error
	}{
		{"event name", func(w *sse.Writer) error { return w.WriteEvent(sse.Event{Event: "a\nb"}) }},
		{"event name CR", func(w *sse.Writer) error { return w.WriteEvent(sse.Event{Event: "a\rb"}) }},
		{"id", func(w *sse.Writer) error { return w.WriteEvent(sse.Event{ID: "1\n2"}) }},
		{"id NUL", func(w *sse.Writer) error { return w.WriteEvent(sse.Event{ID: "1\x002"}) }},
		{"comment", func(w *sse.Writer) error { return w.WriteComment("a\ndata: b") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			if err := tt.write(sse.NewWriter(rec)); err == nil {
				t.Fatal("write succeeded, want an error")
			}
			if rec.Body.Len() != 0 {
				t.Errorf("wrote %q after refusing the event", rec.Body.String())
			}
		})
	}
}

// plainWriter is a ResponseWriter that cannot flush.
type plainWriter struct {
	h   http.Header
	err error
}

func (p *plainWriter) Header() http.Header         { return p.h }
func (p *plainWriter) Write(b []byte) (int, error) { return len(b), p.err }
func (p *plainWriter) WriteHeader(int)             {}

func TestWriterErrors(t *testing.T) {
	t.Run("cannot flush", func(t *testing.T) {
		w := sse.NewWriter(&plainWriter{h: http.Header{}})
		err := w.WriteData([]byte("x"))
		if !errors.Is(err, http.ErrNotSupported) {
			t.Errorf("WriteData = %v, want an error wrapping http.ErrNotSupported", err)
		}
	})
	t.Run("write fails", func(t *testing.T) {
		broken := errors.New("connection reset")
		w := sse.NewWriter(&plainWriter{h: http.Header{}, err: broken})
		err := w.WriteData([]byte("x"))
		if !errors.Is(err, broken) {
			t.Errorf("WriteData = %v, want an error wrapping %v", err, broken)
		}
	})
}

// discardWriter is a flushing ResponseWriter that drops what it is given,
// so that benchmarks measure the Writer alone.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}

var benchChunk = []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}]}`)

func BenchmarkWriteData(b *testing.B) {
	w := sse.NewWriter(&discardWriter{h: http.Header{}})
	b.ReportAllocs()
	b.SetBytes(int64(len(benchChunk)))
	for b.Loop() {
		if err := w.WriteData(benchChunk); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteDataFprintf is the peer WriteData is measured against: the
// usual fmt.Fprintf and Flush, which allocates on every event (and would
// not split multi-line data).
func BenchmarkWriteDataFprintf(b *testing.B) {
	dw := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchChunk)))
	for b.Loop() {
		if _, err := fmt.Fprintf(dw, "data: %s\n\n", benchChunk); err != nil {
			b.Fatal(err)
		}
		dw.Flush()
	}
}
