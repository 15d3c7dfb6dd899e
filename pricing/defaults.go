package pricing

import "strings"

// Defaults is the built-in price table, in USD per million tokens, keyed
// "provider/model" with the provider names AgentCraft detects ("openai",
// "anthropic").
//
// The prices are the list prices of the vendors' public pricing pages
// (openai.com/api/pricing, anthropic.com/pricing, docs.anthropic.com
// "Pricing") as of 2025; CachedInput is OpenAI's "cached input" and
// Anthropic's "cache read" price, CacheWrite Anthropic's 5-minute "cache
// write" (1.25× input; the 1-hour cache's 2× is not told apart by the
// API's usage, so it is priced as the 5-minute one). They are a starting
// point, not a bill: vendors change prices, and negotiated and batch
// prices differ.
// Operators should check them and override or extend them in
// agentcraft.yaml (pricing.models); a model that is not priced costs 0 and
// is counted as unpriced, never guessed.
func Defaults() map[string]Price {
	out := make(map[string]Price, len(defaultPrices))
	for k, v := range defaultPrices {
		p := Price{Input: mustMoney(v[0]), CachedInput: mustMoney(v[1]), Output: mustMoney(v[2])}
		if strings.HasPrefix(k, "anthropic/") {
			// Anthropic charges a 5-minute cache write at 1.25× input,
			// on every model (prices have at most two decimals, so this
			// is exact).
			p.CacheWrite = p.Input + p.Input/4
		}
		out[k] = p
	}
	return out
}

// defaultPrices are input, cached input and output in USD per million
// tokens.
var defaultPrices = map[string][3]string{
	// OpenAI.
	"openai/gpt-4o":       {"2.50", "1.25", "10.00"},
	"openai/gpt-4o-mini":  {"0.15", "0.075", "0.60"},
	"openai/gpt-4.1":      {"2.00", "0.50", "8.00"},
	"openai/gpt-4.1-mini": {"0.40", "0.10", "1.60"},
	"openai/gpt-4.1-nano": {"0.10", "0.025", "0.40"},
	"openai/o1":           {"15.00", "7.50", "60.00"},
	"openai/o3":           {"2.00", "0.50", "8.00"},
	"openai/o3-mini":      {"1.10", "0.55", "4.40"},
	"openai/o4-mini":      {"1.10", "0.275", "4.40"},
	"openai/gpt-5":        {"1.25", "0.125", "10.00"},
	"openai/gpt-5-mini":   {"0.25", "0.025", "2.00"},
	"openai/gpt-5-nano":   {"0.05", "0.005", "0.40"},

	// Anthropic (cached = cache read, 0.1× input).
	"anthropic/claude-3-haiku":    {"0.25", "0.03", "1.25"},
	"anthropic/claude-3-opus":     {"15.00", "1.50", "75.00"},
	"anthropic/claude-3-5-haiku":  {"0.80", "0.08", "4.00"},
	"anthropic/claude-3-5-sonnet": {"3.00", "0.30", "15.00"},
	"anthropic/claude-3-7-sonnet": {"3.00", "0.30", "15.00"},
	"anthropic/claude-sonnet-4":   {"3.00", "0.30", "15.00"},
	"anthropic/claude-sonnet-4-0": {"3.00", "0.30", "15.00"},
	"anthropic/claude-sonnet-4-5": {"3.00", "0.30", "15.00"},
	"anthropic/claude-opus-4":     {"15.00", "1.50", "75.00"},
	"anthropic/claude-opus-4-0":   {"15.00", "1.50", "75.00"},
	"anthropic/claude-opus-4-1":   {"15.00", "1.50", "75.00"},
	"anthropic/claude-opus-4-5":   {"5.00", "0.50", "25.00"},
	"anthropic/claude-haiku-4-5":  {"1.00", "0.10", "5.00"},
}

// mustMoney parses one of defaultPrices; TestDefaults proves they parse.
func mustMoney(s string) Money {
	m, err := ParseMoney(s)
	if err != nil {
		panic("pricing: bad default price " + s + ": " + err.Error())
	}
	return m
}
