package sse

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// maxRetainedBuffer caps the buffer a Writer keeps between events, so that
// one large event does not pin its memory for the rest of a long stream.
const maxRetainedBuffer = 64 << 10

// Writer writes events to an HTTP response and flushes each one, so the
// client sees it at once. It is not safe for concurrent use.
type Writer struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	// buf assembles one event so that it reaches w in a single Write.
	buf []byte
	// lastID is the event ID the reader has in effect; an id line is written
	// only when an event's ID differs from it.
	lastID string
}

// NewWriter returns a Writer on w. Unless the handler set them already, it
// sets the headers of an event stream: Content-Type text/event-stream,
// Cache-Control no-cache and X-Accel-Buffering no (which stops nginx from
// holding events back). Headers are sent with the first event.
func NewWriter(w http.ResponseWriter) *Writer {
	h := w.Header()
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "text/event-stream")
	}
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-cache")
	}
	if h.Get("X-Accel-Buffering") == "" {
		h.Set("X-Accel-Buffering", "no")
	}
	return &Writer{w: w, rc: http.NewResponseController(w)}
}

// WriteData writes an unnamed event carrying data and flushes it. Line
// breaks in data (CR, LF, CRLF) become separate data lines. It does not
// allocate once its buffer has grown to the size of the events written.
func (w *Writer) WriteData(data []byte) error {
	w.buf = appendData(w.buf[:0], data)
	return w.send()
}

// WriteEvent writes ev and flushes it. An event name or ID holding a line
// break, or an ID holding NUL, is refused: it would corrupt the stream.
func (w *Writer) WriteEvent(ev Event) error {
	if strings.ContainsAny(ev.Event, "\r\n") {
		return fmt.Errorf("sse: write event: event name %q holds a line break", ev.Event)
	}
	if strings.ContainsAny(ev.ID, "\r\n\x00") {
		return fmt.Errorf("sse: write event: id %q holds a line break or NUL", ev.ID)
	}
	b := w.buf[:0]
	if ev.Event != "" {
		b = append(b, "event: "...)
		b = append(b, ev.Event...)
		b = append(b, '\n')
	}
	if ev.ID != w.lastID {
		// An empty id line resets the reader's last event ID.
		b = append(b, "id: "...)
		b = append(b, ev.ID...)
		b = append(b, '\n')
		w.lastID = ev.ID
	}
	w.buf = appendData(b, ev.Data)
	return w.send()
}

// WriteComment writes a comment line, which readers ignore; it keeps idle
// connections from being closed by proxies.
func (w *Writer) WriteComment(text string) error {
	if strings.ContainsAny(text, "\r\n") {
		return fmt.Errorf("sse: write comment: text %q holds a line break", text)
	}
	b := append(w.buf[:0], ": "...)
	b = append(b, text...)
	w.buf = append(b, "\n\n"...)
	return w.send()
}

// appendData appends data as data lines and the blank line that ends the
// event. Empty data still gets one line: an event without data lines is
// never dispatched by readers.
func appendData(b, data []byte) []byte {
	for {
		i := lineBreak(data)
		if i < 0 {
			break
		}
		b = append(b, "data: "...)
		b = append(b, data[:i]...)
		b = append(b, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// lineBreak returns the index of the first CR or LF in b, or -1. Two
// IndexByte scans beat one IndexAny: they run on vector instructions.
func lineBreak(b []byte) int {
	n := bytes.IndexByte(b, '\n')
	if n < 0 {
		n = len(b)
	}
	if r := bytes.IndexByte(b[:n], '\r'); r >= 0 {
		return r
	}
	if n == len(b) {
		return -1
	}
	return n
}

func (w *Writer) send() error {
	_, err := w.w.Write(w.buf)
	if cap(w.buf) > maxRetainedBuffer {
		w.buf = nil
	}
	if err != nil {
		return fmt.Errorf("sse: write event: %w", err)
	}
	if err := w.rc.Flush(); err != nil {
		if errors.Is(err, http.ErrNotSupported) {
			return fmt.Errorf("sse: flush: response writer %T cannot flush: %w", w.w, err)
		}
		return fmt.Errorf("sse: flush: %w", err)
	}
	return nil
}

// KeepAlive writes a comment on w every interval, holding mu (which the
// caller also holds around its own writes: a Writer is not safe for
// concurrent use), so that proxies keep a quiet stream open. The returned
// stop ends it and waits for its last write.
func KeepAlive(w *Writer, every time.Duration, mu *sync.Mutex) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				mu.Lock()
				_ = w.WriteComment("keep-alive")
				mu.Unlock()
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}
