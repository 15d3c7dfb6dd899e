package middleware

import (
	"github.com/agentcraftlab/agentcraft/guard"
	"github.com/agentcraftlab/agentcraft/pii"

	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
)

// Settings select and tune the middleware of one provider or agent, as
// written in configuration:
//
//	rate_limit: {enabled: true, rps: 2, burst: 4, queue: 20, timeout: 45s}
//	retry:      {enabled: true, max_retries: 5, base_delay: 500ms, max_delay: 8s}
//	logging:    {enabled: true}
//
// Unset fields (nil, zero) take the default, which lets Merge layer an
// agent's settings over its provider's.
type Settings struct {
	// Guard and PII are off unless set; an agent's replace its provider's
	// whole (they are policies, not single knobs).
	Guard     *GuardSettings    `yaml:"guard,omitempty" json:"guard,omitempty"`
	PII       *PIISettings      `yaml:"pii,omitempty" json:"pii,omitempty"`
	RateLimit RateLimitSettings `yaml:"rate_limit,omitempty" json:"rate_limit,omitzero"`
	Retry     RetrySettings     `yaml:"retry,omitempty" json:"retry,omitzero"`
	Logging   LoggingSettings   `yaml:"logging,omitempty" json:"logging,omitzero"`
}

// GuardSettings configure Guard: rules, injection detection, topics.
type GuardSettings struct {
	Rules []struct {
		Name     string       `yaml:"name" json:"name"`
		Keywords []string     `yaml:"keywords,omitempty" json:"keywords,omitempty"`
		Pattern  string       `yaml:"pattern,omitempty" json:"pattern,omitempty"`
		Action   guard.Action `yaml:"action" json:"action"`
		Message  string       `yaml:"message,omitempty" json:"message,omitempty"`
		// Direction is input, output or empty for both.
		Direction string `yaml:"direction,omitempty" json:"direction,omitempty"`
	} `yaml:"rules,omitempty" json:"rules,omitempty"`
	Injection bool `yaml:"injection,omitempty" json:"injection,omitempty"`
	Topics    []struct {
		Name     string   `yaml:"name" json:"name"`
		Keywords []string `yaml:"keywords" json:"keywords"`
	} `yaml:"topics,omitempty" json:"topics,omitempty"`
	BlockMessage    string `yaml:"block_message,omitempty" json:"block_message,omitempty"`
	OffTopicMessage string `yaml:"off_topic_message,omitempty" json:"off_topic_message,omitempty"`
	// ScanOutput also checks answers (streams are held back until scanned).
	// A rule with direction output turns it on by itself: such a rule
	// would otherwise never see any text.
	ScanOutput bool `yaml:"scan_output,omitempty" json:"scan_output,omitempty"`
}

// scansOutput reports whether answers are checked: scan_output is set or a
// rule is meant for output only.
func (g *GuardSettings) scansOutput() bool {
	if g.ScanOutput {
		return true
	}
	for _, r := range g.Rules {
		if r.Direction == "output" {
			return true
		}
	}
	return false
}

// Policy builds the guard.Filter these settings describe.
func (g *GuardSettings) Policy() (*guard.Filter, error) {
	o := guard.Options{Injection: g.Injection, BlockMessage: g.BlockMessage, OffTopicMessage: g.OffTopicMessage}
	for i, r := range g.Rules {
		rule := guard.Rule{Name: r.Name, Keywords: r.Keywords, Pattern: r.Pattern, Action: r.Action, Message: r.Message}
		switch r.Direction {
		case "":
		case "input":
			rule.Direction = guard.DirectionInput
		case "output":
			rule.Direction = guard.DirectionOutput
		default:
			return nil, fmt.Errorf("guard.rules[%d].direction %q: use input, output or leave it out", i, r.Direction)
		}
		o.Rules = append(o.Rules, rule)
	}
	for _, t := range g.Topics {
		o.Topics = append(o.Topics, guard.Topic{Name: t.Name, Keywords: t.Keywords})
	}
	return guard.New(&o)
}

// PIISettings configure PII masking.
type PIISettings struct {
	// Locales: Global, TW, JP, KR, US, UK; default all.
	Locales []string `yaml:"locales,omitempty" json:"locales,omitempty"`
	// Mode is mask (typed tokens restored in the answer; default) or
	// redact (***).
	Mode      string  `yaml:"mode,omitempty" json:"mode,omitempty"`
	Threshold float64 `yaml:"threshold,omitempty" json:"threshold,omitempty"`
}

// options builds the PII middleware's options.
func (p *PIISettings) options() (PIIOptions, error) {
	det, err := pii.New(&pii.Options{Locales: p.Locales, Threshold: p.Threshold})
	if err != nil {
		return PIIOptions{}, err
	}
	o := PIIOptions{Detector: det}
	switch p.Mode {
	case "", "mask":
	case "redact":
		o.Mode = pii.Irreversible
	default:
		return PIIOptions{}, fmt.Errorf("pii.mode %q: use mask or redact", p.Mode)
	}
	return o, nil
}

// RateLimitSettings configure RateLimit; see RateLimitOptions for the
// meaning and default of each number.
type RateLimitSettings struct {
	// Enabled turns the local limiter on. Default: off — most providers
	// throttle on their side and Retry handles their 429s.
	Enabled *bool   `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	RPS     float64 `yaml:"rps,omitempty" json:"rps,omitempty"`
	Burst   int     `yaml:"burst,omitempty" json:"burst,omitempty"`
	Queue   int     `yaml:"queue,omitempty" json:"queue,omitempty"`
	// Timeout is written as a Go duration in YAML ("45s"); JSON carries
	// nanoseconds.
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
}

// RetrySettings configure Retry.
type RetrySettings struct {
	// Enabled turns retries on. Default: on.
	Enabled *bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	// MaxRetries is the number of retries after the first attempt.
	// Default (zero): 3; to turn retries off, set Enabled to false.
	MaxRetries int `yaml:"max_retries,omitempty" json:"max_retries,omitempty"`
	// BaseDelay is the first backoff, doubled for each retry. Default 500ms.
	BaseDelay time.Duration `yaml:"base_delay,omitempty" json:"base_delay,omitempty"`
	// MaxDelay caps the backoff and the Retry-After honoured. Default 8s.
	MaxDelay time.Duration `yaml:"max_delay,omitempty" json:"max_delay,omitempty"`
}

// LoggingSettings configure Logging.
type LoggingSettings struct {
	// Enabled turns request logging on. Default: on.
	Enabled *bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
}

// Validate reports settings that Build would silently replace by defaults,
// naming the field and the fix.
func (s Settings) Validate() error {
	var errs []error
	if s.RateLimit.RPS < 0 {
		errs = append(errs, fmt.Errorf("rate_limit.rps is %v: use a positive number of requests per second", s.RateLimit.RPS))
	}
	if s.RateLimit.Burst < 0 {
		errs = append(errs, fmt.Errorf("rate_limit.burst is %d: use a positive number or leave it out", s.RateLimit.Burst))
	}
	if s.RateLimit.Queue < -1 {
		errs = append(errs, fmt.Errorf("rate_limit.queue is %d: use 0 for the default, -1 for no waiting, or a positive length", s.RateLimit.Queue))
	}
	if s.RateLimit.Timeout < 0 {
		errs = append(errs, fmt.Errorf("rate_limit.timeout is %v: use a positive duration such as 30s", s.RateLimit.Timeout))
	}
	if s.Retry.BaseDelay < 0 || s.Retry.MaxDelay < 0 {
		errs = append(errs, fmt.Errorf("retry.base_delay and retry.max_delay must be positive durations such as 500ms"))
	}
	if s.Retry.MaxRetries < 0 {
		errs = append(errs, fmt.Errorf("retry.max_retries is %d: use a positive number, or retry.enabled: false", s.Retry.MaxRetries))
	}
	if s.Guard != nil {
		if _, err := s.Guard.Policy(); err != nil {
			errs = append(errs, err)
		}
	}
	if s.PII != nil {
		if _, err := s.PII.options(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("middleware: invalid settings: %w", err)
	}
	return nil
}

// Merge returns provider's settings overridden by every field agent sets:
// an agent inherits its provider's middleware and changes only what it
// names.
func Merge(provider, agent Settings) Settings {
	out := provider
	out.Guard = override(out.Guard, agent.Guard)
	out.PII = override(out.PII, agent.PII)
	r, a := &out.RateLimit, agent.RateLimit
	r.Enabled = override(r.Enabled, a.Enabled)
	r.RPS = override(r.RPS, a.RPS)
	r.Burst = override(r.Burst, a.Burst)
	r.Queue = override(r.Queue, a.Queue)
	r.Timeout = override(r.Timeout, a.Timeout)
	out.Retry.Enabled = override(out.Retry.Enabled, agent.Retry.Enabled)
	out.Retry.MaxRetries = override(out.Retry.MaxRetries, agent.Retry.MaxRetries)
	out.Retry.BaseDelay = override(out.Retry.BaseDelay, agent.Retry.BaseDelay)
	out.Retry.MaxDelay = override(out.Retry.MaxDelay, agent.Retry.MaxDelay)
	out.Logging.Enabled = override(out.Logging.Enabled, agent.Logging.Enabled)
	return out
}

// override returns o when it is set (non-zero), else base.
func override[T comparable](base, o T) T {
	var zero T
	if o != zero {
		return o
	}
	return base
}

func enabled(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// Build returns the middleware s turns on, outermost first: RateLimit,
// Retry, Logging. Invalid numbers (see Validate) fall back to defaults.
// logger (nil: discard) receives Retry's and Logging's records; give it
// the provider attribute with logger.With("provider", name).
//
// Each call creates a new rate limiter: build once per provider (or per
// agent with its own limit) and reuse the result, or the limit is not
// shared.
func Build(s Settings, logger *slog.Logger) []llm.Middleware {
	return BuildWith(s, &BuildOptions{Logger: logger})
}

// BuildOptions are what BuildWith takes besides the settings. The zero
// value (or nil) is the default.
type BuildOptions struct {
	// Logger receives Retry's and Logging's records and the safety audit
	// lines. Default: discard.
	Logger *slog.Logger
	// Audit receives Guard's and PII's audit events (see GuardOptions.Audit
	// and PIIOptions.Audit). Default: none.
	Audit AuditFunc
}

// BuildWith is Build with an audit sink for the safety layers.
func BuildWith(s Settings, opts *BuildOptions) []llm.Middleware {
	var o BuildOptions
	if opts != nil {
		o = *opts
	}
	logger := o.Logger
	var mws []llm.Middleware
	// Guard sees the user's own text; PII masks it before every later
	// layer, so rate limiting, retries, logs and the provider see tokens.
	// Validate reports bad settings; settings that slip past it fail
	// closed: every call errors rather than going out unguarded.
	if s.Guard != nil {
		if p, err := s.Guard.Policy(); err != nil {
			mws = append(mws, refuseAll(err))
		} else {
			mws = append(mws, Guard(GuardOptions{Policy: p, ScanOutput: s.Guard.scansOutput(), Logger: logger, Audit: o.Audit}))
		}
	}
	if s.PII != nil {
		if po, err := s.PII.options(); err != nil {
			mws = append(mws, refuseAll(err))
		} else {
			po.Logger, po.Audit = logger, o.Audit
			mws = append(mws, PII(po))
		}
	}
	if enabled(s.RateLimit.Enabled, false) {
		mws = append(mws, RateLimit(&RateLimitOptions{
			RPS:     s.RateLimit.RPS,
			Burst:   s.RateLimit.Burst,
			Queue:   s.RateLimit.Queue,
			Timeout: s.RateLimit.Timeout,
		}))
	}
	if enabled(s.Retry.Enabled, true) {
		mws = append(mws, Retry(&RetryOptions{
			MaxRetries: max(0, s.Retry.MaxRetries),
			BaseDelay:  max(0, s.Retry.BaseDelay),
			MaxDelay:   max(0, s.Retry.MaxDelay),
			Logger:     logger,
		}))
	}
	if enabled(s.Logging.Enabled, true) {
		mws = append(mws, Logging(&LoggingOptions{Logger: logger}))
	}
	return mws
}
