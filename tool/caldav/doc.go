// Package caldav gives agents a calendar: the tools calendar_create_event
// and calendar_list_events over one CalDAV calendar collection (Nextcloud,
// Radicale, Fastmail, iCloud, any RFC 4791 server), built on go-webdav.
//
// Configure one calendar and register its tools:
//
//	cal, err := caldav.New(caldav.Config{
//		URL:      "https://dav.example.com/dav/calendars/alice/work/",
//		Username: "alice",
//		Password: appPassword,
//	})
//	if err != nil { ... }
//	for _, t := range cal.Tools() {
//		if err := reg.Register(t); err != nil { ... }
//	}
//
// Both tools have medium capability: creating an event changes a calendar
// others may see, and listing reads a private one. Every request carries
// the configured credentials, reads at most MaxResponseBytes of a body and
// honours the caller's context; failures come back to the model as error
// results that name the HTTP status and the URL path, never a secret.
//
// # Undo and idempotency in tasks
//
// calendar_create_event implements tool.KeyedArgs and tool.Undoable, which
// the task control plane finds by type assertion. Before it runs a step, it
// passes the step's idempotency key to WithIdempotencyKey, which turns the
// key into the event's UID (KeyUID: hex of SHA-256, "@agentcraft"). The
// event is written to <collection>/<uid>.ics with If-None-Match: *, so a
// step re-run after a crash finds its own event (HTTP 412 with the same
// summary, start and end), reports success and never creates a second
// one; a different event under that UID is an error result instead.
//
// After the call, the control plane stores UndoOf's payload (the event's
// href and uid) in the evidence ledger. Compensating the task calls Undo,
// which deletes the event; an event already gone counts as undone, so a
// compensation interrupted halfway can simply be run again.
//
// Package caldavtest serves an in-memory calendar for tests.
package caldav
