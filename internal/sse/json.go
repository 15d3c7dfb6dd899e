package sse

import (
	"encoding/json"
	"errors"
	"io"
)

// JSONDecoder decodes the data of successive events, each holding one JSON
// value, with a single json.Decoder. Unlike json.Unmarshal it keeps its
// decoding state between values, which saves a few allocations per event
// on streams of thousands of chunks. The zero value is not usable; call
// NewJSONDecoder. It is not safe for concurrent use.
type JSONDecoder struct {
	in  feed
	dec *json.Decoder
}

// NewJSONDecoder returns a decoder for one stream.
func NewJSONDecoder() *JSONDecoder {
	d := &JSONDecoder{}
	d.dec = json.NewDecoder(&d.in)
	return d
}

// Decode decodes data, which must hold exactly one JSON value, into v.
// data may be reused by the caller once Decode returns. As with
// json.Unmarshal, a field of an unexpected type is skipped and reported as
// a *json.UnmarshalTypeError after the rest of v was decoded; the decoder
// stays usable. After any other error (malformed or truncated JSON, or
// more than one value) it is not: a stream that sends such an event is
// broken.
func (d *JSONDecoder) Decode(data []byte, v any) error {
	d.in.b = data
	err := d.dec.Decode(v)
	if err == nil && d.dec.More() {
		err = errors.New("sse: decode event: more than one JSON value in one event")
	}
	return err
}

// feed is the reader behind the json.Decoder: it holds one event's data
// at a time.
type feed struct{ b []byte }

func (f *feed) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.b)
	f.b = f.b[n:]
	return n, nil
}
