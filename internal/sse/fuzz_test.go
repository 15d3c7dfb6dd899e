package sse_test

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/google/go-cmp/cmp"
)

// FuzzReader feeds arbitrary bytes to the Reader. It must never panic, fail
// only with ErrEventTooLarge (the input cannot fail to read), and what it
// parsed must survive a round trip through the Writer unchanged. The input,
// taken as the data of one event, must round-trip too.
func FuzzReader(f *testing.F) {
	for _, seed := range []string{
		"data: a\n\n",
		"data: a\r\n\r\ndata: b\r\rdata: c\n\n",
		"event: delta\nid: 7\ndata: {\"x\":1}\ndata: y\n\n",
		": comment\n\nid\ndata\n\n",
		"\xEF\xBB\xBFdata: bom\n\n",
		"id: 1\x002\ndata: nul\n\nretry: 10\n\n",
		"data: [DONE]\n\ndata: cut",
		"data:  two spaces\r\n\r\n",
		"\r\n\r\n\n\r",
	} {
		f.Add([]byte(seed))
	}
	const limit = 1 << 12
	f.Fuzz(func(t *testing.T, input []byte) {
		parsed, err := readAll(bytes.NewReader(input), &sse.ReaderOptions{MaxEventSize: limit})
		if err != nil && !errors.Is(err, sse.ErrEventTooLarge) {
			t.Fatalf("read: unexpected error %v", err)
		}
		for _, e := range parsed {
			if len(e.Data) > limit {
				t.Fatalf("event of %d bytes passed the %d-byte limit", len(e.Data), limit)
			}
		}

		// Round trip of what was parsed.
		rec := httptest.NewRecorder()
		w := sse.NewWriter(rec)
		for _, e := range parsed {
			if err := w.WriteEvent(e); err != nil {
				t.Fatalf("WriteEvent(%+v): %v", e, err)
			}
		}
		again, err := readAll(rec.Body, &sse.ReaderOptions{MaxEventSize: limit})
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		if diff := cmp.Diff(parsed, again); diff != "" {
			t.Fatalf("round trip changed the events (-written +read):\n%s", diff)
		}

		// Round trip of the input as data; line breaks come back as LF.
		rec = httptest.NewRecorder()
		if err := sse.NewWriter(rec).WriteData(input); err != nil {
			t.Fatalf("WriteData: %v", err)
		}
		got, err := readAll(rec.Body, &sse.ReaderOptions{MaxEventSize: len(input) + 1})
		if err != nil {
			t.Fatalf("read back data: %v", err)
		}
		want := []sse.Event{{Data: []byte(normalizeLineBreaks(string(input)))}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("data round trip mismatch (-want +got):\n%s", diff)
		}
	})
}

func normalizeLineBreaks(s string) string {
	return strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(s)
}
