// Package triggertest signs webhook deliveries for tests, as a sender
// following the README's "Triggers" recipe would.
package triggertest

import (
	"net/http"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/trigger"
)

// Headers are the headers of a delivery of body to a trigger's webhook
// signed with secret at time at, with delivery as its delivery id (no
// delivery header when "").
func Headers(secret string, at time.Time, body, delivery string) http.Header {
	ts, sig := egress.SignSplit([]byte(secret), at, []byte(body))
	h := http.Header{}
	h.Set(egress.TimestampHeader, ts)
	h.Set(egress.SignatureHeader, sig)
	if delivery != "" {
		h.Set(trigger.DeliveryHeader, delivery)
	}
	return h
}
