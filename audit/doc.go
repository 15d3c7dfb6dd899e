// Package audit records who did what to what in the append-only audit log
// (store.AuditLog): guard decisions, detected personal data, credential
// changes and administrative actions.
//
// Callers hand events to a [Recorder]; the [AsyncRecorder] batches them off
// the request path:
//
//	rec := audit.NewAsyncRecorder(st.AuditLog(), &audit.Options{Logger: logger})
//	defer rec.Stop() // flushes what is queued
//	ctx = audit.WithScope(ctx, audit.Scope{WorkspaceID: ws.ID, Actor: audit.APIKeyActor(key.ID)})
//	rec.Record(ctx, store.AuditEvent{Action: "agent.create", Target: "agent:support",
//		Details: audit.Details(map[string]any{"model": "openai/gpt-4o"})})
//
// An event never carries personal data: [Details] passes every string
// through [Redact], which masks whatever the PII detector finds (all
// locales, irreversibly) and any long run of digits, so a caller cannot put
// an e-mail address or a card number into the log by mistake.
package audit
