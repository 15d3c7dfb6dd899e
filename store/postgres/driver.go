package postgres

import "github.com/agentcraftlab/agentcraft/store"

// driver implements store.Driver: the SQL verbs the store's Core runs on.
type driver struct{ s *Store }

var _ store.Driver = driver{}

// Name implements store.Driver.
func (driver) Name() string { return "postgres" }
