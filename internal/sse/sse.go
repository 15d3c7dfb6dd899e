// Package sse reads and writes Server-Sent Events (the text/event-stream
// format of the WHATWG HTML standard), the framing of every streamed answer
// AgentCraft sends or receives: OpenAI-compatible chunks, AG-UI events and the
// fake providers of llm/llmtest.
//
// A handler streams events with a Writer, which flushes after each one:
//
//	sw := sse.NewWriter(w)
//	for chunk := range chunks {
//		if err := sw.WriteData(chunk); err != nil {
//			return // the client went away
//		}
//	}
//
// A client parses a response body with a Reader:
//
//	r := sse.NewReader(resp.Body, nil)
//	for {
//		ev, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		...
//	}
//
// What a Writer writes, a Reader reads back: event name, data and id
// round-trip, except that line breaks inside data (CR, LF or CRLF) come back
// as LF, because the format cannot carry a bare CR.
package sse

// Event is one server-sent event.
type Event struct {
	// Event is the event name; empty means the default type, "message".
	Event string
	// Data is the payload. Multi-line data is joined with LF.
	Data []byte
	// ID is the last event ID in effect when the event was dispatched: as in
	// the standard, an event without an id line inherits the previous one.
	ID string
}
