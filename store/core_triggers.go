package store

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Triggers implements Store.
func (c Core) Triggers() Triggers { return triggers{c} }

// triggers is Triggers on a Driver.
type triggers struct{ c Core }

func (triggers) prepare(t Trigger) (*TriggerWriteParams, error) {
	if t.Misfire == "" {
		t.Misfire = MisfireSkip
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	t.Input = cloneJSON(t.Input)
	t.SecretCiphertext = sealed(t.SecretCiphertext)
	st := now()
	t.CreatedAt, t.UpdatedAt = st, st
	return &TriggerWriteParams{Trigger: t}, nil
}

func (r triggers) Create(ctx context.Context, t Trigger) (Trigger, error) {
	if t.ID == "" {
		t.ID = NewID()
	}
	p, err := r.prepare(t)
	if err != nil {
		return Trigger{}, r.c.errorf("create trigger: %w", err)
	}
	if err := r.c.d.TriggerInsert(ctx, p); err != nil {
		return Trigger{}, r.c.errorf("create trigger %q: %w", t.Name, err)
	}
	return p.Trigger, nil
}

func (r triggers) Get(ctx context.Context, workspaceID, id string) (Trigger, error) {
	t, err := r.c.d.TriggerGet(ctx, workspaceID, id)
	if err != nil {
		return Trigger{}, r.c.errorf("get trigger %s: %w", id, err)
	}
	return t, nil
}

func (r triggers) Lookup(ctx context.Context, id string) (Trigger, error) {
	t, err := r.c.d.TriggerLookup(ctx, id)
	if err != nil {
		return Trigger{}, r.c.errorf("look up trigger %s: %w", id, err)
	}
	return t, nil
}

func (r triggers) List(ctx context.Context, workspaceID string) ([]Trigger, error) {
	out, err := r.c.d.TriggerList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list triggers: %w", err)
	}
	return out, nil
}

func (r triggers) Schedules(ctx context.Context) ([]Trigger, error) {
	out, err := r.c.d.TriggerListSchedules(ctx)
	if err != nil {
		return nil, r.c.errorf("list schedules: %w", err)
	}
	return out, nil
}

func (r triggers) Version(ctx context.Context) (string, error) {
	n, newest, err := r.c.d.TriggerVersion(ctx)
	if err != nil {
		return "", r.c.errorf("trigger version: %w", err)
	}
	return strconv.FormatInt(n, 10) + ":" + strconv.FormatInt(newest, 10), nil
}

func (r triggers) Update(ctx context.Context, t Trigger) (Trigger, error) {
	if t.ID == "" {
		return Trigger{}, r.c.errorf("update trigger: %w: id is empty; set Trigger.ID", ErrInvalid)
	}
	old, err := r.Get(ctx, t.WorkspaceID, t.ID)
	if err != nil {
		return Trigger{}, err
	}
	p, err := r.prepare(t)
	if err != nil {
		return Trigger{}, r.c.errorf("update trigger: %w", err)
	}
	p.Trigger.CreatedAt = old.CreatedAt
	// A change must move Version even within one microsecond of the last.
	if !p.Trigger.UpdatedAt.After(old.UpdatedAt) {
		p.Trigger.UpdatedAt = old.UpdatedAt.Add(time.Microsecond)
	}
	if err := r.c.d.TriggerUpdate(ctx, p); err != nil {
		return Trigger{}, r.c.errorf("update trigger %q: %w", t.Name, err)
	}
	return p.Trigger, nil
}

func (r triggers) Delete(ctx context.Context, workspaceID, id string) error {
	if err := r.c.d.TriggerDelete(ctx, workspaceID, id); err != nil {
		return r.c.errorf("delete trigger %s: %w", id, err)
	}
	return nil
}

func (r triggers) Fire(ctx context.Context, f TriggerFire) (TriggerFire, bool, error) {
	switch {
	case f.WorkspaceID == "" || f.TriggerID == "":
		return TriggerFire{}, false, r.c.errorf("fire trigger: %w: workspace and trigger id are required", ErrInvalid)
	case f.Tick.IsZero():
		return TriggerFire{}, false, r.c.errorf("fire trigger %s: %w: tick is zero; set TriggerFire.Tick", f.TriggerID, ErrInvalid)
	case f.Missed < 0:
		return TriggerFire{}, false, r.c.errorf("fire trigger %s: %w: missed is negative", f.TriggerID, ErrInvalid)
	}
	f.Tick = Timestamp(f.Tick)
	f.RunID, f.Error = "", ""
	f.CreatedAt = now()
	err := r.c.d.TriggerFireInsert(ctx, &TriggerFireParams{Fire: f})
	if errors.Is(err, ErrConflict) {
		got, gerr := r.c.d.TriggerFireGet(ctx, &TriggerFireParams{Fire: f})
		if gerr != nil {
			return TriggerFire{}, false, r.c.errorf("fire trigger %s at %s: %w", f.TriggerID, f.Tick.Format(time.RFC3339), gerr)
		}
		return got, false, nil
	}
	if err != nil {
		return TriggerFire{}, false, r.c.errorf("fire trigger %s at %s: %w", f.TriggerID, f.Tick.Format(time.RFC3339), err)
	}
	return f, true, nil
}

func (r triggers) FireDone(ctx context.Context, f TriggerFire) error {
	f.Tick = Timestamp(f.Tick)
	if err := r.c.d.TriggerFireUpdate(ctx, &TriggerFireParams{Fire: f}); err != nil {
		return r.c.errorf("record fire of trigger %s at %s: %w", f.TriggerID, f.Tick.Format(time.RFC3339), err)
	}
	return nil
}

func (r triggers) Unstarted(ctx context.Context, before time.Time, limit int) ([]TriggerFire, error) {
	if limit <= 0 {
		limit = 100
	}
	out, err := r.c.d.TriggerFireListUnstarted(ctx, Timestamp(before), limit)
	if err != nil {
		return nil, r.c.errorf("list unstarted fires: %w", err)
	}
	return out, nil
}

func (r triggers) Fires(ctx context.Context, workspaceID, triggerID string, limit int) ([]TriggerFire, error) {
	if limit <= 0 {
		limit = 100
	}
	out, err := r.c.d.TriggerFireList(ctx, workspaceID, triggerID, limit)
	if err != nil {
		return nil, r.c.errorf("list fires of trigger %s: %w", triggerID, err)
	}
	return out, nil
}

func (r triggers) Deliver(ctx context.Context, d TriggerDelivery) (TriggerDelivery, bool, error) {
	if d.WorkspaceID == "" || d.TriggerID == "" || d.DeliveryID == "" {
		return TriggerDelivery{}, false, r.c.errorf("record delivery: %w: workspace, trigger and delivery id are required", ErrInvalid)
	}
	d.CreatedAt = now()
	err := r.c.d.TriggerDeliveryInsert(ctx, &TriggerDeliveryParams{Delivery: d})
	if errors.Is(err, ErrConflict) {
		got, gerr := r.c.d.TriggerDeliveryGet(ctx, &TriggerDeliveryParams{Delivery: d})
		if gerr != nil {
			return TriggerDelivery{}, false, r.c.errorf("record delivery %q: %w", d.DeliveryID, gerr)
		}
		return got, false, nil
	}
	if err != nil {
		return TriggerDelivery{}, false, r.c.errorf("record delivery %q: %w", d.DeliveryID, err)
	}
	return d, true, nil
}

func (r triggers) DeliveryDone(ctx context.Context, d TriggerDelivery) error {
	if err := r.c.d.TriggerDeliveryUpdate(ctx, &TriggerDeliveryParams{Delivery: d}); err != nil {
		return r.c.errorf("record run of delivery %q: %w", d.DeliveryID, err)
	}
	return nil
}

func (r triggers) Forget(ctx context.Context, workspaceID, triggerID, deliveryID string) error {
	err := r.c.d.TriggerDeliveryDelete(ctx, &TriggerDeliveryParams{Delivery: TriggerDelivery{WorkspaceID: workspaceID, TriggerID: triggerID, DeliveryID: deliveryID}})
	if err != nil {
		return r.c.errorf("forget delivery %q: %w", deliveryID, err)
	}
	return nil
}
