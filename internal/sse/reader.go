package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxEventSize is the largest event a Reader accepts by default.
const DefaultMaxEventSize = 1 << 20

// lineSlack is what a line may hold beyond MaxEventSize: a field name and
// its colon and space.
const lineSlack = 64

// ErrEventTooLarge reports an event or line larger than the Reader's limit.
var ErrEventTooLarge = errors.New("sse: event too large")

// ReaderOptions configures a Reader.
type ReaderOptions struct {
	// MaxEventSize caps the data of one event, and the length of one line,
	// in bytes. Default DefaultMaxEventSize.
	MaxEventSize int
	// ReuseData makes an event's Data valid only until the next call to
	// Next, sparing one allocation per event for callers that decode it
	// at once (a proxy reads thousands of events a second). Default false:
	// Data is the caller's.
	ReuseData bool
	// BufferSize is the read buffer's size in bytes (at least 16). Lines
	// longer than it are assembled across reads, so it bounds memory, not
	// line length. Default 4096; a proxy holding many open streams whose
	// events are a few hundred bytes uses less.
	BufferSize int
}

// Reader parses an event stream. It accepts CRLF, LF and CR line endings,
// skips comments and a leading byte order mark, and, as the standard says,
// drops an event the stream ends in the middle of (one not followed by a
// blank line). It is not safe for concurrent use.
type Reader struct {
	br    *bufio.Reader
	max   int  // MaxEventSize
	reuse bool // ReuseData
	// skipLF is set when the last line ended with CR: an LF right after it
	// completes a CRLF and is not a line of its own.
	skipLF  bool
	started bool
	line    []byte // the line being assembled when it spans reads
	data    []byte // data buffer of the event being parsed
	event   string // event type buffer
	lastID  string // last event ID buffer
	err     error  // sticky: once set, Next returns it
}

// NewReader returns a Reader on r. Nil options mean defaults.
func NewReader(r io.Reader, opts *ReaderOptions) *Reader {
	limit := DefaultMaxEventSize
	if opts != nil && opts.MaxEventSize > 0 {
		limit = opts.MaxEventSize
	}
	size := 4096
	if opts != nil && opts.BufferSize > 0 {
		size = opts.BufferSize
	}
	return &Reader{br: bufio.NewReaderSize(r, size), max: limit, reuse: opts != nil && opts.ReuseData}
}

var bom = []byte("\xEF\xBB\xBF")

// Next returns the next event. At the end of the stream it returns io.EOF;
// an event larger than the limit yields an error wrapping ErrEventTooLarge.
// The returned Data is the caller's, unless ReaderOptions.ReuseData.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	if !r.started {
		r.started = true
		if b, _ := r.br.Peek(len(bom)); bytes.Equal(b, bom) {
			_, _ = r.br.Discard(len(bom))
		}
	}
	for {
		line, err := r.readLine()
		if err != nil {
			r.err = err
			return Event{}, err
		}
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if err := r.field(line); err != nil {
			r.err = err
			return Event{}, err
		}
	}
}

// field processes one non-empty line.
func (r *Reader) field(line []byte) error {
	if line[0] == ':' {
		return nil // comment
	}
	name, value, found := bytes.Cut(line, []byte{':'})
	if found && len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(name) {
	case "event":
		r.event = string(value)
	case "data":
		if len(r.data)+len(value) > r.max {
			return fmt.Errorf("sse: read event: %w: data exceeds %d bytes", ErrEventTooLarge, r.max)
		}
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.lastID = string(value)
		}
	}
	// Other fields, retry included, are ignored.
	return nil
}

// dispatch ends the event being parsed; ok is false when it had no data.
func (r *Reader) dispatch() (ev Event, ok bool) {
	defer func() {
		r.data = r.data[:0]
		r.event = ""
	}()
	if len(r.data) == 0 {
		return Event{}, false
	}
	data := r.data[:len(r.data)-1]
	if !r.reuse {
		data = bytes.Clone(data)
		if data == nil {
			data = []byte{}
		}
	}
	return Event{Event: r.event, Data: data, ID: r.lastID}, true
}

// readLine returns the next line without its terminator. The line is valid
// until the next call. A line cut off by the end of the stream is dropped:
// it could only have added to an event that will not be dispatched.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				if errors.Is(err, io.EOF) {
					return nil, io.EOF
				}
				return nil, fmt.Errorf("sse: read event: %w", err)
			}
		}
		buf, _ := r.br.Peek(r.br.Buffered())
		if r.skipLF {
			r.skipLF = false
			if buf[0] == '\n' {
				_, _ = r.br.Discard(1)
				continue
			}
		}
		i := lineBreak(buf)
		if i < 0 {
			if len(r.line)+len(buf) > r.max+lineSlack {
				return nil, fmt.Errorf("sse: read event: %w: line exceeds %d bytes", ErrEventTooLarge, r.max+lineSlack)
			}
			r.line = append(r.line, buf...)
			_, _ = r.br.Discard(len(buf))
			continue
		}
		if len(r.line)+i > r.max+lineSlack {
			return nil, fmt.Errorf("sse: read event: %w: line exceeds %d bytes", ErrEventTooLarge, r.max+lineSlack)
		}
		r.skipLF = buf[i] == '\r'
		var line []byte
		if len(r.line) == 0 {
			line = buf[:i] // valid until the next read from br
		} else {
			r.line = append(r.line, buf[:i]...)
			line = r.line
		}
		_, _ = r.br.Discard(i + 1)
		return line, nil
	}
}
