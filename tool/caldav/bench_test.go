package caldav_test

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkCreateEvent measures one create against caldavtest: encoding,
// the PUT through the auth client and the answer.
func BenchmarkCreateEvent(b *testing.B) {
	e := newEnv(b)
	args := json.RawMessage(`{"summary":"Standup","start":"2026-03-14T09:00:00Z","location":"Room 4"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.create.Call(ctx, args)
		if err != nil || res.IsError {
			b.Fatalf("create = %+v, %v", res, err)
		}
	}
}

// BenchmarkCreateEventRetry measures a retried step: the 412 and the GET
// that proves the existing event is ours.
func BenchmarkCreateEventRetry(b *testing.B) {
	e := newEnv(b)
	args, err := e.create.WithIdempotencyKey(json.RawMessage(`{"summary":"Standup","start":"2026-03-14T09:00:00Z"}`), "step-1")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if res, err := e.create.Call(ctx, args); err != nil || res.IsError {
		b.Fatalf("create = %+v, %v", res, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.create.Call(ctx, args)
		if err != nil || res.IsError {
			b.Fatalf("retry = %+v, %v", res, err)
		}
	}
}
