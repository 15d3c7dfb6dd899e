package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/kb"
	"github.com/agentcraftlab/agentcraft/search/extract"
)

// openKnowledge builds the search engine on the opened database with the
// configured embedder, and the knowledge service over it and the store.
// The engine serves memory (package memory) too.
func openKnowledge(ctx context.Context, cfg config.Config, o *openedDB, logger *slog.Logger) (*kb.Service, kb.Engine, func(), error) {
	emb, err := newEmbedder(cfg.Search.Embedder)
	if err != nil {
		return nil, nil, nil, err
	}
	eng, closeEngine, err := openSearch(ctx, o.db, emb, logger)
	if err != nil {
		return nil, nil, nil, err
	}
	svc, err := kb.New(kb.Options{Store: o.st, Engine: eng, Logger: logger, Limits: &extract.Limits{
		Timeout:   cfg.Search.ExtractTimeout,
		MaxMemory: cfg.Search.ExtractMemoryMiB << 20,
	}})
	if err != nil {
		closeEngine()
		return nil, nil, nil, err
	}
	return svc, eng, closeEngine, nil
}

// sweepKnowledge removes expired temporary knowledge bases and uploads
// every interval until ctx ends.
func sweepKnowledge(ctx context.Context, svc *kb.Service, every time.Duration, logger *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		bases, uploads, err := svc.Sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("knowledge_sweep_failed", "error", err)
		case bases+uploads > 0:
			logger.Info("knowledge_swept", "temporary_bases", bases, "uploads", uploads)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
