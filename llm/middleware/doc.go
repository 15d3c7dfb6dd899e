// Package middleware holds the cross-cutting layers wrapped around every
// llm.Model: RateLimit (a local, fair request limiter), Retry (transient
// upstream failures) and Logging (one structured record per request).
//
// Each constructor returns an llm.Middleware; nil options mean defaults.
// The platform applies them outermost first, after guardrails and PII
// masking:
//
//	m := llm.Chain(provider, middleware.Build(settings, logger)...)
//
// Build turns a Settings value, read from the provider's and the agent's
// YAML (see Merge), into that chain in the order RateLimit → Retry →
// Logging: the limiter admits a request once however often Retry repeats
// it, and Logging records every attempt Retry makes.
package middleware
