package store

import (
	"context"
	"time"
)

// TriggerDriver holds the verbs of Triggers.
type TriggerDriver interface {
	// TriggerInsert inserts p.Trigger, complete and stamped.
	TriggerInsert(ctx context.Context, p *TriggerWriteParams) error
	TriggerGet(ctx context.Context, workspaceID, id string) (Trigger, error)
	// TriggerLookup reads the trigger by id alone.
	TriggerLookup(ctx context.Context, id string) (Trigger, error)
	// TriggerList orders by name (bytewise).
	TriggerList(ctx context.Context, workspaceID string) ([]Trigger, error)
	// TriggerListSchedules returns the enabled schedule triggers of every
	// workspace, by id (bytewise).
	TriggerListSchedules(ctx context.Context) ([]Trigger, error)
	// TriggerVersion returns the number of triggers and the newest
	// updated_at among them (zero time for none).
	TriggerVersion(ctx context.Context) (count int64, newest int64, err error)
	// TriggerUpdate rewrites every column but workspace, id and
	// created_at; no row matched is ErrNotFound.
	TriggerUpdate(ctx context.Context, p *TriggerWriteParams) error
	// TriggerDelete deletes the trigger with its fires and deliveries.
	TriggerDelete(ctx context.Context, workspaceID, id string) error
	// TriggerFireInsert inserts p.Fire; a (trigger, tick) recorded
	// already is ErrConflict and writes nothing; a trigger that is not
	// the workspace's is ErrNotFound.
	TriggerFireInsert(ctx context.Context, p *TriggerFireParams) error
	// TriggerFireGet reads the fire of (trigger, tick).
	TriggerFireGet(ctx context.Context, p *TriggerFireParams) (TriggerFire, error)
	// TriggerFireUpdate sets run_id and error of (trigger, tick).
	TriggerFireUpdate(ctx context.Context, p *TriggerFireParams) error
	// TriggerFireList orders by tick, newest first.
	TriggerFireList(ctx context.Context, workspaceID, triggerID string, limit int) ([]TriggerFire, error)
	// TriggerFireListUnstarted returns the fires of every workspace with
	// run_id and error both empty and created_at before before, ordered
	// by created_at, then trigger_id and tick.
	TriggerFireListUnstarted(ctx context.Context, before time.Time, limit int) ([]TriggerFire, error)
	// TriggerDeliveryInsert inserts p.Delivery; an id recorded already is
	// ErrConflict; a trigger not the workspace's is ErrNotFound.
	TriggerDeliveryInsert(ctx context.Context, p *TriggerDeliveryParams) error
	TriggerDeliveryGet(ctx context.Context, p *TriggerDeliveryParams) (TriggerDelivery, error)
	// TriggerDeliveryUpdate sets the run of the delivery.
	TriggerDeliveryUpdate(ctx context.Context, p *TriggerDeliveryParams) error
	TriggerDeliveryDelete(ctx context.Context, p *TriggerDeliveryParams) error
}

// TriggerWriteParams is the row a trigger write stores.
type TriggerWriteParams struct {
	Trigger Trigger
}

// TriggerFireParams names (or, to insert, is) one fire.
type TriggerFireParams struct {
	Fire TriggerFire
}

// TriggerDeliveryParams names (or, to insert, is) one delivery.
type TriggerDeliveryParams struct {
	Delivery TriggerDelivery
}
