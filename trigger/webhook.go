package trigger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/store"
)

// Headers of a webhook delivery, besides egress.TimestampHeader and
// egress.SignatureHeader.
const (
	// DeliveryHeader is the sender's id for the delivery: a redelivery
	// with the same id gets the first one's run and starts none. Without
	// it the signature stands in, so replaying a request as captured
	// starts no second run either.
	DeliveryHeader = "X-AgentCraft-Delivery"
	// MaxDeliveryIDLength bounds DeliveryHeader.
	MaxDeliveryIDLength = 200
)

// DefaultReplayWindow is how far a delivery's timestamp may be from now.
const DefaultReplayWindow = egress.DefaultTolerance

// Errors of Deliver. The HTTP layer maps them: ErrUnknown 404 (unknown,
// disabled and schedule triggers alike), ErrSignature 401, ErrStale 401,
// ErrPending 409, *FieldError 400.
var (
	ErrUnknown   = errors.New("trigger: no such webhook")
	ErrSignature = errors.New("trigger: bad or missing webhook signature")
	ErrStale     = errors.New("trigger: webhook timestamp outside the replay window")
	ErrPending   = errors.New("trigger: the first delivery with this id is still starting its run")
)

// PendingTakeover is how long a claimed delivery without a run may stay
// so before a retry of it starts the run itself: the claimer is taken for
// dead (a start takes milliseconds). Until then a retry answers
// ErrPending.
const PendingTakeover = 30 * time.Second

// Delivery is what Deliver made of a request.
type Delivery struct {
	Run store.Run
	// Replay is set when the delivery id was seen already: Run is the
	// first delivery's run and nothing new started.
	Replay bool
}

// Deliver verifies a webhook request for trigger id (headers h, body
// read whole by the caller, who caps its size) and starts the trigger's
// run with the body (JSON; empty is null) as its input. The signature is
// checked before anything about the body or the delivery id is looked at.
// window is the replay window (0: DefaultReplayWindow).
func (s *Service) Deliver(ctx context.Context, id string, h http.Header, body []byte, window time.Duration, now time.Time) (Delivery, error) {
	t, err := s.st.Triggers().Lookup(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && (t.Kind != store.TriggerWebhook || !t.Enabled) {
		return Delivery{}, ErrUnknown
	}
	if err != nil {
		return Delivery{}, err
	}
	key, err := s.box.Open(t.SecretCiphertext, associatedData(t.WorkspaceID, t.ID))
	if err != nil {
		return Delivery{}, fmt.Errorf("trigger %s: open secret: %w", t.ID, err)
	}
	defer clear(key)
	sig := h.Get(egress.SignatureHeader)
	err = egress.VerifySplit(key, h.Get(egress.TimestampHeader), sig, body, window, now)
	switch {
	case errors.Is(err, egress.ErrSignatureExpired):
		return Delivery{}, fmt.Errorf("%w: %v", ErrStale, err)
	case err != nil:
		return Delivery{}, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	var input any
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &input); err != nil {
			return Delivery{}, &FieldError{Field: "body", Message: "the webhook body is not JSON: " + err.Error()}
		}
	}
	deliveryID := strings.TrimSpace(h.Get(DeliveryHeader))
	switch {
	case len(deliveryID) > MaxDeliveryIDLength:
		return Delivery{}, &FieldError{Field: DeliveryHeader, Message: fmt.Sprintf("%s is longer than %d bytes", DeliveryHeader, MaxDeliveryIDLength)}
	case deliveryID == "":
		sum := sha256.Sum256([]byte(strings.TrimSpace(sig)))
		deliveryID = "sig:" + hex.EncodeToString(sum[:16])
	}
	d := store.TriggerDelivery{WorkspaceID: t.WorkspaceID, TriggerID: t.ID, DeliveryID: deliveryID}
	got, first, err := s.st.Triggers().Deliver(ctx, d)
	if err != nil {
		return Delivery{}, err
	}
	// The run's id follows from the claim, so that whoever starts the
	// delivery's run (the claimer, or a retry after the claimer died)
	// starts the same one: a second start is ErrConflict, not a second run.
	runID := store.IDFor(got.CreatedAt, "webhook:"+t.ID+":"+deliveryID)
	takeover := false
	if !first {
		if got.RunID != "" {
			return s.replay(ctx, t, got.RunID)
		}
		// Claimed, no run recorded: the claimer is starting it, or it
		// started it and died before recording, or died before starting.
		if run, err := s.st.Runs().Get(ctx, t.WorkspaceID, runID); err == nil {
			d.RunID = run.ID
			if err := s.st.Triggers().DeliveryDone(ctx, d); err != nil {
				return Delivery{}, err
			}
			return Delivery{Run: run, Replay: true}, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return Delivery{}, err
		}
		if now.Sub(got.CreatedAt) < PendingTakeover {
			return Delivery{}, ErrPending
		}
		takeover = true // this retry takes the abandoned claim over
	}
	// The delivery is claimed: from here on finish the job even if the
	// sender hangs up, or forget the claim so that its retry may.
	ctx = context.WithoutCancel(ctx)
	run, err := s.start(ctx, t, runID, input)
	if errors.Is(err, store.ErrConflict) {
		// Another retry took the claim over at the same moment.
		run, err = s.st.Runs().Get(ctx, t.WorkspaceID, runID)
	}
	if err != nil {
		if ferr := s.st.Triggers().Forget(ctx, t.WorkspaceID, t.ID, deliveryID); ferr != nil {
			s.opts.Logger.Error("trigger_forget_delivery_failed", "trigger_id", t.ID, "delivery_id", deliveryID, "err", ferr)
		}
		return Delivery{}, err
	}
	d.RunID = run.ID
	if err := s.st.Triggers().DeliveryDone(ctx, d); err != nil {
		return Delivery{}, err
	}
	if takeover {
		s.opts.Logger.Info("trigger_delivery_taken_over", "trigger_id", t.ID, "workspace_id", t.WorkspaceID, "run_id", run.ID, "delivery_id", deliveryID)
		return Delivery{Run: run}, nil
	}
	s.opts.Logger.Info("trigger_delivered", "trigger_id", t.ID, "workspace_id", t.WorkspaceID, "run_id", run.ID, "delivery_id", deliveryID)
	return Delivery{Run: run}, nil
}

// replay answers a delivery seen before with the first one's run.
func (s *Service) replay(ctx context.Context, t store.Trigger, runID string) (Delivery, error) {
	run, err := s.st.Runs().Get(ctx, t.WorkspaceID, runID)
	if err != nil {
		return Delivery{}, err
	}
	return Delivery{Run: run, Replay: true}, nil
}
