package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

// remindTool is task_remind, the Scheduler's reminder: a notification
// on the task's channel at a time. It belongs to the ledger (it needs the
// task's address), not to the workspace's tools; undo withdraws it while
// it is unsent.
type remindTool struct {
	st   store.Store
	task store.Task
	now  func() time.Time
}

func (remindTool) Name() string { return ToolRemind }
func (remindTool) Description() string {
	return "Sends a reminder on the channel the task came from at a given time."
}
func (remindTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to remind of"},"at":{"type":"string","format":"date-time","description":"when, RFC 3339"}},"required":["text","at"],"additionalProperties":false}`)
}
func (remindTool) Capability() tool.Capability { return tool.CapabilityLow }

type remindArgs struct {
	Text string `json:"text"`
	At   string `json:"at"`
}

func (r remindTool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	var a remindArgs
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return tool.ErrorResult("task_remind: arguments: %v; want {\"text\": ..., \"at\": RFC 3339}", err), nil
	}
	if strings.TrimSpace(a.Text) == "" {
		return tool.ErrorResult("task_remind: text is empty; say what to remind of"), nil
	}
	at, err := time.Parse(time.RFC3339, a.At)
	if err != nil {
		return tool.ErrorResult("task_remind: at %q is not an RFC 3339 time such as 2027-01-02T09:00:00+09:00", a.At), nil
	}
	if at.Before(r.now().Add(-time.Minute)) {
		return tool.ErrorResult("task_remind: at %s is in the past", at.Format(time.RFC3339)), nil
	}
	at = at.UTC()
	n, err := queue(ctx, r.st, r.task, KindReminder, Message{Text: "⏰ " + a.Text}, &at)
	if errors.Is(err, errNoChannel) {
		return tool.ErrorResult("task_remind: %v", err), nil
	}
	if err != nil {
		return tool.Result{}, fmt.Errorf("task_remind: %w", err)
	}
	out, _ := json.Marshal(map[string]any{"notification_id": n.ID, "text": a.Text, "at": at.Format(time.RFC3339)})
	return tool.Result{Content: string(out)}, nil
}

func (remindTool) UndoOf(_ json.RawMessage, res tool.Result) (json.RawMessage, error) {
	var out struct {
		ID string `json:"notification_id"`
	}
	if err := json.Unmarshal([]byte(res.Content), &out); err != nil || out.ID == "" {
		return nil, fmt.Errorf("task_remind: result names no notification")
	}
	return json.Marshal(out)
}

// Undo withdraws the reminder; one already sent cannot be.
func (r remindTool) Undo(ctx context.Context, payload json.RawMessage) error {
	var p struct {
		ID string `json:"notification_id"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return fmt.Errorf("task_remind: undo payload: %w", err)
	}
	n, err := r.st.Notifications().MarkFailed(ctx, r.task.WorkspaceID, p.ID, "withdrawn: the task was compensated")
	if errors.Is(err, store.ErrConflict) && n.Status != store.NotificationSent {
		return nil // failed already: nothing will be sent
	}
	if errors.Is(err, store.ErrConflict) {
		return errors.New("task_remind: the reminder was sent already and cannot be withdrawn")
	}
	return err
}
