package metrics

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentcraftlab/agentcraft/internal/database"
)

// DatabaseOptions configure WatchDatabase.
type DatabaseOptions struct {
	// Timeout bounds the queries of one scrape, so that a locked or slow
	// database delays a scrape by at most that much. Default 2 s.
	Timeout time.Duration
	// Logger receives the queries' failures (at most one line a minute).
	// Default: discard.
	Logger *slog.Logger
}

// WatchDatabase registers a collector that reads, at each scrape (never
// polled in between), the job queue's depth and the age of its oldest
// available job (River's river_job), the pending approvals, and the
// database's size: on SQLite page_count × page_size, the free pages'
// bytes (freelist_count) and the -wal file; on PostgreSQL
// pg_database_size. agentcraft_database_up says whether the queries
// answered in time; when they did not, the other families are left out of
// that scrape rather than reported as zero.
func (m *Metrics) WatchDatabase(db *database.DB, opts *DatabaseOptions) error {
	if m == nil {
		return nil
	}
	var o DatabaseOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := &dbCollector{db: db, opts: o,
		up: prometheus.NewDesc(namespace+"_database_up",
			"1 when the database answered this scrape's queries within the timeout, else 0.", nil, nil),
		size: prometheus.NewDesc(namespace+"_database_size_bytes",
			"Size of the database: page_count × page_size on SQLite (the main file, free pages included), pg_database_size on PostgreSQL.", nil, nil),
		free: prometheus.NewDesc(namespace+"_database_free_bytes",
			"SQLite: bytes of free pages in the main file (freelist_count × page_size), reusable without growing it (VACUUM returns them).", nil, nil),
		wal: prometheus.NewDesc(namespace+"_database_wal_size_bytes",
			"SQLite: size of the -wal file (write-ahead log not yet checkpointed into the main file).", nil, nil),
		depth: prometheus.NewDesc(namespace+"_queue_available_jobs",
			"Jobs available to work now (River state available), by queue.", []string{"queue"}, nil),
		oldest: prometheus.NewDesc(namespace+"_queue_oldest_available_job_age_seconds",
			"Age of the oldest available job since it became due (scheduled_at), by queue; a growing value means workers fall behind.", []string{"queue"}, nil),
		approvals: prometheus.NewDesc(namespace+"_approvals_pending",
			"Approvals waiting for a decision, in every workspace.", nil, nil),
	}
	return m.reg.Register(c)
}

type dbCollector struct {
	db   *database.DB
	opts DatabaseOptions

	up, size, free, wal, depth, oldest, approvals *prometheus.Desc

	// lastLog is when a failure was last logged (Unix nanoseconds), so
	// that a database down for an hour of 15 s scrapes logs 60 lines, not
	// 240. Atomic: two scrapers may collect at once.
	lastLog atomic.Int64
}

func (c *dbCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.size, c.free, c.wal, c.depth, c.oldest, c.approvals} {
		ch <- d
	}
}

// dbStats is what one scrape read.
type dbStats struct {
	size, free, wal int64
	sqlite          bool
	queues          []queueStat
	approvals       int64
}

type queueStat struct {
	name   string
	jobs   int64
	oldest float64 // seconds
}

func (c *dbCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.Timeout)
	defer cancel()
	st, err := c.read(ctx)
	if err != nil {
		now := time.Now().UnixNano()
		if last := c.lastLog.Load(); now-last > int64(time.Minute) && c.lastLog.CompareAndSwap(last, now) {
			c.opts.Logger.Warn("metrics_database_unavailable", "error", err)
		}
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(st.size))
	if st.sqlite {
		ch <- prometheus.MustNewConstMetric(c.free, prometheus.GaugeValue, float64(st.free))
		ch <- prometheus.MustNewConstMetric(c.wal, prometheus.GaugeValue, float64(st.wal))
	}
	for _, q := range st.queues {
		ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(q.jobs), bounded(q.name))
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, max(q.oldest, 0), bounded(q.name))
	}
	ch <- prometheus.MustNewConstMetric(c.approvals, prometheus.GaugeValue, float64(st.approvals))
}

// rowQuerier is what *sql.DB and the pgx pool share for these queries.
type rowQuerier interface {
	queryRow(ctx context.Context, q string, dest ...any) error
	query(ctx context.Context, q string, each func(scan func(dest ...any) error) error) error
}

func (c *dbCollector) read(ctx context.Context) (dbStats, error) {
	var st dbStats
	var q rowQuerier
	var queueSQL string
	switch c.db.Kind() {
	case database.SQLite:
		st.sqlite = true
		q = sqlQuerier{c.db.Reader()}
		var pages, freePages, pageSize int64
		if err := q.queryRow(ctx, "SELECT page_count, freelist_count, page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()",
			&pages, &freePages, &pageSize); err != nil {
			return st, fmt.Errorf("read page counts: %w", err)
		}
		st.size, st.free = pages*pageSize, freePages*pageSize
		fi, err := os.Stat(c.db.Path() + "-wal")
		switch {
		case err == nil:
			st.wal = fi.Size()
		case !errors.Is(err, os.ErrNotExist):
			return st, fmt.Errorf("stat the -wal file: %w", err)
		}
		// scheduled_at is River's text timestamp (UTC, as datetime()
		// writes it), which julianday reads.
		queueSQL = `SELECT queue, count(*), coalesce((julianday('now') - julianday(min(scheduled_at))) * 86400.0, 0)
			FROM river_job WHERE state = 'available' GROUP BY queue ORDER BY queue`
	case database.Postgres:
		q = pgQuerier{c.db}
		if err := q.queryRow(ctx, "SELECT pg_database_size(current_database())", &st.size); err != nil {
			return st, fmt.Errorf("read pg_database_size: %w", err)
		}
		queueSQL = `SELECT queue, count(*), coalesce(extract(epoch FROM now() - min(scheduled_at))::float8, 0)
			FROM river_job WHERE state = 'available' GROUP BY queue ORDER BY queue`
	default:
		return st, errors.New("no database is open")
	}
	err := q.query(ctx, queueSQL, func(scan func(dest ...any) error) error {
		var s queueStat
		if err := scan(&s.name, &s.jobs, &s.oldest); err != nil {
			return err
		}
		st.queues = append(st.queues, s)
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("read the job queue: %w", err)
	}
	if err := q.queryRow(ctx, "SELECT count(*) FROM approvals WHERE status = 'pending'", &st.approvals); err != nil {
		return st, fmt.Errorf("count pending approvals: %w", err)
	}
	return st, nil
}

type sqlQuerier struct{ db *sql.DB }

func (s sqlQuerier) queryRow(ctx context.Context, q string, dest ...any) error {
	return s.db.QueryRowContext(ctx, q).Scan(dest...)
}

func (s sqlQuerier) query(ctx context.Context, q string, each func(scan func(dest ...any) error) error) error {
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

type pgQuerier struct{ db *database.DB }

func (p pgQuerier) queryRow(ctx context.Context, q string, dest ...any) error {
	return p.db.Pool().QueryRow(ctx, q).Scan(dest...)
}

func (p pgQuerier) query(ctx context.Context, q string, each func(scan func(dest ...any) error) error) error {
	rows, err := p.db.Pool().Query(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
