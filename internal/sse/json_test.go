package sse_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/sse"
)

func TestJSONDecoder(t *testing.T) {
	type chunk struct {
		ID    string   `json:"id"`
		N     int      `json:"n"`
		Items []string `json:"items"`
	}
	d := sse.NewJSONDecoder()
	buf := []byte(`{"id":"a","n":1,"items":["x","y"]}`)
	var c chunk
	if err := d.Decode(buf, &c); err != nil || c.ID != "a" || c.N != 1 || len(c.Items) != 2 {
		t.Fatalf("first: %+v %v", c, err)
	}
	// The caller reuses its buffer for the next event; the decoded strings
	// must not change with it.
	copy(buf, `{"id":"b","n":2,"items":["z"]}    `)
	first := c
	c = chunk{}
	if err := d.Decode(buf, &c); err != nil || c.ID != "b" || c.N != 2 || len(c.Items) != 1 || first.ID != "a" || first.Items[1] != "y" {
		t.Fatalf("second: %+v (first now %+v) %v", c, first, err)
	}
	// A field of the wrong type is skipped; the rest decodes and the
	// decoder carries on.
	c = chunk{}
	err := d.Decode([]byte(`{"id":"c","n":"three"}`), &c)
	var typ *json.UnmarshalTypeError
	if !errors.As(err, &typ) || c.ID != "c" {
		t.Fatalf("type error: %+v %v", c, err)
	}
	if err := d.Decode([]byte(`{"id":"d"}`), &c); err != nil || c.ID != "d" {
		t.Fatalf("after a type error: %+v %v", c, err)
	}
	// Two values in one event, and a value cut short, are errors.
	if err := sse.NewJSONDecoder().Decode([]byte(`{"id":"e"} {"id":"f"}`), &c); err == nil {
		t.Error("two values in one event were accepted")
	}
	if err := sse.NewJSONDecoder().Decode([]byte(`{"id":`), &c); err == nil {
		t.Error("a truncated value was accepted")
	}
}

func BenchmarkJSONDecoder(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"hello"},"finish_reason":null}]}`)
	type chunk struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c chunk
			_ = json.Unmarshal(data, &c)
		}
	})
	b.Run("decoder", func(b *testing.B) {
		d := sse.NewJSONDecoder()
		b.ReportAllocs()
		for b.Loop() {
			var c chunk
			_ = d.Decode(data, &c)
		}
	})
}
