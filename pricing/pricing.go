// Package pricing turns token counts into money: a price table per model
// (built-in defaults for common OpenAI and Anthropic models, overridden and
// extended by agentcraft.yaml's pricing section) and Money, an exact
// integer amount in nano-units of the currency.
//
//	t, err := pricing.New(pricing.Defaults(), overrides)
//	c, ok := t.Cost("openai", "gpt-4o-2024-08-06", pricing.Tokens{Input: 1200, Cached: 1000, Output: 80})
//	// ok is false for a model the table does not price: c is 0, never a guess.
//
// Models are matched by "provider/model", where provider is the name the
// agent's model uses (the provider configuration's name): the exact key,
// then the model without a date suffix (gpt-4o-2024-08-06 → gpt-4o,
// claude-sonnet-4-20250514 → claude-sonnet-4, claude-3-5-haiku-latest →
// claude-3-5-haiku), then a key naming the model alone (any provider).
package pricing

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Price is what one model charges, per million tokens.
type Price struct {
	// Input is charged for every input token not served from the cache.
	Input Money `json:"input" yaml:"input"`
	// CachedInput is charged for input tokens served from the provider's
	// prompt cache; zero means the model has no cache discount and cached
	// tokens cost Input.
	CachedInput Money `json:"cached_input" yaml:"cached_input"`
	// CacheWrite is charged for input tokens written to the provider's
	// prompt cache (Anthropic: 1.25× input for the 5-minute cache); zero
	// means they cost Input.
	CacheWrite Money `json:"cache_write" yaml:"cache_write"`
	// Output is charged for every output token (reasoning included).
	Output Money `json:"output" yaml:"output"`
}

// Tokens are the counts one request is charged for. Cached is the part of
// Input served from the cache and CacheWrite the part written to it, as
// llm.Usage reports them.
type Tokens struct {
	Input, Cached, Output int
	CacheWrite            int
}

// perMillion is tokens × price-per-million without overflowing int64 for
// any token count a request can have: the millions and the remainder are
// multiplied apart. The remainder's fraction of a nano-unit is rounded
// half up, so a price with at most three decimals per million (all
// published ones) costs exactly.
func perMillion(tokens int, price Money) Money {
	if tokens <= 0 || price <= 0 {
		return 0
	}
	t := int64(tokens)
	m, r := t/1_000_000, t%1_000_000
	return Money(m)*price + (Money(r)*price+500_000)/1_000_000
}

// Cost is what t costs at p: cached input at CachedInput, input written
// to the cache at CacheWrite (each at Input when zero), the rest of the
// input at Input, output at Output. Cached and CacheWrite are capped at
// what Input holds.
func (p Price) Cost(t Tokens) Money {
	input := max(t.Input, 0)
	cached := min(max(t.Cached, 0), input)
	written := min(max(t.CacheWrite, 0), input-cached)
	return perMillion(input-cached-written, p.Input) + perMillion(cached, cmp.Or(p.CachedInput, p.Input)) +
		perMillion(written, cmp.Or(p.CacheWrite, p.Input)) + perMillion(t.Output, p.Output)
}

// Table prices models. The zero Table prices nothing. It is safe for
// concurrent use; it is never changed after New.
type Table struct {
	prices   map[string]Price
	currency string
}

// DefaultCurrency is the currency of Defaults and of a Table whose
// configuration names none.
const DefaultCurrency = "USD"

// New returns the table of base with over applied on top: an entry of
// over replaces base's entry of the same key whole. Keys are
// "provider/model" or a bare "model" (any provider). currency names the
// unit of every price ("" is DefaultCurrency); a currency other than
// USD with base left at Defaults would mix currencies, so it is refused
// unless base is empty.
func New(base, over map[string]Price, currency string) (*Table, error) {
	if currency == "" {
		currency = DefaultCurrency
	}
	if currency != DefaultCurrency && len(base) > 0 {
		return nil, fmt.Errorf("pricing: currency %s with the built-in USD prices would mix currencies; price every model you use in %s and turn the defaults off (pricing.defaults: false)", currency, currency)
	}
	t := &Table{prices: make(map[string]Price, len(base)+len(over)), currency: currency}
	for k, p := range base {
		t.prices[normalize(k)] = p
	}
	for _, k := range slices.Sorted(maps.Keys(over)) {
		p := over[k]
		key := normalize(k)
		if key == "" || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") {
			return nil, fmt.Errorf("pricing: models[%q]: name a model as \"provider/model\" (openai/gpt-4o) or a bare model (gpt-4o)", k)
		}
		if p.Input < 0 || p.CachedInput < 0 || p.CacheWrite < 0 || p.Output < 0 {
			return nil, fmt.Errorf("pricing: models[%q]: prices must be zero or more", k)
		}
		t.prices[key] = p
	}
	return t, nil
}

func normalize(k string) string { return strings.ToLower(strings.TrimSpace(k)) }

// Currency is the unit of every price and cost of the table ("USD").
func (t *Table) Currency() string {
	if t == nil || t.currency == "" {
		return DefaultCurrency
	}
	return t.currency
}

// dated matches the date or alias suffix providers add to a model family's
// name: -2024-08-06 (OpenAI), -20250514 (Anthropic), -latest.
var dated = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$`)

// Lookup finds the price of provider's model: "provider/model", then the
// model without its date suffix, then the bare model, then the bare model
// without its suffix. ok is false when none is priced.
func (t *Table) Lookup(provider, model string) (Price, bool) {
	if t == nil || len(t.prices) == 0 {
		return Price{}, false
	}
	prov, m := normalize(provider), normalize(model)
	base := dated.ReplaceAllString(m, "")
	for _, k := range [...]string{prov + "/" + m, prov + "/" + base, m, base} {
		if p, ok := t.prices[k]; ok {
			return p, true
		}
	}
	return Price{}, false
}

// Cost is what tokens cost on provider's model; ok is false (and the
// cost zero) when the table does not price the model.
func (t *Table) Cost(provider, model string, tokens Tokens) (Money, bool) {
	p, ok := t.Lookup(provider, model)
	if !ok {
		return 0, false
	}
	return p.Cost(tokens), true
}

// Prices returns a copy of the table's entries, by key.
func (t *Table) Prices() map[string]Price {
	if t == nil {
		return map[string]Price{}
	}
	return maps.Clone(t.prices)
}
