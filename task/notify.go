package task

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// addressOf reads where a task answers; the zero Address when it is
// polled.
func addressOf(t store.Task) Address {
	var a Address
	if len(t.ReplyTo) > 0 {
		_ = json.Unmarshal(t.ReplyTo, &a)
	}
	return a
}

// notify queues m for the task's channel (nothing for a task without
// one), due at sendAt (nil: now), and logs a failure: a lost answer must
// not fail the step that produced it.
func notify(ctx context.Context, st store.Store, log *slog.Logger, t store.Task, kind string, m Message, sendAt *time.Time) {
	if _, err := queue(ctx, st, t, kind, m, sendAt); err != nil && !errors.Is(err, errNoChannel) {
		log.Error("task notification not queued", "task_id", t.ID, "kind", kind, "err", err)
	}
}

var errNoChannel = errors.New("the task came from no channel, so there is nowhere to send to")

// queue queues m for the task's channel.
func queue(ctx context.Context, st store.Store, t store.Task, kind string, m Message, sendAt *time.Time) (store.Notification, error) {
	n, err := notification(t, kind, m, sendAt)
	if err != nil {
		return store.Notification{}, err
	}
	return st.Notifications().Create(context.WithoutCancel(ctx), n)
}

// notification is m for the task's channel, due at sendAt (nil: now), or
// errNoChannel. The reply token of the asking message travels along, so
// a sender answers with it while it is fresh.
func notification(t store.Task, kind string, m Message, sendAt *time.Time) (store.Notification, error) {
	a := addressOf(t)
	if a.Channel == "" || a.Target == "" {
		return store.Notification{}, errNoChannel
	}
	if sendAt == nil {
		m.ReplyToken, m.ReceivedAt = a.ReplyToken, a.ReceivedAt
	}
	payload, err := json.Marshal(m)
	if err != nil {
		return store.Notification{}, err
	}
	return store.Notification{WorkspaceID: t.WorkspaceID, TaskID: t.ID,
		Channel: a.Channel, Target: a.Target, Kind: kind, Payload: payload, SendAt: sendAt}, nil
}

// answer is the notification that tells the asker of t's end (kind and
// m), for TaskUpdate.Notification: nil when t came from no channel.
func answer(log *slog.Logger, t store.Task, kind string, m Message) *store.Notification {
	n, err := notification(t, kind, m, nil)
	if err != nil {
		if !errors.Is(err, errNoChannel) {
			log.Error("task notification not queued", "task_id", t.ID, "kind", kind, "err", err)
		}
		return nil
	}
	return &n
}

// deliverGiveUp is how long a notification that keeps failing with
// retryable errors stays pending before it is failed.
const deliverGiveUp = time.Hour

// Deliver sends the due notifications through the senders of their
// channels, once each: a sent one is marked sent, one refused for good
// (ErrPermanent, or failing for over an hour) failed; one whose channel
// has no sender here stays pending for a process that has it. It
// returns how many it sent.
func (s *Service) Deliver(ctx context.Context) (int, error) {
	due, err := s.st.Notifications().Due(ctx, s.now(), 100)
	if err != nil {
		return 0, err
	}
	sent := 0
	for _, n := range due {
		snd := s.senders[n.Channel]
		if snd == nil {
			continue
		}
		if !s.mayTry(n.ID) {
			continue
		}
		var m Message
		if err := json.Unmarshal(n.Payload, &m); err != nil {
			_, _ = s.st.Notifications().MarkFailed(ctx, n.WorkspaceID, n.ID, "payload: "+err.Error())
			continue
		}
		if err := snd.Send(ctx, n, m); err != nil {
			if errors.Is(err, ErrPermanent) || s.now().Sub(n.CreatedAt) > deliverGiveUp {
				_, _ = s.st.Notifications().MarkFailed(ctx, n.WorkspaceID, n.ID, err.Error())
				s.tried(n.ID, true)
			} else {
				s.tried(n.ID, false)
			}
			s.log.Warn("notification not delivered", "notification_id", n.ID, "channel", n.Channel, "err", err)
			continue
		}
		s.tried(n.ID, true)
		if _, err := s.st.Notifications().MarkSent(ctx, n.WorkspaceID, n.ID, s.now()); err != nil {
			s.log.Warn("notification sent but not marked", "notification_id", n.ID, "err", err)
		}
		sent++
	}
	return sent, nil
}

// Backoff of a notification whose channel keeps failing: 2 s, doubling,
// at most 5 minutes between tries, so a channel that is down is not
// hammered every pass.
const (
	retryFirst = 2 * time.Second
	retryMax   = 5 * time.Minute
)

// mayTry reports whether notification id is due for a try.
func (s *Service) mayTry(id string) bool {
	s.retryMu.Lock()
	defer s.retryMu.Unlock()
	st, ok := s.retry[id]
	return !ok || !s.now().Before(st.next)
}

// tried records a try of notification id; done forgets it.
func (s *Service) tried(id string, done bool) {
	s.retryMu.Lock()
	defer s.retryMu.Unlock()
	if done {
		delete(s.retry, id)
		return
	}
	st := s.retry[id]
	st.tries++
	wait := retryFirst << min(st.tries-1, 20)
	st.next = s.now().Add(min(wait, retryMax))
	s.retry[id] = st
}
